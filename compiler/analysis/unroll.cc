#include "compiler/analysis/unroll.h"

#include <algorithm>
#include <limits>

#include "compiler/ir/expr_functor.h"

namespace tuned::analysis {

using namespace tuned::ir;

namespace {

constexpr int64_t kTooMany = std::numeric_limits<int64_t>::max();

int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > kTooMany / b) return kTooMany;
  return a * b;
}

int64_t SaturatingAdd(int64_t a, int64_t b) { return a > kTooMany - b ? kTooMany : a + b; }

class StepCounter : public StmtFunctor<int64_t(const Stmt&)> {
 protected:
  int64_t VisitStore(const Store*) override { return 1; }
  int64_t VisitAllocate(const Allocate* op) override { return VisitStmt(op->body); }
  int64_t VisitIfThenElse(const IfThenElse* op) override {
    int64_t steps = VisitStmt(op->then_case);
    return op->else_case.defined() ? SaturatingAdd(steps, VisitStmt(op->else_case)) : steps;
  }
  int64_t VisitSeq(const Seq* op) override {
    int64_t steps = 0;
    for (const Stmt& c : op->stmts) steps = SaturatingAdd(steps, VisitStmt(c));
    return steps;
  }
  int64_t VisitBarrier(const Barrier*) override { return 0; }
  int64_t VisitFor(const For* op) override {
    int64_t body = VisitStmt(op->body);
    if (op->kind == ForKind::kVectorized) return body;
    const int64_t* extent = AsConstInt(op->extent);
    if (extent == nullptr) return kTooMany;
    return SaturatingMul(std::max<int64_t>(*extent, 0), body);
  }
};

}  // namespace

int64_t LoopSteps(const Stmt& s) { return StepCounter().VisitStmt(s); }

Unroll UnrollOf(const For& loop, int64_t budget) {
  const int64_t* extent = AsConstInt(loop.extent);
  if (loop.kind == ForKind::kUnrolled && extent && *extent <= kMaxUnrollCopies) {
    return Unroll::kExplicit;
  }
  if (loop.kind == ForKind::kSerial && budget > 0 && extent && *extent > 0 &&
      *extent <= kMaxUnrollCopies && LoopSteps(loop.body) <= budget / *extent) {
    return Unroll::kAuto;
  }
  return Unroll::kNone;
}

int64_t BudgetInside(const For& loop, int64_t budget) {
  return loop.auto_unroll_max_step > 0 ? loop.auto_unroll_max_step : budget;
}

}  // namespace tuned::analysis
