#include "model/tasks.h"

#include <map>

#include "compiler/ir/tdl/definition.h"
#include "model/operators.h"

namespace tuned::model {

double ModelTasks::flops() const {
  double total = 0;
  for (const Task& t : tasks) total += t.weight * t.workload->flops();
  return total;
}

StatusOr<KernelDefinition> WriteKernel(const Graph& g, const FusedKernel& kernel) {
  DefinitionWriter w;
  std::map<std::string, KernelValue> values;
  std::map<std::string, int> uses;  // reads by the kernel's own nodes
  for (int m : kernel.nodes) {
    for (const std::string& in : g.nodes[m].inputs) ++uses[in];
  }
  // A tensor the kernel does not compute: a literal for a constant scalar, else an input.
  auto external = [&](const std::string& tensor, const Index& index) {
    const Tensor& t = g.tensor(tensor);
    if (t.is_constant && t.values.size() == 1) return FloatLiteral(t.values[0]);
    return Access(w.Input(t, "e"), index);
  };
  KernelDefinition def;
  std::vector<int64_t> anchor_shape, anchor_compute_shape;  // of the kernel's first value
  for (size_t i = 0; i < kernel.nodes.size(); ++i) {
    const Node& node = g.nodes[kernel.nodes[i]];
    def.ops += (i ? "+" : "") + node.op;
    const std::string& out = node.outputs[0];
    KernelValue value;
    if (i == 0 && RoleOf(node.op) == OpRole::kAnchor) {
      TUNED_ASSIGN_OR_RETURN(value, EmitAnchor(g, node, w));
    } else {
      OperandFn operand = [&values, &external, &node](size_t input, const Index& index) {
        auto it = values.find(node.inputs[input]);
        return it != values.end() ? it->second.at(index) : external(node.inputs[input], index);
      };
      const std::vector<int64_t>& shape = g.tensor(out).shape;
      // Written once here so that errors surface, and inputs are declared in node order.
      TUNED_RETURN_IF_ERROR(ElementwiseExpression(g, node, operand, Index(shape.size(), "0")).status());
      value = KernelValue{shape, [&g, &node, operand](const Index& index) {
                            return *ElementwiseExpression(g, node, operand, index);
                          },
                          ""};
      // An epilogue of the anchor's shape is computed over the anchor's merged dimensions too,
      // so that its stage reads the anchor's at its own axes (and can be fused into it).
      if (shape == anchor_shape) value.compute_shape = anchor_compute_shape;
    }
    if (i == 0) {
      anchor_shape = value.shape;
      anchor_compute_shape = value.compute_shape;
    }
    // A value read more than once becomes a stage, so the expression never grows with the reads
    // (the schedule may still inline it).
    if (uses[out] > 1 && i + 1 < kernel.nodes.size()) value = w.Materialize(w.FreshName("t"), value);
    values[out] = value;
  }
  const KernelValue& result = values.at(kernel.output);
  if (result.stage.empty()) w.Materialize(w.FreshName("out"), result);

  def.text = w.Text();
  def.input_tensors = w.input_tensors();
  def.output_tensor = kernel.output;
  ir::DefinitionOptions options;
  options.source_name = "kernel of node '" + g.nodes[kernel.nodes[0]].name + "'";
  StatusOr<ir::Workload> workload = ir::ParseDefinition(def.text, options);
  if (!workload.ok()) {
    return InvalidArgumentError("node '" + g.nodes[kernel.nodes[0]].name + "' (" + def.ops +
                                "): its kernel is not a valid workload: " + std::string(workload.status().message()));
  }
  def.workload = std::make_shared<const ir::Workload>(std::move(*workload));
  return def;
}

StatusOr<ModelTasks> ExtractTasks(const Graph& graph) {
  ModelTasks result;
  result.partition = PartitionGraph(graph);
  std::map<std::string, int> task_of_key;
  for (size_t k = 0; k < result.partition.kernels.size(); ++k) {
    TUNED_ASSIGN_OR_RETURN(KernelDefinition def, WriteKernel(graph, result.partition.kernels[k]));
    const std::string& key = def.workload->key();
    auto [it, inserted] = task_of_key.emplace(key, int(result.tasks.size()));
    if (inserted) {
      Task task;
      task.workload = def.workload;
      task.ops = def.ops;
      task.shape = FormatShape(graph.tensor(def.output_tensor).shape);
      result.tasks.push_back(std::move(task));
    }
    Task& task = result.tasks[it->second];
    ++task.weight;
    task.kernels.push_back(int(k));
    result.kernels.push_back(std::move(def));
  }
  return result;
}

}  // namespace tuned::model
