#ifndef TUNED_COMPILER_CODEGEN_CUDA_PTXAS_REPORT_H_
#define TUNED_COMPILER_CODEGEN_CUDA_PTXAS_REPORT_H_

/// \file
/// ptxas's resource report (`--ptxas-options=-v`), read from NVRTC's program log. For each entry
/// function ptxas prints, e.g. (NVRTC 13.0):
///
///   ptxas info    : Compiling entry function 'mm' for 'sm_90'
///   ptxas info    : Function properties for mm
///   ptxas         .     272 bytes stack frame, 740 bytes spill stores, 524 bytes spill loads
///   ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem
///
/// Figures ptxas leaves out (no "smem" when a kernel has no shared memory) are 0.

#include <string>
#include <string_view>
#include <vector>

namespace tuned::codegen::cuda {

struct KernelResources {
  std::string name;            // the entry function's (mangled) name
  int registers = 0;           // per thread
  int shared_bytes = 0;        // static shared memory per block
  int spill_store_bytes = 0;   // per thread
  int spill_load_bytes = 0;    // per thread
  int stack_bytes = 0;         // stack frame per thread
  int barriers = 0;            // named barriers used
};

/// Every entry function's report in `log`, in the order ptxas compiled them.
std::vector<KernelResources> ParsePtxasReport(std::string_view log);

}  // namespace tuned::codegen::cuda

#endif  // TUNED_COMPILER_CODEGEN_CUDA_PTXAS_REPORT_H_
