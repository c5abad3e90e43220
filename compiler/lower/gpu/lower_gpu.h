#ifndef TUNED_COMPILER_LOWER_GPU_LOWER_GPU_H_
#define TUNED_COMPILER_LOWER_GPU_LOWER_GPU_H_

/// \file
/// GPU lowering: a schedule whose stages are bound to blockIdx/threadIdx becomes a sequence of
/// kernels (gpu_program.h). The pipeline is
///   1. binding checks (check_bindings.cc): every stage runs inside a kernel, no store is run
///      redundantly by threads that differ only in an axis the stage does not bind, shared
///      stages do not bind blockIdx, local stages bind no thread axis, global intermediates are
///      computed at the root (their own kernel);
///   2. bound inference and loop nests as for the CPU (compiler/lower/lower.h), where a shared
///      stage's region covers what its whole block reads;
///   2b. cross-thread reductions (cross_thread_reduction.cc): a reduction loop bound to a
///      threadIdx axis becomes per-thread partials combined by a tree in shared memory;
///   3. the host/device split (device_split.cc): each root nest becomes a kernel, thread-bound
///      loops become its axes (one extent per axis), shared buffers move to kernel scope;
///   4. barriers (barriers.cc) before a shared read that may see another thread's write, before
///      a shared write that may clobber another thread's pending read, and at the end of a loop
///      whose next iteration would do either;
///   5. limits (threads per block, per-dimension sizes, shared bytes) and the index width.
/// Every refusal is one InvalidArgument line, before anything is built or run.

#include <string>
#include <string_view>

#include "common/status.h"
#include "compiler/lower/gpu/gpu_program.h"
#include "compiler/schedule/schedule.h"

namespace tuned::lower::gpu {

/// What a kernel may use; 0 leaves a limit unchecked (an OpenCL device's own, checked at launch).
struct GpuLimits {
  int64_t max_threads_per_block = 1024;
  std::array<int64_t, 3> max_block = {1024, 1024, 64};
  std::array<int64_t, 3> max_grid = {2147483647, 65535, 65535};
  int64_t max_shared_bytes = 49152;
};

/// The limits a kernel can exceed, in the order they are checked; the search counts the
/// candidates it drops by these names (GpuLimitName).
enum class GpuLimitKind { kNone, kThreadsPerBlock, kBlockDimension, kGridDimension, kSharedBytes };

/// "threads_per_block", "block_dimension", "grid_dimension", "shared_bytes" ("none").
std::string_view GpuLimitName(GpuLimitKind kind);

/// The first of `limits` that `kernel` exceeds (kNone: within all of them); when one is and
/// `message` is given, the one-line refusal LowerGpu gives ("kernel k: 2048 threads per block,
/// more than the target's 1024").
GpuLimitKind ExceededLimit(const GpuKernel& kernel, const GpuLimits& limits, std::string* message = nullptr);

/// Limits that check nothing: lowering alone, the limits left to the caller (ExceededLimit).
GpuLimits NoGpuLimits();

struct GpuLowerOptions {
  /// Test-only: leave barriers out, so that the race checker has a race to find.
  bool insert_barriers = true;
};

StatusOr<GpuProgram> LowerGpu(const schedule::ScheduleState& state, const GpuLimits& limits,
                              const std::string& name = "kernel", const GpuLowerOptions& options = {});
inline StatusOr<GpuProgram> LowerGpu(const schedule::Schedule& sch, const GpuLimits& limits,
                                     const std::string& name = "kernel",
                                     const GpuLowerOptions& options = {}) {
  return LowerGpu(sch.state(), limits, name, options);
}

}  // namespace tuned::lower::gpu

#endif  // TUNED_COMPILER_LOWER_GPU_LOWER_GPU_H_
