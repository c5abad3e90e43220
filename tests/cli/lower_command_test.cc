// `tuned lower --emit cuda|opencl` on the real binary: a GPU schedule's trace printed as CUDA C
// and OpenCL C, and the one-line refusals of schedules and targets that do not fit.

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "compiler/ir/op_library.h"
#include "tests/cli/run_tuned.h"
#include "tests/support/gpu_schedules.h"

namespace {

using tuned::testing::CommandOutput;
using tuned::testing::RunTuned;

// The hand-tiled matmul's trace in a scratch file.
std::string TiledMatmulTraceFile() {
  auto w = std::make_shared<const tuned::ir::Workload>(*tuned::ir::ParseWorkloadSpec("matmul(M=64,N=64,K=64)"));
  char path[] = "/tmp/tuned_gpu_trace_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << tuned::schedule::TraceToJson(tuned::testing::GpuTiledMatmul(w).trace());
  return path;
}

TEST(TunedLower, EmitsCudaAndOpenclOfAGpuSchedule) {
  std::string trace = TiledMatmulTraceFile();
  CommandOutput cuda = RunTuned("lower -w 'matmul(M=64,N=64,K=64)' --trace " + trace + " --emit cuda");
  ASSERT_EQ(cuda.exit_code, 0) << cuda.all();
  EXPECT_NE(cuda.out.find("extern \"C\" __global__ void __launch_bounds__(256) default_function("),
            std::string::npos) << cuda.out;
  EXPECT_NE(cuda.out.find("__syncthreads();"), std::string::npos);
  CommandOutput opencl = RunTuned("lower -w 'matmul(M=64,N=64,K=64)' --trace " + trace +
                                  " --emit opencl --target opencl");
  ASSERT_EQ(opencl.exit_code, 0) << opencl.all();
  EXPECT_NE(opencl.out.find("barrier(CLK_LOCAL_MEM_FENCE);"), std::string::npos) << opencl.out;
  CommandOutput wrong = RunTuned("lower -w 'matmul(M=64,N=64,K=64)' --trace " + trace +
                                 " --emit cuda --target opencl");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("--emit cuda needs a cuda target, not 'opencl'"), std::string::npos) << wrong.all();
  std::remove(trace.c_str());
}

TEST(TunedLower, RefusesAnUnboundScheduleForAGpuTarget) {
  CommandOutput out = RunTuned("lower -w 'add(M=4,N=4)' --emit cuda --target 'cuda -arch=sm_80'");
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find("block add is not bound to GPU threads"), std::string::npos) << out.all();
}

}  // namespace
