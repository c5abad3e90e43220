#ifndef TUNED_MODEL_FOLD_BATCH_NORM_H_
#define TUNED_MODEL_FOLD_BATCH_NORM_H_

/// \file
/// Inference-mode BatchNormalization with constant statistics, folded once at import: its four
/// vectors become two, scale = γ / √(var + ε) and shift = β − mean · scale (new constants named
/// `<node>.scale` and `<node>.shift`), and the node reads (x, scale, shift). Its kernel epilogue
/// is then one multiply-add per element instead of a division and a square root, and it is
/// defined for every input a verification feeds it (random variances below −ε would make the
/// unfolded form's square root NaN).

#include "model/graph.h"

namespace tuned::model {

void FoldBatchNormalization(Graph& graph);

}  // namespace tuned::model

#endif  // TUNED_MODEL_FOLD_BATCH_NORM_H_
