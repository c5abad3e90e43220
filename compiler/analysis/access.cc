#include "compiler/analysis/access.h"

#include "compiler/ir/ir_mutator.h"

namespace tuned::analysis {

using namespace tuned::ir;

std::optional<Interval> ConstantLoopRange(const For& loop) {
  const int64_t* mn = AsConstInt(loop.min);
  const int64_t* ext = AsConstInt(loop.extent);
  if (mn == nullptr || ext == nullptr || *ext <= 0) return std::nullopt;
  return Interval{*mn, *mn + *ext - 1};
}

Expr FlatOffset(const std::vector<int64_t>& shape, const std::vector<Expr>& indices,
                const VarBounds& bounds) {
  Expr offset;
  for (size_t d = 0; d < indices.size(); ++d) {
    Expr index = indices[d].type() == DataType::Int64() ? indices[d]
                                                        : MakeCast(DataType::Int64(), indices[d]);
    offset = d == 0 ? index : offset * MakeInt(shape[d]) + index;
  }
  if (!offset.defined()) offset = MakeInt(0);
  return Simplify(offset, bounds);
}

std::optional<int64_t> ConstantStride(const Expr& offset, const Var& var, const VarBounds& bounds) {
  VarMap next{{var.get(), AsExpr(var) + MakeInt(1, var->type)}};
  Expr shifted = Substitute(offset, next);
  Expr difference = Simplify(shifted - offset, bounds);
  if (const int64_t* stride = AsConstInt(difference)) return *stride;
  return std::nullopt;
}

std::optional<int64_t> StrideAlong(const Expr& offset, const Var& var, const VarBounds& bounds) {
  VarBounds trimmed = bounds;
  auto it = trimmed.find(var.get());
  if (it != trimmed.end()) it->second.hi -= 1;
  return ConstantStride(offset, var, trimmed);
}

AccessPattern ClassifyAccess(const Expr& offset, const Var& var, const VarBounds& bounds) {
  if (!UsesVar(offset, var.get())) return AccessPattern::kInvariant;
  std::optional<int64_t> stride = StrideAlong(offset, var, bounds);
  return stride && *stride == 1 ? AccessPattern::kUnitStride : AccessPattern::kStrided;
}

}  // namespace tuned::analysis
