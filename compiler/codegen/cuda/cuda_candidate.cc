// BuildCudaBinary through NVRTC (builds with the CUDA toolkit; cuda_candidate_unavailable.cc
// otherwise).

#include "compiler/codegen/cuda/cuda_candidate.h"

#include "compiler/codegen/cuda/cuda_build.h"

namespace tuned::codegen::cuda {

Status BuildCudaBinary(const target::Target& target, v1::GpuCandidateProgram& candidate) {
  TUNED_ASSIGN_OR_RETURN(CudaBuild build, BuildCuda(candidate.source(), target));
  candidate.set_binary(std::move(build.cubin));
  candidate.clear_kernels();
  for (const v1::GpuKernelLaunch& launch : candidate.launches()) {
    const KernelResources* found = build.FindKernel(launch.function());
    if (found == nullptr) {
      return InternalError("ptxas reported no resources for kernel '" + launch.function() + "'");
    }
    v1::KernelResourceUsage* usage = candidate.add_kernels();
    usage->set_function(launch.function());
    usage->set_registers(uint32_t(found->registers));
    usage->set_shared_bytes(uint32_t(found->shared_bytes));
    usage->set_spill_store_bytes(uint32_t(found->spill_store_bytes));
    usage->set_spill_load_bytes(uint32_t(found->spill_load_bytes));
    usage->set_stack_bytes(uint32_t(found->stack_bytes));
  }
  return CheckRegisterBudget(candidate);
}

std::string CudaCompilerVersion() { return "NVRTC " + NvrtcVersion(); }

}  // namespace tuned::codegen::cuda
