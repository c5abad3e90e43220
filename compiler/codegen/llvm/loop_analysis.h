#ifndef TUNED_COMPILER_CODEGEN_LLVM_LOOP_ANALYSIS_H_
#define TUNED_COMPILER_CODEGEN_LLVM_LOOP_ANALYSIS_H_

/// \file
/// IR-level analyses the LLVM code generator decides with (no LLVM types here): flattened buffer
/// offsets and their stride along a loop, whether a `vectorized` loop may run its lanes in
/// lockstep, the step count that `auto_unroll_max_step` is compared with, which expressions must
/// not be evaluated speculatively, and what a parallel loop body captures.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/simplify.h"

namespace tuned::codegen {

/// The row-major element offset of `indices` in a buffer of `shape` as an int64 expression,
/// simplified with the given loop-variable bounds.
ir::Expr FlatOffset(const std::vector<int64_t>& shape, const std::vector<ir::Expr>& indices,
                    const ir::VarBounds& bounds);

/// offset(var + 1) - offset(var) when it is a constant over `bounds` (which must bound `var`
/// to all but its last value), i.e. when `offset` is affine in `var`; nullopt otherwise.
std::optional<int64_t> ConstantStride(const ir::Expr& offset, const ir::Var& var,
                                      const ir::VarBounds& bounds);

/// Empty if the body of the vectorized loop `loop` may execute all its iterations as lanes of
/// one vector program (same result as running them in order); otherwise the reason it may not.
/// Lockstep is equivalent when the body allocates nothing, inner loop bounds do not depend on
/// the lane, and every buffer the body writes is only accessed at one index that is affine in
/// the lane variable with a non-zero stride (so lanes never touch each other's elements).
/// `bounds` holds the bounds of the enclosing loops.
std::string VectorizeBlocker(const ir::For& loop, const ir::VarBounds& bounds);

/// The number of statement executions of `s` as `auto_unroll_max_step` counts them: a store
/// is one step, a loop is its extent times its body (a vectorized loop counts once), a branch
/// both arms; a loop of non-constant extent is "too many" (INT64_MAX).
int64_t LoopSteps(const ir::Stmt& s);

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

}  // namespace tuned::codegen

#endif  // TUNED_COMPILER_CODEGEN_LLVM_LOOP_ANALYSIS_H_
