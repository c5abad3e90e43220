// The GPU source printer: golden CUDA C and OpenCL C of the tiled matmul (checked in, read by
// eye for barrier placement and coalesced fills), both dialects' spellings, and the same text
// run on PoCL against the reference and compiled by NVRTC for sm_90.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "tests/support/gpu_schedules.h"
#include "tests/unit/compiler/gpu/gpu_test_util.h"

namespace tuned {
namespace {

using testing::Spec;

using codegen::gpu::Dialect;
using lower::gpu::GpuProgram;

GpuProgram TiledMatmul(const std::string& spec) {
  StatusOr<GpuProgram> program =
      lower::gpu::LowerGpu(testing::GpuTiledMatmul(Spec(spec)), lower::gpu::GpuLimits{}, "tiled_matmul");
  TUNED_CHECK(program.ok()) << program.status().message();
  return std::move(program).value();
}

// Compares with the checked-in file; TUNED_UPDATE_GOLDEN=1 rewrites it (then read the diff).
void ExpectGolden(const std::string& actual, const std::string& file) {
  std::string path = std::string(TUNED_GOLDEN_DIR) + "/" + file;
  if (std::getenv("TUNED_UPDATE_GOLDEN") != nullptr) std::ofstream(path) << actual;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path;
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "golden " << path << " differs (TUNED_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(GpuSource, TiledMatmulCudaIsGolden) {
  ExpectGolden(codegen::gpu::PrintGpuSource(TiledMatmul("matmul(M=64,N=64,K=64)"), Dialect::kCuda),
               "tiled_matmul.cu");
}

TEST(GpuSource, TiledMatmulOpenclIsGolden) {
  ExpectGolden(codegen::gpu::PrintGpuSource(TiledMatmul("matmul(M=64,N=64,K=64)"), Dialect::kOpencl),
               "tiled_matmul.cl");
}

TEST(GpuSource, DialectsSpellKernelsMemoryAndBarriers) {
  GpuProgram program = TiledMatmul("matmul(M=32,N=32,K=16)");
  std::string cuda = codegen::gpu::PrintGpuSource(program, Dialect::kCuda);
  for (const char* needle : {"extern \"C\" __global__ void __launch_bounds__(256) tiled_matmul(",
                             "const float* __restrict__ A", "float* __restrict__ C",
                             "__shared__ float A_shared[256];", "__syncthreads();",
                             "(int)threadIdx.x", "(int)blockIdx.y"}) {
    EXPECT_NE(cuda.find(needle), std::string::npos) << needle << "\n" << cuda;
  }
  std::string opencl = codegen::gpu::PrintGpuSource(program, Dialect::kOpencl);
  for (const char* needle : {"__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void tiled_matmul(",
                             "__global const float* restrict A", "__local float A_shared[256];",
                             "barrier(CLK_LOCAL_MEM_FENCE);", "(int)get_local_id(0)", "(int)get_group_id(1)"}) {
    EXPECT_NE(opencl.find(needle), std::string::npos) << needle << "\n" << opencl;
  }
  EXPECT_EQ(codegen::gpu::PrintGpuSource(program, Dialect::kCuda), cuda);  // deterministic
}

TEST(GpuSource, TiledMatmulRunsOnOpenclAndCompilesForSm90) {
  for (const std::string spec : {"matmul(M=64,N=64,K=64)", "matmul(M=50,N=37,K=19)"}) {
    auto w = Spec(spec);
    GpuProgram program = TiledMatmul(spec);
    auto inputs = ir::RandomInputs(*w, 3);
    auto reference = ir::EvaluateReference(*w, inputs);
    ASSERT_TRUE(reference.ok());
    StatusOr<std::vector<double>> ran = testing::RunOnOpencl(program, inputs);
    if (ran.status().code() == StatusCode::kUnavailable) GTEST_SKIP() << ran.status().message();
    ASSERT_TRUE(ran.ok()) << ran.status().message();
    EXPECT_LE(ir::MaxRelativeError(*ran, reference->at("C")), ir::ToleranceFor(ir::DataType::Float32())) << spec;
    StatusOr<std::string> compiled = testing::CompileWithNvrtc(program);
    if (compiled.status().code() == StatusCode::kUnavailable) GTEST_SKIP() << compiled.status().message();
    ASSERT_TRUE(compiled.ok()) << compiled.status().message();
    EXPECT_NE(compiled->find("registers"), std::string::npos);
  }
}

}  // namespace
}  // namespace tuned
