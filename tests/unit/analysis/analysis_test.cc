// The shared decisions of compiler/analysis on small hand-built programs: which add/sub pairs
// contract to an FMA, which loops are unrolled, how an access moves along a loop.

#include <gtest/gtest.h>

#include "compiler/analysis/access.h"
#include "compiler/analysis/fma.h"
#include "compiler/analysis/unroll.h"
#include "compiler/ir/ir.h"

namespace tuned::analysis {
namespace {

using namespace tuned::ir;

TEST(MatchFma, ContractsFloatAddAndSubWithAMultiplyOnEitherSide) {
  Expr a = MakeFloat(1.0), b = MakeFloat(2.0), c = MakeFloat(3.0);
  Expr mul = a * b;
  struct Case {
    Expr e;
    bool negate_product, negate_addend;
  };
  for (const Case& k : {Case{mul + c, false, false}, Case{c + mul, false, false},
                        Case{mul - c, false, true}, Case{c - mul, true, false}}) {
    std::optional<FmaContraction> fma = MatchFma(*k.e.as<Binary>());
    ASSERT_TRUE(fma.has_value());
    EXPECT_EQ(fma->mul, mul.as<Binary>());
    EXPECT_TRUE(fma->addend->same_as(c));
    EXPECT_EQ(fma->negate_product, k.negate_product);
    EXPECT_EQ(fma->negate_addend, k.negate_addend);
  }
}

TEST(MatchFma, LeftMultiplyWinsAndOtherOpsDoNotContract) {
  Expr x = MakeFloat(1.0) * MakeFloat(2.0), y = MakeFloat(3.0) * MakeFloat(4.0);
  std::optional<FmaContraction> both = MatchFma(*(x + y).as<Binary>());
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->mul, x.as<Binary>());
  EXPECT_FALSE(MatchFma(*(MakeFloat(1.0) + MakeFloat(2.0)).as<Binary>()).has_value());
  EXPECT_FALSE(MatchFma(*(MakeInt(2) * MakeInt(3) + MakeInt(1)).as<Binary>()).has_value());
  EXPECT_FALSE(MatchFma(*Max(x, MakeFloat(0.0)).as<Binary>()).has_value());
}

// for v in [0, extent) kind { body }.
Stmt Loop(const Var& v, int64_t extent, ForKind kind, Stmt body, int64_t auto_unroll = 0) {
  return MakeFor(v, MakeInt(0), MakeInt(extent), kind, std::move(body), "", auto_unroll);
}

TEST(UnrollOf, ExplicitUpToTheCopyLimitAndAutoWhenTheStepsFit) {
  Buffer t = MakeBuffer("t", DataType::Float32(), {4096});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt two_stores = MakeSeq({MakeStore(t, {AsExpr(i)}, MakeFloat(0.0)),
                             MakeStore(t, {AsExpr(j)}, MakeFloat(1.0))});
  Stmt inner = Loop(j, 8, ForKind::kSerial, two_stores);  // 16 steps
  EXPECT_EQ(LoopSteps(inner), 16);
  EXPECT_EQ(UnrollOf(*inner.as<For>(), 0), Unroll::kNone);
  EXPECT_EQ(UnrollOf(*inner.as<For>(), 15), Unroll::kNone);
  EXPECT_EQ(UnrollOf(*inner.as<For>(), 16), Unroll::kAuto);
  Stmt vectorized = Loop(j, 8, ForKind::kVectorized, two_stores);
  EXPECT_EQ(LoopSteps(vectorized), 2);  // a vector loop counts once
  EXPECT_EQ(UnrollOf(*vectorized.as<For>(), 64), Unroll::kNone);
  Stmt unrolled = Loop(j, kMaxUnrollCopies, ForKind::kUnrolled, two_stores);
  EXPECT_EQ(UnrollOf(*unrolled.as<For>(), 0), Unroll::kExplicit);
  Stmt too_long = Loop(j, kMaxUnrollCopies + 1, ForKind::kUnrolled, two_stores);
  EXPECT_EQ(UnrollOf(*too_long.as<For>(), 0), Unroll::kNone);
  Stmt annotated = Loop(i, 4, ForKind::kSerial, inner, /*auto_unroll=*/64);
  EXPECT_EQ(BudgetInside(*annotated.as<For>(), 16), 64);
  EXPECT_EQ(BudgetInside(*inner.as<For>(), 16), 16);
}

TEST(ClassifyAccess, InvariantUnitAndStridedAlongALoop) {
  Var i = MakeVar("i"), j = MakeVar("j");
  VarBounds bounds{{i.get(), {0, 7}}, {j.get(), {0, 15}}};
  const std::vector<int64_t> shape = {8, 16};
  Expr row_major = FlatOffset(shape, {AsExpr(i), AsExpr(j)}, bounds);
  EXPECT_EQ(ClassifyAccess(row_major, j, bounds), AccessPattern::kUnitStride);
  EXPECT_EQ(ClassifyAccess(row_major, i, bounds), AccessPattern::kStrided);
  EXPECT_EQ(StrideAlong(row_major, i, bounds), 16);
  Expr row_only = FlatOffset(shape, {AsExpr(i), MakeInt(0)}, bounds);
  EXPECT_EQ(ClassifyAccess(row_only, j, bounds), AccessPattern::kInvariant);
  // j / 3 moves by 0 or 1: no constant stride, so strided (a gather).
  Expr divided = FlatOffset(shape, {AsExpr(i), FloorDiv(AsExpr(j), MakeInt(3))}, bounds);
  EXPECT_EQ(StrideAlong(divided, j, bounds), std::nullopt);
  EXPECT_EQ(ClassifyAccess(divided, j, bounds), AccessPattern::kStrided);
}

// Loads of stride 2 to kMaxSpanLoadStride are read as a span; unit, wider, backward, invariant
// and non-constant strides are not.
TEST(LoadsAsSpan, OnlySmallForwardConstantStrides) {
  Var i = MakeVar("i"), j = MakeVar("j");
  VarBounds bounds{{i.get(), {0, 7}}, {j.get(), {0, 15}}};
  const std::vector<int64_t> shape = {8, 64};
  auto along_j = [&](const Expr& column) {
    return AnalyzeAccess(FlatOffset(shape, {AsExpr(i), column}, bounds), j, bounds);
  };
  EXPECT_FALSE(LoadsAsSpan(along_j(AsExpr(j))));
  for (int64_t stride = 2; stride <= kMaxSpanLoadStride; ++stride) {
    EXPECT_TRUE(LoadsAsSpan(along_j(AsExpr(j) * stride + MakeInt(1)))) << stride;
  }
  EXPECT_FALSE(LoadsAsSpan(along_j(AsExpr(j) * (kMaxSpanLoadStride + 1))));
  EXPECT_FALSE(LoadsAsSpan(along_j(MakeInt(60) - AsExpr(j) * 2)));
  EXPECT_FALSE(LoadsAsSpan(along_j(MakeInt(3))));
  EXPECT_FALSE(LoadsAsSpan(along_j(FloorDiv(AsExpr(j), MakeInt(3)))));
  // Along i the row stride is 64: a gather.
  EXPECT_FALSE(LoadsAsSpan(AnalyzeAccess(FlatOffset(shape, {AsExpr(i), AsExpr(j)}, bounds), i, bounds)));
}

TEST(ConstantLoopRange, OnlyForConstantBoundsAndPositiveExtents) {
  Var i = MakeVar("i"), n = MakeVar("n");
  Buffer t = MakeBuffer("t", DataType::Float32(), {8});
  Stmt body = MakeStore(t, {AsExpr(i)}, MakeFloat(0.0));
  Stmt loop = MakeFor(i, MakeInt(2), MakeInt(5), ForKind::kSerial, body);
  std::optional<Interval> range = ConstantLoopRange(*loop.as<For>());
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->lo, 2);
  EXPECT_EQ(range->hi, 6);
  Stmt symbolic = MakeFor(i, MakeInt(0), AsExpr(n), ForKind::kSerial, body);
  EXPECT_FALSE(ConstantLoopRange(*symbolic.as<For>()).has_value());
  Stmt empty = MakeFor(i, MakeInt(0), MakeInt(0), ForKind::kSerial, body);
  EXPECT_FALSE(ConstantLoopRange(*empty.as<For>()).has_value());
}

}  // namespace
}  // namespace tuned::analysis
