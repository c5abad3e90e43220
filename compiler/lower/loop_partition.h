#ifndef TUNED_COMPILER_LOWER_LOOP_PARTITION_H_
#define TUNED_COMPILER_LOWER_LOOP_PARTITION_H_

/// \file
/// Loop partitioning. A guard (an if or a select) that is decided on part of a loop's range (the
/// last tile of an imperfect split, the border rows of a padded convolution) is costly where it
/// is not needed: every iteration tests it and a vectorised body masks every access. The pass
/// cuts such a loop at the points where the guard becomes decided, so the interior piece runs
/// without it (ir::Simplify folds the guard there) and only the edge pieces keep it.

#include "compiler/ir/ir.h"

namespace tuned::lower {

/// Partitions the serial, unrolled and parallel loops of `body` with constant bounds (vectorised
/// and thread-bound loops stay whole: lanes are masked, threads are the grid). A parallel loop
/// stays one loop whose body picks its piece's copy by the iteration: one launch on every core. Each cut copies a
/// loop's body; `max_extra_loops` bounds the copies the whole pass may make, so code size stays
/// a small multiple of the input's.
ir::Stmt PartitionLoops(const ir::Stmt& body, int max_extra_loops = 32);

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_LOOP_PARTITION_H_
