#ifndef TUNED_COMPILER_RUNTIME_OPENCL_DEVICE_H_
#define TUNED_COMPILER_RUNTIME_OPENCL_DEVICE_H_

/// \file
/// The OpenCL device of an `opencl` target: which device it names, what its limits are, and the
/// context and profiling queue everything else in this library runs on.
///
/// Without `-device`, the target is the first device of the first platform; `-device=NAME` is
/// the device with exactly that name on any platform. Limits the target leaves out are the
/// device's own; a limit the target sets must be one the device has (a lower one is kept: code
/// is then generated for the smaller budget).

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "target/target.h"

// OpenCL's handle types, declared as cl.h does, so that this header does not include it.
struct _cl_device_id;
struct _cl_context;
struct _cl_command_queue;

namespace tuned::opencl {

struct DeviceInfo {
  std::string platform;                          // "Portable Computing Language"
  std::string name;                              // "pthread-haswell-AMD EPYC"
  std::string version;                           // "OpenCL 3.0 PoCL 3.1+debian ..."
  int compute_units = 0;
  int64_t max_work_group_size = 0;               // work-items per work-group
  std::array<int64_t, 3> max_work_item_sizes{};  // per dimension
  int64_t local_memory_bytes = 0;
  int sub_group_size = 0;  // the preferred work-group size multiple of a kernel: a warp's width
};

class Device {
 public:
  /// Opens the device `target` (a kOpencl target) names. Errors: no OpenCL platform
  /// (Unavailable: install pocl-opencl-icd for the CPU device), no device of that name (the ones
  /// there are named), a limit beyond the device's.
  static StatusOr<std::unique_ptr<Device>> Open(const target::Target& target);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  /// The target with every limit filled in (see the file comment); `-device` is the name.
  const target::Target& target() const { return target_; }

  _cl_device_id* id() const { return id_; }
  _cl_context* context() const { return context_; }
  _cl_command_queue* queue() const { return queue_; }  // in order, with profiling

 private:
  Device() = default;
  DeviceInfo info_;
  target::Target target_;
  _cl_device_id* id_ = nullptr;
  _cl_context* context_ = nullptr;
  _cl_command_queue* queue_ = nullptr;
};

/// `target` with its device and every limit filled in from the device (Device::Open's checks).
StatusOr<target::Target> ResolveTarget(const target::Target& target);

}  // namespace tuned::opencl

#endif  // TUNED_COMPILER_RUNTIME_OPENCL_DEVICE_H_
