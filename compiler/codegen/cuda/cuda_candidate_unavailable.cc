// BuildCudaBinary in a build without the CUDA toolkit (TUNED_ENABLE_CUDA off): CUDA candidates
// are refused, with the reason.

#include "compiler/codegen/cuda/cuda_candidate.h"

namespace tuned::codegen::cuda {

Status BuildCudaBinary(const target::Target& target, v1::GpuCandidateProgram&) {
  return UnimplementedError("target '" + target.ToString() +
                            "': this build has no NVRTC (install the CUDA toolkit and reconfigure, TUNED_ENABLE_CUDA)");
}

std::string CudaCompilerVersion() { return ""; }

}  // namespace tuned::codegen::cuda
