#include "compiler/lower/loop_unswitch.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
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

// Whether `e` reads only the variables of `bounds`: no loads, no calls.
bool ReadsOnly(const Expr& e, const VarBounds& bounds) {
  struct Reads : ir::IRVisitor {
    const VarBounds* bounds;
    bool only_bounded = true;
    void VisitVar(const ir::VarNode* op) override { only_bounded &= bounds->count(op) > 0; }
    void VisitLoad(const ir::Load*) override { only_bounded = false; }
    void VisitCall(const ir::Call*) override { only_bounded = false; }
  } reads;
  reads.bounds = &bounds;
  reads.Visit(e);
  return reads.only_bounded;
}

// Replaces the given guard conjuncts (and their structural copies: the guard of an init and
// that of its update are built apart) with `value`.
class GuardReplacer : public ir::IRMutator {
 public:
  GuardReplacer(const std::vector<Expr>& guards, bool value) : guards_(guards), value_(value) {}
  Expr Mutate(const Expr& e) override {
    for (const Expr& g : guards_) {
      if (ir::StructurallyEqual(g, e)) return ir::MakeBool(value_);
    }
    return IRMutator::Mutate(e);
  }
  using IRMutator::Mutate;

 private:
  const std::vector<Expr>& guards_;
  bool value_;
};

// The variables `exprs` read, each once.
std::vector<const ir::VarNode*> VariablesOf(const std::vector<Expr>& exprs) {
  struct Collector : ir::IRVisitor {
    std::vector<const ir::VarNode*> vars;
    void VisitVar(const ir::VarNode* op) override {
      if (std::find(vars.begin(), vars.end(), op) == vars.end()) vars.push_back(op);
    }
  } collector;
  for (const Expr& e : exprs) collector.Visit(e);
  return collector.vars;
}

// The stores in `s`: the measure of code a copy adds.
int64_t StoresIn(const Stmt& s) {
  struct Counter : ir::IRVisitor {
    using IRVisitor::Visit;
    int64_t stores = 0;
    void VisitStore(const ir::Store* op) override {
      ++stores;
      IRVisitor::VisitStore(op);
    }
  } counter;
  counter.Visit(s);
  return counter.stores;
}

// The values `conditions` take together, one vector per value of the variables they read
// within `bounds`; nullopt where that cannot be told (a variable without bounds, too many values
// to try, a condition that does not fold).
std::optional<std::vector<std::vector<bool>>> Outcomes(const std::vector<Expr>& conditions, const VarBounds& bounds) {
  constexpr int64_t kMaxValues = 1024;
  const std::vector<const ir::VarNode*> vars = VariablesOf(conditions);
  int64_t count = 1;
  for (const ir::VarNode* var : vars) {
    auto range = bounds.find(var);
    if (range == bounds.end()) return std::nullopt;
    const int64_t extent = range->second.hi - range->second.lo + 1;
    if (extent > kMaxValues) return std::nullopt;
    count *= extent;
    if (count > kMaxValues) return std::nullopt;
  }
  std::vector<std::vector<bool>> outcomes;
  for (int64_t n = 0; n < count; ++n) {
    ir::VarMap values;
    int64_t rest = n;
    for (const ir::VarNode* var : vars) {
      const Interval& range = bounds.at(var);
      const int64_t extent = range.hi - range.lo + 1;
      values[var] = ir::MakeInt(range.lo + rest % extent, var->type);
      rest /= extent;
    }
    std::vector<bool> outcome;
    for (const Expr& cond : conditions) {
      const Expr value = ir::Simplify(ir::Substitute(cond, values));  // owns what `folded` points to
      const int64_t* folded = ir::AsConstInt(value);
      if (folded == nullptr) return std::nullopt;
      outcome.push_back(*folded != 0);
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

class Unswitcher : public ir::IRMutator {
 public:
  Unswitcher(int budget, int64_t store_budget) : budget_(budget), store_budget_(store_budget) {}
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
    if (KnownToFail(all_hold)) return SplitOnConstantGuard(op, self, *range, guards);
    // On an edge tile's path, guards of the tile's index alone are decided one by one: a test
    // of them all would copy the loop for a case the splits cover anyway.
    if (!facts_.empty() && std::all_of(hoisted.begin(), hoisted.end(), [&](const Expr& g) {
          return ConstantGuard(*op, *range, guards, g);
        })) {
      return SplitOnConstantGuard(op, self, *range, guards);
    }
    --budget_;
    Stmt fast = WithGuards(*op, hoisted, true);
    facts_.push_back({all_hold, true});
    fast = Descend(fast.as<ir::For>(), fast, range);
    facts_.back().second = false;
    // On the other path the test (all of it) is known to fail: a deeper loop need not make
    // the same test again.
    Stmt slow = SplitOnConstantGuard(op, self, *range, guards);
    facts_.pop_back();
    return ir::MakeIfThenElse(all_hold, fast, slow);
  }

 private:
  // Where a tile's combined test fails (an edge tile), the guards of the tile's index alone (is
  // it in the top row of tiles?) are decided one at a time: the loop is copied with the first
  // folded either way, then each copy again, skipping the cases no tile is in (the top and the
  // bottom row at once). Each kind of edge tile gets its own copy, where its taps on the
  // padding fold away and its hot loops keep no select. Copies add code the build pays for
  // (superlinearly), so a loop is split for every kind of edge or not at all: when its copies
  // would exceed the budget, the loop is rebuilt as it is (its edge tiles keep their selects).
  Stmt SplitOnConstantGuard(const ir::For* op, const Stmt& self, Interval range, const std::vector<Guard>& guards) {
    if (!specializing_) {
      const int64_t copies = EdgeKinds(*op, range, guards) - 1;
      const int64_t stores = copies * StoresIn(op->body);
      if (copies <= 0 || copies > budget_ || stores > store_budget_) return Descend(op, self, range);
      budget_ -= int(copies);
      store_budget_ -= stores;
      specializing_ = true;
      Stmt split = SplitOnConstantGuard(op, self, range, guards);
      specializing_ = false;
      return split;
    }
    for (const Guard& guard : guards) {
      if (!ConstantGuard(*op, range, guards, guard.cond)) continue;
      const std::vector<Expr> decided = {guard.cond};
      // Where the values cannot be told, either outcome is possible.
      bool can_hold = true, can_fail = true;
      if (std::optional<std::vector<std::vector<bool>>> values = OutcomesOnPath(decided)) {
        can_hold = std::any_of(values->begin(), values->end(), [](const auto& v) { return v[0]; });
        can_fail = std::any_of(values->begin(), values->end(), [](const auto& v) { return !v[0]; });
      }
      if (!can_hold || !can_fail) return Mutate(WithGuards(*op, decided, can_hold));
      facts_.push_back({guard.cond, true});
      Stmt holds = Mutate(WithGuards(*op, decided, true));
      facts_.back().second = false;
      Stmt fails = Mutate(WithGuards(*op, decided, false));
      facts_.pop_back();
      return ir::MakeIfThenElse(guard.cond, holds, fails);
    }
    return Descend(op, self, range);
  }

  // How many ways the guards of the tile index alone in `loop`'s body are decided together on
  // this path: the copies a split for every kind of edge makes (counted by trying every value
  // of the outer variables; 2^guards where that cannot be done).
  int64_t EdgeKinds(const ir::For& loop, Interval range, const std::vector<Guard>& guards) const {
    std::vector<Expr> constant;
    for (const Guard& guard : guards) {
      bool seen = false;
      for (const Expr& c : constant) seen |= ir::StructurallyEqual(c, guard.cond);
      if (!seen && ConstantGuard(loop, range, guards, guard.cond)) constant.push_back(guard.cond);
    }
    std::optional<std::vector<std::vector<bool>>> outcomes = OutcomesOnPath(constant);
    if (!outcomes) return int64_t{1} << std::min<size_t>(constant.size(), 30);
    const std::set<std::vector<bool>> kinds(outcomes->begin(), outcomes->end());
    return int64_t(kinds.size());
  }

  // The values `conditions` take together at the values of the outer variables that this path
  // admits (where the enclosing tests decide as they did); nullopt where that cannot be told.
  std::optional<std::vector<std::vector<bool>>> OutcomesOnPath(const std::vector<Expr>& conditions) const {
    std::vector<Expr> all;
    for (const auto& [cond, value] : facts_) all.push_back(cond);
    all.insert(all.end(), conditions.begin(), conditions.end());
    std::optional<std::vector<std::vector<bool>>> outcomes = Outcomes(all, outer_);
    if (!outcomes) return std::nullopt;
    std::vector<std::vector<bool>> on_path;
    for (const std::vector<bool>& outcome : *outcomes) {
      bool admitted = true;
      for (size_t f = 0; f < facts_.size(); ++f) admitted &= outcome[f] == facts_[f].second;
      if (admitted) on_path.emplace_back(outcome.begin() + long(facts_.size()), outcome.end());
    }
    return on_path;
  }

  // Whether `test` is known to fail on this path (a deeper loop need not make it again).
  bool KnownToFail(const Expr& test) const {
    for (const auto& [cond, value] : facts_) {
      if (!value && ir::StructurallyEqual(cond, test)) return true;
    }
    return false;
  }

  // Whether every place of guard `cond` is a test of the outer variables alone (a floormod of a
  // fused tile index, or a row of tiles an outer loop left whole): constant through `loop`.
  bool ConstantGuard(const ir::For& loop, Interval range, const std::vector<Guard>& guards, const Expr& cond) const {
    bool found = false;
    for (const Guard& place : guards) {
      if (!ir::StructurallyEqual(place.cond, cond)) continue;
      found = true;
      VarBounds vary = place.inner;
      vary[loop.var.get()] = range;
      for (const auto& [var, r] : vary) {
        if (ir::UsesVar(place.cond, var)) return false;
      }
      // (A guard already folded to a constant reads no variable: nothing is left to decide.)
      if (VariablesOf({place.cond}).empty() || !ReadsOnly(place.cond, outer_)) return false;
    }
    return found;
  }

  // `loop` with the given guards replaced by `value`.
  static Stmt WithGuards(const ir::For& loop, const std::vector<Expr>& guards, bool value) {
    return ir::MakeFor(loop.var, loop.min, loop.extent, loop.kind, GuardReplacer(guards, value).Mutate(loop.body),
                       loop.thread_tag, loop.auto_unroll_max_step, loop.prefetch_ahead);
  }

  // The test of the outer variables under which `place` holds for every iteration of `loop`
  // and of the loops between them; nullopt where there is none (a test known to fail on this
  // path is no use).
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
    } else if (ConstantGuard(loop, range, {place}, place.cond)) {
      // Constant through this loop: it is its own test. A padded split of a split leaves such
      // a guard on the last vectors of a tile (`floormod(fused, 6) * 3 + 2 < 17`), and a
      // padded convolution one per side of its tiles, which the partitioning of the fused
      // loop of tiles leaves to this pass (more cuts than it makes).
      test = ir::Simplify(place.cond, all);
    }
    if (!test || KnownToFail(*test)) return std::nullopt;
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
  int64_t store_budget_;  // stores the splits of edge tiles may still add
  bool specializing_ = false;  // inside a split for every kind of edge, paid for up front
  VarBounds outer_;
  std::vector<std::pair<Expr, bool>> facts_;  // the tests deciding the path, with their outcome
};

}  // namespace

ir::Stmt UnswitchGuards(const ir::Stmt& body, int max_copies, int64_t max_edge_stores) {
  Unswitcher unswitcher(max_copies, max_edge_stores);
  return unswitcher.Mutate(body);
}

}  // namespace tuned::lower
