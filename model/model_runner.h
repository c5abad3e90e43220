#ifndef TUNED_MODEL_MODEL_RUNNER_H_
#define TUNED_MODEL_MODEL_RUNNER_H_

/// \file
/// Runs a whole model the way its tasks split it: each fused kernel through a kernel executor
/// (the float64 reference evaluator of its workload by default; compiled kernels where a caller
/// has them), every node outside the kernels through plain code. A test and benchmark tool, not
/// an inference engine: it checks that the kernels tuned computes are the model, against outputs
/// from elsewhere (ONNX's test data, onnxruntime), and times them end to end.
///
/// The run is generic in how a tensor's values are held: float64 vectors for the reference, and
/// 64-byte aligned float32 vectors for compiled kernels, which then take every tensor as it is,
/// with no conversion between kernels.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/runtime/aligned_buffer.h"
#include "model/graph.h"
#include "model/tasks.h"

namespace tuned::model {

/// Tensor values by model tensor name, row-major.
template <typename Values>
using TensorMap = std::map<std::string, Values>;
using TensorValues = TensorMap<std::vector<double>>;
/// float32 values as generated kernels take them.
using Float32Values = std::vector<float, runtime::AlignedAllocator<float>>;
using Float32Tensors = TensorMap<Float32Values>;

/// Computes a kernel's output from its inputs (in KernelDefinition::input_tensors order).
template <typename Values>
using KernelExecutorOf =
    std::function<StatusOr<Values>(const KernelDefinition& kernel, const std::vector<const Values*>& inputs)>;
using KernelExecutor = KernelExecutorOf<std::vector<double>>;

/// The float64 evaluator of the kernel's workload (ir::EvaluateReference).
KernelExecutor ReferenceExecutor();

/// The graph's constants (with values) held as `Values`: made once, shared by every run.
template <typename Values>
TensorMap<Values> ConstantsOf(const Graph& graph);

/// `values` held as `To` (float64 ↔ float32).
template <typename To, typename From>
TensorMap<To> Converted(const TensorMap<From>& values);

/// Runs the model on `inputs` (one entry per graph input), with `constants` from ConstantsOf;
/// returns the graph's outputs.
template <typename Values>
StatusOr<TensorMap<Values>> RunModel(const Graph& graph, const ModelTasks& tasks, const TensorMap<Values>& constants,
                                     const TensorMap<Values>& inputs, const KernelExecutorOf<Values>& executor);

/// The same in float64, making the constants on the way.
StatusOr<TensorValues> RunModel(const Graph& graph, const ModelTasks& tasks, const TensorValues& inputs,
                                const KernelExecutor& executor = ReferenceExecutor());

}  // namespace tuned::model

#endif  // TUNED_MODEL_MODEL_RUNNER_H_
