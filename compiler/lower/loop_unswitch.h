#ifndef TUNED_COMPILER_LOWER_LOOP_UNSWITCH_H_
#define TUNED_COMPILER_LOWER_LOOP_UNSWITCH_H_

/// \file
/// Guard unswitching. A guard that constant bounds cannot decide, because it depends on an
/// enclosing loop whose last iteration is partial (a tile of an imperfect split under a fused
/// parallel loop), is tested once where the loop below that one starts: when the guard holds
/// for every iteration below, a copy of the loop without it runs, otherwise the original. Full
/// tiles take the first path. On the other, the guards of the tile index alone are decided one
/// by one (a copy with the guard folded true, one with it folded false), so that each kind of
/// edge tile (a side or a corner of a padded convolution) runs without selects either; a case
/// no value of the tile index reaches gets no copy. Loop partitioning (loop_partition.h)
/// handles what constant bounds do decide; this pass runs after it.

#include <cstdint>

#include "compiler/ir/ir.h"

namespace tuned::lower {

/// Unswitches the serial, unrolled and parallel loops of `body` with constant bounds on the
/// integer guards below them whose variables are all monotone (no floormod, no loads), and on
/// those that read only the enclosing loops' variables.
/// `max_copies` bounds how many loops the pass may copy; the copies for edge tiles add at most
/// `max_edge_stores` stores (statements, a loop's counted once): the budget that keeps the
/// build of a 3x3 convolution's kernel within about 2.5x (each of its eight kinds of edge tile
/// copies the whole reduction nest, and LLVM's time grows faster than the code).
ir::Stmt UnswitchGuards(const ir::Stmt& body, int max_copies = 16, int64_t max_edge_stores = 256);

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_LOOP_UNSWITCH_H_
