#ifndef TUNED_COMPILER_IR_EVALUATOR_H_
#define TUNED_COMPILER_IR_EVALUATOR_H_

/// \file
/// Host-side evaluation, slow and simple on purpose, used as the source of truth for
/// correctness: an expression evaluator over host tensors, and the direct float64 evaluator of a
/// workload's definition (the reference every scheduled candidate is compared with).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/workload.h"

namespace tuned::ir {

/// Values of a buffer, row-major, held as doubles. When `round_to_dtype` is set, every store
/// rounds to the buffer's dtype (float32, float16, wrapping integers), as a real kernel would.
struct HostTensor {
  Buffer buffer;
  std::vector<double> data;
  bool round_to_dtype = true;
};

/// Rounds `value` to what `type` can hold (float32/float16 rounding, integer wrap-around).
double RoundToType(double value, DataType type);

/// Evaluates expressions; out-of-bounds loads and unbound variables become an error.
class ExprEvaluator : private ExprFunctor<double(const Expr&)> {
 public:
  std::unordered_map<const VarNode*, int64_t> vars;
  std::unordered_map<const BufferNode*, HostTensor*> tensors;
  /// Called with every load performed (buffer, row-major offset) when set: the GPU race checker
  /// sees exactly the loads a thread makes (a Select's untaken operand is not one).
  std::function<void(const BufferNode*, int64_t)> on_load;

  double Eval(const Expr& e) { return VisitExpr(e); }
  /// Row-major offset of `indices` in `tensor`, or -1 (with an error recorded) if out of bounds.
  int64_t Offset(const HostTensor& tensor, const std::vector<Expr>& indices);
  void Fail(Status status) {
    if (error_.ok()) error_ = std::move(status);
  }
  const Status& error() const { return error_; }

 private:
  double VisitIntImm(const IntImm* op) override;
  double VisitFloatImm(const FloatImm* op) override;
  double VisitVar(const VarNode* op) override;
  double VisitBinary(const Binary* op) override;
  double VisitNot(const Not* op) override;
  double VisitSelect(const Select* op) override;
  double VisitCast(const Cast* op) override;
  double VisitLoad(const Load* op) override;
  double VisitCall(const Call* op) override;

  Status error_;
};

/// Seeded random values for each input of `workload`, named by buffer: floats in [-1, 1],
/// integers in [-8, 8]; never all zeros.
std::map<std::string, std::vector<double>> RandomInputs(const Workload& workload, uint64_t seed);

/// Evaluates every stage of the definition in float64 (no rounding); returns each stage's
/// values by stage name. With `output_scale`, also returns there, where the output stage sums,
/// the root sum of squares of each of its elements' terms: the scale of its rounding error
/// (MaxRelativeError); left empty where it does not sum.
StatusOr<std::map<std::string, std::vector<double>>> EvaluateReference(
    const Workload& workload, const std::map<std::string, std::vector<double>>& inputs,
    std::vector<double>* output_scale = nullptr);

/// Largest error of `actual` against `expected`, relative to max(1, |expected|, scale) where
/// scale is the element's entry of `scales` (none where it is empty). A sum's rounding error
/// grows with its terms, not with its result: terms of both signs that cancel leave a small
/// result with the rounding of large partial sums, so a sum is judged against the root sum of
/// squares of its terms (its spread for random terms), which a dropped or repeated term still
/// exceeds many times over.
double MaxRelativeError(const std::vector<double>& actual, const std::vector<double>& expected,
                        const std::vector<double>& scales = {});

/// The tolerance of MaxRelativeError for outputs of `type`.
double ToleranceFor(DataType type);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_EVALUATOR_H_
