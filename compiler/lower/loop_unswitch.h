#ifndef TUNED_COMPILER_LOWER_LOOP_UNSWITCH_H_
#define TUNED_COMPILER_LOWER_LOOP_UNSWITCH_H_

/// \file
/// Guard unswitching. A guard that constant bounds cannot decide, because it depends on an
/// enclosing loop whose last iteration is partial (a tile of an imperfect split under a fused
/// parallel loop), is tested once where the loop below that one starts: when the guard holds
/// for every iteration below, a copy of the loop without it runs, otherwise the original. Full
/// tiles take the first path, so only the edge tiles pay for the guard. Loop partitioning
/// (loop_partition.h) handles what constant bounds do decide; this pass runs after it.

#include "compiler/ir/ir.h"

namespace tuned::lower {

/// Unswitches the serial, unrolled and parallel loops of `body` with constant bounds on the
/// integer guards below them whose variables are all monotone (no floormod, no loads).
/// `max_copies` bounds how many loops the pass may copy.
ir::Stmt UnswitchGuards(const ir::Stmt& body, int max_copies = 16);

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_LOOP_UNSWITCH_H_
