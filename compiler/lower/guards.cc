#include "compiler/lower/guards.h"

#include "compiler/ir/ir_mutator.h"

namespace tuned::lower {
namespace {

// Conjunctions are taken apart: a convolution's `0 <= h < H && 0 <= w < W` is decided along
// rows and columns separately.
class GuardCollector : public ir::IRVisitor {
 public:
  explicit GuardCollector(const ir::VarNode* var) : var_(var) {}
  using IRVisitor::Visit;

  std::vector<Guard> guards;

 protected:
  void VisitFor(const ir::For* op) override {
    // A loop without constant bounds leaves its variable unbounded: nothing is decided through it.
    if (std::optional<ir::Interval> range = ConstantRange(*op)) inner_[op->var.get()] = *range;
    IRVisitor::VisitFor(op);
    inner_.erase(op->var.get());
  }
  void VisitIfThenElse(const ir::IfThenElse* op) override {
    Add(op->cond);
    IRVisitor::VisitIfThenElse(op);
  }
  void VisitSelect(const ir::Select* op) override {
    Add(op->cond);
    IRVisitor::VisitSelect(op);
  }

 private:
  void Add(const ir::Expr& cond) {
    if (const ir::Binary* both = cond.as<ir::Binary>(); both && both->op == ir::BinaryOp::kAnd) {
      Add(both->a);
      Add(both->b);
      return;
    }
    if (var_ != nullptr && !ir::UsesVar(cond, var_)) return;
    for (const Guard& g : guards) {
      if (g.cond.same_as(cond) && SameRanges(g.inner, inner_)) return;
    }
    guards.push_back({cond, inner_});
  }

  static bool SameRanges(const ir::VarBounds& a, const ir::VarBounds& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [var, range] : a) {
      auto it = b.find(var);
      if (it == b.end() || it->second.lo != range.lo || it->second.hi != range.hi) return false;
    }
    return true;
  }

  const ir::VarNode* var_;
  ir::VarBounds inner_;
};

}  // namespace

std::optional<ir::Interval> ConstantRange(const ir::For& loop) {
  const int64_t* min = ir::AsConstInt(loop.min);
  const int64_t* extent = ir::AsConstInt(loop.extent);
  if (min == nullptr || extent == nullptr || *extent < 1) return std::nullopt;
  return ir::Interval{*min, *min + *extent - 1};
}

std::vector<Guard> CollectGuards(const ir::Stmt& body, const ir::VarNode* var) {
  GuardCollector collector(var);
  collector.Visit(body);
  return std::move(collector.guards);
}

}  // namespace tuned::lower
