#ifndef TUNED_COMPILER_CODEGEN_CUDA_CUBIN_H_
#define TUNED_COMPILER_CODEGEN_CUDA_CUBIN_H_

/// \file
/// What a cubin's ELF header says: that it is CUDA machine code, and for which SM.

#include <string>
#include <string_view>

#include "common/status.h"

namespace tuned::codegen::cuda {

/// The SM architecture a cubin holds SASS for ("sm_90"). Refuses bytes that are not a 64-bit
/// little-endian ELF file for the CUDA machine (EM_CUDA, 190).
StatusOr<std::string> CubinArch(std::string_view cubin);

}  // namespace tuned::codegen::cuda

#endif  // TUNED_COMPILER_CODEGEN_CUDA_CUBIN_H_
