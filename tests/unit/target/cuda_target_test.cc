// CUDA targets: attributes, their per-architecture defaults and limits.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "target/cuda_arch.h"
#include "target/target.h"

namespace tuned::target {
namespace {

using ::testing::HasSubstr;

TEST(CudaTarget, DefaultsComeFromTheArch) {
  StatusOr<Target> target = ParseTarget("cuda -arch=sm_90");
  ASSERT_TRUE(target.ok()) << target.status().message();
  EXPECT_EQ(target->kind, TargetKind::kCuda);
  EXPECT_EQ(target->cuda.arch, "sm_90");
  EXPECT_EQ(target->cuda.max_threads_per_block, 1024);
  EXPECT_EQ(target->cuda.max_shared_memory_per_block, 48 * 1024);  // without opting in
  EXPECT_EQ(target->cuda.warp_size, 32);
  EXPECT_EQ(target->ToString(),
            "cuda -arch=sm_90 -max-threads-per-block=1024 -max-shared-memory-per-block=49152 "
            "-warp-size=32");
}

TEST(CudaTarget, OptionsOverrideDefaultsWithinTheArchLimits) {
  StatusOr<Target> target = ParseTarget(
      "cuda -max-shared-memory-per-block=232448 -arch=sm_90 -max-threads-per-block=512");
  ASSERT_TRUE(target.ok()) << target.status().message();
  EXPECT_EQ(target->cuda.max_threads_per_block, 512);
  EXPECT_EQ(target->cuda.max_shared_memory_per_block, 227 * 1024);  // sm_90's opt-in maximum
  StatusOr<Target> ampere = ParseTarget("cuda -arch=sm_80 -max-shared-memory-per-block=232448");
  ASSERT_FALSE(ampere.ok());
  EXPECT_THAT(ampere.status().message(),
              HasSubstr("-max-shared-memory-per-block: 232448 is outside [1, 166912]"));
}

TEST(CudaTarget, ErrorsNameTheBadOption) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"cuda", "option '-arch' is required"},
           Case{"cuda -arch=sm_91", "-arch: unknown CUDA architecture 'sm_91' (known: sm_50, "},
           Case{"cuda -arch=sm_90 -max-threads-per-block=2048", "-max-threads-per-block: 2048 is outside [1, 1024]"},
           Case{"cuda -arch=sm_90 -warp-size=64", "-warp-size: 64 is outside [32, 32]"},
           Case{"cuda -arch=sm_90 -warp-size=x", "-warp-size: 'x' is not a positive integer"},
           Case{"cuda -arch=sm_90 -mcpu=znver3", "unknown option '-mcpu' (expected -arch, "},
           Case{"cuda -arch", "option '-arch' needs a value"},
       }) {
    StatusOr<Target> target = ParseTarget(c.text);
    ASSERT_FALSE(target.ok()) << c.text;
    EXPECT_EQ(target.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(target.status().message(), HasSubstr(std::string("target '") + c.text + "': "));
    EXPECT_THAT(target.status().message(), HasSubstr(c.message));
    EXPECT_EQ(target.status().message().find('\n'), std::string::npos);
  }
}

TEST(CudaTarget, EveryKnownArchParsesWithItsOwnDefaults) {
  for (std::string_view arch : KnownCudaArchs()) {
    std::optional<CudaArchLimits> limits = FindCudaArch(arch);
    ASSERT_TRUE(limits.has_value());
    StatusOr<Target> target = ParseTarget("cuda -arch=" + std::string(arch));
    ASSERT_TRUE(target.ok()) << target.status().message();
    EXPECT_EQ(target->cuda.max_threads_per_block, limits->max_threads_per_block);
    EXPECT_EQ(target->cuda.max_shared_memory_per_block, limits->default_shared_memory_per_block);
    EXPECT_LE(limits->default_shared_memory_per_block, limits->max_shared_memory_per_block);
    EXPECT_EQ(target->cuda.warp_size, limits->warp_size);
  }
  EXPECT_FALSE(FindCudaArch("sm_9").has_value());
}

}  // namespace
}  // namespace tuned::target
