#ifndef TUNED_COMPILER_LOWER_GPU_GPU_INTERNAL_H_
#define TUNED_COMPILER_LOWER_GPU_GPU_INTERNAL_H_

/// \file
/// The steps of GPU lowering (private to compiler/lower/gpu; the order is in lower_gpu.h).

#include "common/status.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/lowered_func.h"

namespace tuned::lower::gpu {

/// Step 1: the binding rules, on the schedule (names blocks and loops).
Status CheckBindings(const schedule::ScheduleState& state);

/// Step 2b: every reduction loop bound to a threadIdx axis becomes per-thread partial results
/// combined in shared memory by a tree (cross_thread_reduction.cc); fails where the reduction
/// is not of that form (its init right before the loop, one element updated by +, max or min).
StatusOr<LoweredFunc> LowerCrossThreadReductions(LoweredFunc func);

/// Step 3: root nests become kernels.
StatusOr<GpuProgram> SplitDevice(const LoweredFunc& func);

/// Step 4: barriers in one kernel's body; fails where one would sit under a thread-dependent
/// branch.
StatusOr<ir::Stmt> InsertBarriers(const GpuKernel& kernel);

/// Step 5: refusals beyond `limits`, and the index width.
Status CheckLimits(const GpuKernel& kernel, const GpuLimits& limits);
bool FitsInt32(const GpuKernel& kernel);

}  // namespace tuned::lower::gpu

#endif  // TUNED_COMPILER_LOWER_GPU_GPU_INTERNAL_H_
