#include "compiler/lower/gpu/lower_gpu.h"

#include "compiler/lower/gpu/gpu_internal.h"
#include "compiler/lower/lower.h"

namespace tuned::lower::gpu {

StatusOr<GpuProgram> LowerGpu(const schedule::ScheduleState& state, const GpuLimits& limits,
                              const std::string& name, const GpuLowerOptions& options) {
  for (int id : state.order) {
    const schedule::Stage& st = state.stages[id];
    if (st.is_live() && st.output->dtype.is_float() && st.output->dtype.bits == 16) {
      return InvalidArgumentError("block " + st.name + ": float16 buffers are not generated for GPU targets yet");
    }
  }
  for (const ir::Buffer& b : state.workload->arguments()) {
    if (b->dtype.is_float() && b->dtype.bits == 16) {
      return InvalidArgumentError("buffer " + b->name + ": float16 buffers are not generated for GPU targets yet");
    }
  }
  TUNED_RETURN_IF_ERROR(CheckBindings(state));
  // Guards stay in place on a GPU: a copied loop would copy its shared allocations and
  // barriers, and an edge tile is one of many thread blocks, not a tail of a serial loop.
  TUNED_ASSIGN_OR_RETURN(LoweredFunc func, Lower(state, name, {.hoist_guards = false, .prepack_constants = false}));
  TUNED_ASSIGN_OR_RETURN(func, LowerCrossThreadReductions(std::move(func)));
  TUNED_ASSIGN_OR_RETURN(GpuProgram program, SplitDevice(func));
  for (GpuKernel& kernel : program.kernels) {
    if (options.insert_barriers) {
      TUNED_ASSIGN_OR_RETURN(kernel.body, InsertBarriers(kernel));
    }
    TUNED_RETURN_IF_ERROR(CheckLimits(kernel, limits));
    kernel.index_32bit = FitsInt32(kernel);
  }
  return program;
}

}  // namespace tuned::lower::gpu
