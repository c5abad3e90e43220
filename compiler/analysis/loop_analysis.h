#ifndef TUNED_COMPILER_ANALYSIS_LOOP_ANALYSIS_H_
#define TUNED_COMPILER_ANALYSIS_LOOP_ANALYSIS_H_

/// \file
/// Loop-level analyses the LLVM code generator decides with: whether a `vectorized` loop may run
/// its lanes in lockstep, which expressions must not be evaluated speculatively, what a parallel
/// loop body captures, and which buffers a statement writes. (Strides are in access.h, unrolling
/// in unroll.h.)

#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/simplify.h"

namespace tuned::analysis {

/// Empty if the body of the vectorized loop `loop` may execute all its iterations as lanes of
/// one vector program (same result as running them in order); otherwise the reason it may not.
/// Lockstep is equivalent when the body allocates nothing, inner loop bounds do not depend on
/// the lane, and every buffer the body writes is only accessed at one index that is affine in
/// the lane variable with a non-zero stride (so lanes never touch each other's elements).
/// `bounds` holds the bounds of the enclosing loops.
std::string VectorizeBlocker(const ir::For& loop, const ir::VarBounds& bounds);

/// True if evaluating `e` reads memory or may trap (integer division by a non-constant), so
/// it must only be evaluated when its value is used (Select arms, right side of && and ||).
bool NeedsGuard(const ir::Expr& e);

/// What a statement uses from outside itself: variables it reads but does not bind, and
/// buffers it loads or stores but does not allocate, in order of first use.
struct FreeSymbols {
  std::vector<const ir::VarNode*> vars;
  std::vector<ir::Buffer> buffers;
};
FreeSymbols CollectFreeSymbols(const ir::Stmt& s);

/// True if `s` stores to `buffer`.
bool StoresTo(const ir::Stmt& s, const ir::BufferNode* buffer);
/// True if `s` loads from `buffer`.
bool LoadsFrom(const ir::Stmt& s, const ir::BufferNode* buffer);

}  // namespace tuned::analysis

#endif  // TUNED_COMPILER_ANALYSIS_LOOP_ANALYSIS_H_
