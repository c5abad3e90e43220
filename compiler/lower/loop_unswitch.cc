#include "compiler/lower/loop_unswitch.h"

#include <optional>
#include <vector>

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/simplify.h"
#include "compiler/lower/guards.h"

namespace tuned::lower {
namespace {

using ir::BinaryOp;
using ir::Expr;
using ir::Interval;
using ir::Stmt;
using ir::VarBounds;

// Whether an index expression moves one way as each varied variable grows: those variables
// appear only under +, -, *, floordiv, min and max. Under a floormod (it wraps), a load, a
// select or a cast they do not; what does not use them is a constant of the test (the
// floormod of a fused tile index, say).
class MonotoneIndex : public ir::IRVisitor {
 public:
  explicit MonotoneIndex(const VarBounds& vary) : vary_(vary) {}
  using IRVisitor::Visit;
  bool ok = true;

 protected:
  void VisitBinary(const ir::Binary* op) override {
    if (op->op == BinaryOp::kFloorMod || op->op == BinaryOp::kDiv) {
      Opaque(op->a);
      Opaque(op->b);
      return;
    }
    IRVisitor::VisitBinary(op);
  }
  void VisitLoad(const ir::Load* op) override {
    for (const Expr& index : op->indices) Opaque(index);
  }
  void VisitCall(const ir::Call* op) override {
    for (const Expr& arg : op->args) Opaque(arg);
  }
  void VisitSelect(const ir::Select* op) override {
    Opaque(op->cond);
    Opaque(op->true_value);
    Opaque(op->false_value);
  }
  void VisitCast(const ir::Cast* op) override { Opaque(op->value); }

 private:
  void Opaque(const Expr& e) {
    for (const auto& [var, range] : vary_) ok &= !ir::UsesVar(e, var);
  }
  const VarBounds& vary_;
};

// `e`'s largest value as the variables of `vary` range over their intervals, in terms of the
// other variables. A monotone expression is largest at one end of each range; where bounds
// cannot tell which, both ends are kept under a max.
Expr Maximum(Expr e, const VarBounds& vary, const VarBounds& all) {
  for (const auto& [var, range] : vary) {
    if (!ir::UsesVar(e, var)) continue;
    Expr lo = ir::Simplify(ir::Substitute(e, {{var, ir::MakeInt(range.lo, var->type)}}), all);
    Expr hi = ir::Simplify(ir::Substitute(e, {{var, ir::MakeInt(range.hi, var->type)}}), all);
    Interval rise = ir::ConstBound(ir::Simplify(hi - lo, all), all);
    if (rise.lo >= 0) {
      e = hi;
    } else if (rise.hi <= 0) {
      e = lo;
    } else {
      e = ir::MakeBinary(BinaryOp::kMax, lo, hi);
    }
  }
  return e;
}

// A test of the outer variables that holds exactly when `guard` holds for every value of the
// variables of `vary`; nullopt when the guard is no monotone integer comparison.
std::optional<Expr> HoldsThroughout(const Expr& guard, const VarBounds& vary, const VarBounds& all) {
  const ir::Binary* cmp = guard.as<ir::Binary>();
  if (cmp == nullptr || !cmp->a.type().is_int()) return std::nullopt;
  MonotoneIndex monotone(vary);
  monotone.Visit(guard);
  if (!monotone.ok) return std::nullopt;
  // As `excess < 0` (strict) or `excess <= 0`.
  Expr excess;
  bool strict = false;
  switch (cmp->op) {
    case BinaryOp::kLT: excess = cmp->a - cmp->b; strict = true; break;
    case BinaryOp::kLE: excess = cmp->a - cmp->b; break;
    case BinaryOp::kGT: excess = cmp->b - cmp->a; strict = true; break;
    case BinaryOp::kGE: excess = cmp->b - cmp->a; break;
    default: return std::nullopt;
  }
  Expr worst = Maximum(ir::Simplify(excess, all), vary, all);
  Expr zero = ir::MakeInt(0, worst.type());
  return ir::Simplify(ir::MakeBinary(strict ? BinaryOp::kLT : BinaryOp::kLE, worst, zero), all);
}

// Whether `e` reads only the variables of `bounds` (no loads, no calls) and wraps around in one
// of them (a floormod or division of a fused tile index): a guard no loop over those variables
// can unswitch, since it is no monotone comparison of them.
bool WrapsAroundOuterVariables(const Expr& e, const VarBounds& bounds) {
  struct Reads : ir::IRVisitor {
    const VarBounds* bounds;
    bool only_bounded = true;
    void VisitVar(const ir::VarNode* op) override { only_bounded &= bounds->count(op) > 0; }
    void VisitLoad(const ir::Load*) override { only_bounded = false; }
    void VisitCall(const ir::Call*) override { only_bounded = false; }
  } reads;
  reads.bounds = &bounds;
  reads.Visit(e);
  if (!reads.only_bounded) return false;
  MonotoneIndex monotone(bounds);
  monotone.Visit(e);
  return !monotone.ok;
}

// Replaces the given guard conjuncts (and their structural copies: the guard of an init and
// that of its update are built apart) with true.
class GuardRemover : public ir::IRMutator {
 public:
  explicit GuardRemover(const std::vector<Expr>& guards) : guards_(guards) {}
  Expr Mutate(const Expr& e) override {
    for (const Expr& g : guards_) {
      if (ir::StructurallyEqual(g, e)) return ir::MakeBool(true);
    }
    return IRMutator::Mutate(e);
  }
  using IRMutator::Mutate;

 private:
  const std::vector<Expr>& guards_;
};

class Unswitcher : public ir::IRMutator {
 public:
  explicit Unswitcher(int budget) : budget_(budget) {}
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const ir::For* op, const Stmt& self) override {
    std::optional<Interval> range = ConstantRange(*op);
    if (!range || op->kind == ir::ForKind::kVectorized || op->kind == ir::ForKind::kThreadBinding ||
        budget_ <= 0) {
      return Descend(op, self, range);
    }
    // A guard is hoisted only when every place it occurs (every loop of the same body) has a
    // test: the copy drops all of them, structural copies included.
    std::vector<Guard> guards = CollectGuards(op->body);
    std::vector<Expr> tests, hoisted;
    for (const Guard& guard : guards) {
      bool seen = false;
      for (const Expr& h : hoisted) seen |= ir::StructurallyEqual(h, guard.cond);
      if (seen) continue;
      std::vector<Expr> needed;
      bool hoistable = true;
      for (const Guard& place : guards) {
        if (!ir::StructurallyEqual(place.cond, guard.cond)) continue;
        std::optional<Expr> test = TestFor(*op, *range, place);
        if (!test) {
          hoistable = false;
        } else if (const int64_t* value = ir::AsConstInt(*test)) {
          hoistable &= *value != 0;  // true: holds here anyway; false: an edge below this loop
        } else {
          needed.push_back(*test);
        }
      }
      if (!hoistable || needed.empty()) continue;
      for (const Expr& test : needed) {
        bool known = false;
        for (const Expr& t : tests) known |= ir::StructurallyEqual(t, test);
        if (!known) tests.push_back(test);
      }
      hoisted.push_back(guard.cond);
    }
    if (tests.empty()) return Descend(op, self, range);
    Expr all_hold = tests[0];
    for (size_t i = 1; i < tests.size(); ++i) all_hold = all_hold && tests[i];
    for (const Expr& t : failed_) {
      if (ir::StructurallyEqual(t, all_hold)) return Descend(op, self, range);
    }
    --budget_;
    Stmt fast = ir::MakeFor(op->var, op->min, op->extent, op->kind, GuardRemover(hoisted).Mutate(op->body),
                            op->thread_tag, op->auto_unroll_max_step, op->prefetch_ahead);
    fast = Descend(fast.as<ir::For>(), fast, range);
    // On the other path the test (all of it) is known to fail: a deeper loop need not make
    // the same test again.
    failed_.push_back(all_hold);
    Stmt slow = Descend(op, self, range);
    failed_.pop_back();
    return ir::MakeIfThenElse(all_hold, fast, slow);
  }

 private:
  // The test of the outer variables under which `place` holds for every iteration of `loop`
  // and of the loops between them; nullopt where there is none (a guard of outer variables
  // only is an outer loop's business; a test known to fail on this path is no use).
  std::optional<Expr> TestFor(const ir::For& loop, Interval range, const Guard& place) const {
    VarBounds vary = place.inner;
    vary[loop.var.get()] = range;
    bool varies = false;
    for (const auto& [var, r] : vary) varies |= ir::UsesVar(place.cond, var);
    VarBounds all = outer_;
    all.insert(vary.begin(), vary.end());
    std::optional<Expr> test;
    if (varies) {
      test = HoldsThroughout(place.cond, vary, all);
    } else if (WrapsAroundOuterVariables(place.cond, outer_)) {
      // Constant through this loop: it is its own test. A padded split of a split leaves such
      // a guard on the last vectors of a tile (`floormod(fused, 6) * 3 + 2 < 17`).
      test = ir::Simplify(place.cond, all);
    }
    if (!test) return std::nullopt;
    for (const Expr& t : failed_) {
      if (ir::StructurallyEqual(t, *test)) return std::nullopt;
    }
    return test;
  }

  // The loop rebuilt with its body unswitched (not the loop itself again).
  Stmt Descend(const ir::For* op, const Stmt& self, const std::optional<Interval>& range) {
    if (range) outer_[op->var.get()] = *range;
    Stmt result = IRMutator::MutateFor(op, self);
    outer_.erase(op->var.get());
    return result;
  }

  int budget_;
  VarBounds outer_;
  std::vector<Expr> failed_;  // tests that fail on the path being rebuilt
};

}  // namespace

ir::Stmt UnswitchGuards(const ir::Stmt& body, int max_copies) {
  Unswitcher unswitcher(max_copies);
  return unswitcher.Mutate(body);
}

}  // namespace tuned::lower
