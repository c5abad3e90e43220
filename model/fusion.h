#ifndef TUNED_MODEL_FUSION_H_
#define TUNED_MODEL_FUSION_H_

/// \file
/// Splits a model into fused kernels and the nodes that stay outside them.
///
/// A kernel starts at an anchor (or at an elementwise node no kernel took) and takes the
/// elementwise nodes downstream of it whose other inputs exist before the kernel runs
/// (constants, model inputs, results of earlier steps), as long as the kernel keeps exactly one
/// result that anything outside reads: so `Conv → BatchNormalization → Add(residual) → Relu` is
/// one kernel, and so is a GELU written as `x * 0.5 * (1 + Erf(x / √2))` after a MatMul, whose
/// intermediate `x` only the GELU reads. The steps run in the model's node order, each kernel at
/// the place of its first node.

#include <string>
#include <vector>

#include "model/graph.h"

namespace tuned::model {

struct FusedKernel {
  std::vector<int> nodes;  // indices into Graph::nodes, in order; nodes[0] starts the kernel
  std::string output;      // the one tensor it computes for the rest of the model
};

struct OutsideNode {
  int node = 0;
  std::string reason;  // why no kernel computes it, one line
};

struct Partition {
  struct Step {
    bool is_kernel = false;
    int index = 0;  // into kernels, or into Graph::nodes
  };
  std::vector<FusedKernel> kernels;
  std::vector<OutsideNode> outside;
  std::vector<Step> steps;  // execution order
};

Partition PartitionGraph(const Graph& graph);

}  // namespace tuned::model

#endif  // TUNED_MODEL_FUSION_H_
