#ifndef TUNED_COMPILER_LOWER_GUARDS_H_
#define TUNED_COMPILER_LOWER_GUARDS_H_

/// \file
/// The guards below a loop (conditions of ifs and selects, conjunctions taken apart), each with
/// the ranges of the loops between the two: what loop partitioning and unswitching decide on.
/// Private to compiler/lower.

#include <optional>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/simplify.h"

namespace tuned::lower {

struct Guard {
  ir::Expr cond;        // one conjunct
  ir::VarBounds inner;  // loops between the loop and the guard that have constant bounds
};

/// [min, min + extent - 1] of a loop with constant bounds.
std::optional<ir::Interval> ConstantRange(const ir::For& loop);

/// The conjuncts of the guards in `body`, one per place (a conjunct shared by two loops, as the
/// pieces of a partitioned loop share their body, comes once per loop with that loop's ranges);
/// with `var`, only those that use it.
std::vector<Guard> CollectGuards(const ir::Stmt& body, const ir::VarNode* var = nullptr);

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_GUARDS_H_
