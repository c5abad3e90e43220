#include <gtest/gtest.h>

#include "compiler/ir/ir_printer.h"
#include "compiler/ir/simplify.h"

namespace tuned::ir {
namespace {

class SimplifyTest : public ::testing::Test {
 protected:
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  VarBounds bounds = {{i.get(), {0, 15}}, {j.get(), {0, 3}}, {k.get(), {0, 7}}};
  std::string S(const Expr& e) { return ToString(Simplify(e, bounds)); }
};

TEST_F(SimplifyTest, FoldsConstants) {
  EXPECT_EQ(S(Expr(3) * 4 + 2), "14");
  EXPECT_EQ(S(FloorDiv(Expr(-7), 2)), "-4");
  EXPECT_EQ(S(FloorMod(Expr(-7), 2)), "1");
  EXPECT_EQ(S(MakeFloat(1.5) * MakeFloat(2.0)), "3.0");
}

TEST_F(SimplifyTest, CanonicalisesAffineSums) {
  EXPECT_EQ(S(Expr(i) + Expr(j) - Expr(i)), "j");
  EXPECT_EQ(S((Expr(i) + 1) * 4 - 4), "(i * 4)");
  EXPECT_EQ(S(Expr(i) * 2 + Expr(j) + Expr(i) * 3), "((i * 5) + j)");
}

TEST_F(SimplifyTest, SplitIndexMathComesOutClean) {
  Expr fused = Expr(i) * 4 + Expr(j);  // j in [0, 4)
  EXPECT_EQ(S(FloorDiv(fused, 4)), "i");
  EXPECT_EQ(S(FloorMod(fused, 4)), "j");
  EXPECT_EQ(S(FloorDiv(fused, 2)), "((i * 2) + floordiv(j, 2))");
}

TEST_F(SimplifyTest, FuseThenSplitRecombines) {
  Expr x = Expr(i) * 3 + Expr(k);
  EXPECT_EQ(S(FloorDiv(x, 8) * 8 + FloorMod(x, 8)), "((i * 3) + k)");
}

TEST_F(SimplifyTest, BoundsDecideComparisonsAndMinMax) {
  EXPECT_EQ(S(Expr(j) < 4), "true");
  EXPECT_EQ(S(Expr(j) >= 4), "false");
  EXPECT_EQ(S(Expr(i) * 4 + Expr(j) < 64), "true");
  EXPECT_EQ(S(Expr(i) < 8), "(i < 8)");
  EXPECT_EQ(S(Min(Expr(j), 10)), "j");
  EXPECT_EQ(S(Max(Expr(j), 10)), "10");
}

TEST_F(SimplifyTest, ConstBoundOfIndexExpressions) {
  Interval b = ConstBound(Expr(i) * 4 + Expr(j), bounds);
  EXPECT_EQ(b.lo, 0);
  EXPECT_EQ(b.hi, 63);
  EXPECT_FALSE(ConstBound(Expr(MakeVar("free")), bounds).bounded());
}

TEST_F(SimplifyTest, RemovesUnitLoopsAndConstantBranches) {
  Buffer out = MakeBuffer("out", DataType::Float32(), {4});
  Var x = MakeVar("x");
  Stmt loop = MakeFor(x, MakeInt(0), MakeInt(1), ForKind::kSerial,
                      MakeIfThenElse(Expr(x) < 1, MakeStore(out, {Expr(x) + 2}, MakeFloat(1.0))));
  EXPECT_EQ(ToString(Simplify(loop)), "out[2] = 1.0\n");
}

}  // namespace
}  // namespace tuned::ir
