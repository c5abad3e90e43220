#include "compiler/analysis/access.h"

#include <numeric>

#include "compiler/ir/ir_mutator.h"

namespace tuned::analysis {

using namespace tuned::ir;

std::optional<Interval> ConstantLoopRange(const For& loop) {
  const int64_t* mn = AsConstInt(loop.min);
  const int64_t* ext = AsConstInt(loop.extent);
  if (mn == nullptr || ext == nullptr || *ext <= 0) return std::nullopt;
  return Interval{*mn, *mn + *ext - 1};
}

int64_t KnownDivisor(const Expr& e) {
  if (const int64_t* value = AsConstInt(e)) return *value < 0 ? -*value : *value;
  if (const Cast* cast = e.as<Cast>()) return cast->type.is_int() ? KnownDivisor(cast->value) : 1;
  if (const Binary* op = e.as<Binary>()) {
    switch (op->op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub: return std::gcd(KnownDivisor(op->a), KnownDivisor(op->b));
      case BinaryOp::kMul: {
        int64_t a = KnownDivisor(op->a), b = KnownDivisor(op->b);
        if (a == 0 || b == 0) return 0;
        return a > (int64_t(1) << 30) || b > (int64_t(1) << 30) ? std::gcd(a, b) : a * b;
      }
      default: break;
    }
  }
  return 1;
}

Expr FlatOffset(const std::vector<int64_t>& shape, const std::vector<Expr>& indices,
                const VarBounds& bounds) {
  return Simplify(RowMajorOffset(shape, indices), bounds);
}

std::optional<int64_t> ConstantStride(const Expr& offset, const Var& var, const VarBounds& bounds) {
  VarMap next{{var.get(), AsExpr(var) + MakeInt(1, var->type)}};
  Expr shifted = Substitute(offset, next);
  Expr difference = Simplify(shifted - offset, bounds);
  if (const int64_t* stride = AsConstInt(difference)) return *stride;
  return std::nullopt;
}

namespace {

// The coefficient of `var` in `e` when it is exact and constant: every path from the root of
// `e` to a use of `var` passes only through +, -, multiplication by an integer constant and
// integer casts. nullopt when `var` is used anywhere else (floordiv, min, a select, a load...),
// where only the simplifier can tell. This answers the common case (indices of split, tiled and
// reordered loops) without simplifying, which the feature extractor does per access.
std::optional<int64_t> AffineCoefficient(const Expr& e, const VarNode* var) {
  if (e.get() == var) return 1;
  if (e.as<IntImm>() != nullptr || e.as<VarNode>() != nullptr) return 0;
  if (const Binary* b = e.as<Binary>()) {
    if (b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub) {
      std::optional<int64_t> x = AffineCoefficient(b->a, var);
      if (!x) return std::nullopt;
      std::optional<int64_t> y = AffineCoefficient(b->b, var);
      if (!y) return std::nullopt;
      return b->op == BinaryOp::kAdd ? *x + *y : *x - *y;
    }
    if (b->op == BinaryOp::kMul) {
      if (const int64_t* c = AsConstInt(b->b)) {
        std::optional<int64_t> x = AffineCoefficient(b->a, var);
        return x ? std::optional<int64_t>(*x * *c) : std::nullopt;
      }
      if (const int64_t* c = AsConstInt(b->a)) {
        std::optional<int64_t> y = AffineCoefficient(b->b, var);
        return y ? std::optional<int64_t>(*y * *c) : std::nullopt;
      }
    }
  } else if (const Cast* cast = e.as<Cast>()) {
    if (cast->type.is_int() && cast->value.type().is_int()) {
      return AffineCoefficient(cast->value, var);
    }
  }
  return UsesVar(e, var) ? std::nullopt : std::optional<int64_t>(0);
}

}  // namespace

std::optional<int64_t> StrideAlong(const Expr& offset, const Var& var, const VarBounds& bounds) {
  if (std::optional<int64_t> coefficient = AffineCoefficient(offset, var.get())) {
    return coefficient;
  }
  VarBounds trimmed = bounds;
  auto it = trimmed.find(var.get());
  if (it != trimmed.end()) it->second.hi -= 1;
  return ConstantStride(offset, var, trimmed);
}

AccessAlong AnalyzeAccess(const Expr& offset, const Var& var, const VarBounds& bounds) {
  if (!UsesVar(offset, var.get())) return {AccessPattern::kInvariant, 0};
  std::optional<int64_t> stride = StrideAlong(offset, var, bounds);
  return {stride && *stride == 1 ? AccessPattern::kUnitStride : AccessPattern::kStrided, stride};
}

AccessPattern ClassifyAccess(const Expr& offset, const Var& var, const VarBounds& bounds) {
  return AnalyzeAccess(offset, var, bounds).pattern;
}

Expr RowMajorOffset(const std::vector<int64_t>& shape, const std::vector<Expr>& indices) {
  Expr offset;
  for (size_t d = 0; d < indices.size(); ++d) {
    Expr index = indices[d].type() == DataType::Int64() ? indices[d]
                                                        : MakeCast(DataType::Int64(), indices[d]);
    offset = d == 0 ? index : offset * MakeInt(shape[d]) + index;
  }
  return offset.defined() ? offset : MakeInt(0);
}

int DimensionWalked(const ir::Expr& expr, const ir::BufferNode* buffer, const ir::VarNode* var) {
  struct Finder : ir::IRVisitor {
    const ir::BufferNode* buffer;
    const ir::VarNode* var;
    int dim = -1;
    bool consistent = true;
    void VisitLoad(const ir::Load* op) override {
      if (op->buffer.get() == buffer) {
        int found = -1;
        for (size_t d = 0; d < op->indices.size(); ++d) {
          if (!ir::UsesVar(op->indices[d], var)) continue;
          consistent &= found < 0;  // walked along in two dimensions: no one order serves it
          found = int(d);
        }
        consistent &= found >= 0 && (dim < 0 || dim == found);
        dim = found;
      }
      IRVisitor::VisitLoad(op);
    }
  } finder;
  finder.buffer = buffer;
  finder.var = var;
  finder.Visit(expr);
  return finder.consistent ? finder.dim : -1;
}

}  // namespace tuned::analysis
