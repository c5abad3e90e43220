#ifndef TUNED_TARGET_CUDA_ARCH_H_
#define TUNED_TARGET_CUDA_ARCH_H_

/// \file
/// What the CUDA targets know about each GPU architecture: the defaults of a CUDA target's
/// attributes and the limits its options are checked against.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuned::target {

struct CudaArchLimits {
  std::string_view arch;                  // "sm_90"
  int max_threads_per_block;              // hardware limit (1024 on every listed arch)
  int default_shared_memory_per_block;    // bytes a block gets without opting in (48 KiB)
  int max_shared_memory_per_block;        // bytes a block may use after opting in
  int warp_size;
};

/// The limits of `arch` ("sm_80"), or nullopt for an architecture not in the table.
std::optional<CudaArchLimits> FindCudaArch(std::string_view arch);

/// The known architectures, oldest first, for error messages.
std::vector<std::string_view> KnownCudaArchs();

}  // namespace tuned::target

#endif  // TUNED_TARGET_CUDA_ARCH_H_
