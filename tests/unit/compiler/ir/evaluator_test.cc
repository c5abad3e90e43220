// The reference evaluator's arithmetic on the values that reductions and float division produce.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir.h"

namespace tuned::ir {
namespace {

double Evaluate(const Expr& e, Status* error = nullptr) {
  ExprEvaluator evaluator;
  double value = evaluator.Eval(e);
  if (error != nullptr) *error = evaluator.error();
  return value;
}

// Found by fuzz_trace (UBSan): every float operation converted its operands to int64 first,
// undefined for a max reduction's -inf identity.
TEST(Evaluator, FloatOperandsWithInfinitiesAreNotConvertedToIntegers) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Evaluate(MakeBinary(BinaryOp::kMax, MakeLowest(DataType::Float32()), MakeFloat(2.5))), 2.5);
  EXPECT_EQ(Evaluate(MakeBinary(BinaryOp::kAdd, MakeFloat(-inf), MakeFloat(1))), -inf);
}

// The same conversion made a float divisor in (-1, 1) look like zero.
TEST(Evaluator, FloatFloorDivisionByAFractionIsNotDivisionByZero) {
  Status error;
  EXPECT_EQ(Evaluate(MakeBinary(BinaryOp::kFloorDiv, MakeFloat(3), MakeFloat(0.5)), &error), 6);
  EXPECT_TRUE(error.ok()) << error.message();
  EXPECT_EQ(Evaluate(MakeBinary(BinaryOp::kFloorMod, MakeFloat(3.25), MakeFloat(0.5)), &error), 0.25);
  EXPECT_TRUE(error.ok()) << error.message();
  Evaluate(MakeBinary(BinaryOp::kFloorDiv, MakeInt(3), MakeInt(0)), &error);
  EXPECT_EQ(error.message(), "floordiv by zero");
}

}  // namespace
}  // namespace tuned::ir
