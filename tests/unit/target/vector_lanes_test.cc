// fp32 vector lanes from a target's CPU and features, matched as whole feature tokens.

#include <gtest/gtest.h>

#include "target/target.h"

namespace tuned::target {
namespace {

int Lanes(const std::string& text) {
  StatusOr<Target> target = ParseTarget(text);
  EXPECT_TRUE(target.ok()) << target.status().message();
  return target.ok() ? target->Fp32VectorLanes() : -1;
}

TEST(Fp32VectorLanes, FromTheCpuTable) {
  EXPECT_EQ(Lanes("llvm -mcpu=znver3 -num-cores=2"), 8);
  EXPECT_EQ(Lanes("llvm -mcpu=znver4 -num-cores=2"), 16);
  EXPECT_EQ(Lanes("llvm -mcpu=sapphirerapids"), 16);
  EXPECT_EQ(Lanes("llvm -mcpu=generic"), 8);
  // A CPU name that only starts like a listed one is not that CPU.
  EXPECT_EQ(Lanes("llvm -mcpu=znver4x"), 8);
}

TEST(Fp32VectorLanes, FromFeatures) {
  EXPECT_EQ(Lanes("llvm -mcpu=znver3 -mattr=+avx512f"), 16);
  EXPECT_EQ(Lanes("llvm -mcpu=znver4 -mattr=-avx512f"), 8);
}

TEST(Fp32VectorLanes, Avx512fIsNotAvx512fp16) {
  // Switching off only the fp16 extension keeps AVX-512F and its 16 fp32 lanes (a substring
  // search for "-avx512f" would find it in "-avx512fp16").
  EXPECT_EQ(Lanes("llvm -mcpu=sapphirerapids -mattr=-avx512fp16"), 16);
  EXPECT_EQ(Lanes("llvm -mcpu=znver4 -mattr=-avx512fp16"), 16);
  StatusOr<Target> target = ParseTarget("llvm -mcpu=znver3 -mattr=+avx512fp16,-avx512f");
  ASSERT_TRUE(target.ok());
  EXPECT_FALSE(target->HasFeature("+avx512f"));
  EXPECT_TRUE(target->HasFeature("+avx512fp16"));
  EXPECT_TRUE(target->HasFeature("-avx512f"));
  EXPECT_FALSE(target->HasFeature("-avx512fp16"));
  EXPECT_EQ(target->Fp32VectorLanes(), 8);  // AVX-512F off takes its extensions with it
}

TEST(Fp32VectorLanes, CudaThreadsComputeScalars) {
  EXPECT_EQ(Lanes("cuda -arch=sm_90"), 1);
}

}  // namespace
}  // namespace tuned::target
