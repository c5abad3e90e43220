#include "model/fold_batch_norm.h"

#include <cmath>

namespace tuned::model {

void FoldBatchNormalization(Graph& graph) {
  for (Node& node : graph.nodes) {
    if (node.op != "BatchNormalization" || node.inputs.size() != 5 || node.Int("training_mode", 0) != 0) continue;
    bool constant = true;
    for (size_t i = 1; i < 5; ++i) {
      const Tensor* t = graph.IsConstant(node.inputs[i]) ? &graph.tensor(node.inputs[i]) : nullptr;
      constant &= t != nullptr && t->dtype == "float32" && t->shape.size() == 1 &&
                  int64_t(t->values.size()) == t->shape[0];
    }
    if (!constant) continue;
    const std::vector<double>& gamma = graph.tensor(node.inputs[1]).values;
    const std::vector<double>& beta = graph.tensor(node.inputs[2]).values;
    const std::vector<double>& mean = graph.tensor(node.inputs[3]).values;
    const std::vector<double>& var = graph.tensor(node.inputs[4]).values;
    if (beta.size() != gamma.size() || mean.size() != gamma.size() || var.size() != gamma.size()) continue;
    const double epsilon = node.Float("epsilon", 1e-5);
    const std::string& g = node.inputs[1];
    const std::string& b = node.inputs[2];
    const std::string& m = node.inputs[3];
    const std::string& v = node.inputs[4];
    const std::string eps = std::to_string(float(epsilon));
    Tensor scale{node.name + ".scale", "float32", {int64_t(gamma.size())}, true, {},
                 g + " / sqrt(" + v + " + " + eps + ") (BatchNormalization '" + node.name + "' folded)"};
    Tensor shift{node.name + ".shift", "float32", {int64_t(gamma.size())}, true, {},
                 b + " - " + m + " * " + scale.name + " (BatchNormalization '" + node.name + "' folded)"};
    for (size_t c = 0; c < gamma.size(); ++c) {
      // Rounded to float32 as the model's own constants are.
      double s = float(gamma[c] / std::sqrt(var[c] + float(epsilon)));
      scale.values.push_back(s);
      shift.values.push_back(float(beta[c] - mean[c] * s));
    }
    node.inputs = {node.inputs[0], scale.name, shift.name};
    graph.tensors[scale.name] = std::move(scale);
    graph.tensors[shift.name] = std::move(shift);
  }
}

}  // namespace tuned::model
