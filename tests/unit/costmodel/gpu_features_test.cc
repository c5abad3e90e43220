// The GPU block of the feature vector: launch configuration and occupancy of a hand schedule
// whose kernel we know, coalescing of global accesses, shared-memory bank conflicts, zeros for
// CPU candidates, and finite values on random GPU schedules of every library op.

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/lower.h"
#include "costmodel/features/features.h"
#include "costmodel/features/gpu_features.h"
#include "tests/support/gpu_schedules.h"
#include "tests/support/random_schedule.h"
#include "tests/support/workload_spec.h"

namespace tuned::costmodel {
namespace {

std::shared_ptr<const ir::Workload> Workload(const std::string& spec) { return testing::WorkloadOfSpec(spec); }

float Slog(double x) { return float(std::log2(std::fabs(x) + 1.0)); }

float Gpu(const std::vector<float>& block, const std::string& name) {
  const std::vector<std::string>& names = GpuFeatureNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return block[i];
  }
  ADD_FAILURE() << "no GPU feature named " << name;
  return 0;
}

lower::gpu::GpuProgram LowerKernels(const schedule::Schedule& sch) {
  StatusOr<lower::gpu::GpuProgram> program = lower::gpu::LowerGpu(sch, lower::gpu::NoGpuLimits());
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? std::move(program).value() : lower::gpu::GpuProgram{};
}

TEST(GpuFeatures, NamesAndLayout) {
  ASSERT_EQ(int(GpuFeatureNames().size()), kGpuFeatures);
  const std::vector<std::string>& names = FeatureNames();
  ASSERT_EQ(int(names.size()), FeatureCount());
  EXPECT_EQ(names[size_t(FeatureCount() - kGpuFeatures)], "gpu.kernels");
  EXPECT_EQ(names.back(), "gpu.vector_requests");
}

// tests/support's tiled matmul on 64³: grid 2x2, block 16x16, A and B tiles of 32x8 and 8x32
// floats in shared memory (2048 bytes), 8 k tiles with two barriers each, a 2x2 accumulator.
TEST(GpuFeatures, TiledMatmulLaunchAndOccupancy) {
  const lower::gpu::GpuProgram program = LowerKernels(testing::GpuTiledMatmul(Workload("matmul(M=64,N=64,K=64)")));
  ASSERT_EQ(program.kernels.size(), 1u);
  ASSERT_EQ(program.kernels[0].shared_bytes, 2048);
  const std::vector<float> f = ExtractGpuFeatures(program);
  EXPECT_EQ(Gpu(f, "kernels"), 1.f);
  EXPECT_FLOAT_EQ(Gpu(f, "threads_per_block"), Slog(256));
  EXPECT_FLOAT_EQ(Gpu(f, "blocks"), Slog(4));
  EXPECT_FLOAT_EQ(Gpu(f, "warp_use"), 1.f);
  EXPECT_FLOAT_EQ(Gpu(f, "shared_bytes"), Slog(2048));
  EXPECT_FLOAT_EQ(Gpu(f, "local_bytes"), Slog(4 * 4));
  EXPECT_FLOAT_EQ(Gpu(f, "barriers"), Slog(16));
  // 8 blocks of 256 threads fill the 2048 threads of an SM; shared memory allows 48.
  EXPECT_FLOAT_EQ(Gpu(f, "occupancy"), 1.f);

  // Per thread: 8 loads each of A and B (one per k tile), 4 stores of C; 1024 threads.
  EXPECT_FLOAT_EQ(Gpu(f, "global_requests"), Slog((8 + 8 + 4) * 1024));
  // The first warp (threadIdx.y 0 and 1): A reads 4 runs of 8 floats (4 sectors), B one row of
  // 32 floats (4 sectors), C stores every other float of two rows 64 floats apart (8 sectors).
  EXPECT_FLOAT_EQ(Gpu(f, "global_sectors"), (8 * 4 + 8 * 4 + 4 * 8) / 20.f);
  EXPECT_FLOAT_EQ(Gpu(f, "global_unit") + Gpu(f, "global_invariant") + Gpu(f, "global_strided"), 1.f);
  // C's store has stride 2 along threadIdx.x.
  EXPECT_GE(Gpu(f, "global_strided"), 4 / 20.f);
  // Fills of 1 and reads of 8 x 2 x 2 per k tile, of each shared tile.
  EXPECT_FLOAT_EQ(Gpu(f, "shared_requests"), Slog((8 + 8 * 32) * 2 * 1024));
  // Fills are unit stride, A's reads a broadcast, B's reads stride 2 over 16 lanes: no conflict.
  EXPECT_FLOAT_EQ(Gpu(f, "shared_conflict"), 1.f);
  EXPECT_FLOAT_EQ(Gpu(f, "shared_conflict_max"), 1.f);
  EXPECT_EQ(Gpu(f, "vector_requests"), 0.f);

  // Shared memory limits occupancy where an SM holds little of it.
  GpuFeatureOptions small_sm;
  small_sm.shared_bytes_per_sm = 4096;
  EXPECT_FLOAT_EQ(Gpu(ExtractGpuFeatures(program, small_sm), "occupancy"), 2 * 256 / 2048.f);
}

TEST(GpuFeatures, VectorizedFillsAreVectorRequests) {
  testing::MatmulTiles tiles;
  tiles.block_m = tiles.block_n = 64;
  tiles.tile_k = 16;
  tiles.fill_vector = 4;
  const std::vector<float> f =
      ExtractGpuFeatures(LowerKernels(testing::GpuTiledMatmul(Workload("matmul(M=128,N=128,K=64)"), tiles)));
  EXPECT_GT(Gpu(f, "vector_requests"), 0.f);
  EXPECT_LT(Gpu(f, "vector_requests"), 1.f);
}

// C = A x B with one of C's axes on threadIdx.x, the other on blockIdx.x.
schedule::Schedule NaiveMatmul(bool j_on_threads) {
  schedule::Schedule sch(Workload("matmul(M=64,N=64,K=16)"), 0);
  schedule::BlockRV c = sch.GetBlock("C").value();
  std::vector<schedule::LoopRV> loops = sch.GetLoops(c).value();
  EXPECT_TRUE(sch.Bind(loops[0], j_on_threads ? "blockIdx.x" : "threadIdx.x").ok());
  EXPECT_TRUE(sch.Bind(loops[1], j_on_threads ? "threadIdx.x" : "blockIdx.x").ok());
  return sch;
}

TEST(GpuFeatures, CoalescedAndStridedGlobalAccesses) {
  const std::vector<float> coalesced = ExtractGpuFeatures(LowerKernels(NaiveMatmul(true)));
  const std::vector<float> strided = ExtractGpuFeatures(LowerKernels(NaiveMatmul(false)));
  // j on the lanes: C and B move by one float, A is a broadcast; i on the lanes: C and A move
  // by a row (64 and 16 floats), B is the broadcast.
  EXPECT_GT(Gpu(coalesced, "global_unit"), 0.5f);
  EXPECT_EQ(Gpu(coalesced, "global_strided"), 0.f);
  EXPECT_EQ(Gpu(strided, "global_unit"), 0.f);
  EXPECT_GT(Gpu(strided, "global_strided"), 0.5f);
  EXPECT_GT(Gpu(coalesced, "global_invariant"), 0.f);
  EXPECT_GT(Gpu(strided, "global_invariant"), 0.f);
  EXPECT_LE(Gpu(coalesced, "global_sectors"), 4.f);
  EXPECT_GT(Gpu(strided, "global_sectors"), 16.f);
}

// One kernel of 32 threads storing to a shared array at threadIdx.x * stride.
lower::gpu::GpuProgram SharedStore(int64_t stride) {
  ir::Var tx = ir::MakeVar("tx");
  ir::Buffer s = ir::MakeBuffer("S", ir::DataType::Float32(), {32 * 32}, ir::MemoryScope::kShared);
  lower::gpu::GpuKernel kernel;
  kernel.name = "k";
  kernel.block = {32, 1, 1};
  kernel.axes = {{"threadIdx.x", tx, 32}};
  kernel.shared = {s};
  kernel.shared_bytes = 32 * 32 * 4;
  kernel.body = ir::MakeStore(s, {ir::AsExpr(tx) * ir::MakeInt(stride)}, ir::MakeFloat(1));
  lower::gpu::GpuProgram program;
  program.kernels.push_back(kernel);
  return program;
}

TEST(GpuFeatures, SharedBankConflicts) {
  EXPECT_EQ(Gpu(ExtractGpuFeatures(SharedStore(1)), "shared_conflict"), 1.f);
  EXPECT_EQ(Gpu(ExtractGpuFeatures(SharedStore(2)), "shared_conflict"), 2.f);
  EXPECT_EQ(Gpu(ExtractGpuFeatures(SharedStore(32)), "shared_conflict"), 32.f);
  EXPECT_EQ(Gpu(ExtractGpuFeatures(SharedStore(32)), "shared_conflict_max"), 32.f);
  EXPECT_EQ(Gpu(ExtractGpuFeatures(SharedStore(33)), "shared_conflict"), 1.f);
  EXPECT_EQ(Gpu(ExtractGpuFeatures(SharedStore(0)), "shared_conflict"), 1.f);  // a broadcast
}

TEST(GpuFeatures, CpuCandidatesHaveAZeroGpuBlock) {
  schedule::Schedule sch(Workload("matmul(M=32,N=32,K=32)"), 0);
  StatusOr<lower::LoweredFunc> func = lower::Lower(sch);
  ASSERT_TRUE(func.ok());
  const std::vector<float> f = ExtractFeatures(*func);
  ASSERT_EQ(int(f.size()), FeatureCount());
  for (int i = FeatureCount() - kGpuFeatures; i < FeatureCount(); ++i) EXPECT_EQ(f[size_t(i)], 0.f) << i;
}

TEST(GpuFeatures, GpuCandidatesKeepTheirLoopFeatures) {
  const schedule::Schedule sch = testing::GpuTiledMatmul(Workload("matmul(M=64,N=64,K=64)"));
  StatusOr<lower::LoweredFunc> func = lower::Lower(sch, "kernel", {.hoist_guards = false});
  ASSERT_TRUE(func.ok());
  const std::vector<float> cpu = ExtractFeatures(*func);
  const std::vector<float> gpu = ExtractFeatures(*func, LowerKernels(sch));
  const size_t loop = size_t(FeatureCount() - kGpuFeatures);
  EXPECT_EQ(std::vector<float>(cpu.begin(), cpu.begin() + long(loop)),
            std::vector<float>(gpu.begin(), gpu.begin() + long(loop)));
  EXPECT_EQ(gpu[loop], 1.f);  // gpu.kernels
}

TEST(GpuFeatures, RandomGpuSchedulesOfEveryOpAreFinite) {
  int lowered = 0;
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    for (const std::string& spec : testing::SmallSpecs(seed)) {
      std::shared_ptr<const ir::Workload> w = Workload(spec);
      const schedule::Schedule sch = testing::RandomGpuSchedule(w, seed);
      StatusOr<lower::gpu::GpuProgram> program = lower::gpu::LowerGpu(sch, lower::gpu::NoGpuLimits());
      if (!program.ok()) continue;
      ++lowered;
      const std::vector<float> f = ExtractGpuFeatures(*program);
      ASSERT_EQ(int(f.size()), kGpuFeatures);
      for (int j = 0; j < kGpuFeatures; ++j) {
        ASSERT_TRUE(std::isfinite(f[size_t(j)])) << spec << " seed " << seed << " " << GpuFeatureNames()[size_t(j)];
        ASSERT_GE(f[size_t(j)], 0.f) << spec << " seed " << seed << " " << GpuFeatureNames()[size_t(j)];
      }
      EXPECT_EQ(ExtractGpuFeatures(*program), f) << "deterministic";
      EXPECT_GE(Gpu(f, "kernels"), 1.f);
    }
  }
  EXPECT_GT(lowered, 10);
}

}  // namespace
}  // namespace tuned::costmodel
