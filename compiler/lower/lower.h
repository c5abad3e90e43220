#ifndef TUNED_COMPILER_LOWER_LOWER_H_
#define TUNED_COMPILER_LOWER_LOWER_H_

/// \file
/// Lowering: a schedule's state becomes a loop program. The pipeline (lower.cc) is
///   1. bound inference (bound_inference.cc): the region each stage computes and the buffer
///      regions that intermediate stages need at their allocation point;
///   2. loop nest generation (loop_nest.cc): every stage's leaf loops, with stages computed at a
///      loop placed inside it, reduction init nests, predicates for imperfect splits and for
///      stages whose region extends past their domain, and allocations;
///   3. simplification of the whole program (compiler/ir/simplify.h);
///   4. guards out of the hot loops: loops cut where loop bounds decide a guard on part of their
///      range (loop_partition.h), then a once-per-tile test where only the enclosing tile
///      decides it (loop_unswitch.h), so full tiles and a convolution's interior run unguarded.
/// Clients that start from a trace go through compiler/lower/pipeline.h (replay, then this).

#include <string>

#include "common/status.h"
#include "compiler/lower/lowered_func.h"
#include "compiler/schedule/schedule.h"

namespace tuned::lower {

struct LowerOptions {
  /// Step 4. Off for the cost model's features (they describe the schedule's program, and the
  /// copies made per edge would crowd its other stores out of the feature vector) and for GPU
  /// lowering (copies would duplicate shared allocations and barriers).
  bool hoist_guards = true;
  /// Root stages that derive a buffer from the workload's constant inputs alone go into the
  /// function's prepack entry (LoweredFunc::prepack). Off for GPU lowering (its kernels have
  /// no such entry yet).
  bool prepack_constants = true;
};

/// Lowers `state` into a kernel named `name`. Fails (InvalidArgument) when the state cannot be
/// lowered, e.g. a reverse_compute_at inside a reduction loop of its producer.
StatusOr<LoweredFunc> Lower(const schedule::ScheduleState& state, const std::string& name = "kernel",
                            const LowerOptions& options = {});
inline StatusOr<LoweredFunc> Lower(const schedule::Schedule& sch, const std::string& name = "kernel",
                                   const LowerOptions& options = {}) {
  return Lower(sch.state(), name, options);
}

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_LOWER_H_
