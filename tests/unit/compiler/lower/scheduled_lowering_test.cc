// Schedules written with the primitives, checked through the program they lower to: the loops
// it has and the values it computes (against the float64 reference), also after refused uses.

#include <gtest/gtest.h>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/lower.h"
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

  // The scheduled program still computes matmul.
  void ExpectCorrect() {
    auto func = lower::Lower(sch);
    ASSERT_TRUE(func.ok()) << func.status().message();
    auto inputs = ir::RandomInputs(*matmul, 3);
    auto expected = ir::EvaluateReference(*matmul, inputs);
    auto actual = lower::Interpret(*func, inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << ir::ToString(func->body);
    EXPECT_LE(ir::MaxRelativeError(*actual, expected->at("C")), 1e-4);
  }
};

TEST_F(ScheduleTest, FuseErrors) {
  auto loops = Loops(C());
  EXPECT_ERROR(sch.Fuse({loops[1], loops[2]}), "mix spatial and reduction loops");
  EXPECT_ERROR(sch.Fuse({loops[1], loops[0]}), "must be adjacent and given outermost first");
  EXPECT_ERROR(sch.Fuse({loops[0]}), "needs at least 2 loops");
  ASSERT_TRUE(sch.Fuse({loops[0], loops[1]}).ok());
  ExpectCorrect();
}

TEST_F(ScheduleTest, ReorderErrors) {
  auto loops = Loops(C());
  EXPECT_ERROR(sch.Reorder({loops[0], loops[0]}), "given twice");
  auto other = Spec("add(M=4,N=4)");
  ASSERT_TRUE(sch.Reorder({loops[2], loops[0], loops[1]}).ok());
  ExpectCorrect();
}

TEST_F(ScheduleTest, LoopKindErrors) {
  auto loops = Loops(C());
  EXPECT_ERROR(sch.Parallel(loops[2]), "parallel of loop ri of block C: it is a reduction loop");
  EXPECT_ERROR(sch.Vectorize(loops[2]), "it is a reduction loop");
  ASSERT_TRUE(sch.Parallel(loops[0]).ok());
  EXPECT_ERROR(sch.Vectorize(loops[0]), "it is already parallel");
  EXPECT_ERROR(sch.Bind(loops[1], "warpIdx.x"), "unknown thread axis 'warpIdx.x'");
  EXPECT_ERROR(sch.Annotate(loops[1], "pragma_x", 1), "unknown annotation 'pragma_x'");
  EXPECT_ERROR(sch.Annotate(loops[1], "auto_unroll_max_step", -1), "must not be negative");
  ASSERT_TRUE(sch.Vectorize(loops[1]).ok());
  ASSERT_TRUE(sch.Unroll(loops[2]).ok());
  ExpectCorrect();
}

TEST_F(ScheduleTest, CacheAndComputeAtErrors) {
  BlockRV c = C();
  EXPECT_ERROR(sch.CacheRead(c, 5, "local"), "read index 5, the block reads 2 buffers");
  EXPECT_ERROR(sch.CacheRead(c, 0, "texture"), "unknown memory scope 'texture'");
  EXPECT_ERROR(sch.ComputeInline(c), "compute_inline of block C: it writes the output");
  auto a_local = sch.CacheRead(c, 0, "local");
  ASSERT_TRUE(a_local.ok());
  auto loops = Loops(c);
  EXPECT_ERROR(sch.ComputeAt(c, loops[0]), "compute_at of block C: it writes the output");
  EXPECT_ERROR(sch.ComputeAt(*a_local, Loops(*a_local)[0]), "cannot compute at its own loop");
  ASSERT_TRUE(sch.ComputeAt(*a_local, loops[2]).ok());
  EXPECT_ERROR(sch.CacheWrite(c, "local"), "other blocks are computed at its loops");
  EXPECT_ERROR(sch.DecomposeReduction(*a_local, Loops(*a_local)[0]), "it is not a reduction");
  auto k = *sch.Split(loops[2], {std::monostate{}, int64_t(4)});
  EXPECT_ERROR(sch.DecomposeReduction(c, k[1]), "loop ri_1 is inside reduction loop ri_0");
  ASSERT_TRUE(sch.DecomposeReduction(c, loops[1]).ok());
  ExpectCorrect();
}

TEST_F(ScheduleTest, SplitWithRemainderKeepsResults) {
  auto loops = Loops(C());
  auto parts = sch.Split(loops[0], {std::monostate{}, int64_t(5)});  // 16 = 4 x 5 - 4
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->size(), 2u);
  std::string guarded = ir::ToString(lower::Lower(sch, "kernel", {.hoist_guards = false})->body);
  EXPECT_NE(guarded.find("if (((C.i_0 * 5) + C.i_1) < 16)"), std::string::npos) << guarded;
  // Hoisted, the three full tiles and the last one's single row have no guard left.
  std::string program = ir::ToString(lower::Lower(sch)->body);
  EXPECT_EQ(program.find("if ("), std::string::npos) << program;
  ExpectCorrect();
}

// A register-tiled, packed, vectorized and parallel matmul written with the primitives.
TEST_F(ScheduleTest, TiledMatmulWithCacheStagesComputesCorrectly) {
  BlockRV c = C();
  auto loops = Loops(c);
  auto i = *sch.Split(loops[0], {std::monostate{}, int64_t(4)});
  auto j = *sch.Split(loops[1], {std::monostate{}, int64_t(4)});
  auto k = *sch.Split(loops[2], {std::monostate{}, int64_t(2)});
  ASSERT_TRUE(sch.Reorder({i[0], j[0], k[0], k[1], i[1], j[1]}).ok());
  BlockRV wb = *sch.CacheWrite(c, "local");
  ASSERT_TRUE(sch.ReverseComputeAt(wb, j[0]).ok());
  BlockRV b_local = *sch.CacheRead(c, 1, "local");
  ASSERT_TRUE(sch.ComputeAt(b_local, k[0]).ok());
  ASSERT_TRUE(sch.Vectorize(j[1]).ok());
  ASSERT_TRUE(sch.Parallel(i[0]).ok());
  ASSERT_TRUE(sch.DecomposeReduction(c, k[0]).ok());
  std::string program = ir::ToString(lower::Lower(sch)->body);
  EXPECT_NE(program.find("allocate C_local: float32[4, 4] local"), std::string::npos) << program;
  EXPECT_NE(program.find("allocate B_local: float32[2, 4] local"), std::string::npos) << program;
  ExpectCorrect();
}


// A weight panel laid out in the column tiles its consumer reads: [N/T][K][T], each tile one run
// of memory, indexed by the tile loop directly (no division of the column left in the kernel).
TEST_F(ScheduleTest, BlockLayoutLaysAPanelOutInTheTilesItsConsumerReads) {
  BlockRV c = C();
  auto loops = Loops(c);
  auto j = *sch.Split(loops[1], {std::monostate{}, int64_t(4)});
  ASSERT_TRUE(sch.Reorder({loops[0], j[0], loops[2], j[1]}).ok());
  BlockRV panel = *sch.CacheRead(c, 1, "global");
  EXPECT_ERROR(sch.BlockLayout(c, j[0]), "writes the output");
  EXPECT_ERROR(sch.BlockLayout(panel, *sch.GetLoops(panel)->begin()), "does not read it");
  ASSERT_TRUE(sch.BlockLayout(panel, j[0]).ok());
  // Split and fuse carry the layout along: one iteration of j[0] is one of its outer part.
  auto halves = *sch.Split(j[0], {int64_t(3), int64_t(1)});
  auto fused = sch.Fuse({loops[0], halves[0]});
  ASSERT_TRUE(fused.ok()) << fused.status().message();
  EXPECT_ERROR(sch.Fuse({*fused, halves[1]}), "laid out in its tiles");
  ASSERT_TRUE(sch.Vectorize(j[1]).ok());
  auto func = lower::Lower(sch);
  ASSERT_TRUE(func.ok()) << func.status().message();
  const std::string program = ir::ToString(func->body);
  EXPECT_NE(program.find("allocate B_global: float32[3, 8, 4]"), std::string::npos) << program;
  // The tile index is the fused loop's part j[0] (a floormod of the fuse), the rest the loops'.
  EXPECT_NE(program.find("B_global[floormod(C.i_j_0_0_fused, 3), C.ri, C.j_1]"), std::string::npos) << program;
  ExpectCorrect();

  // The trace replays to the same program; compute_at drops the layout (a region per iteration).
  auto replayed = ReplayTrace(matmul, sch.trace());
  ASSERT_TRUE(replayed.ok()) << replayed.status().message();
  EXPECT_EQ(ir::ToString(lower::Lower(*replayed)->body), program);
  ASSERT_TRUE(sch.ComputeAt(panel, *fused).ok());
  EXPECT_ERROR(sch.BlockLayout(panel, j[1]), "not computed at the root");
  EXPECT_EQ(ir::ToString(lower::Lower(sch)->body).find("float32[3, 8, 4]"), std::string::npos);
  ExpectCorrect();
}

}  // namespace
}  // namespace tuned::schedule
