#ifndef TUNED_COMPILER_CODEGEN_CUDA_CUDA_CANDIDATE_H_
#define TUNED_COMPILER_CODEGEN_CUDA_CUDA_CANDIDATE_H_

/// \file
/// The device build of a CUDA candidate, done on a CPU (a worker's, ahead of the GPU, or
/// `tuned compile`'s): its source compiled by NVRTC into a cubin for the target's arch
/// (cuda_build.h), ptxas's report kept per kernel, and each launch's block checked against the
/// register file, so that neither a compile nor an impossible launch ever occupies the device.
/// Part of tuned_gpu_candidate, which every build has: a build without the CUDA toolkit refuses
/// CUDA candidates with one line (cuda_candidate_unavailable.cc).

#include <cstdint>
#include <string>

#include "common/status.h"
#include "target/target.h"
#include "tuned/v1/gpu_runner.pb.h"

namespace tuned::codegen::cuda {

/// 32-bit registers one block may hold: the largest of any architecture the CUDA targets know
/// (cuda_arch.h), so this check never refuses a launch a device could run. The runner checks
/// each function against its own device's limit as well.
inline constexpr int64_t kRegistersPerBlock = 65536;

/// Fills `candidate.binary` (the cubin) and `candidate.kernels` (ptxas's report) for `target`
/// (a kCuda target) from `candidate.source`. Errors are one line, a COMPILE_ERROR's reason:
/// NVRTC's first error, a kernel ptxas did not report, a block beyond the register file.
Status BuildCudaBinary(const target::Target& target, v1::GpuCandidateProgram& candidate);

/// Whether each launch's block fits kRegistersPerBlock: registers per thread, allocated per warp
/// in units of 256, times the block's warps.
Status CheckRegisterBudget(const v1::GpuCandidateProgram& candidate);

/// The device compiler of CUDA candidates, "NVRTC 13.0"; empty in a build without it.
std::string CudaCompilerVersion();

}  // namespace tuned::codegen::cuda

#endif  // TUNED_COMPILER_CODEGEN_CUDA_CUDA_CANDIDATE_H_
