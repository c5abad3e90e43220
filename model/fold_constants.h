#ifndef TUNED_MODEL_FOLD_CONSTANTS_H_
#define TUNED_MODEL_FOLD_CONSTANTS_H_

/// \file
/// Nodes that compute only from constants (exporters leave such chains: a scale `1 / √d`, a
/// reshaped bias) are evaluated once at import and become constants themselves, so they are
/// never tuned or run as kernels. A node is evaluated through the reference of the kernel tuned
/// would write for it (one definition of every operator's meaning); nodes tuned does not
/// compute stay.

#include "model/graph.h"

namespace tuned::model {

void FoldConstants(Graph& graph);

}  // namespace tuned::model

#endif  // TUNED_MODEL_FOLD_CONSTANTS_H_
