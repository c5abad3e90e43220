// CUDA C through NVRTC for real (no GPU needed): cubins for the requested arch, the options
// recorded, ptxas's resource report moving the right way, one-line compile errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/codegen/cuda/cubin.h"
#include "compiler/codegen/cuda/cuda_build.h"
#include "tests/support/cuda_kernels.h"

namespace tuned::codegen::cuda {
namespace {

using ::tuned::test_kernels::kRegisterBlockedCuda;
using ::tuned::test_kernels::TiledMatmulCuda;

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

target::Target Cuda(const std::string& arch) {
  StatusOr<target::Target> target = target::ParseTarget("cuda -arch=" + arch);
  EXPECT_TRUE(target.ok()) << target.status().message();
  return *target;
}

CudaBuild Build(std::string_view source, const std::string& arch, const CudaBuildOptions& options = {}) {
  StatusOr<CudaBuild> build = BuildCuda(source, Cuda(arch), options);
  EXPECT_TRUE(build.ok()) << build.status().message();
  return build.ok() ? *build : CudaBuild{};
}

TEST(NvrtcBuild, TiledMatmulBecomesACubinForEachRequestedArch) {
  for (const std::string arch : {"sm_80", "sm_90"}) {
    CudaBuild build = Build(TiledMatmulCuda(16), arch);
    EXPECT_EQ(build.arch, arch);
    StatusOr<std::string> cubin_arch = CubinArch(build.cubin);
    ASSERT_TRUE(cubin_arch.ok()) << cubin_arch.status().message();
    EXPECT_EQ(*cubin_arch, arch);
    EXPECT_THAT(build.options, Contains("--gpu-architecture=" + arch));  // SASS, no PTX JIT
    EXPECT_GT(build.compile_seconds, 0);

    const KernelResources* kernel = build.FindKernel("tiled_matmul");
    ASSERT_NE(kernel, nullptr) << build.log;
    EXPECT_EQ(kernel->shared_bytes, 2 * 16 * 16 * 4);  // the two float tiles
    EXPECT_GE(kernel->registers, 8);
    EXPECT_LE(kernel->registers, 255);
    EXPECT_EQ(kernel->barriers, 1);
    EXPECT_EQ(kernel->spill_store_bytes, 0);
    EXPECT_EQ(kernel->spill_load_bytes, 0);
    EXPECT_EQ(build.FindKernel("other"), nullptr);
  }
}

TEST(NvrtcBuild, SharedBytesFollowTheTileSize) {
  const KernelResources* small = nullptr;
  const KernelResources* large = nullptr;
  CudaBuild small_build = Build(TiledMatmulCuda(8), "sm_90");
  CudaBuild large_build = Build(TiledMatmulCuda(32), "sm_90");
  small = small_build.FindKernel("tiled_matmul");
  large = large_build.FindKernel("tiled_matmul");
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(small->shared_bytes, 2 * 8 * 8 * 4);
  EXPECT_EQ(large->shared_bytes, 2 * 32 * 32 * 4);
}

TEST(NvrtcBuild, FastMathIsOffUnlessAskedFor) {
  CudaBuild precise = Build(TiledMatmulCuda(16), "sm_90");
  EXPECT_THAT(precise.options, Not(Contains("--use_fast_math")));
  EXPECT_THAT(precise.options, Contains("--ftz=false"));
  EXPECT_THAT(precise.options, Contains("--prec-div=true"));
  CudaBuild fast = Build(TiledMatmulCuda(16), "sm_90", {.fast_math = true});
  EXPECT_THAT(fast.options, Contains("--use_fast_math"));
  EXPECT_THAT(fast.options, Not(Contains("--ftz=false")));
}

TEST(NvrtcBuild, LowRegisterCapMakesPtxasSpill) {
  CudaBuild free = Build(kRegisterBlockedCuda, "sm_90");
  CudaBuild capped = Build(kRegisterBlockedCuda, "sm_90", {.max_registers = 32});
  const KernelResources* unconstrained = free.FindKernel("blocked_8x8");
  const KernelResources* spilling = capped.FindKernel("blocked_8x8");
  ASSERT_NE(unconstrained, nullptr) << free.log;
  ASSERT_NE(spilling, nullptr) << capped.log;
  EXPECT_THAT(capped.options, Contains("--maxrregcount=32"));
  EXPECT_GT(unconstrained->registers, 64);  // 64 accumulators live at once
  EXPECT_EQ(unconstrained->spill_store_bytes, 0);
  EXPECT_LE(spilling->registers, 32);
  EXPECT_GT(spilling->spill_store_bytes, 0);
  EXPECT_GT(spilling->spill_load_bytes, 0);
  EXPECT_GT(spilling->stack_bytes, unconstrained->stack_bytes);
}

TEST(NvrtcBuild, SyntaxErrorIsOneLineWithFileAndLine) {
  const char* source =
      "extern \"C\" __global__ void broken(float* x) {\n"
      "  int i = threadIdx.x\n"
      "  x[i] = 1.0f;\n"
      "}\n";
  StatusOr<CudaBuild> build = BuildCuda(source, Cuda("sm_90"), {.source_name = "broken.cu"});
  ASSERT_FALSE(build.ok());
  EXPECT_EQ(build.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(build.status().message(), StartsWith("broken.cu(3): error: expected a \";\""));
  EXPECT_EQ(build.status().message().find('\n'), std::string::npos);
}

TEST(NvrtcBuild, UndeclaredNameNamesTheName) {
  const char* source = "extern \"C\" __global__ void k(float* x) { x[0] = missing_value; }\n";
  StatusOr<CudaBuild> build = BuildCuda(source, Cuda("sm_80"));
  ASSERT_FALSE(build.ok());
  EXPECT_THAT(build.status().message(), HasSubstr("kernel.cu(1): error: identifier \"missing_value\""));
}

TEST(NvrtcBuild, ArchThisNvrtcDroppedIsRefusedBeforeCompiling) {
  // The target table knows sm_60; CUDA 13's NVRTC starts at sm_75.
  StatusOr<CudaBuild> build = BuildCuda(TiledMatmulCuda(16), Cuda("sm_60"));
  ASSERT_FALSE(build.ok());
  EXPECT_THAT(build.status().message(), HasSubstr("cannot compile for sm_60 (it supports sm_"));
  EXPECT_THAT(build.status().message(), HasSubstr("sm_90"));
}

TEST(NvrtcBuild, OtherTargetKindsAreRefused) {
  StatusOr<target::Target> cpu = target::ParseTarget("llvm -mcpu=generic");
  ASSERT_TRUE(cpu.ok());
  StatusOr<CudaBuild> build = BuildCuda(TiledMatmulCuda(16), *cpu);
  ASSERT_FALSE(build.ok());
  EXPECT_THAT(build.status().message(), HasSubstr("a CUDA build needs a cuda target, not 'llvm"));
}

TEST(NvrtcBuild, VersionIsReported) { EXPECT_THAT(NvrtcVersion(), ::testing::MatchesRegex("[0-9]+\\.[0-9]+")); }

}  // namespace
}  // namespace tuned::codegen::cuda
