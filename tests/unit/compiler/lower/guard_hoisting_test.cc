// Guards out of hot loops: loop partitioning (loop_partition.h) and unswitching
// (loop_unswitch.h), checked on what a schedule lowers to (a piece or a path without any guard
// exists, and carries the stores) and on what it computes (against the float64 reference).

#include <gtest/gtest.h>

#include <string>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/interpreter.h"
#include "compiler/ir/simplify.h"
#include "compiler/lower/loop_partition.h"
#include "compiler/lower/loop_unswitch.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"

namespace tuned::lower {
namespace {

using schedule::BlockRV;
using schedule::Factor;
using schedule::LoopRV;
using schedule::Schedule;

std::shared_ptr<const ir::Workload> Spec(const std::string& spec) {
  auto w = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return std::make_shared<const ir::Workload>(std::move(w).value());
}

// What a statement holds: stores to `buffer`, and guards (ifs, selects of an index condition),
// the selects among them counted apart too.
struct Census : ir::IRVisitor {
  explicit Census(std::string b) : buffer(std::move(b)) {}
  using IRVisitor::Visit;
  std::string buffer;
  int stores = 0;
  int guards = 0;
  int selects = 0;
  void VisitStore(const ir::Store* op) override {
    stores += op->buffer->name == buffer;
    IRVisitor::VisitStore(op);
  }
  void VisitIfThenElse(const ir::IfThenElse* op) override {
    ++guards;
    IRVisitor::VisitIfThenElse(op);
  }
  void VisitSelect(const ir::Select* op) override {
    ++guards;
    ++selects;
    IRVisitor::VisitSelect(op);
  }
};

Census Count(const ir::Stmt& s, const std::string& buffer) {
  Census census(buffer);
  census.Visit(s);
  return census;
}

// The loops (pieces of partitioned ones included) and the then-paths of ifs that store to
// `buffer` with no guard anywhere below them.
struct GuardFree : ir::IRVisitor {
  explicit GuardFree(std::string b) : buffer(std::move(b)) {}
  using IRVisitor::Visit;
  std::string buffer;
  int loops = 0;
  int paths = 0;
  void VisitFor(const ir::For* op) override {
    Census c = Count(op->body, buffer);
    loops += c.stores > 0 && c.guards == 0;
    IRVisitor::VisitFor(op);
  }
  void VisitIfThenElse(const ir::IfThenElse* op) override {
    Census c = Count(op->then_case, buffer);
    paths += c.stores > 0 && c.guards == 0 && op->else_case.defined();
    IRVisitor::VisitIfThenElse(op);
  }
};

GuardFree FindGuardFree(const ir::Stmt& s, const std::string& buffer) {
  GuardFree found(buffer);
  found.Visit(s);
  return found;
}

void ExpectComputes(const LoweredFunc& func, const ir::Workload& workload) {
  auto inputs = ir::RandomInputs(workload, 3);
  auto expected = ir::EvaluateReference(workload, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  auto actual = Interpret(func, inputs);
  ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << ir::ToString(func.body);
  EXPECT_LE(ir::MaxRelativeError(*actual, expected->at(workload.output_stage().name)), 1e-4)
      << ir::ToString(func.body);
}

TEST(LoopPartition, TheFullTilesOfAnImperfectSplitRunWithoutTheGuard) {
  auto matmul = Spec("matmul(M=37,N=8,K=4)");
  Schedule sch(matmul, 1);
  BlockRV c = *sch.GetBlock("C");
  std::vector<LoopRV> loops = *sch.GetLoops(c);
  ASSERT_TRUE(sch.Split(loops[0], {Factor{}, Factor{int64_t(8)}}).ok());  // 5 tiles, the last of 5 rows
  auto func = Lower(sch);
  ASSERT_TRUE(func.ok()) << func.status().message();
  // Four full tiles in a piece of their own, the fifth's five rows in another (its inner loop
  // cut too), its three padded rows gone: no guard is left, and no empty loop.
  EXPECT_EQ(Count(func->body, "C").guards, 0) << ir::ToString(func->body);
  EXPECT_EQ(Count(func->body, "C").stores, 2 * 2) << ir::ToString(func->body);  // init + update, twice
  const ir::Seq* pieces = func->body.as<ir::Seq>();
  ASSERT_NE(pieces, nullptr) << ir::ToString(func->body);
  EXPECT_EQ(pieces->stmts.size(), 2u) << ir::ToString(func->body);
  ExpectComputes(*func, *matmul);
}

// The same split with its tiles parallel: pieces of the loop would be parallel launches one after
// another, the last of one tile on one core, so it stays one parallel loop whose body picks the
// full tile's copy or the last tile's.
TEST(LoopPartition, AParallelLoopStaysOneLoopWhoseBodyPicksItsPiece) {
  auto matmul = Spec("matmul(M=37,N=8,K=4)");
  Schedule sch(matmul, 1);
  BlockRV c = *sch.GetBlock("C");
  std::vector<LoopRV> loops = *sch.GetLoops(c);
  auto tiles = sch.Split(loops[0], {Factor{}, Factor{int64_t(8)}});
  ASSERT_TRUE(tiles.ok());
  ASSERT_TRUE(sch.Parallel((*tiles)[0]).ok());
  auto func = Lower(sch);
  ASSERT_TRUE(func.ok()) << func.status().message();
  const ir::For* loop = func->body.as<ir::For>();
  ASSERT_NE(loop, nullptr) << ir::ToString(func->body);
  EXPECT_EQ(loop->kind, ir::ForKind::kParallel);
  EXPECT_EQ(ir::AsConstInt(loop->extent) ? *ir::AsConstInt(loop->extent) : -1, 5);
  const ir::IfThenElse* pick = loop->body.as<ir::IfThenElse>();
  ASSERT_NE(pick, nullptr) << ir::ToString(func->body);
  EXPECT_EQ(ir::ToString(pick->cond), "(C.i_0 < 4)");
  // Neither copy tests a row against the extent any more.
  EXPECT_EQ(Count(pick->then_case, "C").guards, 0) << ir::ToString(func->body);
  EXPECT_EQ(Count(pick->else_case, "C").guards, 0) << ir::ToString(func->body);
  ExpectComputes(*func, *matmul);
}

TEST(LoopPartition, APaddedConvolutionsInteriorRowsReadWithoutTheirPaddingSelect) {
  auto conv = Spec("conv2d_nchw(N=1,C=2,H=9,W=9,F=2,R=3,S=3,pad=1)");
  Schedule sch(conv, 1);
  ASSERT_TRUE(sch.ComputeInline(*sch.GetBlock("pad")).ok());
  auto func = Lower(sch);
  ASSERT_TRUE(func.ok()) << func.status().message();
  // Rows and columns are cut into border and interior pieces until every padding select is
  // decided: the interior reads without one, and the borders skip the zero taps.
  EXPECT_GE(FindGuardFree(func->body, "conv").loops, 1) << ir::ToString(func->body);
  EXPECT_EQ(Count(func->body, "conv").guards, 0) << ir::ToString(func->body);
  Schedule plain(conv, 1);
  ASSERT_TRUE(plain.ComputeInline(*plain.GetBlock("pad")).ok());
  auto guarded = Lower(plain, "kernel", {.hoist_guards = false});
  ASSERT_TRUE(guarded.ok()) << guarded.status().message();
  EXPECT_GE(Count(guarded->body, "conv").guards, 1) << "the padding select is not there to hoist";
  ExpectComputes(*func, *conv);
}

// Products with a zero constant left in a program: multiply-adds on padding.
int ZeroProducts(const ir::Stmt& s) {
  struct Finder : ir::IRVisitor {
    using IRVisitor::Visit;
    int found = 0;
    void VisitBinary(const ir::Binary* op) override {
      auto zero = [](const ir::Expr& e) { return e.as<ir::FloatImm>() && e.as<ir::FloatImm>()->value == 0.0; };
      found += op->op == ir::BinaryOp::kMul && (zero(op->a) || zero(op->b));
      IRVisitor::VisitBinary(op);
    }
  } finder;
  finder.Visit(s);
  return finder.found;
}

TEST(LoopPartition, APaddedConvolutionsBorderDoesNoMultiplyAddsOnItsPadding) {
  // Stride 2, pad 3: the border pieces of a 7x7 stem-like convolution hold taps on the padding.
  auto conv = Spec("conv2d_nchw(N=1,C=2,H=13,W=13,F=2,R=7,S=7,stride=2,pad=3)");
  Schedule sch(conv, 1);
  ASSERT_TRUE(sch.ComputeInline(*sch.GetBlock("pad")).ok());
  auto func = Lower(sch);
  ASSERT_TRUE(func.ok()) << func.status().message();
  EXPECT_EQ(ZeroProducts(func->body), 0) << ir::ToString(func->body);
  EXPECT_GE(Count(func->body, "conv").stores, 2) << ir::ToString(func->body);
  ExpectComputes(*func, *conv);
}

// Selects left in a program (padding reads not decided by partitioning or unswitching).
int Selects(const ir::Stmt& s) { return Count(s, "").selects; }

// A 12 x 12 padded convolution in tiles of 4 x 4 outputs under one fused parallel loop.
Schedule ConvolutionInFusedTiles(const std::shared_ptr<const ir::Workload>& conv) {
  Schedule sch(conv, 1);
  EXPECT_TRUE(sch.ComputeInline(*sch.GetBlock("pad")).ok());
  BlockRV block = *sch.GetBlock("conv");
  std::vector<LoopRV> loops = *sch.GetLoops(block);  // n f h w rc rh rw
  auto rows = *sch.Split(loops[2], {Factor{}, Factor{int64_t(4)}});
  auto columns = *sch.Split(loops[3], {Factor{}, Factor{int64_t(4)}});
  EXPECT_TRUE(sch.Reorder({rows[0], columns[0], loops[0], loops[1], loops[4], loops[5], loops[6], rows[1], columns[1]}).ok());
  auto fused = sch.Fuse({rows[0], columns[0]});
  EXPECT_TRUE(fused.ok()) << fused.status().message();
  EXPECT_TRUE(sch.Parallel(*fused).ok());
  return sch;
}

TEST(LoopUnswitch, EachKindOfEdgeTileOfAPaddedConvolutionGetsACopyWithoutSelects) {
  // Whether a tile touches the top, the bottom, the left or the right padding is a test of the
  // fused index, which partitioning leaves whole (more cuts than it makes). The interior tiles
  // take one test; the edge tiles are told apart guard by guard, so each kind of edge (a side,
  // a corner) runs a copy that reads no padding select and does no multiply-add on a zero.
  auto conv = Spec("conv2d_nchw(N=1,C=2,H=12,W=12,F=2,R=3,S=3,pad=1)");
  Schedule sch = ConvolutionInFusedTiles(conv);
  auto func = Lower(sch);
  ASSERT_TRUE(func.ok()) << func.status().message();
  EXPECT_EQ(Selects(func->body), 0) << ir::ToString(func->body);
  EXPECT_EQ(ZeroProducts(func->body), 0) << ir::ToString(func->body);
  EXPECT_GE(FindGuardFree(func->body, "conv").paths, 1) << ir::ToString(func->body);
  ExpectComputes(*func, *conv);
}

TEST(LoopUnswitch, EdgeTilesKeepTheirSelectsWhereTheirCopiesExceedTheBudget) {
  // The same program unswitched with no budget for edge copies: the interior tiles still run
  // guard-free, the edge tiles share one copy that keeps its padding selects.
  auto conv = Spec("conv2d_nchw(N=1,C=2,H=12,W=12,F=2,R=3,S=3,pad=1)");
  Schedule sch = ConvolutionInFusedTiles(conv);
  auto func = Lower(sch, "kernel", {.hoist_guards = false});
  ASSERT_TRUE(func.ok()) << func.status().message();
  ir::Stmt partitioned = ir::Simplify(PartitionLoops(func->body));
  ir::Stmt unbudgeted = ir::Simplify(UnswitchGuards(partitioned, 16, 0));
  EXPECT_GE(Selects(unbudgeted), 1) << ir::ToString(unbudgeted);
  EXPECT_GE(FindGuardFree(unbudgeted, "conv").paths, 1) << ir::ToString(unbudgeted);
  EXPECT_EQ(Selects(ir::Simplify(UnswitchGuards(partitioned))), 0);
  func->body = unbudgeted;
  ExpectComputes(*func, *conv);
}

// Fuses the tile loops `rows` and `columns` into one parallel loop, lowers, and expects a path
// without guards that stores C, and C computed right.
void ExpectAGuardFreePathUnderTheFusedTiles(Schedule& sch, LoopRV rows, LoopRV columns) {
  auto fused = sch.Fuse({rows, columns});
  ASSERT_TRUE(fused.ok()) << fused.status().message();
  ASSERT_TRUE(sch.Parallel(*fused).ok());
  auto func = Lower(sch);
  ASSERT_TRUE(func.ok()) << func.status().message();
  EXPECT_GE(FindGuardFree(func->body, "C").paths, 1) << ir::ToString(func->body);
  ExpectComputes(*func, *sch.state().workload);
}

TEST(LoopUnswitch, TilesUnderAFusedParallelLoopTestOnceWhetherTheyAreFull) {
  // The fused loop's tiles cannot be told apart by bounds (its index is a floormod of the tile
  // column), so each tile tests once whether it is full and then runs the guard-free copy.
  auto matmul = Spec("matmul(M=37,N=29,K=5)");
  Schedule sch(matmul, 1);
  BlockRV c = *sch.GetBlock("C");
  std::vector<LoopRV> loops = *sch.GetLoops(c);
  auto i = *sch.Split(loops[0], {Factor{}, Factor{int64_t(8)}});
  auto j = *sch.Split(loops[1], {Factor{}, Factor{int64_t(4)}});
  ASSERT_TRUE(sch.Reorder({i[0], j[0], i[1], j[1], loops[2]}).ok());
  ExpectAGuardFreePathUnderTheFusedTiles(sch, i[0], j[0]);
}

TEST(LoopUnswitch, APaddedSplitOfTheVectorsLeavesTheFullTilesNoGuard) {
  // 269 columns are 17 vectors of 16, tiled 6 x 3 (18): partitioning cuts the tile's last
  // vector off, whose guard `floormod(fused, 6) * 3 + 2 < 17` then depends on the fused
  // parallel loop alone, through a floormod no loop can partition or unswitch on. Each tile
  // tests it once with the others.
  auto matmul = Spec("matmul(M=16,N=269,K=4)");
  Schedule sch(matmul, 1);
  BlockRV c = *sch.GetBlock("C");
  std::vector<LoopRV> loops = *sch.GetLoops(c);
  auto i = *sch.Split(loops[0], {Factor{}, Factor{int64_t(8)}});
  auto j = *sch.Split(loops[1], {Factor{}, Factor{int64_t(16)}});
  auto vectors = sch.Split(j[0], {Factor{int64_t(6)}, Factor{int64_t(3)}});
  ASSERT_TRUE(vectors.ok()) << vectors.status().message();
  ASSERT_TRUE(sch.Reorder({i[0], (*vectors)[0], loops[2], i[1], (*vectors)[1], j[1]}).ok());
  ASSERT_TRUE(sch.Vectorize(j[1]).ok());
  ExpectAGuardFreePathUnderTheFusedTiles(sch, i[0], (*vectors)[0]);
}

TEST(SampleTile, PadsAPrimeExtentWithinItsBoundAndReplaysTheDecision) {
  auto matmul = Spec("matmul(M=257,N=8,K=4)");
  bool padded = false;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    Schedule sch(matmul, seed);
    std::vector<LoopRV> loops = *sch.GetLoops(*sch.GetBlock("C"));
    auto tiles = sch.SampleTile(loops[0], 3, 16, 15);
    ASSERT_TRUE(tiles.ok()) << tiles.status().message();
    int64_t product = 1;
    for (auto t : *tiles) product *= sch.Get(t);
    EXPECT_GE(product, 257);
    EXPECT_LE(product, 257 + 257 * 15 / 100);
    padded |= product > 257;
  }
  EXPECT_TRUE(padded) << "no seed padded 257";
  Schedule sch(matmul, 0);
  std::vector<LoopRV> loops = *sch.GetLoops(*sch.GetBlock("C"));
  auto refused = sch.SampleTile(loops[0], 2, 16, 15, std::vector<int64_t>{19, 16});  // 304 > 295
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("multiplies to 304 (at most 295 with padding)"), std::string::npos)
      << refused.status().message();
  auto short_of = sch.SampleTile(loops[0], 2, 16, 15, std::vector<int64_t>{16, 16});
  ASSERT_FALSE(short_of.ok());
  auto taken = sch.SampleTile(loops[0], 2, 16, 15, std::vector<int64_t>{33, 8});
  ASSERT_TRUE(taken.ok()) << taken.status().message();
  auto parts = sch.Split(loops[0], {Factor{(*taken)[0]}, Factor{(*taken)[1]}});
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  auto replayed = schedule::ReplayTrace(matmul, sch.trace());
  ASSERT_TRUE(replayed.ok()) << replayed.status().message();
  EXPECT_EQ(replayed->trace().ToString(), sch.trace().ToString());
  auto func = Lower(*replayed);
  ASSERT_TRUE(func.ok()) << func.status().message();
  ExpectComputes(*func, *matmul);
}

}  // namespace
}  // namespace tuned::lower
