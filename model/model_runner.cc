#include "model/model_runner.h"

#include <numeric>

#include "compiler/ir/evaluator.h"

namespace tuned::model {
namespace {

// Where a run reads a tensor: what it computed, else the model's constants.
template <typename Values>
using Lookup = std::function<const Values*(const std::string& name)>;

Status NoReference(const Node& node, const std::string& why) {
  return UnimplementedError("node '" + node.name + "' (" + node.op + ") runs outside the kernels and " + why);
}

// Row-major strides of a shape.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

template <typename Values>
Values Transpose(const Values& in, const std::vector<int64_t>& shape, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out_shape(shape.size()), in_strides = Strides(shape);
  for (size_t i = 0; i < perm.size(); ++i) out_shape[i] = shape[perm[i]];
  Values out(in.size());
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

template <typename Values>
Values Concat(const Graph& g, const Node& node, const Lookup<Values>& lookup, int64_t axis) {
  const auto& out_shape = g.tensor(node.outputs[0]).shape;
  int64_t outer = std::accumulate(out_shape.begin(), out_shape.begin() + axis, int64_t{1}, std::multiplies<>());
  Values out;
  for (int64_t o = 0; o < outer; ++o) {
    for (const std::string& in : node.inputs) {
      const auto& shape = g.tensor(in).shape;
      int64_t block = std::accumulate(shape.begin() + axis, shape.end(), int64_t{1}, std::multiplies<>());
      const Values& v = *lookup(in);
      out.insert(out.end(), v.begin() + o * block, v.begin() + (o + 1) * block);
    }
  }
  return out;
}

// An outside node (a layout operator: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat,
// Identity, Dropout): its one output.
template <typename Values>
StatusOr<Values> RunOutsideNode(const Graph& g, const Node& node, const Lookup<Values>& lookup) {
  for (const std::string& in : node.inputs) {
    if (!in.empty() && lookup(in) == nullptr) return NoReference(node, "reads '" + in + "', which holds no numbers");
  }
  if (node.inputs.empty() || node.outputs.empty()) return NoReference(node, "has no reference implementation here");
  const Values& x = *lookup(node.inputs.at(0));
  static const char* kCopies[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"};
  for (const char* op : kCopies) {
    if (node.op == op) return x;  // row-major data is unchanged by a new shape
  }
  if (node.op == "Transpose") {
    const auto& shape = g.tensor(node.inputs[0]).shape;
    std::vector<int64_t> reversed(shape.size());
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    return Transpose(x, shape, node.Ints("perm", reversed));
  }
  if (node.op == "Concat") {
    int64_t axis = node.Int("axis", 0);
    if (axis < 0) axis += int64_t(g.tensor(node.outputs[0]).shape.size());
    return Concat(g, node, lookup, axis);
  }
  return NoReference(node, "has no reference implementation here");
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

template <typename Values>
TensorMap<Values> ConstantsOf(const Graph& graph) {
  TensorMap<Values> constants;
  for (const auto& [name, tensor] : graph.tensors) {
    if (tensor.is_constant && !tensor.values.empty()) constants[name] = Values(tensor.values.begin(), tensor.values.end());
  }
  return constants;
}

template <typename To, typename From>
TensorMap<To> Converted(const TensorMap<From>& values) {
  TensorMap<To> out;
  for (const auto& [name, v] : values) out[name] = To(v.begin(), v.end());
  return out;
}

template <typename Values>
StatusOr<TensorMap<Values>> RunModel(const Graph& graph, const ModelTasks& tasks, const TensorMap<Values>& constants,
                                     const TensorMap<Values>& inputs, const KernelExecutorOf<Values>& executor) {
  TensorMap<Values> computed;
  // Inputs and constants are read where they are (a copy per run would cost as much as a
  // small kernel).
  const Lookup<Values> lookup = [&](const std::string& name) -> const Values* {
    if (auto it = computed.find(name); it != computed.end()) return &it->second;
    if (auto it = constants.find(name); it != constants.end()) return &it->second;
    if (auto it = inputs.find(name); it != inputs.end()) return &it->second;
    return nullptr;
  };
  for (const std::string& name : graph.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end() || int64_t(it->second.size()) != graph.tensor(name).elements()) {
      return InvalidArgumentError("model input '" + name + "' is missing or not of " +
                                  std::to_string(graph.tensor(name).elements()) + " values");
    }
  }
  for (const Partition::Step& step : tasks.partition.steps) {
    if (!step.is_kernel) {
      const Node& node = graph.nodes[step.index];
      TUNED_ASSIGN_OR_RETURN(Values out, RunOutsideNode(graph, node, lookup));
      computed[node.outputs[0]] = std::move(out);
      continue;
    }
    const KernelDefinition& kernel = tasks.kernels[step.index];
    std::vector<const Values*> args;
    for (const std::string& in : kernel.input_tensors) {
      args.push_back(lookup(in));
      if (args.back() == nullptr) return InvalidArgumentError("a kernel reads '" + in + "', which holds no numbers");
    }
    TUNED_ASSIGN_OR_RETURN(computed[kernel.output_tensor], executor(kernel, args));
  }
  TensorMap<Values> outputs;
  for (const std::string& name : graph.outputs) {
    // A computed output moves out (no other output can name it twice: outputs are distinct).
    if (auto it = computed.find(name); it != computed.end()) {
      outputs[name] = std::move(it->second);
      computed.erase(it);
    } else if (const Values* held = lookup(name)) {
      outputs[name] = *held;
    } else {
      return InvalidArgumentError("model output '" + name + "' holds no numbers");
    }
  }
  return outputs;
}

StatusOr<TensorValues> RunModel(const Graph& graph, const ModelTasks& tasks, const TensorValues& inputs,
                                const KernelExecutor& executor) {
  return RunModel(graph, tasks, ConstantsOf<std::vector<double>>(graph), inputs, executor);
}

template TensorValues ConstantsOf<std::vector<double>>(const Graph&);
template Float32Tensors ConstantsOf<Float32Values>(const Graph&);
template Float32Tensors Converted<Float32Values, std::vector<double>>(const TensorValues&);
template TensorValues Converted<std::vector<double>, Float32Values>(const Float32Tensors&);
template StatusOr<TensorValues> RunModel(const Graph&, const ModelTasks&, const TensorValues&, const TensorValues&,
                                         const KernelExecutor&);
template StatusOr<Float32Tensors> RunModel(const Graph&, const ModelTasks&, const Float32Tensors&,
                                           const Float32Tensors&, const KernelExecutorOf<Float32Values>&);

}  // namespace tuned::model
