// Feature extraction: fixed length, deterministic, sensitive to the schedule, and correct on
// programs whose loop nests we know.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "costmodel/features/features.h"
#include "tests/support/random_schedule.h"

namespace tuned::costmodel {
namespace {

using schedule::Factor;

std::shared_ptr<const ir::Workload> Workload(const std::string& spec) {
  StatusOr<ir::Workload> w = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << spec << ": " << w.status().ToString();
  return std::make_shared<const ir::Workload>(std::move(w).value());
}

size_t Index(const std::string& name) {
  const std::vector<std::string>& names = FeatureNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
  }
  ADD_FAILURE() << "no feature named " << name;
  return 0;
}

float Feature(const std::vector<float>& f, const std::string& name) { return f[Index(name)]; }

float Slog(double x) { return float(std::log2(std::fabs(x) + 1.0)); }

std::vector<float> Extract(const schedule::Schedule& sch, const FeatureOptions& options = {}) {
  StatusOr<lower::LoweredFunc> func = lower::Lower(sch);
  EXPECT_TRUE(func.ok()) << func.status().ToString();
  if (!func.ok()) return {};
  return ExtractFeatures(*func, options);
}

// matmul with j split by `factor`, the inner part vectorized or not.
std::vector<float> SplitMatmul(int64_t factor, bool vectorize) {
  schedule::Schedule sch(Workload("matmul(M=64,N=64,K=32)"), /*seed=*/1);
  auto block = sch.GetBlock("C");
  EXPECT_TRUE(block.ok());
  auto loops = sch.GetLoops(*block);
  EXPECT_TRUE(loops.ok());
  auto j = sch.Split((*loops)[1], {Factor{}, Factor{factor}});
  EXPECT_TRUE(j.ok());
  EXPECT_TRUE(sch.Reorder({(*loops)[0], (*j)[0], (*loops)[2], (*j)[1]}).ok());
  if (vectorize) {
    EXPECT_TRUE(sch.Vectorize((*j)[1]).ok());
  }
  return Extract(sch);
}

TEST(FeatureNames, MatchCountAndAreUnique) {
  const std::vector<std::string>& names = FeatureNames();
  ASSERT_EQ(int(names.size()), FeatureCount());
  EXPECT_EQ(FeatureCount(), kTopStores * kStoreFeatures + kGlobalFeatures + kGpuFeatures);
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
  EXPECT_EQ(names.front(), "s0.float_add");
  EXPECT_EQ(names[size_t(FeatureCount() - kGpuFeatures - 1)], "g.rest_float_ops");
  EXPECT_EQ(names.back(), "gpu.vector_requests");
}

TEST(ExtractFeatures, FixedLengthAndDeterministic) {
  auto workload = Workload("conv2d_nchw(N=1,C=3,H=8,W=8,F=4,R=3,S=3,pad=1)");
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    schedule::Schedule sch = testing::RandomSchedule(workload, seed);
    StatusOr<lower::LoweredFunc> func = lower::Lower(sch);
    if (!func.ok()) continue;
    std::vector<float> a = ExtractFeatures(*func);
    std::vector<float> b = ExtractFeatures(*func);
    ASSERT_EQ(int(a.size()), FeatureCount());
    EXPECT_EQ(a, b) << "seed " << seed;
    // The same program from a replayed trace gives the same vector.
    auto replayed = schedule::ReplayTrace(workload, sch.trace());
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    EXPECT_EQ(Extract(*replayed), a) << "seed " << seed;
  }
}

TEST(ExtractFeatures, EmptyProgramIsAllZeroButArguments) {
  lower::LoweredFunc func;
  func.name = "empty";
  func.args = {ir::MakeBuffer("A", ir::DataType::Float32(), {4, 4})};
  std::vector<float> f = ExtractFeatures(func);
  ASSERT_EQ(int(f.size()), FeatureCount());
  EXPECT_FLOAT_EQ(Feature(f, "g.arg_bytes"), Slog(64));
  EXPECT_FLOAT_EQ(Feature(f, "s0.iterations"), 0.f);
  EXPECT_FLOAT_EQ(Feature(f, "g.num_stores"), 0.f);
}

TEST(ExtractFeatures, DefaultMatmulAccessPatterns) {
  const int64_t m = 16, n = 24, k = 8;
  schedule::Schedule sch(Workload("matmul(M=16,N=24,K=8)"), /*seed=*/1);
  std::vector<float> f = Extract(sch);
  ASSERT_FALSE(f.empty());
  // The update C[i, j] += A[i, k] * B[k, j] runs M*N*K times: the most expensive store.
  EXPECT_FLOAT_EQ(Feature(f, "s0.iterations"), Slog(double(m * n * k)));
  EXPECT_FLOAT_EQ(Feature(f, "s0.float_fma"), Slog(double(m * n * k)));
  EXPECT_FLOAT_EQ(Feature(f, "s0.float_mul"), 0.f);
  EXPECT_FLOAT_EQ(Feature(f, "s0.num_loops"), 3.f);
  EXPECT_FLOAT_EQ(Feature(f, "s0.innermost_extent"), Slog(double(k)));
  EXPECT_FLOAT_EQ(Feature(f, "s0.reduce_loops"), 1.f);
  EXPECT_FLOAT_EQ(Feature(f, "s0.reduce_iterations"), Slog(double(k)));
  EXPECT_FLOAT_EQ(Feature(f, "s0.is_update"), 1.f);
  // Along k: A is unit stride, B strides by N, C is invariant (reused K times).
  float zero = 0, unit = 0, other = 0, rw = 0, reuse_k = 0;
  for (int j = 0; j < kBuffersPerStore; ++j) {
    const std::string b = "s0.b" + std::to_string(j) + ".";
    zero += Feature(f, b + "stride_zero");
    unit += Feature(f, b + "stride_unit");
    other += Feature(f, b + "stride_other");
    if (Feature(f, b + "is_read") == 1.f && Feature(f, b + "is_write") == 1.f) {
      rw += 1;
      reuse_k = Feature(f, b + "reuse_count");
      // C is the output: M*N distinct elements.
      EXPECT_FLOAT_EQ(Feature(f, b + "unique_bytes"), Slog(double(m * n * 4)));
    }
    if (Feature(f, b + "stride_other") == 1.f) {
      EXPECT_FLOAT_EQ(Feature(f, b + "stride"), Slog(double(n)));
    }
  }
  EXPECT_EQ(zero, 1.f);
  EXPECT_EQ(unit, 1.f);
  EXPECT_EQ(other, 1.f);
  EXPECT_EQ(rw, 1.f);
  EXPECT_FLOAT_EQ(reuse_k, Slog(double(k)));
  // The init store C[i, j] = 0 runs M*N times: second block.
  EXPECT_FLOAT_EQ(Feature(f, "s1.iterations"), Slog(double(m * n)));
  EXPECT_FLOAT_EQ(Feature(f, "g.num_stores"), 2.f);
  EXPECT_FLOAT_EQ(Feature(f, "g.float_ops"), Slog(2.0 * m * n * k));
  EXPECT_FLOAT_EQ(Feature(f, "g.arg_bytes"), Slog(4.0 * (m * k + k * n + m * n)));
}

TEST(ExtractFeatures, VectorizedDiffersFromSerial) {
  std::vector<float> serial = SplitMatmul(8, /*vectorize=*/false);
  std::vector<float> vectorized = SplitMatmul(8, /*vectorize=*/true);
  ASSERT_FALSE(serial.empty());
  EXPECT_NE(serial, vectorized);
  EXPECT_EQ(Feature(serial, "s0.vec_innermost"), 0.f);
  EXPECT_EQ(Feature(vectorized, "s0.vec_innermost"), 1.f);
  EXPECT_FLOAT_EQ(Feature(vectorized, "s0.vec_lanes"), Slog(8));
  EXPECT_EQ(Feature(serial, "g.vec_loops"), 0.f);
  EXPECT_GE(Feature(vectorized, "g.vec_loops"), 1.f);  // the init nest may share the kind
  // Along j_inner, B and C are unit stride and A is invariant: no gathers.
  EXPECT_EQ(Feature(vectorized, "s0.vec_gathers"), 0.f);
}

TEST(ExtractFeatures, DifferentTilesDiffer) {
  std::vector<float> tile4 = SplitMatmul(4, /*vectorize=*/true);
  std::vector<float> tile16 = SplitMatmul(16, /*vectorize=*/true);
  ASSERT_FALSE(tile4.empty());
  EXPECT_NE(tile4, tile16);
  EXPECT_FLOAT_EQ(Feature(tile4, "s0.innermost_extent"), Slog(4));
  EXPECT_FLOAT_EQ(Feature(tile16, "s0.innermost_extent"), Slog(16));
}

TEST(ExtractFeatures, ParallelBalanceAgainstCores) {
  schedule::Schedule sch(Workload("add(M=6,N=32)"), /*seed=*/1);
  auto block = sch.GetBlock(sch.workload().output_stage().name);
  ASSERT_TRUE(block.ok());
  auto loops = sch.GetLoops(*block);
  ASSERT_TRUE(loops.ok());
  ASSERT_TRUE(sch.Parallel((*loops)[0]).ok());
  FeatureOptions four_cores;
  four_cores.num_cores = 4;
  std::vector<float> f = Extract(sch, four_cores);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(Feature(f, "s0.parallel_loops"), 1.f);
  EXPECT_FLOAT_EQ(Feature(f, "s0.parallel_extent"), Slog(6));
  // 6 iterations on 4 cores: two rounds of 4 slots, 6 of 8 used.
  EXPECT_FLOAT_EQ(Feature(f, "s0.parallel_balance"), 0.75f);
  EXPECT_FLOAT_EQ(Feature(f, "g.num_cores"), Slog(4));
  FeatureOptions six_cores;
  six_cores.num_cores = 6;
  EXPECT_FLOAT_EQ(Feature(Extract(sch, six_cores), "s0.parallel_balance"), 1.f);
}

TEST(ExtractFeatures, RegisterTileShowsLocalAllocation) {
  schedule::Schedule sch(Workload("matmul(M=32,N=32,K=16)"), /*seed=*/1);
  auto c = sch.GetBlock("C");
  ASSERT_TRUE(c.ok());
  auto write_back = sch.CacheWrite(*c, "local");
  ASSERT_TRUE(write_back.ok()) << write_back.status().ToString();
  auto loops = sch.GetLoops(*c);
  ASSERT_TRUE(loops.ok());
  auto i = sch.Split((*loops)[0], {Factor{}, Factor{int64_t(4)}});
  ASSERT_TRUE(i.ok());
  ASSERT_TRUE(sch.ReverseComputeAt(*write_back, (*i)[0]).ok());
  std::vector<float> f = Extract(sch);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(Feature(f, "g.num_allocs"), 1.f);
  EXPECT_GT(Feature(f, "g.alloc_local_bytes"), 0.f);
  // The accumulation writes the local tile.
  EXPECT_EQ(Feature(f, "s0.alloc_local"), 1.f);
  EXPECT_GT(Feature(f, "s0.alloc_bytes"), 0.f);
  EXPECT_EQ(Feature(f, "s0.alloc_global"), 0.f);
}

TEST(ExtractFeatures, EveryLibraryOpFeaturizesUnderRandomSchedules) {
  int featurized = 0;
  for (uint64_t shape_seed = 1; shape_seed <= 3; ++shape_seed) {
    for (const std::string& spec : testing::SmallSpecs(shape_seed)) {
      auto workload = Workload(spec);
      for (uint64_t i = 0; i < 25; ++i) {
        const uint64_t seed = shape_seed * 1000 + i;
        schedule::Schedule sch = testing::RandomSchedule(workload, seed);
        StatusOr<lower::LoweredFunc> func = lower::Lower(sch);
        if (!func.ok()) continue;
        FeatureOptions options;
        options.num_cores = int(seed % 8) + 1;
        std::vector<float> f = ExtractFeatures(*func, options);
        ASSERT_EQ(int(f.size()), FeatureCount()) << spec << " seed " << seed;
        for (size_t j = 0; j < f.size(); ++j) {
          ASSERT_TRUE(std::isfinite(f[j])) << spec << " seed " << seed << " " << FeatureNames()[j];
          ASSERT_GE(f[j], 0.f) << spec << " seed " << seed << " " << FeatureNames()[j];
        }
        EXPECT_GT(Feature(f, "g.num_stores"), 0.f) << spec;
        ++featurized;
      }
    }
  }
  EXPECT_GT(featurized, 800);
}

}  // namespace
}  // namespace tuned::costmodel
