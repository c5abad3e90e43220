// ptxas's resource report as NVRTC 13 writes it, parsed line by line.

#include <gtest/gtest.h>

#include "compiler/codegen/cuda/ptxas_report.h"

namespace tuned::codegen::cuda {
namespace {

TEST(PtxasReport, ReadsEveryEntryFunctionAndSkipsDeviceFunctions) {
  // A log with two kernels, a non-inlined device function and a kernel without shared memory.
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'tiled' for 'sm_90'\n"
      "ptxas info    : Function properties for tiled\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'spilly' for 'sm_90'\n"
      "ptxas info    : Function properties for spilly\n"
      "ptxas         .     272 bytes stack frame, 740 bytes spill stores, 524 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers, 272 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 125.363 ms\n";
  std::vector<KernelResources> kernels = ParsePtxasReport(log);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "tiled");
  EXPECT_EQ(kernels[0].registers, 32);
  EXPECT_EQ(kernels[0].barriers, 1);
  EXPECT_EQ(kernels[0].shared_bytes, 2048);
  EXPECT_EQ(kernels[0].stack_bytes, 0);  // helper's 64 bytes are not tiled's
  EXPECT_EQ(kernels[1].name, "spilly");
  EXPECT_EQ(kernels[1].stack_bytes, 272);
  EXPECT_EQ(kernels[1].spill_store_bytes, 740);
  EXPECT_EQ(kernels[1].spill_load_bytes, 524);
  EXPECT_EQ(kernels[1].shared_bytes, 0);
}

TEST(PtxasReport, LogWithoutReportGivesNoKernels) {
  EXPECT_TRUE(ParsePtxasReport("").empty());
  EXPECT_TRUE(ParsePtxasReport("kernel.cu(2): warning #177-D: variable \"i\" was declared\n").empty());
}

}  // namespace
}  // namespace tuned::codegen::cuda
