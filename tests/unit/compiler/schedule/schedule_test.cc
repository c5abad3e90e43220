// Each primitive's error cases name the block or loop and the rule broken, and leave the
// schedule unchanged; valid uses transform the loops as documented.

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/schedule/schedule.h"
#include "tests/support/expect_error.h"

namespace tuned::schedule {
namespace {

std::shared_ptr<const ir::Workload> Spec(const std::string& spec) {
  auto w = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return std::make_shared<const ir::Workload>(std::move(w).value());
}

class ScheduleTest : public ::testing::Test {
 protected:
  std::shared_ptr<const ir::Workload> matmul = Spec("matmul(M=16,N=12,K=8)");
  Schedule sch{matmul, 1};
  BlockRV C() { return *sch.GetBlock("C"); }
  std::vector<LoopRV> Loops(BlockRV b) { return *sch.GetLoops(b); }
};

TEST_F(ScheduleTest, GetBlockNamesKnownBlocks) {
  EXPECT_ERROR(sch.GetBlock("D"), "no block named 'D' (blocks: C)");
}

TEST_F(ScheduleTest, SplitErrors) {
  auto loops = Loops(C());
  EXPECT_ERROR(sch.Split(loops[0], {int64_t(4)}), "needs at least 2 factors");
  EXPECT_ERROR(sch.Split(loops[0], {int64_t(0), std::monostate{}}), "factor 0 is not positive");
  EXPECT_ERROR(sch.Split(loops[0], {std::monostate{}, std::monostate{}}), "more than one factor is inferred");
  EXPECT_ERROR(sch.Split(loops[0], {int64_t(3), int64_t(5)}),
               "split of loop i of block C: factors multiply to 15, loop extent is 16");
  ASSERT_TRUE(sch.Split(loops[0], {int64_t(4), int64_t(4)}).ok());
  EXPECT_ERROR(sch.Split(loops[0], {int64_t(4), int64_t(4)}), "loop i of block C was already split or fused");
}

TEST_F(ScheduleTest, ReorderOfLoopsFromDifferentNestsIsRefused) {
  auto dense = Spec("dense(M=4,N=4,K=4,relu=true)");
  Schedule s(dense, 1);
  auto a = *s.GetLoops(*s.GetBlock("dense"));
  auto b = *s.GetLoops(*s.GetBlock("relu"));
  EXPECT_ERROR(s.Reorder({a[0], b[0]}), "are in different loop nests");
}

TEST_F(ScheduleTest, ComputeAtToLoopNotCoveringConsumerIsRefused) {
  auto softmax = Spec("softmax(M=4,N=6)");
  Schedule s(softmax, 1);
  // exp is read by row_sum and softmax; a loop of softmax alone does not cover row_sum.
  auto loops = *s.GetLoops(*s.GetBlock("softmax"));
  EXPECT_ERROR(s.ComputeAt(*s.GetBlock("exp"), loops[0]), "does not cover its consumer row_sum");
}

TEST_F(ScheduleTest, ReverseComputeAtErrors) {
  auto dense = Spec("dense(M=8,N=8,K=4,bias=true)");
  Schedule s(dense, 1);
  BlockRV d = *s.GetBlock("dense"), bias = *s.GetBlock("bias_add");
  auto loops = *s.GetLoops(d);
  EXPECT_ERROR(s.ReverseComputeAt(bias, loops[2]), "inside reduction loop ri");
  EXPECT_ERROR(s.ReverseComputeAt(d, (*s.GetLoops(bias))[0]), "it is a reduction");
  ASSERT_TRUE(s.ReverseComputeAt(bias, loops[1]).ok());
  EXPECT_ERROR(s.Reorder({loops[2], loops[1]}), "would be computed inside reduction loop ri");
}

TEST_F(ScheduleTest, InlineErrors) {
  auto dense = Spec("dense(M=8,N=8,K=4,bias=true,relu=true)");
  Schedule s(dense, 1);
  EXPECT_ERROR(s.ComputeInline(*s.GetBlock("dense")), "it is a reduction");
  EXPECT_ERROR(s.ReverseComputeInline(*s.GetBlock("bias_add")), "its producer dense is a reduction");
  ASSERT_TRUE(s.ReverseComputeInline(*s.GetBlock("relu")).ok());
  EXPECT_ERROR(s.GetBlock("relu"), "was inlined");
}

TEST_F(ScheduleTest, RFactorSplitsTheLastReductionAxisIntoLanes) {
  auto softmax = Spec("softmax(M=4,N=100)");
  Schedule s(softmax, 1);
  auto partial = s.RFactor(*s.GetBlock("row_max"), int64_t(16));
  ASSERT_TRUE(partial.ok()) << partial.status().message();
  const Stage& rf = s.state().stages[s.StageOf(*partial)];
  // One partial maximum per lane and row, over ceil(100 / 16) = 7 steps; the lanes past 100
  // take the identity.
  EXPECT_EQ(rf.name, "row_max_rf");
  EXPECT_EQ(rf.output->shape, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(rf.output->scope, ir::MemoryScope::kLocal);
  ASSERT_EQ(rf.reduce_axes.size(), 1u);
  EXPECT_EQ(rf.reduce_axes[0].extent, 7);
  EXPECT_EQ(rf.reduce, ir::ReduceKind::kMax);
  const Stage& combined = s.state().stages[s.StageOf(*s.GetBlock("row_max"))];
  ASSERT_EQ(combined.reduce_axes.size(), 1u);
  EXPECT_EQ(combined.reduce_axes[0].extent, 16);
  EXPECT_EQ(s.state().ReadBuffers(s.StageOf(*s.GetBlock("row_max"))),
            (std::vector<ir::Buffer>{rf.output}));
  // The new block comes before its consumer and has loops of its own.
  EXPECT_EQ(s.GetLoops(*partial)->size(), 3u);
  // A trace replays to the same schedule.
  auto replayed = ReplayTrace(softmax, s.trace());
  ASSERT_TRUE(replayed.ok()) << replayed.status().message();
  EXPECT_EQ(replayed->trace(), s.trace());
}

TEST_F(ScheduleTest, RFactorInChunksSplitsTheFirstReductionAxisIntoRunsOfIt) {
  // A sum over a whole [10, 100] matrix in 3 chunks of its rows: 4, 4 and the last 2 (the
  // rows past 10 take the identity).
  auto total = Spec("tdl: input a: float32[10, 100]; s[i: 1]: float32 = sum[r: 10, k: 100](a[r, k])");
  Schedule s(total, 1);
  auto partial = s.RFactor(*s.GetBlock("s"), int64_t(3), RFactorOrder::kChunks);
  ASSERT_TRUE(partial.ok()) << partial.status().message();
  const Stage& rf = s.state().stages[s.StageOf(*partial)];
  EXPECT_EQ(rf.output->shape, (std::vector<int64_t>{1, 3}));
  // Written by one core per chunk and read after them all: not a stack buffer.
  EXPECT_EQ(rf.output->scope, ir::MemoryScope::kGlobal);
  ASSERT_EQ(rf.reduce_axes.size(), 2u);
  EXPECT_EQ(rf.reduce_axes[0].extent, 4);  // the steps of a chunk, outermost as the rows were
  EXPECT_EQ(rf.reduce_axes[1].extent, 100);
  EXPECT_EQ(ir::ToString(rf.body), "select((((s_rf.chunk * 4) + s_rf.step) < 10), a[((s_rf.chunk * 4) + s_rf.step), s_rf.rj], 0.0)");
  const Stage& combined = s.state().stages[s.StageOf(*s.GetBlock("s"))];
  ASSERT_EQ(combined.reduce_axes.size(), 1u);
  EXPECT_EQ(combined.reduce_axes[0].extent, 3);
  // The order is the instruction's third argument, and replays.
  Trace trace = s.trace();
  auto rfactor = std::find_if(trace.instructions.begin(), trace.instructions.end(),
                              [](const Instruction& inst) { return inst.kind == InstKind::kRFactor; });
  ASSERT_NE(rfactor, trace.instructions.end());
  EXPECT_EQ(rfactor->inputs.size(), 3u);
  auto replayed = ReplayTrace(total, trace);
  ASSERT_TRUE(replayed.ok()) << replayed.status().message();
  EXPECT_EQ(replayed->trace(), trace);
  rfactor->inputs[2] = TraceArg::Int(2);
  EXPECT_ERROR(ReplayTrace(total, trace), "rfactor's order must be 1 (chunks) when given");
}

TEST_F(ScheduleTest, RFactorErrors) {
  auto softmax = Spec("softmax(M=4,N=100)");
  Schedule s(softmax, 1);
  EXPECT_ERROR(s.RFactor(*s.GetBlock("exp"), int64_t(16)), "rfactor of block exp: it is not a reduction");
  EXPECT_ERROR(s.RFactor(*s.GetBlock("row_max"), int64_t(100)), "factor 100 must be in [2, 100)");
  EXPECT_ERROR(s.RFactor(*s.GetBlock("row_max"), std::monostate{}), "the factor must be given");
  auto loops = *s.GetLoops(*s.GetBlock("row_sum"));
  ASSERT_TRUE(s.Split(loops[0], {int64_t(2), int64_t(2)}).ok());
  EXPECT_ERROR(s.RFactor(*s.GetBlock("row_sum"), int64_t(16)), "with its loops untouched (rfactor first)");
}

TEST_F(ScheduleTest, SamplingDecisionsAreValidated) {
  auto loops = Loops(C());
  EXPECT_ERROR(sch.SamplePerfectTile(loops[0], 2, 16, std::vector<int64_t>{4, 3}), "multiplies to 12");
  EXPECT_ERROR(sch.SamplePerfectTile(loops[0], 2, 4, std::vector<int64_t>{2, 8}), "innermost factor 8 over 4");
  EXPECT_ERROR(sch.SamplePerfectTile(loops[0], 3, 16, std::vector<int64_t>{4, 4}), "expected 3");
  EXPECT_ERROR(sch.SampleCategorical({1, 2}, {0.5}), "2 candidates with 1 probabilities");
  EXPECT_ERROR(sch.SampleCategorical({1, 2}, {0.5, 0.5}, 2), "decision 2 is not an index");
  auto tiles = sch.SamplePerfectTile(loops[0], 3, 4);
  ASSERT_TRUE(tiles.ok());
  EXPECT_EQ(sch.Get((*tiles)[0]) * sch.Get((*tiles)[1]) * sch.Get((*tiles)[2]), 16);
  EXPECT_LE(sch.Get((*tiles)[2]), 4);
}

// A minimum innermost factor (a short vector that stays a vector) holds when sampling, when
// replaying a decision, and in the recorded instruction, which alone carries it.
TEST_F(ScheduleTest, SampledTileKeepsItsInnermostFactorWithinItsMinimum) {
  auto loops = Loops(C());  // extent 16
  EXPECT_ERROR(sch.SampleTile(loops[0], 3, 8, 0, std::vector<int64_t>{4, 2, 2}, 4), "innermost factor 2 under 4");
  EXPECT_ERROR(sch.SampleTile(loops[0], 2, 8, 0, {}, 9), "min_innermost 9 outside [1, max_innermost 8]");
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Schedule s(matmul, seed);
    auto tiles = s.SampleTile(*s.GetLoops(*s.GetBlock("C")).value().begin(), 3, 8, 0, {}, 4);
    ASSERT_TRUE(tiles.ok()) << tiles.status().message();
    EXPECT_GE(s.Get(tiles->back()), 4);
    EXPECT_LE(s.Get(tiles->back()), 8);
    EXPECT_EQ(s.trace().instructions.back().int_attrs, (std::vector<int64_t>{3, 8, 0, 4}));
    auto replayed = ReplayTrace(matmul, s.trace(), seed + 100);
    ASSERT_TRUE(replayed.ok()) << replayed.status().message();
    EXPECT_EQ(replayed->trace().decisions, s.trace().decisions);
  }
}

TEST_F(ScheduleTest, APaddedTilingHasNoOuterIterationThatIsAllPadding) {
  // 257 may be padded to 272 or 288 (15%): the padding lets the inner factors be 16 or 32, but
  // an outer factor above ceil(257 / inner) would only add tiles that are all padding.
  auto prime = Spec("matmul(M=257,N=4,K=4)");
  int padded = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Schedule s(prime, seed);
    auto tiles = s.SampleTile(s.GetLoops(*s.GetBlock("C")).value()[0], 3, 16, 15);
    ASSERT_TRUE(tiles.ok()) << tiles.status().message();
    int64_t outer = s.Get((*tiles)[0]), inner = s.Get((*tiles)[1]) * s.Get((*tiles)[2]);
    EXPECT_GE(outer * inner, 257) << outer << " x " << inner;
    EXPECT_LT((outer - 1) * inner, 257) << outer << " x " << inner;
    padded += outer * inner > 257;
  }
  EXPECT_GT(padded, 0);  // padded tilings are still drawn
}

TEST_F(ScheduleTest, SamplingIsReproducibleFromTheSeed) {
  auto sample = [&](uint64_t seed) {
    Schedule s(matmul, seed);
    auto loops = *s.GetLoops(*s.GetBlock("C"));
    std::vector<int64_t> values;
    for (int r = 0; r < 5; ++r) {
      std::vector<IntRV> tiles = *s.SamplePerfectTile(loops[0], 3, 16);
      for (IntRV v : tiles) values.push_back(s.Get(v));
    }
    return values;
  };
  EXPECT_EQ(sample(7), sample(7));
  EXPECT_NE(sample(7), sample(8));
}

}  // namespace
}  // namespace tuned::schedule
