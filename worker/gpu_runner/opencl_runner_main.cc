// `tuned-opencl-runner TARGET`: the OpenCL runner process of a worker (worker/gpu/README.md, docs/gpu.md).
// It owns the OpenCL context, and nothing else does: the worker starts it by exec, sends it
// inputs and candidates over stdin (proto/tuned/v1/gpu_runner.proto) and reads replies on
// stdout. A kernel that crashes it, hangs it or leaves the device unusable costs this process
// only; the worker starts a fresh one.

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/opencl/buffer.h"
#include "compiler/runtime/opencl/device.h"
#include "compiler/runtime/opencl/kernel.h"
#include "compiler/runtime/opencl/program.h"
#include "target/target.h"
#include "tuned/v1/gpu_runner.pb.h"
#include "worker/gpu_runner/runner_loop.h"

namespace tuned::worker::gpu {
namespace {

using Clock = std::chrono::steady_clock;

std::string DeviceString(_cl_device_id* id, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(id, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  clGetDeviceInfo(id, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

v1::DeviceInfo DescribeDevice(const opencl::Device& device) {
  v1::DeviceInfo info;
  info.set_model(device.info().name);
  info.set_num_cores(uint32_t(device.info().compute_units));
  info.set_driver_version(DeviceString(device.id(), CL_DRIVER_VERSION));
  info.set_toolkit_version(device.info().version);
  cl_ulong memory = 0;
  clGetDeviceInfo(device.id(), CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(memory), &memory, nullptr);
  info.set_memory_bytes(memory);
  info.add_features("platform=" + device.info().platform);
  // The engine lets builds overlap runs only on a device that is not its own CPU.
  cl_device_type type = 0;
  clGetDeviceInfo(device.id(), CL_DEVICE_TYPE, sizeof(type), &type, nullptr);
  info.add_features(std::string("device_type=") +
                    ((type & CL_DEVICE_TYPE_CPU) ? "cpu" : (type & CL_DEVICE_TYPE_GPU) ? "gpu" : "accelerator"));
  info.add_features("max_work_group_size=" + std::to_string(device.info().max_work_group_size));
  info.add_features("local_memory_bytes=" + std::to_string(device.info().local_memory_bytes));
  return info;
}

class OpenclRunner final : public DeviceRunner {
 public:
  explicit OpenclRunner(std::unique_ptr<opencl::Device> device)
      : device_holder_(std::move(device)), device_(*device_holder_), info_(DescribeDevice(device_)) {}

  const v1::DeviceInfo& device() const override { return info_; }

  v1::GpuRunnerReply SetInputs(const v1::GpuRunnerRequest::Inputs& request) override {
    output_bytes_ = request.output_bytes();
    auto upload = [&](const std::string& data) -> StatusOr<opencl::Buffer> {
      TUNED_ASSIGN_OR_RETURN(opencl::Buffer buffer, opencl::Buffer::Create(device_, std::max<size_t>(data.size(), 1)));
      TUNED_RETURN_IF_ERROR(buffer.Write(data.data(), data.size()));
      return buffer;
    };
    return UploadInputs(request, upload, inputs_);
  }

  v1::GpuRunnerReply Run(const v1::GpuRunnerRequest::Run& request) override {
    v1::GpuRunnerReply reply;
    const v1::GpuCandidateProgram& candidate = request.program();
    const Clock::time_point build_start = Clock::now();
    StatusOr<std::unique_ptr<opencl::Program>> program = opencl::Program::Build(device_, candidate.source());
    reply.set_build_seconds(std::chrono::duration<double>(Clock::now() - build_start).count());
    if (!program.ok()) return Failed(reply, v1::MEASURE_STATUS_COMPILE_ERROR, program.status().message(), false);

    // The output starts as 0xff bytes (NaN for floats): an element never written fails verification.
    std::vector<opencl::Buffer> own;
    std::string poison(output_bytes_, '\xff');
    StatusOr<opencl::Buffer> output = opencl::Buffer::Create(device_, output_bytes_);
    if (!output.ok() || !output->Write(poison.data(), poison.size()).ok()) {
      return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, "allocating the output failed", true);
    }
    own.push_back(std::move(output).value());
    for (uint64_t bytes : candidate.intermediate_bytes()) {
      StatusOr<opencl::Buffer> b = opencl::Buffer::Create(device_, std::max<uint64_t>(bytes, 1));
      if (!b.ok()) return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, b.status().message(), true);
      own.push_back(std::move(b).value());
    }
    auto buffer_at = [&](uint32_t index) -> const opencl::Buffer* {
      if (index < inputs_.size()) return &inputs_[index];
      index -= uint32_t(inputs_.size());
      return index < own.size() ? &own[index] : nullptr;
    };

    struct Launch {
      std::unique_ptr<opencl::Kernel> kernel;
      opencl::LaunchConfig config;
      std::vector<opencl::KernelArg> args;
    };
    std::vector<Launch> launches;
    for (const v1::GpuKernelLaunch& l : candidate.launches()) {
      Launch launch;
      StatusOr<std::unique_ptr<opencl::Kernel>> kernel = opencl::Kernel::Create(**program, l.function());
      if (!kernel.ok()) return Failed(reply, v1::MEASURE_STATUS_COMPILE_ERROR, kernel.status().message(), false);
      launch.kernel = std::move(kernel).value();
      for (int d = 0; d < 3 && d < l.grid_size() && d < l.block_size(); ++d) {
        launch.config.grid[size_t(d)] = l.grid(d);
        launch.config.block[size_t(d)] = l.block(d);
      }
      for (uint32_t index : l.buffers()) {
        const opencl::Buffer* b = buffer_at(index);
        if (b == nullptr) return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, "launch names buffer " + std::to_string(index) + ", which does not exist", false);
        launch.args.push_back(opencl::KernelArg::Of(*b));
      }
      // Beyond the device's limits: refused before anything runs (the device is not harmed).
      if (Status fits = launch.kernel->CheckLaunch(launch.config); !fits.ok()) {
        return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, fits.message(), false);
      }
      launches.push_back(std::move(launch));
    }

    // The first run, for the output. An error here may leave the context unusable.
    for (Launch& l : launches) {
      if (Status ran = l.kernel->Run(l.config, l.args); !ran.ok()) {
        return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, ran.message(), true);
      }
    }
    std::string out(output_bytes_, '\0');
    if (Status read = own[0].Read(out.data(), out.size()); !read.ok()) {
      return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, read.message(), true);
    }
    reply.set_output(std::move(out));
    if (request.time_kernel()) {
      if (Status timed = Time(request, launches, reply); !timed.ok()) {
        return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, timed.message(), true);
      }
    }
    reply.set_status(v1::MEASURE_STATUS_OK);
    return reply;
  }

 private:
  template <typename Launches>
  Status Time(const v1::GpuRunnerRequest::Run& request, Launches& launches, v1::GpuRunnerReply& reply) {
    // One pass of every launch, `number` runs each: its mean device time per run of the program.
    auto pass = [&](uint32_t number) -> StatusOr<double> {
      double total = 0;
      for (auto& l : launches) {
        TUNED_ASSIGN_OR_RETURN(opencl::KernelTiming t, l.kernel->Time(l.config, l.args, int(number)));
        double sum = 0;
        for (double s : t.seconds) sum += s;
        total += sum / double(t.seconds.size());
      }
      return total;
    };
    return TimeRepeats(request, pass, /*before_repeat=*/{}, reply);
  }

  std::unique_ptr<opencl::Device> device_holder_;
  const opencl::Device& device_;
  const v1::DeviceInfo info_;
  std::vector<opencl::Buffer> inputs_;
  uint64_t output_bytes_ = 0;
};

StatusOr<std::unique_ptr<DeviceRunner>> OpenRunner(int argc, char** argv) {
  if (argc != 2) return InvalidArgumentError("usage: tuned-opencl-runner TARGET");
  TUNED_ASSIGN_OR_RETURN(target::Target target, target::ParseTarget(argv[1]));
  if (target.kind != target::TargetKind::kOpencl) {
    return InvalidArgumentError("target '" + std::string(argv[1]) + "' is not an opencl target");
  }
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<opencl::Device> device, opencl::Device::Open(target));
  return std::unique_ptr<DeviceRunner>(std::make_unique<OpenclRunner>(std::move(device)));
}

}  // namespace
}  // namespace tuned::worker::gpu

int main(int argc, char** argv) {
  return tuned::worker::gpu::ServeRunner(tuned::worker::gpu::OpenRunner(argc, argv));
}
