// GPU lowering: kernels and launch configurations, barriers, the refusals (each one line, before
// anything runs), and the race checker of the GPU interpreter finding a removed barrier.

#include <gtest/gtest.h>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/pipeline.h"
#include "tests/support/expect_error.h"
#include "tests/support/gpu_schedules.h"
#include "tests/support/random_schedule.h"
#include "tests/unit/compiler/gpu/gpu_test_util.h"

namespace tuned {
namespace {

using testing::CountBarriers;
using testing::ExpectMatchesReference;
using testing::Spec;

using lower::gpu::GpuLimits;
using lower::gpu::GpuProgram;
using schedule::Schedule;

// The test-only hook: the program with its `index`-th barrier (program order) taken out.
ir::Stmt WithoutBarrier(const ir::Stmt& body, int index) {
  struct Remover : ir::IRMutator {
    int index, seen = 0;
    ir::Stmt MutateSeq(const ir::Seq* op, const ir::Stmt& self) override {
      std::vector<ir::Stmt> kept;
      for (const ir::Stmt& s : op->stmts) {
        if (s.as<ir::Barrier>() && seen++ == index) continue;
        kept.push_back(Mutate(s));
      }
      return ir::MakeSeq(std::move(kept));
    }
  } remover;
  remover.index = index;
  return remover.Mutate(body);
}

TEST(GpuLowering, TiledMatmulIsOneKernelWithItsLaunchConfiguration) {
  auto w = Spec("matmul(M=64,N=32,K=24)");
  StatusOr<GpuProgram> program = lower::gpu::LowerGpu(testing::GpuTiledMatmul(w), GpuLimits{}, "matmul");
  ASSERT_TRUE(program.ok()) << program.status().message();
  ASSERT_EQ(program->kernels.size(), 1u);
  const lower::gpu::GpuKernel& k = program->kernels[0];
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{1, 2, 1}));  // N/32 blocks along x, M/32 along y
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{16, 16, 1}));
  ASSERT_EQ(k.shared.size(), 2u);
  EXPECT_EQ(k.shared_bytes, (32 * 8 + 8 * 32) * 4);  // the block's A and B tiles of one k step
  EXPECT_TRUE(k.index_32bit);
  // The fill waits for the previous tile's readers (end of the k loop), the compute for the fill.
  EXPECT_EQ(CountBarriers(k.body), 2) << ir::ToString(k.body);
  ExpectMatchesReference(*program, *w);
}

TEST(GpuLowering, ImperfectTilesStillMatch) {
  auto w = Spec("matmul(M=50,N=40,K=21)");
  StatusOr<GpuProgram> program = lower::gpu::LowerGpu(testing::GpuTiledMatmul(w), GpuLimits{});
  ASSERT_TRUE(program.ok()) << program.status().message();
  ExpectMatchesReference(*program, *w);
}

TEST(GpuLowering, RaceCheckerFindsEachRemovedBarrier) {
  auto w = Spec("matmul(M=32,N=32,K=16)");
  StatusOr<GpuProgram> program = lower::gpu::LowerGpu(testing::GpuTiledMatmul(w), GpuLimits{});
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto inputs = ir::RandomInputs(*w, 1);
  for (int removed = 0; removed < 2; ++removed) {
    GpuProgram racy = *program;
    racy.kernels[0].body = WithoutBarrier(program->kernels[0].body, removed);
    ASSERT_EQ(CountBarriers(racy.kernels[0].body), 1);
    StatusOr<std::vector<double>> run = lower::InterpretGpu(racy, inputs);
    EXPECT_ERROR(run, "race on shared ");
    // The first barrier orders the fill before the compute, the second the compute before the
    // next step's fill.
    EXPECT_ERROR(run, removed == 0 ? "reads it, no barrier between" : "writes it, no barrier between");
    EXPECT_ERROR(run, "no barrier between");
  }
  lower::gpu::GpuLowerOptions no_barriers;
  no_barriers.insert_barriers = false;
  StatusOr<GpuProgram> unsynchronised =
      lower::gpu::LowerGpu(testing::GpuTiledMatmul(w), GpuLimits{}, "kernel", no_barriers);
  ASSERT_TRUE(unsynchronised.ok());
  EXPECT_ERROR(lower::InterpretGpu(*unsynchronised, inputs), "race on shared A_shared[");
  lower::GpuInterpretOptions unchecked;
  unchecked.check_races = false;
  EXPECT_TRUE(lower::InterpretGpu(*unsynchronised, inputs, unchecked).ok());
}

TEST(GpuLowering, SoftmaxIsASequenceOfKernels) {
  auto w = Spec("softmax(M=5,N=7)");
  Schedule sch(w, 0);
  for (const char* name : {"row_max", "exp", "row_sum", "softmax"}) {
    auto block = *sch.GetBlock(name);
    auto loops = *sch.GetLoops(block);
    schedule::LoopRV spatial = loops[0];
    if (std::string(name) == "exp" || std::string(name) == "softmax") spatial = *sch.Fuse({loops[0], loops[1]});
    auto parts = *sch.Split(spatial, {std::monostate{}, int64_t(4)});
    ASSERT_TRUE(sch.Bind(parts[0], "blockIdx.x").ok());
    ASSERT_TRUE(sch.Bind(parts[1], "threadIdx.x").ok());
  }
  StatusOr<GpuProgram> program = lower::gpu::LowerGpu(sch, GpuLimits{});
  ASSERT_TRUE(program.ok()) << program.status().message();
  // Each reduction must finish before its readers start: one kernel per block, in order, with
  // the three intermediates in global memory.
  ASSERT_EQ(program->kernels.size(), 4u);
  EXPECT_EQ(program->intermediates.size(), 3u);
  EXPECT_EQ(program->kernels[0].grid[0], 2);  // 5 rows, 4 threads a block
  ExpectMatchesReference(*program, *w);
}

TEST(GpuLowering, TheDefaultGpuScheduleIsAKernelAStageForEveryLibraryOp) {
  // What a GPU worker's calibration runs: it must lower and compute right for any workload.
  for (const std::string& spec : testing::SmallSpecs(1)) {
    auto w = Spec(spec);
    StatusOr<schedule::Trace> trace = lower::DefaultGpuScheduleTrace(w, /*threads_per_block=*/4);
    ASSERT_TRUE(trace.ok()) << spec << ": " << trace.status().message();
    StatusOr<Schedule> sch = schedule::ReplayTrace(w, *trace);
    ASSERT_TRUE(sch.ok()) << spec << ": " << sch.status().message();
    StatusOr<GpuProgram> program = lower::gpu::LowerGpu(*sch, GpuLimits{});
    if (!program.ok()) {  // the one type GPU lowering does not take
      EXPECT_NE(program.status().message().find("float16"), std::string::npos) << spec << ": " << program.status().message();
      continue;
    }
    EXPECT_EQ(program->kernels.size(), w->stages().size()) << spec;
    for (const auto& kernel : program->kernels) EXPECT_LE(kernel.threads_per_block(), 4) << spec;
    ExpectMatchesReference(*program, *w);
    const auto inputs = ir::RandomInputs(*w, 3);
    StatusOr<std::vector<double>> ran = testing::RunOnOpencl(*program, inputs);
    if (ran.status().code() == StatusCode::kUnavailable) continue;  // no OpenCL in this build
    ASSERT_TRUE(ran.ok()) << spec << ": " << ran.status().message();
    auto reference = ir::EvaluateReference(*w, inputs);
    ASSERT_TRUE(reference.ok());
    EXPECT_LE(ir::MaxRelativeError(*ran, reference->at(w->output_stage().name)),
              ir::ToleranceFor(w->output_stage().output->dtype)) << spec << " on OpenCL";
  }
}

TEST(GpuLowering, RefusesTooManyThreadsPerBlock) {
  auto w = Spec("matmul(M=64,N=64,K=64)");
  testing::MatmulTiles tiles;
  tiles.block_m = tiles.threads_m = 64;
  tiles.block_n = tiles.threads_n = 32;
  tiles.tile_k = 64;  // every fill has at least a thread's element
  EXPECT_ERROR(lower::gpu::LowerGpu(testing::GpuTiledMatmul(w, tiles), GpuLimits{}),
               "kernel kernel: 2048 threads per block, more than the target's 1024");
}

TEST(GpuLowering, RefusesTooMuchSharedMemory) {
  auto w = Spec("matmul(M=64,N=64,K=256)");
  testing::MatmulTiles tiles;
  tiles.block_m = tiles.block_n = 64;
  tiles.tile_k = 128;
  EXPECT_ERROR(lower::gpu::LowerGpu(testing::GpuTiledMatmul(w, tiles), GpuLimits{}),
               "65536 bytes of shared memory per block, more than the target's 49152");
}

TEST(GpuLowering, RefusesAnUnboundStage) {
  auto w = Spec("add(M=4,N=4)");
  EXPECT_ERROR(lower::gpu::LowerGpu(Schedule(w, 0), GpuLimits{}),
               "block add is not bound to GPU threads: bind its outer loops to blockIdx/threadIdx");
}

TEST(GpuLowering, RefusesARedundantSharedFill) {
  auto w = Spec("add(M=8,N=8)");
  Schedule sch(w, 0);
  auto block = *sch.GetBlock("add");
  auto loops = *sch.GetLoops(block);
  ASSERT_TRUE(sch.Bind(loops[0], "blockIdx.x").ok());
  ASSERT_TRUE(sch.Bind(loops[1], "threadIdx.x").ok());
  auto shared = sch.CacheRead(block, 0, "shared");
  ASSERT_TRUE(shared.ok());
  ASSERT_TRUE(sch.ComputeAt(*shared, loops[0]).ok());
  EXPECT_ERROR(lower::gpu::LowerGpu(sch, GpuLimits{}),
               "block A_shared would be computed redundantly by every thread along threadIdx.x of its "
               "kernel: bind one of its loops to threadIdx.x");
}

TEST(GpuLowering, ALoopShorterThanItsThreadAxisRunsOnTheFirstThreads) {
  auto w = Spec("add(M=8,N=8)");
  Schedule sch(w, 0);
  auto block = *sch.GetBlock("add");
  auto loops = *sch.GetLoops(block);
  ASSERT_TRUE(sch.Bind(loops[0], "blockIdx.x").ok());
  ASSERT_TRUE(sch.Bind(loops[1], "threadIdx.x").ok());
  auto shared = sch.CacheRead(block, 0, "shared");
  ASSERT_TRUE(shared.ok());
  ASSERT_TRUE(sch.ComputeAt(*shared, loops[0]).ok());
  auto fill = *sch.GetLoops(*shared);
  auto parts = *sch.Split(fill[1], {std::monostate{}, int64_t(4)});  // 4 of the 8 threads fill
  ASSERT_TRUE(sch.Bind(parts[1], "threadIdx.x").ok());
  StatusOr<GpuProgram> program = lower::gpu::LowerGpu(sch, GpuLimits{});
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program->kernels[0].block[0], 8);
  EXPECT_NE(ir::ToString(program->kernels[0].body).find("if (threadIdx.x < 4)"), std::string::npos)
      << ir::ToString(program->kernels[0].body);
  ExpectMatchesReference(*program, *w);
}

TEST(GpuLowering, RefusesThreadsInALocalStage) {
  auto w = Spec("add(M=8,N=8)");
  Schedule sch(w, 0);
  auto block = *sch.GetBlock("add");
  auto loops = *sch.GetLoops(block);
  ASSERT_TRUE(sch.Bind(loops[0], "blockIdx.x").ok());
  auto local = sch.CacheRead(block, 0, "local");
  ASSERT_TRUE(local.ok());
  ASSERT_TRUE(sch.ComputeAt(*local, loops[0]).ok());
  ASSERT_TRUE(sch.Bind((*sch.GetLoops(*local))[0], "threadIdx.x").ok());
  EXPECT_ERROR(lower::gpu::LowerGpu(sch, GpuLimits{}),
               "block A_local (local scope) binds threadIdx.x: a local buffer belongs to one thread");
}

TEST(GpuLowering, RefusesAParallelLoop) {
  auto w = Spec("add(M=8,N=8)");
  Schedule sch(w, 0);
  auto loops = *sch.GetLoops(*sch.GetBlock("add"));
  ASSERT_TRUE(sch.Bind(loops[0], "blockIdx.x").ok());
  ASSERT_TRUE(sch.Parallel(loops[1]).ok());
  EXPECT_ERROR(lower::gpu::LowerGpu(sch, GpuLimits{}), "loop j is parallel; on a GPU target bind it");
}

}  // namespace
}  // namespace tuned
