#include "worker/gpu_runner/runner_loop.h"

#include <unistd.h>

#include <algorithm>

#include "worker/gpu_runner/pipe_messages.h"

namespace tuned::worker::gpu {

v1::GpuRunnerReply& Failed(v1::GpuRunnerReply& reply, v1::MeasureStatus status, const std::string& error,
                           bool unusable) {
  reply.set_status(status);
  reply.set_error(error);
  reply.set_runner_unusable(unusable);
  return reply;
}

Status TimeRepeats(const v1::GpuRunnerRequest::Run& request, const std::function<StatusOr<double>(uint32_t)>& pass,
                   const std::function<Status()>& before_repeat, v1::GpuRunnerReply& reply) {
  double kernel_seconds = 0;
  auto timed_pass = [&](uint32_t number) -> StatusOr<double> {
    TUNED_ASSIGN_OR_RETURN(double seconds, pass(number));
    kernel_seconds += seconds * number;
    return seconds;
  };
  for (uint32_t w = 0; w < request.warmup(); ++w) TUNED_RETURN_IF_ERROR(timed_pass(1).status());
  uint32_t number = std::max<uint32_t>(request.number(), 1);
  TUNED_ASSIGN_OR_RETURN(double one, timed_pass(1));
  while (double(number) * one < request.min_repeat_seconds() && number < (1u << 20)) number *= 2;
  for (uint32_t r = 0; r < std::max<uint32_t>(request.repeats(), 1); ++r) {
    if (before_repeat) TUNED_RETURN_IF_ERROR(before_repeat());
    TUNED_ASSIGN_OR_RETURN(double seconds, timed_pass(number));
    reply.add_repeat_seconds(seconds);
  }
  reply.set_number(number);
  reply.set_kernel_seconds(kernel_seconds);
  return Status::Ok();
}

int ServeRunner(StatusOr<std::unique_ptr<DeviceRunner>> runner) {
  v1::GpuRunnerReply hello;
  if (!runner.ok()) {
    Failed(hello, v1::MEASURE_STATUS_RUNTIME_ERROR, runner.status().message(), true);
    (void)WriteMessage(STDOUT_FILENO, hello);
    return 1;
  }
  hello.set_status(v1::MEASURE_STATUS_OK);
  *hello.mutable_device() = (*runner)->device();
  if (!WriteMessage(STDOUT_FILENO, hello).ok()) return 1;
  bool has_output = false;  // a run needs inputs, and an output to write, first
  while (true) {
    v1::GpuRunnerRequest request;
    Status read = ReadMessage(STDIN_FILENO, request);
    if (!read.ok()) return read.code() == StatusCode::kUnavailable ? 0 : 1;  // the worker is gone
    v1::GpuRunnerReply reply;
    if (request.has_inputs()) {
      reply = (*runner)->SetInputs(request.inputs());
      has_output = reply.status() == v1::MEASURE_STATUS_OK && request.inputs().output_bytes() > 0;
    } else if (!has_output) {
      Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, "no inputs were sent", false);
    } else {
      reply = (*runner)->Run(request.run());
    }
    if (!WriteMessage(STDOUT_FILENO, reply).ok()) return 1;
    if (reply.runner_unusable()) return 2;  // the worker starts a fresh runner
  }
}

}  // namespace tuned::worker::gpu
