#include "compiler/runtime/opencl/device.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "compiler/runtime/opencl/opencl_internal.h"

namespace tuned::opencl {
namespace {

using internal::ClCall;
using internal::DeviceString;

constexpr cl_int kPlatformNotFound = -1001;  // CL_PLATFORM_NOT_FOUND_KHR, from the ICD loader

StatusOr<std::vector<cl_platform_id>> Platforms() {
  cl_uint count = 0;
  cl_int error = clGetPlatformIDs(0, nullptr, &count);
  if (error == kPlatformNotFound || (error == CL_SUCCESS && count == 0)) {
    return UnavailableError("no OpenCL platform is installed (pocl-opencl-icd gives one on the CPU)");
  }
  TUNED_RETURN_IF_ERROR(ClCall(error, "clGetPlatformIDs"));
  std::vector<cl_platform_id> platforms(count);
  TUNED_RETURN_IF_ERROR(ClCall(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs"));
  return platforms;
}

std::vector<cl_device_id> DevicesOf(cl_platform_id platform) {
  cl_uint count = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) return {};
  std::vector<cl_device_id> devices(count);
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr) != CL_SUCCESS) return {};
  return devices;
}

std::string PlatformName(cl_platform_id platform) {
  char name[256] = {};
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name) - 1, name, nullptr);
  return name;
}

// The device `name` names (first of the first platform when empty), and its platform.
StatusOr<std::pair<cl_platform_id, cl_device_id>> FindDevice(const std::string& name) {
  TUNED_ASSIGN_OR_RETURN(std::vector<cl_platform_id> platforms, Platforms());
  std::string known;
  for (cl_platform_id platform : platforms) {
    for (cl_device_id device : DevicesOf(platform)) {
      std::string device_name = DeviceString(device, CL_DEVICE_NAME);
      if (name.empty() || device_name == name) return std::pair{platform, device};
      known += (known.empty() ? "'" : ", '") + device_name + "'";
    }
    if (name.empty()) break;  // "the first device of the first platform"
  }
  if (name.empty()) return UnavailableError("the first OpenCL platform has no device");
  return NotFoundError("no OpenCL device is named '" + name + "' (there are: " + known + ")");
}

template <typename T>
T DeviceNumber(cl_device_id device, cl_device_info what) {
  T value{};
  clGetDeviceInfo(device, what, sizeof(value), &value, nullptr);
  return value;
}

// The preferred work-group size multiple of a trivial kernel: OpenCL 1.2's way of telling how
// many work-items run in lockstep.
StatusOr<int> SubGroupSize(cl_context context, cl_device_id device) {
  const char* source = "__kernel void probe(__global float* x) { x[get_global_id(0)] = 0.0f; }";
  cl_int error = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  TUNED_RETURN_IF_ERROR(ClCall(error, "clCreateProgramWithSource (probe)"));
  size_t multiple = 0;
  error = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  cl_kernel kernel = error == CL_SUCCESS ? clCreateKernel(program, "probe", &error) : nullptr;
  if (error == CL_SUCCESS) {
    error = clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                     sizeof(multiple), &multiple, nullptr);
  }
  if (kernel != nullptr) clReleaseKernel(kernel);
  clReleaseProgram(program);
  TUNED_RETURN_IF_ERROR(ClCall(error, "building the sub-group probe kernel"));
  return static_cast<int>(multiple);
}

// A limit of the target: the device's when unset, refused when beyond the device's.
Status ResolveLimit(int& limit, int64_t device_limit, const char* option, const std::string& device) {
  if (limit == 0) {
    limit = static_cast<int>(std::min<int64_t>(device_limit, std::numeric_limits<int>::max()));
    return Status::Ok();
  }
  if (limit > device_limit) {
    return InvalidArgumentError(std::string(option) + "=" + std::to_string(limit) + " exceeds the " +
                                std::to_string(device_limit) + " of OpenCL device '" + device + "'");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<Device>> Device::Open(const target::Target& target) {
  if (target.kind != target::TargetKind::kOpencl) {
    return InvalidArgumentError("an OpenCL device needs an opencl target, not '" + target.ToString() + "'");
  }
  TUNED_ASSIGN_OR_RETURN(auto found, FindDevice(target.opencl.device));
  auto [platform, id] = found;
  std::unique_ptr<Device> device(new Device());
  device->id_ = id;
  cl_int error = CL_SUCCESS;
  device->context_ = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &error);
  TUNED_RETURN_IF_ERROR(ClCall(error, "clCreateContext"));
  device->queue_ = clCreateCommandQueue(device->context_, id, CL_QUEUE_PROFILING_ENABLE, &error);
  TUNED_RETURN_IF_ERROR(ClCall(error, "clCreateCommandQueue"));

  DeviceInfo& info = device->info_;
  info.platform = PlatformName(platform);
  info.name = DeviceString(id, CL_DEVICE_NAME);
  info.version = DeviceString(id, CL_DEVICE_VERSION);
  info.compute_units = static_cast<int>(DeviceNumber<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
  info.max_work_group_size = static_cast<int64_t>(DeviceNumber<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  size_t item_sizes[3] = {};
  clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(item_sizes), item_sizes, nullptr);
  for (int d = 0; d < 3; ++d) info.max_work_item_sizes[d] = static_cast<int64_t>(item_sizes[d]);
  info.local_memory_bytes = static_cast<int64_t>(DeviceNumber<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE));
  TUNED_ASSIGN_OR_RETURN(info.sub_group_size, SubGroupSize(device->context_, id));

  target::Target& resolved = device->target_;
  resolved = target;
  resolved.opencl.device = info.name;
  target::OpenclAttributes& limits = resolved.opencl;
  TUNED_RETURN_IF_ERROR(ResolveLimit(limits.max_work_group_size, info.max_work_group_size,
                                     "-max-work-group-size", info.name));
  TUNED_RETURN_IF_ERROR(ResolveLimit(limits.local_memory_bytes, info.local_memory_bytes,
                                     "-local-memory-bytes", info.name));
  if (limits.sub_group_size == 0) limits.sub_group_size = info.sub_group_size;
  if (limits.sub_group_size != info.sub_group_size) {
    return InvalidArgumentError("-sub-group-size=" + std::to_string(limits.sub_group_size) +
                                " is not the " + std::to_string(info.sub_group_size) +
                                " of OpenCL device '" + info.name + "'");
  }
  return device;
}

Device::~Device() {
  if (queue_ != nullptr) clReleaseCommandQueue(queue_);
  if (context_ != nullptr) clReleaseContext(context_);
}

StatusOr<target::Target> ResolveTarget(const target::Target& target) {
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Open(target));
  return device->target();
}

}  // namespace tuned::opencl
