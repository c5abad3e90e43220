#ifndef TUNED_MODEL_MODEL_RUNNER_H_
#define TUNED_MODEL_MODEL_RUNNER_H_

/// \file
/// Runs a whole model the way its tasks split it: each fused kernel through a KernelExecutor
/// (the float64 reference evaluator of its workload by default; compiled kernels where a caller
/// has them), every node outside the kernels through plain reference code. A test and
/// benchmark tool, not an inference engine: it checks that the kernels tuned computes are the
/// model, against outputs from elsewhere (ONNX's test data, onnxruntime).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/graph.h"
#include "model/tasks.h"

namespace tuned::model {

/// Tensor values by model tensor name, row-major.
using TensorValues = std::map<std::string, std::vector<double>>;

/// Computes a kernel's output from its inputs (in KernelDefinition::input_tensors order).
using KernelExecutor = std::function<StatusOr<std::vector<double>>(
    const KernelDefinition& kernel, const std::vector<const std::vector<double>*>& inputs)>;

/// The float64 evaluator of the kernel's workload (ir::EvaluateReference).
KernelExecutor ReferenceExecutor();

/// Runs the model on `inputs` (one entry per graph input); returns the graph's outputs.
StatusOr<TensorValues> RunModel(const Graph& graph, const ModelTasks& tasks, const TensorValues& inputs,
                                const KernelExecutor& executor = ReferenceExecutor());

/// Computes an outside node (a layout operator: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
/// Concat, Identity); values holds every tensor computed so far and receives the node's outputs.
Status RunOutsideNode(const Graph& graph, const Node& node, TensorValues& values);

}  // namespace tuned::model

#endif  // TUNED_MODEL_MODEL_RUNNER_H_
