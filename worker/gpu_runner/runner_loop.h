#ifndef TUNED_WORKER_GPU_RUNNER_RUNNER_LOOP_H_
#define TUNED_WORKER_GPU_RUNNER_RUNNER_LOOP_H_

/// \file
/// What every GPU runner process does, whichever API drives its device: the pipe protocol's
/// loop (a hello with the device, then one reply per request on stdout; exit when the worker
/// closes stdin, or after a reply that says the runner is unusable, so that the worker starts a
/// fresh one) and the timing protocol (warm-up passes, runs per repeat doubled until a repeat
/// lasts min_repeat_seconds, every repeat kept). A runner main opens its device and implements
/// DeviceRunner; see tuned-opencl-runner and tuned-cuda-runner.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tuned/v1/gpu_runner.pb.h"
#include "tuned/v1/target.pb.h"

namespace tuned::worker::gpu {

class DeviceRunner {
 public:
  virtual ~DeviceRunner() = default;
  /// The device for the hello.
  virtual const v1::DeviceInfo& device() const = 0;
  /// Replaces the inputs held on the device.
  virtual v1::GpuRunnerReply SetInputs(const v1::GpuRunnerRequest::Inputs& request) = 0;
  /// Builds (or loads) a candidate, runs it once for its output and times it when asked; called
  /// only after inputs with an output were set (ServeRunner answers a run before them).
  virtual v1::GpuRunnerReply Run(const v1::GpuRunnerRequest::Run& request) = 0;
};

/// Serves the protocol on stdin and stdout with `runner`, or sends `runner`'s error as an
/// unusable hello. Returns the process's exit status.
int ServeRunner(StatusOr<std::unique_ptr<DeviceRunner>> runner);

/// `reply` as a failure: `status`, one-line `error`, and whether the device is left unusable.
v1::GpuRunnerReply& Failed(v1::GpuRunnerReply& reply, v1::MeasureStatus status, const std::string& error,
                           bool unusable);

/// A runner's SetInputs: `inputs` replaced by each of the request's inputs uploaded with
/// `upload`; a failed upload leaves the device suspect (the reply marks the runner unusable).
template <typename Buffer, typename Upload>
v1::GpuRunnerReply UploadInputs(const v1::GpuRunnerRequest::Inputs& request, Upload upload, std::vector<Buffer>& inputs) {
  v1::GpuRunnerReply reply;
  inputs.clear();
  for (const std::string& data : request.inputs()) {
    StatusOr<Buffer> buffer = upload(data);
    if (!buffer.ok()) {
      return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, "uploading inputs: " + buffer.status().message(), true);
    }
    inputs.push_back(std::move(buffer).value());
  }
  reply.set_status(v1::MEASURE_STATUS_OK);
  return reply;
}

/// The timing protocol of `request` around `pass(number)`: device seconds of one run of every
/// launch, averaged over `number` runs. `before_repeat` runs ahead of each timed repeat (a
/// cache flush; none: empty). Fills repeat_seconds, number and kernel_seconds of `reply`.
Status TimeRepeats(const v1::GpuRunnerRequest::Run& request, const std::function<StatusOr<double>(uint32_t)>& pass,
                   const std::function<Status()>& before_repeat, v1::GpuRunnerReply& reply);

}  // namespace tuned::worker::gpu

#endif  // TUNED_WORKER_GPU_RUNNER_RUNNER_LOOP_H_
