#ifndef TUNED_COMPILER_RUNTIME_OPENCL_KERNEL_H_
#define TUNED_COMPILER_RUNTIME_OPENCL_KERNEL_H_

/// \file
/// Launching one kernel of a built program with a launch configuration in CUDA's terms, and
/// timing it with OpenCL's profiling events.
///
/// CUDA's grid (blocks) and block (threads per block) become OpenCL's global size (grid × block)
/// and local size (block), per dimension x, y, z = OpenCL dimensions 0, 1, 2. CUDA's dynamic
/// shared memory becomes the `__local` pointer argument marked `KernelArg::DynamicShared()`;
/// static `__local` arrays in the kernel are counted from the built kernel. A launch whose block
/// is larger than the target's work-group limit (or the kernel's, or a dimension's), or whose
/// local memory is beyond the target's, is refused with one line before anything is enqueued.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "compiler/runtime/opencl/buffer.h"
#include "compiler/runtime/opencl/program.h"

struct _cl_kernel;

namespace tuned::opencl {

struct LaunchConfig {
  std::array<int64_t, 3> grid = {1, 1, 1};   // blocks per dimension (gridDim)
  std::array<int64_t, 3> block = {1, 1, 1};  // threads per block per dimension (blockDim)
  int64_t dynamic_shared_bytes = 0;          // the DynamicShared() argument's bytes
};

/// One kernel argument, in the order of the kernel's parameters.
class KernelArg {
 public:
  static KernelArg Of(const Buffer& buffer);  // a __global pointer; the buffer must outlive runs
  static KernelArg Int32(int32_t value);
  static KernelArg Int64(int64_t value);
  static KernelArg Float32(float value);
  /// A `__local` pointer of LaunchConfig::dynamic_shared_bytes.
  static KernelArg DynamicShared();

  enum class Kind { kBuffer, kInt32, kInt64, kFloat32, kDynamicShared };
  Kind kind() const { return kind_; }

 private:
  friend class Kernel;
  explicit KernelArg(Kind kind) : kind_(kind) {}
  Kind kind_;
  const Buffer* buffer_ = nullptr;
  int64_t integer_ = 0;
  float real_ = 0;
};

/// Device times of a kernel's runs, from OpenCL profiling events (start to end of each run).
struct KernelTiming {
  std::vector<double> seconds;  // one per timed run, in run order
  double median_seconds = 0;
};

class Kernel {
 public:
  /// Kernel `name` of `program` (which must outlive it). NotFound when the program has none.
  static StatusOr<std::unique_ptr<Kernel>> Create(const Program& program, std::string_view name);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  /// Bytes of `__local` memory the kernel declares itself (not counting DynamicShared()).
  int64_t static_local_bytes() const { return static_local_bytes_; }
  /// The largest work-group this kernel can run with on its device.
  int64_t max_work_group_size() const { return max_work_group_size_; }

  /// The refusals of a launch (see the file comment), without launching.
  Status CheckLaunch(const LaunchConfig& config) const;
  /// Sets `args`, launches once and waits for the kernel to finish.
  Status Run(const LaunchConfig& config, const std::vector<KernelArg>& args);
  /// One untimed run, then `runs` (>= 1) timed ones.
  StatusOr<KernelTiming> Time(const LaunchConfig& config, const std::vector<KernelArg>& args, int runs);

 private:
  Kernel(const Program& program, _cl_kernel* kernel, std::string name)
      : program_(&program), kernel_(kernel), name_(std::move(name)) {}
  Status SetArgs(const LaunchConfig& config, const std::vector<KernelArg>& args);
  StatusOr<double> Enqueue(const LaunchConfig& config);  // seconds on the device

  const Program* program_;
  _cl_kernel* kernel_;
  std::string name_;
  int64_t static_local_bytes_ = 0;
  int64_t max_work_group_size_ = 0;
};

}  // namespace tuned::opencl

#endif  // TUNED_COMPILER_RUNTIME_OPENCL_KERNEL_H_
