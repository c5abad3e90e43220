#ifndef TUNED_COMPILER_CODEGEN_CUDA_CUDA_BUILD_H_
#define TUNED_COMPILER_CODEGEN_CUDA_CUDA_BUILD_H_

/// \file
/// CUDA C source to a cubin through NVRTC, for one `cuda -arch=sm_XX` target.
///
/// The cubin is SASS for the target's real architecture (`--gpu-architecture=sm_XX`): nothing is
/// left for the driver to JIT when the module is loaded, so a build measured here is the code
/// that runs. The options given to NVRTC are recorded in the result, and ptxas's resource report
/// (registers, shared memory, spills, stack) is parsed into it per kernel. Fast math is off
/// unless asked for: it flushes denormals and approximates division, sqrt, exp and tanh, which
/// breaks the float64 reference.
///
/// A source NVRTC refuses is an InvalidArgument status whose message is one line suitable as a
/// candidate's COMPILE_ERROR reason: the first error line of the log, file and line kept
/// ("kernel.cu(3): error: expected a \";\"").

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/cuda/ptxas_report.h"
#include "target/target.h"

namespace tuned::codegen::cuda {

struct CudaBuildOptions {
  bool fast_math = false;  // --use_fast_math instead of IEEE division, sqrt and denormals
  int max_registers = 0;   // --maxrregcount; 0: ptxas decides
  std::string source_name = "kernel.cu";  // the file name errors and line numbers refer to
};

struct CudaBuild {
  std::string arch;                    // "sm_90", the arch the cubin holds SASS for
  std::vector<std::string> options;    // every option given to NVRTC, in order
  std::string cubin;                   // ELF bytes, loadable with cuModuleLoadData
  std::vector<KernelResources> kernels;  // ptxas's report, one entry per __global__ function
  std::string log;                     // NVRTC's whole program log (ptxas info, warnings)
  double compile_seconds = 0;          // wall time of nvrtcCompileProgram

  /// The report of kernel `name`, or nullptr when the source has no such kernel.
  const KernelResources* FindKernel(std::string_view name) const;
};

/// Compiles `source` for `target` (a kCuda target). Errors: a target of another kind, an arch
/// this NVRTC cannot compile for (naming the ones it can), a source that does not compile (one
/// line, see the file comment).
StatusOr<CudaBuild> BuildCuda(std::string_view source, const target::Target& target,
                              const CudaBuildOptions& options = {});

/// The NVRTC version this library is linked with, e.g. "13.0".
std::string NvrtcVersion();

}  // namespace tuned::codegen::cuda

#endif  // TUNED_COMPILER_CODEGEN_CUDA_CUDA_BUILD_H_
