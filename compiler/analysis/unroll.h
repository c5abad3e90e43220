#ifndef TUNED_COMPILER_ANALYSIS_UNROLL_H_
#define TUNED_COMPILER_ANALYSIS_UNROLL_H_

/// \file
/// Which loops are unrolled: `unrolled` loops of constant extent (at most kMaxUnrollCopies), and
/// serial loops inside a loop annotated with auto_unroll_max_step = S > 0 whose LoopSteps fit in
/// S. The LLVM code generator copies exactly these loops' bodies; the cost model's unroll
/// features describe exactly these loops.

#include <cstdint>

#include "compiler/ir/ir.h"

namespace tuned::analysis {

/// The most copies an unrolled loop may make; a longer `unrolled` loop stays a loop.
inline constexpr int64_t kMaxUnrollCopies = 1024;

/// The number of statement executions of `s` as `auto_unroll_max_step` counts them: a store
/// is one step, a loop is its extent times its body (a vectorized loop counts once), a branch
/// both arms; a loop of non-constant extent is "too many" (INT64_MAX).
int64_t LoopSteps(const ir::Stmt& s);

enum class Unroll {
  kNone,      // emitted as a loop
  kExplicit,  // an `unrolled` loop
  kAuto,      // a serial loop unrolled by an enclosing auto_unroll_max_step
};

/// How `loop` is emitted, given the auto_unroll_max_step in force around it (`budget`, that of
/// the innermost enclosing annotated loop; 0: none).
Unroll UnrollOf(const ir::For& loop, int64_t budget);

/// The budget in force inside `loop`'s body: its own annotation if it has one, else `budget`.
int64_t BudgetInside(const ir::For& loop, int64_t budget);

}  // namespace tuned::analysis

#endif  // TUNED_COMPILER_ANALYSIS_UNROLL_H_
