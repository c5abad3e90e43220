#include "model/operators.h"

#include "model/operators_internal.h"

namespace tuned::model {

OpRole RoleOf(const std::string& op) {
  if (IsAnchorOp(op)) return OpRole::kAnchor;
  if (IsElementwiseOp(op)) return OpRole::kElementwise;
  return OpRole::kOutside;
}

Status CheckSupported(const Graph& graph, const Node& node) {
  DefinitionWriter scratch;
  switch (RoleOf(node.op)) {
    case OpRole::kAnchor:
      return EmitAnchor(graph, node, scratch).status();
    case OpRole::kElementwise: {
      if (node.outputs.empty()) return InvalidArgumentError(node.op + " node '" + node.name + "': no output");
      Index index(graph.tensor(node.outputs[0]).shape.size(), "0");
      OperandFn operand = [](size_t, const Index&) { return std::string("x"); };
      return ElementwiseExpression(graph, node, operand, index).status();
    }
    case OpRole::kOutside:
      break;
  }
  return InvalidArgumentError(node.op + " is not an operator tuned computes");
}

}  // namespace tuned::model
