#include "compiler/ir/simplify.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "compiler/ir/ir_mutator.h"

namespace tuned::ir {
namespace {

int64_t Clamp(__int128 v) {
  if (v <= Interval::kNegInf) return Interval::kNegInf;
  if (v >= Interval::kPosInf) return Interval::kPosInf;
  return int64_t(v);
}

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

Interval Join(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

}  // namespace

Interval ConstBound(const Expr& e, const VarBounds& bounds) {
  if (const int64_t* v = AsConstInt(e)) return {*v, *v};
  if (const VarNode* var = e.as<VarNode>()) {
    auto it = bounds.find(var);
    return it == bounds.end() ? Interval{} : it->second;
  }
  if (const Binary* op = e.as<Binary>()) {
    if (!op->type.is_int()) return {};
    Interval a = ConstBound(op->a, bounds), b = ConstBound(op->b, bounds);
    switch (op->op) {
      case BinaryOp::kAdd: return {Clamp(__int128(a.lo) + b.lo), Clamp(__int128(a.hi) + b.hi)};
      case BinaryOp::kSub: return {Clamp(__int128(a.lo) - b.hi), Clamp(__int128(a.hi) - b.lo)};
      case BinaryOp::kMul: {
        if (!a.bounded() || !b.bounded()) return {};
        __int128 c[4] = {__int128(a.lo) * b.lo, __int128(a.lo) * b.hi, __int128(a.hi) * b.lo,
                         __int128(a.hi) * b.hi};
        return {Clamp(*std::min_element(c, c + 4)), Clamp(*std::max_element(c, c + 4))};
      }
      case BinaryOp::kFloorDiv:
        if (b.is_const() && b.lo > 0) {
          return {a.lo == Interval::kNegInf ? a.lo : FloorDivInt(a.lo, b.lo),
                  a.hi == Interval::kPosInf ? a.hi : FloorDivInt(a.hi, b.lo)};
        }
        return {};
      case BinaryOp::kFloorMod:
        if (b.is_const() && b.lo > 0) {
          if (a.lo >= 0 && a.hi < b.lo) return a;
          return {0, b.lo - 1};
        }
        return {};
      case BinaryOp::kMin: return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      case BinaryOp::kMax: return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      default: return {};
    }
  }
  if (const Select* op = e.as<Select>()) {
    return Join(ConstBound(op->true_value, bounds), ConstBound(op->false_value, bounds));
  }
  return {};
}

namespace {

// Compares a node with `other`, a node of the same kind and type.
class StructuralEquality : public ExprFunctor<bool(const Expr&, const Expr&)> {
 protected:
  bool VisitIntImm(const IntImm* op, const Expr& other) override {
    return op->value == other.as<IntImm>()->value;
  }
  bool VisitFloatImm(const FloatImm* op, const Expr& other) override {
    return op->value == other.as<FloatImm>()->value;
  }
  bool VisitVar(const VarNode*, const Expr&) override { return false; }  // identity already checked
  bool VisitBinary(const Binary* op, const Expr& other) override {
    const Binary* y = other.as<Binary>();
    return op->op == y->op && StructurallyEqual(op->a, y->a) && StructurallyEqual(op->b, y->b);
  }
  bool VisitNot(const Not* op, const Expr& other) override {
    return StructurallyEqual(op->a, other.as<Not>()->a);
  }
  bool VisitSelect(const Select* op, const Expr& other) override {
    const Select* y = other.as<Select>();
    return StructurallyEqual(op->cond, y->cond) && StructurallyEqual(op->true_value, y->true_value) &&
           StructurallyEqual(op->false_value, y->false_value);
  }
  bool VisitCast(const Cast* op, const Expr& other) override {
    return StructurallyEqual(op->value, other.as<Cast>()->value);
  }
  bool VisitLoad(const Load* op, const Expr& other) override {
    const Load* y = other.as<Load>();
    return op->buffer == y->buffer && AllEqual(op->indices, y->indices);
  }
  bool VisitCall(const Call* op, const Expr& other) override {
    const Call* y = other.as<Call>();
    return op->op == y->op && AllEqual(op->args, y->args);
  }

 private:
  static bool AllEqual(const std::vector<Expr>& x, const std::vector<Expr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!StructurallyEqual(x[i], y[i])) return false;
    }
    return true;
  }
};

}  // namespace

bool StructurallyEqual(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (a->kind != b->kind || a->type != b->type) return false;
  return StructuralEquality().VisitExpr(a, b);
}

namespace {

/// sum(coef_i * atom_i) + constant over integers of one type.
struct LinearForm {
  DataType type;
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void AddTerm(const Expr& atom, int64_t coef) {
    if (coef == 0) return;
    for (auto& [a, c] : terms) {
      if (StructurallyEqual(a, atom)) {
        c += coef;
        return;
      }
    }
    terms.emplace_back(atom, coef);
  }
  void Add(const LinearForm& o, int64_t scale) {
    for (const auto& [a, c] : o.terms) AddTerm(a, c * scale);
    constant += o.constant * scale;
  }
};

LinearForm ToLinear(const Expr& e) {
  LinearForm f{e.type(), {}, 0};
  if (const int64_t* v = AsConstInt(e)) {
    f.constant = *v;
    return f;
  }
  if (const Binary* op = e.as<Binary>()) {
    if (op->op == BinaryOp::kAdd || op->op == BinaryOp::kSub) {
      f.Add(ToLinear(op->a), 1);
      f.Add(ToLinear(op->b), op->op == BinaryOp::kAdd ? 1 : -1);
      return f;
    }
    if (op->op == BinaryOp::kMul) {
      if (const int64_t* c = AsConstInt(op->b)) {
        f.Add(ToLinear(op->a), *c);
        return f;
      }
      if (const int64_t* c = AsConstInt(op->a)) {
        f.Add(ToLinear(op->b), *c);
        return f;
      }
    }
  }
  f.AddTerm(e, 1);
  return f;
}

// k * floordiv(x, c) * c + k * floormod(x, c) == k * x: undoes the index math of a split that
// lowering composed with a fuse.
void CombineDivMod(LinearForm& f) {
  for (size_t m = 0; m < f.terms.size(); ++m) {
    const Binary* mod = f.terms[m].first.as<Binary>();
    if (!mod || mod->op != BinaryOp::kFloorMod || !AsConstInt(mod->b)) continue;
    int64_t c = *AsConstInt(mod->b), k = f.terms[m].second;
    for (size_t d = 0; d < f.terms.size(); ++d) {
      const Binary* div = f.terms[d].first.as<Binary>();
      if (!div || div->op != BinaryOp::kFloorDiv || !AsConstInt(div->b) || *AsConstInt(div->b) != c ||
          f.terms[d].second != k * c || !StructurallyEqual(div->a, mod->a)) {
        continue;
      }
      Expr x = mod->a;
      f.terms.erase(f.terms.begin() + std::max(m, d));
      f.terms.erase(f.terms.begin() + std::min(m, d));
      f.Add(ToLinear(x), k);
      CombineDivMod(f);
      return;
    }
  }
}

Expr FromLinear(const LinearForm& f) {
  Expr result;
  for (const auto& [atom, coef] : f.terms) {
    if (coef == 0) continue;
    int64_t mag = coef < 0 ? -coef : coef;
    Expr term = mag == 1 ? atom : MakeBinary(BinaryOp::kMul, atom, MakeInt(mag, f.type));
    if (!result.defined()) {
      result = coef < 0 ? MakeBinary(BinaryOp::kSub, MakeInt(0, f.type), term) : term;
    } else {
      result = MakeBinary(coef < 0 ? BinaryOp::kSub : BinaryOp::kAdd, result, term);
    }
  }
  if (!result.defined()) return MakeInt(f.constant, f.type);
  if (f.constant > 0) result = MakeBinary(BinaryOp::kAdd, result, MakeInt(f.constant, f.type));
  if (f.constant < 0) result = MakeBinary(BinaryOp::kSub, result, MakeInt(-f.constant, f.type));
  return result;
}

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(const VarBounds& bounds) : bounds_(bounds) {}

  Expr Mutate(const Expr& e) override {
    Expr r = IRMutator::Mutate(e);
    if ((r.type().is_int() || r.type().is_bool()) && !r.as<IntImm>()) {
      Interval b = ConstBound(r, bounds_);
      if (b.is_const()) return MakeInt(b.lo, r.type());
    }
    return r;
  }
  using IRMutator::Mutate;

 protected:
  // A select whose condition folds is the arm it selects (loop partitioning relies on it: the
  // padding selects of a convolution's interior disappear).
  Expr MutateSelect(const Select* op, const Expr& self) override {
    Expr c = Mutate(op->cond);
    if (const int64_t* value = AsConstInt(c)) return Mutate(*value ? op->true_value : op->false_value);
    return IRMutator::MutateSelect(op, self);
  }

  Expr MutateBinary(const Binary* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    const int64_t* ca = AsConstInt(a);
    const int64_t* cb = AsConstInt(b);
    DataType t = a.type();
    if (t.is_int()) {
      switch (op->op) {
        case BinaryOp::kAdd:
        case BinaryOp::kSub:
        case BinaryOp::kMul: {
          Expr rebuilt = a.same_as(op->a) && b.same_as(op->b) ? self : MakeBinary(op->op, a, b);
          LinearForm form = ToLinear(rebuilt);
          CombineDivMod(form);
          return FromLinear(form);
        }
        case BinaryOp::kFloorDiv:
        case BinaryOp::kFloorMod:
          if (cb && *cb > 0) return SimplifyDivMod(op->op, a, *cb);
          break;
        case BinaryOp::kMin:
        case BinaryOp::kMax: {
          if (ca && cb) return MakeInt(op->op == BinaryOp::kMin ? std::min(*ca, *cb) : std::max(*ca, *cb), t);
          Interval d = ConstBound(Simplify(a - b, bounds_), bounds_);
          if (d.hi <= 0) return op->op == BinaryOp::kMin ? a : b;
          if (d.lo >= 0) return op->op == BinaryOp::kMin ? b : a;
          break;
        }
        default:
          if (IsComparison(op->op)) {
            Interval d = ConstBound(FromLinear(Difference(a, b)), bounds_);
            if (auto decided = Decide(op->op, d)) return MakeBool(*decided);
          }
          break;
      }
    }
    if (t.is_float() && a.as<FloatImm>() && b.as<FloatImm>()) {
      double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
      switch (op->op) {
        case BinaryOp::kAdd: return MakeFloat(x + y, t);
        case BinaryOp::kSub: return MakeFloat(x - y, t);
        case BinaryOp::kMul: return MakeFloat(x * y, t);
        case BinaryOp::kDiv: return MakeFloat(x / y, t);
        case BinaryOp::kMin: return MakeFloat(std::min(x, y), t);
        case BinaryOp::kMax: return MakeFloat(std::max(x, y), t);
        default: break;
      }
    }
    if (t.is_float()) {
      // A product with a zero constant is zero and adds nothing: the taps of a convolution that
      // fall on its zero padding vanish once partitioning has decided their select (an Inf or
      // NaN weight would have made them NaN; like convolution libraries, padding contributes
      // nothing here).
      const FloatImm *fa = a.as<FloatImm>(), *fb = b.as<FloatImm>();
      bool a_zero = fa && fa->value == 0.0, b_zero = fb && fb->value == 0.0;
      if (op->op == BinaryOp::kMul && (a_zero || b_zero)) return MakeFloat(0.0, t);
      if (op->op == BinaryOp::kAdd && b_zero) return a;
      if (op->op == BinaryOp::kAdd && a_zero) return b;
      if (op->op == BinaryOp::kSub && b_zero) return a;
    }
    if (t.is_bool()) {
      const int64_t *ba = BoolValue(a), *bb = BoolValue(b);
      if (op->op == BinaryOp::kAnd) {
        if ((ba && !*ba) || (bb && !*bb)) return MakeBool(false);
        if (ba) return b;
        if (bb) return a;
      }
      if (op->op == BinaryOp::kOr) {
        if ((ba && *ba) || (bb && *bb)) return MakeBool(true);
        if (ba) return b;
        if (bb) return a;
      }
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return MakeBinary(op->op, a, b);
  }

 private:
  static const int64_t* BoolValue(const Expr& e) { return AsConstInt(e); }

  static LinearForm Difference(const Expr& a, const Expr& b) {
    LinearForm f = ToLinear(a);
    f.Add(ToLinear(b), -1);
    return f;
  }

  static std::optional<bool> Decide(BinaryOp op, Interval d) {
    switch (op) {
      case BinaryOp::kLT: if (d.hi < 0) return true; if (d.lo >= 0) return false; break;
      case BinaryOp::kLE: if (d.hi <= 0) return true; if (d.lo > 0) return false; break;
      case BinaryOp::kGT: if (d.lo > 0) return true; if (d.hi <= 0) return false; break;
      case BinaryOp::kGE: if (d.lo >= 0) return true; if (d.hi < 0) return false; break;
      case BinaryOp::kEQ: if (d.is_const()) return d.lo == 0; if (d.lo > 0 || d.hi < 0) return false; break;
      case BinaryOp::kNE: if (d.is_const()) return d.lo != 0; if (d.lo > 0 || d.hi < 0) return true; break;
      default: break;
    }
    return std::nullopt;
  }

  // floordiv/floormod by a positive constant c: terms whose coefficient c divides move out of
  // the division; what is left is dropped (div) or kept as is (mod) when its bounds fit [0, c).
  Expr SimplifyDivMod(BinaryOp op, const Expr& a, int64_t c) {
    DataType t = a.type();
    if (c == 1) return op == BinaryOp::kFloorDiv ? a : MakeInt(0, t);
    LinearForm f = ToLinear(a);
    LinearForm quotient{t, {}, 0}, rest{t, {}, 0};
    for (const auto& [atom, coef] : f.terms) {
      if (coef % c == 0) {
        quotient.AddTerm(atom, coef / c);
      } else {
        rest.AddTerm(atom, coef);
      }
    }
    quotient.constant = FloorDivInt(f.constant, c);
    rest.constant = FloorModInt(f.constant, c);
    Expr rest_expr = FromLinear(rest);
    Interval rb = ConstBound(rest_expr, bounds_);
    if (rb.bounded() && FloorDivInt(rb.lo, c) == FloorDivInt(rb.hi, c)) {
      int64_t k = FloorDivInt(rb.lo, c);
      if (op == BinaryOp::kFloorDiv) {
        quotient.constant += k;
        return FromLinear(quotient);
      }
      return Simplify(rest_expr - MakeInt(k * c, t), bounds_);
    }
    if (op == BinaryOp::kFloorMod) {
      return MakeBinary(BinaryOp::kFloorMod, rest_expr, MakeInt(c, t));
    }
    LinearForm out = quotient;
    out.AddTerm(MakeBinary(BinaryOp::kFloorDiv, rest_expr, MakeInt(c, t)), 1);
    return FromLinear(out);
  }

  const VarBounds& bounds_;
};

}  // namespace

Expr Simplify(const Expr& e, const VarBounds& bounds) {
  Simplifier s(bounds);
  return s.Mutate(e);
}

namespace {

class StmtSimplifier : public IRMutator {
 public:
  explicit StmtSimplifier(VarBounds bounds) : bounds_(std::move(bounds)) {}

  Expr Mutate(const Expr& e) override { return Simplify(e, bounds_); }
  using IRMutator::Mutate;

 protected:
  // A condition that folds to a constant keeps only the branch it selects. A loop variable
  // compared with a constant (the pieces of a partitioned parallel loop) is bounded by it in
  // each branch, so guards there fold too.
  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    Expr c = Mutate(op->cond);
    if (const int64_t* value = AsConstInt(c)) {
      if (*value) return Mutate(op->then_case);
      return op->else_case.defined() ? Mutate(op->else_case) : MakeSeq({});
    }
    const Binary* less = c.as<Binary>();
    const VarNode* var = less && less->op == BinaryOp::kLT ? less->a.as<VarNode>() : nullptr;
    const int64_t* limit = var ? AsConstInt(less->b) : nullptr;
    auto bound = var && limit ? bounds_.find(var) : bounds_.end();
    if (bound == bounds_.end()) return IRMutator::MutateIfThenElse(op, self);
    const Interval range = bound->second;
    bounds_[var] = {range.lo, std::min(range.hi, *limit - 1)};
    Stmt then_case = Mutate(op->then_case);
    bounds_[var] = {std::max(range.lo, *limit), range.hi};
    Stmt else_case = op->else_case.defined() ? Mutate(op->else_case) : Stmt();
    bounds_[var] = range;
    return MakeIfThenElse(c, then_case, else_case);
  }

  // Storing an element's own value back is no store (an accumulation of padding taps).
  Stmt MutateStore(const Store* op, const Stmt& self) override {
    Stmt stmt = IRMutator::MutateStore(op, self);
    const Store* store = stmt.as<Store>();
    const Load* load = store ? store->value.as<Load>() : nullptr;
    if (load == nullptr || load->buffer.get() != store->buffer.get()) return stmt;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      if (!StructurallyEqual(load->indices[d], store->indices[d])) return stmt;
    }
    return MakeSeq({});
  }

  // Statements that folded away leave no empty pieces behind.
  Stmt MutateSeq(const Seq* op, const Stmt& self) override {
    Stmt stmt = IRMutator::MutateSeq(op, self);
    const Seq* seq = stmt.as<Seq>();
    if (seq == nullptr) return stmt;
    std::vector<Stmt> kept;
    for (const Stmt& s : seq->stmts) {
      const Seq* inner = s.as<Seq>();
      if (inner == nullptr || !inner->stmts.empty()) kept.push_back(s);
    }
    if (kept.size() == seq->stmts.size()) return stmt;
    return kept.size() == 1 ? kept[0] : MakeSeq(std::move(kept));
  }

  Stmt MutateFor(const For* op, const Stmt& self) override {
    Expr mn = Mutate(op->min), ext = Mutate(op->extent);
    const int64_t* cmin = AsConstInt(mn);
    const int64_t* cext = AsConstInt(ext);
    if (cext && *cext == 1 && op->kind != ForKind::kThreadBinding) {
      return Mutate(Substitute(op->body, {{op->var.get(), mn}}));
    }
    Interval range = ConstBound(mn, bounds_);
    Interval ext_range = ConstBound(ext, bounds_);
    if (cmin && cext) range = {*cmin, *cmin + *cext - 1};
    else if (range.bounded() && ext_range.bounded()) range = {range.lo, range.hi + ext_range.hi - 1};
    else range = {};
    bounds_[op->var.get()] = range;
    Stmt body = Mutate(op->body);
    bounds_.erase(op->var.get());
    // A loop whose body folded away (a piece where every guard is false) is no loop.
    if (const Seq* seq = body.as<Seq>(); seq != nullptr && seq->stmts.empty()) return body;
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
    return MakeFor(op->var, mn, ext, op->kind, body, op->thread_tag, op->auto_unroll_max_step,
                   op->prefetch_ahead);
  }

 private:
  VarBounds bounds_;
};

}  // namespace

Stmt Simplify(const Stmt& s, const VarBounds& bounds) {
  StmtSimplifier simplifier(bounds);
  return simplifier.Mutate(s);
}

}  // namespace tuned::ir
