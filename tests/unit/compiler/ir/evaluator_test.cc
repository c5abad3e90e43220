// The reference evaluator's arithmetic on the values that reductions and float division produce,
// and the scales a kernel's sums are judged against.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir.h"
#include "compiler/ir/op_library.h"

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

namespace tuned::ir {
namespace {

Workload Parse(const std::string& spec) {
  StatusOr<Workload> w = ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << spec;
  return std::move(w).value();
}

TEST(ReferenceScales, ASummingOutputReportsTheRootSumOfSquaresOfEachElementsTerms) {
  Workload sum = Parse("tdl: input a: float32[2, 3]; s[i: 2, j: 1]: float32 = sum[k: 3](a[i, k])");
  std::vector<double> scale = {7.0};  // replaced
  auto values = EvaluateReference(sum, {{"a", {3, -4, 0, 1, 2, -2}}}, &scale);
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  EXPECT_EQ(values->at("s"), (std::vector<double>{-1, 1}));
  ASSERT_EQ(scale.size(), 2u);
  EXPECT_DOUBLE_EQ(scale[0], 5.0);  // sqrt(9 + 16 + 0)
  EXPECT_DOUBLE_EQ(scale[1], 3.0);  // sqrt(1 + 4 + 4)
  // A maximum rounds nothing, and a sum before the output is not the output: judged against
  // the result alone.
  Workload max = Parse("tdl: input a: float32[2, 3]; s[i: 2, j: 1]: float32 = sum[k: 3](a[i, k]); "
                       "m[i: 2, j: 1]: float32 = max[k: 3](a[i, k] + s[i, 0])");
  ASSERT_TRUE(EvaluateReference(max, {{"a", {3, -4, 0, 1, 2, -2}}}, &scale).ok());
  EXPECT_TRUE(scale.empty());
}

TEST(ReferenceScales, ACancellingSumIsJudgedByItsTermsAndAMissingTermIsStillCaught) {
  // A whole-tensor sum of 2^20 values in [-1, 1], accumulated in float32 vectors of 16 lanes
  // as a kernel would: the partial sums' rounding, against a result that cancels to a few
  // hundred at most, can pass 1e-4 of max(1, |result|) (the verdict of some seeds before).
  constexpr int64_t kTerms = int64_t(1) << 20;
  Workload w = Parse("tdl: input a: float32[1, 1048576]; s[i: 1, j: 1]: float32 = sum[k: 1048576](a[i, k])");
  double worst_unscaled = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    std::map<std::string, std::vector<double>> inputs = RandomInputs(w, seed);
    std::vector<double> scale;
    auto reference = EvaluateReference(w, inputs, &scale);
    ASSERT_TRUE(reference.ok());
    const std::vector<double>& a = inputs.at("a");
    float lanes[16] = {};
    for (int64_t k = 0; k < kTerms; ++k) lanes[k % 16] += float(a[size_t(k)]);
    float total = 0;
    for (float lane : lanes) total += lane;
    const std::vector<double>& expected = reference->at("s");
    EXPECT_NEAR(scale[0], std::sqrt(double(kTerms) / 3), 0.01 * std::sqrt(double(kTerms) / 3));
    worst_unscaled = std::max(worst_unscaled, MaxRelativeError({double(total)}, expected));
    EXPECT_LE(MaxRelativeError({double(total)}, expected, scale), ToleranceFor(DataType::Float32())) << "seed " << seed;
    // The same sum without one term of |a| > 0.5: still several times the tolerance of the
    // terms' spread (about 590 here).
    size_t dropped = 0;
    while (std::fabs(a[dropped]) < 0.5) ++dropped;
    EXPECT_GT(MaxRelativeError({expected[0] - a[dropped]}, expected, scale), ToleranceFor(DataType::Float32()))
        << "seed " << seed;
  }
  // Judged against the result alone, the float32 sum's error is of the order of the tolerance.
  EXPECT_GT(worst_unscaled, 0.1 * ToleranceFor(DataType::Float32()));
}

TEST(ReferenceScales, ScalesOfAnotherLengthFailTheComparison) {
  EXPECT_EQ(MaxRelativeError({1.0, 2.0}, {1.0, 2.0}, {1.0}), INFINITY);
  EXPECT_EQ(MaxRelativeError({1.0, 2.0}, {1.0, 2.0}, {}), 0.0);
}

}  // namespace
}  // namespace tuned::ir
