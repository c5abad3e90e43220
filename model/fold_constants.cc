#include "model/fold_constants.h"

#include "model/model_runner.h"
#include "model/operators.h"
#include "model/tasks.h"

namespace tuned::model {
namespace {

bool ReadsOnlyConstants(const Graph& graph, const Node& node) {
  for (const std::string& in : node.inputs) {
    if (in.empty()) continue;
    if (!graph.IsConstant(in) || graph.tensor(in).values.empty()) return false;
  }
  return !node.inputs.empty();
}

}  // namespace

void FoldConstants(Graph& graph) {
  std::vector<Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    bool folded = false;
    if (ReadsOnlyConstants(graph, node) && RoleOf(node.op) != OpRole::kOutside && CheckSupported(graph, node).ok()) {
      StatusOr<KernelDefinition> kernel = WriteKernel(graph, FusedKernel{{int(i)}, node.outputs[0]});
      if (kernel.ok()) {
        std::vector<const std::vector<double>*> inputs;
        for (const std::string& in : kernel->input_tensors) inputs.push_back(&graph.tensor(in).values);
        StatusOr<std::vector<double>> values = ReferenceExecutor()(*kernel, inputs);
        if (values.ok()) {
          Tensor& out = graph.tensors[node.outputs[0]];
          out.is_constant = true;
          out.values.clear();
          for (double v : *values) out.values.push_back(double(float(v)));  // a float32 tensor
          out.derived_from = node.op + " '" + node.name + "' of constants, evaluated at import";
          folded = true;
        }
      }
    }
    if (!folded) kept.push_back(node);
  }
  graph.nodes = std::move(kept);
}

}  // namespace tuned::model
