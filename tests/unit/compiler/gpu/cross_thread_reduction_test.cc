// Cross-thread reductions: a reduction loop bound to threadIdx becomes per-thread partial
// results combined in shared memory, checked by the race-checking GPU interpreter against the
// float64 reference.

#include <gtest/gtest.h>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/interpreter.h"
#include "tests/support/expect_error.h"
#include "tests/unit/compiler/gpu/gpu_test_util.h"

namespace tuned {
namespace {

using testing::CountBarriers;
using testing::ExpectMatchesReference;
using testing::Spec;

using lower::gpu::GpuLimits;
using lower::gpu::GpuProgram;
using schedule::Schedule;

// Row reduction `name` (loops: row, term) with each row on a block and its terms split over
// `threads` threads.
void RowOnABlockOfThreads(Schedule& sch, const std::string& name, int64_t threads) {
  auto loops = *sch.GetLoops(*sch.GetBlock(name));
  auto parts = *sch.Split(loops[1], {std::monostate{}, threads});
  EXPECT_TRUE(sch.Reorder({loops[0], parts[1], parts[0]}).ok());
  EXPECT_TRUE(sch.Bind(loops[0], "blockIdx.x").ok());
  EXPECT_TRUE(sch.Bind(parts[1], "threadIdx.x").ok());
}

Schedule RowPerBlock(const std::shared_ptr<const ir::Workload>& w, int64_t threads) {
  Schedule sch(w, 0);
  RowOnABlockOfThreads(sch, w->output_stage().name, threads);
  return sch;
}

// Run for real where the build can: on the OpenCL device, and compiled by NVRTC.
void ExpectRunsOnDevices(const GpuProgram& program, const ir::Workload& w) {
  auto inputs = ir::RandomInputs(w, 7);
  auto reference = ir::EvaluateReference(w, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  StatusOr<std::vector<double>> on_device = testing::RunOnOpencl(program, inputs);
  if (on_device.ok()) {
    EXPECT_LE(ir::MaxRelativeError(*on_device, reference->at(w.output_stage().name)),
              ir::ToleranceFor(w.output_stage().output->dtype));
  } else {
    EXPECT_EQ(on_device.status().code(), StatusCode::kUnavailable) << on_device.status().message();
  }
  StatusOr<std::string> compiled = testing::CompileWithNvrtc(program);
  if (!compiled.ok()) {
    EXPECT_EQ(compiled.status().code(), StatusCode::kUnavailable) << compiled.status().message();
  }
}

// Every kind, thread counts that divide the row or not, powers of two or not: the tree's last
// step reaches past the threads only where guarded.
TEST(CrossThreadReduction, RowsReducedByTheThreadsOfABlockMatchTheReference) {
  for (const char* kind : {"sum", "max", "min"}) {
    for (int64_t threads : {32, 48, 128}) {
      SCOPED_TRACE(std::string(kind) + ", " + std::to_string(threads) + " threads");
      auto w = Spec(std::string("reduce_rows(M=5,N=300,kind=") + kind + ")");
      StatusOr<GpuProgram> program = lower::gpu::LowerGpu(RowPerBlock(w, threads), GpuLimits{});
      ASSERT_TRUE(program.ok()) << program.status().message();
      ASSERT_EQ(program->kernels.size(), 1u);
      const lower::gpu::GpuKernel& kernel = program->kernels[0];
      EXPECT_EQ(kernel.grid[0], 5);
      EXPECT_EQ(kernel.block[0], threads);
      ASSERT_EQ(kernel.shared.size(), 1u);  // one partial per thread
      EXPECT_EQ(kernel.shared_bytes, threads * 4);
      // One barrier after the partials, one after each halving step of the tree.
      int64_t steps = 0;
      for (int64_t span = 1; span < threads; span *= 2) ++steps;
      EXPECT_EQ(CountBarriers(kernel.body), steps + 1);
      ExpectMatchesReference(*program, *w);
      ExpectRunsOnDevices(*program, *w);
    }
  }
}

// A reduction to one element (a GEMV's single row): the whole grid is one block.
TEST(CrossThreadReduction, OneOutputElementIsOneBlockOfThreads) {
  auto w = Spec("matmul(M=1,N=1,K=1000)");
  Schedule sch(w, 0);
  auto block = *sch.GetBlock(w->output_stage().name);
  auto loops = *sch.GetLoops(block);  // i, j, k
  auto k = *sch.Split(loops[2], {std::monostate{}, int64_t(256)});
  ASSERT_TRUE(sch.Reorder({loops[0], loops[1], k[1], k[0]}).ok());
  auto spatial = *sch.Fuse({loops[0], loops[1]});
  ASSERT_TRUE(sch.Bind(spatial, "blockIdx.x").ok());
  ASSERT_TRUE(sch.Bind(k[1], "threadIdx.x").ok());
  StatusOr<GpuProgram> program = lower::gpu::LowerGpu(sch, GpuLimits{});
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program->kernels[0].grid[0], 1);
  EXPECT_EQ(program->kernels[0].block[0], 256);
  ExpectMatchesReference(*program, *w);
  ExpectRunsOnDevices(*program, *w);
}

// Softmax's two row reductions across the threads, its elementwise stages one thread an element.
TEST(CrossThreadReduction, SoftmaxRowsReducedAcrossThreads) {
  auto w = Spec("softmax(M=3,N=200)");
  Schedule sch(w, 0);
  for (const char* name : {"row_max", "row_sum"}) RowOnABlockOfThreads(sch, name, 64);
  for (const char* name : {"exp", "softmax"}) {
    auto block = *sch.GetBlock(name);
    auto loops = *sch.GetLoops(block);
    auto parts = *sch.Split(*sch.Fuse({loops[0], loops[1]}), {std::monostate{}, int64_t(128)});
    ASSERT_TRUE(sch.Bind(parts[0], "blockIdx.x").ok());
    ASSERT_TRUE(sch.Bind(parts[1], "threadIdx.x").ok());
  }
  StatusOr<GpuProgram> program = lower::gpu::LowerGpu(sch, GpuLimits{});
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program->kernels.size(), 4u);
  ExpectMatchesReference(*program, *w);
  ExpectRunsOnDevices(*program, *w);
}

// Bound inside another reduction loop, each thread's partial would restart at every outer
// step: refused in one line, before anything runs.
TEST(CrossThreadReduction, RefusesAThreadLoopInsideAnotherReductionLoop) {
  auto w = Spec("reduce_rows(M=5,N=300)");
  Schedule sch(w, 0);
  auto block = *sch.GetBlock(w->output_stage().name);
  auto loops = *sch.GetLoops(block);
  auto parts = *sch.Split(loops[1], {std::monostate{}, int64_t(32)});
  ASSERT_TRUE(sch.Bind(loops[0], "blockIdx.x").ok());
  ASSERT_TRUE(sch.Bind(parts[1], "threadIdx.x").ok());  // inside parts[0], a reduction loop
  EXPECT_ERROR(lower::gpu::LowerGpu(sch, GpuLimits{}), "reduces across threads, but its reduction's init is not right before it");
}

TEST(CrossThreadReduction, OnlyThreadIdxMayBindAReductionLoop) {
  auto w = Spec("reduce_rows(M=5,N=300)");
  Schedule sch(w, 0);
  auto loops = *sch.GetLoops(*sch.GetBlock(w->output_stage().name));
  EXPECT_ERROR(sch.Bind(loops[1], "blockIdx.x"), "it is a reduction loop (only threadIdx may bind one)");
}

}  // namespace
}  // namespace tuned
