#ifndef TUNED_COMPILER_IR_SIMPLIFY_H_
#define TUNED_COMPILER_IR_SIMPLIFY_H_

/// \file
/// Index-arithmetic simplification: constant folding, affine canonicalisation (terms of equal
/// atoms are merged, constants gathered), and facts from variable bounds (loop extents) that make
/// the floordiv/floormod of split and fuse disappear where they are provably trivial.

#include <cstdint>
#include <unordered_map>

#include "compiler/ir/ir.h"

namespace tuned::ir {

/// A closed integer interval; kMinInf/kMaxInf stand for unbounded.
struct Interval {
  static constexpr int64_t kNegInf = -(int64_t(1) << 62);
  static constexpr int64_t kPosInf = int64_t(1) << 62;
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;
  bool is_const() const { return lo == hi; }
  bool bounded() const { return lo > kNegInf && hi < kPosInf; }
};

using VarBounds = std::unordered_map<const VarNode*, Interval>;

/// Constant bounds of an integer expression given bounds of its variables.
Interval ConstBound(const Expr& e, const VarBounds& bounds);

/// Simplifies an expression using the given variable bounds.
Expr Simplify(const Expr& e, const VarBounds& bounds = {});

/// Simplifies a statement: loop variables get their loop's bounds, loops of extent one become
/// their body, branches with a constant condition are resolved, empty loops disappear.
Stmt Simplify(const Stmt& s, const VarBounds& bounds = {});

/// Deep structural equality (variables and buffers compare by identity).
bool StructurallyEqual(const Expr& a, const Expr& b);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_SIMPLIFY_H_
