#ifndef TUNED_MODEL_OPERATORS_H_
#define TUNED_MODEL_OPERATORS_H_

/// \file
/// What tuned computes of each ONNX operator, written in the workload language. Two kinds:
///   - anchors (Conv, MatMul, Gemm, pooling, Softmax, reductions, LayerNormalization) start a
///     fused kernel: their stages are written by EmitAnchor;
///   - elementwise operators (bias and residual Add, BatchNormalization in inference mode, Relu,
///     Clip, Mul, Sigmoid, Erf, Tanh, ...) are expressions over their inputs at one index, which
///     fuse into the kernel of what they consume (ElementwiseExpression).
/// Every other operator stays outside the kernels. A node whose attributes or dtypes an emitter
/// does not handle gets the reason as an error and stays outside too: support is decided by the
/// same code that writes the kernel, so the two never disagree.

#include <functional>
#include <string>

#include "common/status.h"
#include "model/definition_writer.h"
#include "model/graph.h"

namespace tuned::model {

enum class OpRole { kAnchor, kElementwise, kOutside };

/// By operator type alone.
OpRole RoleOf(const std::string& op);

/// Writes an anchor's stages; its model inputs become kernel inputs. Returns the value of the
/// node's (first) output.
StatusOr<KernelValue> EmitAnchor(const Graph& graph, const Node& node, DefinitionWriter& writer);

/// Input `input` of the node at `index` (an index into that input's own shape).
using OperandFn = std::function<std::string(size_t input, const Index& index)>;

/// The value of an elementwise node's output at `index`.
StatusOr<std::string> ElementwiseExpression(const Graph& graph, const Node& node,
                                            const OperandFn& operand, const Index& index);

/// Why a node cannot be part of a kernel, or OK: the emitter's answer on a scratch definition.
Status CheckSupported(const Graph& graph, const Node& node);

}  // namespace tuned::model

#endif  // TUNED_MODEL_OPERATORS_H_
