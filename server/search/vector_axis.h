#ifndef TUNED_SERVER_SEARCH_VECTOR_AXIS_H_
#define TUNED_SERVER_SEARCH_VECTOR_AXIS_H_

/// \file
/// Which spatial axis a reduction's vector loop may walk along besides the last. The CPU rules
/// vectorize the last spatial axis; where that axis is a poor vector (its extent is not a
/// multiple of the target's lanes, or an input is read across it with a stride, as a stride-2
/// convolution reads its image) another axis with whole vectors may serve: every input is then
/// either invariant along it (a broadcast), contiguous along it, or indexed by it with unit
/// stride in one dimension, which a panel with that dimension innermost makes contiguous
/// (lowering lays staged buffers out for their reduction's vector loop: buffer_layout.cc).
/// A convolution's output channels are such an axis: the image is a broadcast along them and
/// the weights, KCRS, become a CRSK panel.

#include <optional>
#include <vector>

#include "compiler/schedule/schedule.h"

namespace tuned::search {

struct OtherVectorAxis {
  int axis = -1;                                // spatial axis of the stage
  std::vector<const ir::BufferNode*> panels;    // inputs to stage with that axis innermost
};

/// The other axis of `stage` worth vectorizing with `lanes`-wide vectors (the longest where
/// several are), or nullopt where the last axis vectorizes well or no other axis qualifies.
std::optional<OtherVectorAxis> FindOtherVectorAxis(const schedule::Schedule& sch, int stage, int lanes);

/// Whether `stage`'s vectors belong on its last reduction axis (rfactor's lanes) rather than on
/// a spatial axis: that axis is contiguous in a buffer it reads (at least two vectors long) and
/// the last spatial axis is contiguous in none. A row's sum or maximum (softmax, layer norm, a
/// mean over the last axis), a matrix-vector product along the matrix's rows.
bool VectorizesAlongReduction(const schedule::Schedule& sch, int stage, int lanes);

/// Whether `stage` reduces across rows that its last spatial axis walks along: a buffer it reads
/// is contiguous along that axis and strided along its first reduction axis (a sum over a batch
/// of rows, a bias's gradient, a vector times a matrix). A chunk of that reduction axis is then
/// one run of memory.
bool ReducesAcrossRows(const schedule::Schedule& sch, int stage);

/// Whether `stage` reads a workload input that is the same for every row (invariant along every
/// axis but the last) and varies along the row: layer norm's scale and bias, a bias added to
/// every row. Several rows a step then load each vector of it once for them all.
bool SharesAnInputAcrossRows(const schedule::Schedule& sch, int stage);

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_VECTOR_AXIS_H_
