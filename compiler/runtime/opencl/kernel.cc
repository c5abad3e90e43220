#include "compiler/runtime/opencl/kernel.h"

#include <algorithm>

#include "compiler/runtime/opencl/opencl_internal.h"

namespace tuned::opencl {
namespace {

using internal::ClCall;

std::string Dims(const std::array<int64_t, 3>& dims) {
  return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
}

}  // namespace

KernelArg KernelArg::Of(const Buffer& buffer) {
  KernelArg arg(Kind::kBuffer);
  arg.buffer_ = &buffer;
  return arg;
}

KernelArg KernelArg::Int32(int32_t value) {
  KernelArg arg(Kind::kInt32);
  arg.integer_ = value;
  return arg;
}

KernelArg KernelArg::Int64(int64_t value) {
  KernelArg arg(Kind::kInt64);
  arg.integer_ = value;
  return arg;
}

KernelArg KernelArg::Float32(float value) {
  KernelArg arg(Kind::kFloat32);
  arg.real_ = value;
  return arg;
}

KernelArg KernelArg::DynamicShared() { return KernelArg(Kind::kDynamicShared); }

StatusOr<std::unique_ptr<Kernel>> Kernel::Create(const Program& program, std::string_view name) {
  cl_int error = CL_SUCCESS;
  std::string kernel_name(name);
  cl_kernel raw = clCreateKernel(program.handle(), kernel_name.c_str(), &error);
  if (error == CL_INVALID_KERNEL_NAME) {
    return NotFoundError("the OpenCL program has no kernel '" + kernel_name + "'");
  }
  TUNED_RETURN_IF_ERROR(ClCall(error, "clCreateKernel"));
  std::unique_ptr<Kernel> kernel(new Kernel(program, raw, kernel_name));
  cl_device_id device = program.device().id();
  // Before any __local argument is set, the kernel's local memory is its own arrays only.
  cl_ulong local_bytes = 0;
  size_t work_group_size = 0;
  TUNED_RETURN_IF_ERROR(ClCall(clGetKernelWorkGroupInfo(raw, device, CL_KERNEL_LOCAL_MEM_SIZE,
                                                        sizeof(local_bytes), &local_bytes, nullptr),
                               "clGetKernelWorkGroupInfo"));
  TUNED_RETURN_IF_ERROR(ClCall(clGetKernelWorkGroupInfo(raw, device, CL_KERNEL_WORK_GROUP_SIZE,
                                                        sizeof(work_group_size), &work_group_size, nullptr),
                               "clGetKernelWorkGroupInfo"));
  kernel->static_local_bytes_ = static_cast<int64_t>(local_bytes);
  kernel->max_work_group_size_ = static_cast<int64_t>(work_group_size);
  return kernel;
}

Kernel::~Kernel() { clReleaseKernel(kernel_); }

Status Kernel::CheckLaunch(const LaunchConfig& config) const {
  const Device& device = program_->device();
  const target::OpenclAttributes& limits = device.target().opencl;
  int64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (config.grid[d] < 1 || config.block[d] < 1) {
      return InvalidArgumentError("kernel '" + name_ + "': grid " + Dims(config.grid) + " and block " +
                                  Dims(config.block) + " need every extent >= 1");
    }
    if (config.block[d] > device.info().max_work_item_sizes[d]) {
      return InvalidArgumentError("kernel '" + name_ + "': block " + Dims(config.block) + " has " +
                                  std::to_string(config.block[d]) + " threads in dimension " +
                                  std::to_string(d) + ", beyond the device's " +
                                  std::to_string(device.info().max_work_item_sizes[d]));
    }
    threads *= config.block[d];
  }
  if (threads > limits.max_work_group_size) {
    return InvalidArgumentError("kernel '" + name_ + "': block " + Dims(config.block) + " has " +
                                std::to_string(threads) + " threads, beyond the target's maximum " +
                                "work-group size of " + std::to_string(limits.max_work_group_size));
  }
  if (threads > max_work_group_size_) {
    return InvalidArgumentError("kernel '" + name_ + "': block " + Dims(config.block) + " has " +
                                std::to_string(threads) + " threads, beyond the kernel's maximum " +
                                "work-group size of " + std::to_string(max_work_group_size_));
  }
  if (config.dynamic_shared_bytes < 0) {
    return InvalidArgumentError("kernel '" + name_ + "': negative dynamic shared memory");
  }
  int64_t local_bytes = static_local_bytes_ + config.dynamic_shared_bytes;
  if (local_bytes > limits.local_memory_bytes) {
    return InvalidArgumentError("kernel '" + name_ + "': " + std::to_string(local_bytes) +
                                " bytes of local memory (" + std::to_string(static_local_bytes_) +
                                " static + " + std::to_string(config.dynamic_shared_bytes) +
                                " dynamic) exceed the target's " +
                                std::to_string(limits.local_memory_bytes));
  }
  return Status::Ok();
}

Status Kernel::SetArgs(const LaunchConfig& config, const std::vector<KernelArg>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg& arg = args[i];
    cl_uint index = static_cast<cl_uint>(i);
    cl_int error = CL_SUCCESS;
    cl_mem mem = nullptr;
    cl_int int32 = static_cast<cl_int>(arg.integer_);
    cl_long int64 = arg.integer_;
    switch (arg.kind()) {
      case KernelArg::Kind::kBuffer:
        mem = arg.buffer_->handle();
        error = clSetKernelArg(kernel_, index, sizeof(mem), &mem);
        break;
      case KernelArg::Kind::kInt32:
        error = clSetKernelArg(kernel_, index, sizeof(int32), &int32);
        break;
      case KernelArg::Kind::kInt64:
        error = clSetKernelArg(kernel_, index, sizeof(int64), &int64);
        break;
      case KernelArg::Kind::kFloat32:
        error = clSetKernelArg(kernel_, index, sizeof(arg.real_), &arg.real_);
        break;
      case KernelArg::Kind::kDynamicShared:
        // OpenCL refuses a __local argument of 0 bytes; 1 stands for "none".
        error = clSetKernelArg(kernel_, index, std::max<size_t>(1, config.dynamic_shared_bytes), nullptr);
        break;
    }
    if (error != CL_SUCCESS) {
      return InvalidArgumentError("kernel '" + name_ + "': argument " + std::to_string(i) + ": " +
                                  internal::ClErrorName(error));
    }
  }
  return Status::Ok();
}

StatusOr<double> Kernel::Enqueue(const LaunchConfig& config) {
  size_t global[3], local[3];
  for (int d = 0; d < 3; ++d) {
    local[d] = static_cast<size_t>(config.block[d]);
    global[d] = static_cast<size_t>(config.grid[d] * config.block[d]);
  }
  cl_event event = nullptr;
  cl_command_queue queue = program_->device().queue();
  TUNED_RETURN_IF_ERROR(ClCall(clEnqueueNDRangeKernel(queue, kernel_, 3, nullptr, global, local, 0,
                                                      nullptr, &event),
                               "clEnqueueNDRangeKernel of '" + name_ + "'"));
  cl_int error = clWaitForEvents(1, &event);
  cl_ulong start = 0, end = 0;
  if (error == CL_SUCCESS) {
    error = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
  }
  if (error == CL_SUCCESS) {
    error = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
  }
  clReleaseEvent(event);
  TUNED_RETURN_IF_ERROR(ClCall(error, "running '" + name_ + "'"));
  return static_cast<double>(end - start) * 1e-9;
}

Status Kernel::Run(const LaunchConfig& config, const std::vector<KernelArg>& args) {
  TUNED_RETURN_IF_ERROR(CheckLaunch(config));
  TUNED_RETURN_IF_ERROR(SetArgs(config, args));
  return Enqueue(config).status();
}

StatusOr<KernelTiming> Kernel::Time(const LaunchConfig& config, const std::vector<KernelArg>& args,
                                    int runs) {
  if (runs < 1) return InvalidArgumentError("timing needs at least one run, not " + std::to_string(runs));
  TUNED_RETURN_IF_ERROR(Run(config, args));  // warm-up: first-touch of buffers, code caches
  KernelTiming timing;
  for (int i = 0; i < runs; ++i) {
    TUNED_ASSIGN_OR_RETURN(double seconds, Enqueue(config));
    timing.seconds.push_back(seconds);
  }
  std::vector<double> sorted = timing.seconds;
  std::sort(sorted.begin(), sorted.end());
  size_t mid = sorted.size() / 2;
  timing.median_seconds = sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return timing;
}

}  // namespace tuned::opencl
