#include "model/model_runner.h"

#include <numeric>

#include "compiler/ir/evaluator.h"

namespace tuned::model {
namespace {

Status NoReference(const Node& node, const std::string& why) {
  return UnimplementedError("node '" + node.name + "' (" + node.op + ") runs outside the kernels and " + why);
}

// Row-major strides of a shape.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<double> Transpose(const std::vector<double>& in, const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& perm) {
  std::vector<int64_t> out_shape(shape.size()), in_strides = Strides(shape);
  for (size_t i = 0; i < perm.size(); ++i) out_shape[i] = shape[perm[i]];
  std::vector<double> out(in.size());
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t flat = 0; flat < out.size(); ++flat) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i) src += index[i] * in_strides[perm[i]];
    out[flat] = in[src];
    for (size_t d = index.size(); d-- > 0;) {  // next output index, row-major
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

std::vector<double> Concat(const Graph& g, const Node& node, const TensorValues& values, int64_t axis) {
  const auto& out_shape = g.tensor(node.outputs[0]).shape;
  int64_t outer = std::accumulate(out_shape.begin(), out_shape.begin() + axis, int64_t{1}, std::multiplies<>());
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (const std::string& in : node.inputs) {
      const auto& shape = g.tensor(in).shape;
      int64_t block = std::accumulate(shape.begin() + axis, shape.end(), int64_t{1}, std::multiplies<>());
      const std::vector<double>& v = values.at(in);
      out.insert(out.end(), v.begin() + o * block, v.begin() + (o + 1) * block);
    }
  }
  return out;
}

}  // namespace

KernelExecutor ReferenceExecutor() {
  return [](const KernelDefinition& kernel, const std::vector<const std::vector<double>*>& inputs)
             -> StatusOr<std::vector<double>> {
    const ir::Workload& w = *kernel.workload;
    std::map<std::string, std::vector<double>> named;
    for (size_t i = 0; i < w.inputs().size(); ++i) named[w.inputs()[i]->name] = *inputs[i];
    TUNED_ASSIGN_OR_RETURN(auto stages, ir::EvaluateReference(w, named));
    return std::move(stages.at(w.output_stage().name));
  };
}

Status RunOutsideNode(const Graph& g, const Node& node, TensorValues& values) {
  for (const std::string& in : node.inputs) {
    if (!in.empty() && !values.count(in)) return NoReference(node, "reads '" + in + "', which holds no numbers");
  }
  if (node.inputs.empty() || node.outputs.empty()) return NoReference(node, "has no reference implementation here");
  const std::string& out = node.outputs[0];
  const std::vector<double>& x = values.at(node.inputs.at(0));
  static const char* kCopies[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"};
  for (const char* op : kCopies) {
    if (node.op == op) {  // row-major data is unchanged by a new shape
      values[out] = x;
      return Status::Ok();
    }
  }
  if (node.op == "Transpose") {
    const auto& shape = g.tensor(node.inputs[0]).shape;
    std::vector<int64_t> reversed(shape.size());
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    values[out] = Transpose(x, shape, node.Ints("perm", reversed));
    return Status::Ok();
  }
  if (node.op == "Concat") {
    int64_t axis = node.Int("axis", 0);
    if (axis < 0) axis += int64_t(g.tensor(out).shape.size());
    values[out] = Concat(g, node, values, axis);
    return Status::Ok();
  }
  return NoReference(node, "has no reference implementation here");
}

StatusOr<TensorValues> RunModel(const Graph& graph, const ModelTasks& tasks, const TensorValues& inputs,
                                const KernelExecutor& executor) {
  TensorValues values;
  for (const auto& [name, tensor] : graph.tensors) {
    if (tensor.is_constant && !tensor.values.empty()) values[name] = tensor.values;
  }
  for (const std::string& name : graph.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end() || int64_t(it->second.size()) != graph.tensor(name).elements()) {
      return InvalidArgumentError("model input '" + name + "' is missing or not of " +
                                  std::to_string(graph.tensor(name).elements()) + " values");
    }
    values[name] = it->second;
  }
  for (const Partition::Step& step : tasks.partition.steps) {
    if (!step.is_kernel) {
      TUNED_RETURN_IF_ERROR(RunOutsideNode(graph, graph.nodes[step.index], values));
      continue;
    }
    const KernelDefinition& kernel = tasks.kernels[step.index];
    std::vector<const std::vector<double>*> args;
    for (const std::string& in : kernel.input_tensors) args.push_back(&values.at(in));
    TUNED_ASSIGN_OR_RETURN(values[kernel.output_tensor], executor(kernel, args));
  }
  TensorValues outputs;
  for (const std::string& name : graph.outputs) outputs[name] = values.at(name);
  return outputs;
}

}  // namespace tuned::model
