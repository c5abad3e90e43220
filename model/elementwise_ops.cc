// Elementwise ONNX operators as expressions at one index (operators.h).
#include <cmath>
#include <map>

#include "model/operators.h"
#include "model/operators_internal.h"

namespace tuned::model {
namespace {

using Expression = std::function<StatusOr<std::string>(const Graph&, const Node&, const OperandFn&,
                                                       const Index&)>;

Status Unsupported(const Node& node, const std::string& why) {
  return InvalidArgumentError(node.op + " node '" + node.name + "': " + why);
}

// Input `i` read with numpy broadcasting against the node's output.
std::string Broadcast(const Graph& g, const Node& node, const OperandFn& operand, size_t i,
                      const Index& index) {
  const auto& out = g.tensor(node.outputs[0]).shape;
  return operand(i, BroadcastIndex(g.tensor(node.inputs[i]).shape, out, index));
}

// A constant scalar input (Clip's bounds, Pow's exponent), or an error naming it.
StatusOr<double> ConstantScalar(const Graph& g, const Node& node, size_t i) {
  const std::string& name = node.Input(i);
  if (!g.IsConstant(name) || g.tensor(name).values.size() != 1) {
    return Unsupported(node, "input " + std::to_string(i) + " ('" + name +
                                 "') is not a constant scalar");
  }
  return g.tensor(name).values[0];
}

Expression Unary(std::function<std::string(const std::string& x, const Node&)> f) {
  return [f](const Graph& g, const Node& n, const OperandFn& operand, const Index& index)
             -> StatusOr<std::string> { return f(Broadcast(g, n, operand, 0, index), n); };
}

// Operands are written into locals first, in input order: reading an operand may declare a
// kernel input, and the order of inputs is part of the workload key (the operands of `+` on
// strings are evaluated in no fixed order).
Expression Binary(const std::string& op) {
  return [op](const Graph& g, const Node& n, const OperandFn& operand, const Index& index)
             -> StatusOr<std::string> {
    std::string a = Broadcast(g, n, operand, 0, index);
    std::string b = Broadcast(g, n, operand, 1, index);
    return "(" + a + " " + op + " " + b + ")";
  };
}

std::string Lit(double v) { return FloatLiteral(v); }

StatusOr<std::string> Clip(const Graph& g, const Node& n, const OperandFn& operand, const Index& index) {
  std::string x = Broadcast(g, n, operand, 0, index);
  bool lo = false, hi = false;
  double min = 0, max = 0;
  if (g.opset < 11) {
    lo = n.Find("min") != nullptr, hi = n.Find("max") != nullptr;
    min = n.Float("min", 0), max = n.Float("max", 0);
  } else {
    if (!n.Input(1).empty()) { TUNED_ASSIGN_OR_RETURN(min, ConstantScalar(g, n, 1)); lo = true; }
    if (!n.Input(2).empty()) { TUNED_ASSIGN_OR_RETURN(max, ConstantScalar(g, n, 2)); hi = true; }
  }
  if (lo) x = "max(" + x + ", " + Lit(min) + ")";
  if (hi) x = "min(" + x + ", " + Lit(max) + ")";
  return x;
}

StatusOr<std::string> Pow(const Graph& g, const Node& n, const OperandFn& operand, const Index& index) {
  TUNED_ASSIGN_OR_RETURN(double e, ConstantScalar(g, n, 1));
  std::string x = Broadcast(g, n, operand, 0, index);
  if (e == 1) return x;
  if (e == 2) return "(" + x + " * " + x + ")";
  if (e == 3) return "(" + x + " * " + x + " * " + x + ")";
  if (e == 0.5) return "sqrt(" + x + ")";
  return Unsupported(n, "exponent " + Lit(e) + " (only 0.5, 1, 2 and 3 are computed exactly)");
}

StatusOr<std::string> PRelu(const Graph& g, const Node& n, const OperandFn& operand, const Index& index) {
  std::string x = Broadcast(g, n, operand, 0, index);
  // Before opset 7 a slope vector is per channel (dimension 1), not broadcast from the right.
  const auto& slope_shape = g.tensor(n.inputs[1]).shape;
  bool per_channel = g.opset < 7 && slope_shape.size() == 1 && slope_shape[0] > 1 && index.size() > 1;
  std::string slope = per_channel ? operand(1, Index{index[1]}) : Broadcast(g, n, operand, 1, index);
  return "select(" + x + " >= 0.0, " + x + ", " + slope + " * " + x + ")";
}

// Inference mode, per channel (dimension 1): x * scale + shift once folded at import
// (fold_batch_norm.h), else (x - mean) / sqrt(var + epsilon) * scale + bias.
StatusOr<std::string> BatchNorm(const Graph& g, const Node& n, const OperandFn& operand, const Index& index) {
  if (n.Int("training_mode", 0) != 0) return Unsupported(n, "training_mode=1");
  const auto& shape = g.tensor(n.inputs[0]).shape;
  if (shape.size() < 2) return Unsupported(n, "input of rank " + std::to_string(shape.size()));
  const size_t vectors = n.inputs.size() == 3 ? 2 : 4;
  for (size_t i = 1; i <= vectors; ++i) {
    if (n.Input(i).empty() || g.tensor(n.Input(i)).shape != std::vector<int64_t>{shape[1]}) {
      return Unsupported(n, "input " + std::to_string(i) + " is not a vector of the channels");
    }
  }
  Index channel{index[1]};
  std::vector<std::string> in{operand(0, index)};
  for (size_t i = 1; i <= vectors; ++i) in.push_back(operand(i, channel));  // in input order (see Binary)
  if (vectors == 2) return "(" + in[0] + " * " + in[1] + " + " + in[2] + ")";
  return "((" + in[0] + " - " + in[3] + ") / sqrt(" + in[4] + " + " + Lit(n.Float("epsilon", 1e-5)) + ") * " +
         in[1] + " + " + in[2] + ")";
}

const std::map<std::string, Expression>& Expressions() {
  static const std::map<std::string, Expression> kOps = {
      {"Add", Binary("+")},
      {"Sub", Binary("-")},
      {"Mul", Binary("*")},
      {"Div", Binary("/")},
      {"Relu", Unary([](const std::string& x, const Node&) { return "max(" + x + ", 0.0)"; })},
      {"Sigmoid", Unary([](const std::string& x, const Node&) { return "sigmoid(" + x + ")"; })},
      {"Tanh", Unary([](const std::string& x, const Node&) { return "tanh(" + x + ")"; })},
      {"Exp", Unary([](const std::string& x, const Node&) { return "exp(" + x + ")"; })},
      {"Log", Unary([](const std::string& x, const Node&) { return "log(" + x + ")"; })},
      {"Sqrt", Unary([](const std::string& x, const Node&) { return "sqrt(" + x + ")"; })},
      {"Abs", Unary([](const std::string& x, const Node&) { return "fabs(" + x + ")"; })},
      {"Erf", Unary([](const std::string& x, const Node&) { return "erf(" + x + ")"; })},
      {"Neg", Unary([](const std::string& x, const Node&) { return "(0.0 - " + x + ")"; })},
      {"Identity", Unary([](const std::string& x, const Node&) { return x; })},
      {"Dropout", Unary([](const std::string& x, const Node&) { return x; })},  // inference
      {"Softsign", Unary([](const std::string& x, const Node&) { return "(" + x + " / (1.0 + fabs(" + x + ")))"; })},
      {"Softplus", Unary([](const std::string& x, const Node&) { return "log(exp(" + x + ") + 1.0)"; })},
      {"LeakyRelu", Unary([](const std::string& x, const Node& n) {
         return "select(" + x + " >= 0.0, " + x + ", " + Lit(n.Float("alpha", 0.01)) + " * " + x + ")";
       })},
      {"Elu", Unary([](const std::string& x, const Node& n) {
         return "select(" + x + " > 0.0, " + x + ", " + Lit(n.Float("alpha", 1.0)) + " * (exp(" + x + ") - 1.0))";
       })},
      {"Selu", Unary([](const std::string& x, const Node& n) {
         std::string alpha = Lit(n.Float("alpha", 1.67326319217681884765625));
         std::string gamma = Lit(n.Float("gamma", 1.05070102214813232421875));
         return "select(" + x + " > 0.0, " + gamma + " * " + x + ", " + gamma + " * (" + alpha +
                " * exp(" + x + ") - " + alpha + "))";
       })},
      {"HardSigmoid", Unary([](const std::string& x, const Node& n) {
         return "max(0.0, min(1.0, " + Lit(n.Float("alpha", 0.2)) + " * " + x + " + " +
                Lit(n.Float("beta", 0.5)) + "))";
       })},
      {"HardSwish", Unary([](const std::string& x, const Node&) {
         return "(" + x + " * max(0.0, min(1.0, " + x + " / 6.0 + 0.5)))";
       })},
      {"Clip", Clip},
      {"Pow", Pow},
      {"PRelu", PRelu},
      {"BatchNormalization", BatchNorm},
  };
  return kOps;
}

}  // namespace

bool IsElementwiseOp(const std::string& op) { return Expressions().count(op) > 0; }

StatusOr<std::string> ElementwiseExpression(const Graph& graph, const Node& node,
                                            const OperandFn& operand, const Index& index) {
  auto it = Expressions().find(node.op);
  if (it == Expressions().end()) return Unsupported(node, "not an elementwise operator");
  if (node.outputs.empty() || graph.tensor(node.outputs[0]).dtype != "float32") {
    return Unsupported(node, "output is not float32");
  }
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (!node.outputs[i].empty()) return Unsupported(node, "more than one output");
  }
  for (const std::string& in : node.inputs) {
    if (!in.empty() && graph.tensor(in).dtype != "float32") {
      return Unsupported(node, "input '" + in + "' is " + graph.tensor(in).dtype + ", not float32");
    }
  }
  return it->second(graph, node, operand, index);
}

}  // namespace tuned::model
