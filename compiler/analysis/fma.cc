#include "compiler/analysis/fma.h"

namespace tuned::analysis {

using namespace tuned::ir;

namespace {

const Binary* AsMul(const Expr& e) {
  const Binary* op = e.as<Binary>();
  return op && op->op == BinaryOp::kMul ? op : nullptr;
}

}  // namespace

std::optional<FmaContraction> MatchFma(const Binary& op) {
  if (!op.a.type().is_float()) return std::nullopt;
  if (op.op != BinaryOp::kAdd && op.op != BinaryOp::kSub) return std::nullopt;
  const bool sub = op.op == BinaryOp::kSub;
  // a*b + c, a*b - c: the product as is, the addend negated for a subtraction.
  if (const Binary* mul = AsMul(op.a)) return FmaContraction{mul, &op.b, false, sub};
  // c + a*b as is; c - a*b = (-a)*b + c.
  if (const Binary* mul = AsMul(op.b)) return FmaContraction{mul, &op.a, sub, false};
  return std::nullopt;
}

}  // namespace tuned::analysis
