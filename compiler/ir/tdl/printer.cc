#include "compiler/ir/tdl/printer.h"

#include <cstdio>
#include <cstdlib>

#include "compiler/ir/expr_functor.h"

namespace tuned::ir::tdl {
namespace {

// The shortest decimal that reads back as the same double, always with a '.' or an exponent.
std::string FloatText(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

class ExprText : public ExprFunctor<std::string(const Expr&)> {
 public:
  /// An expression without parentheses around its outermost operator.
  std::string Top(const Expr& e) {
    if (const Binary* b = e.as<Binary>(); b && !IsFunction(b->op)) return Infix(b);
    return VisitExpr(e);
  }

 private:
  static bool IsFunction(BinaryOp op) {
    return op == BinaryOp::kMin || op == BinaryOp::kMax || op == BinaryOp::kFloorDiv ||
           op == BinaryOp::kFloorMod;
  }
  std::string Infix(const Binary* op) {
    return VisitExpr(op->a) + " " + BinaryOpSymbol(op->op) + " " + VisitExpr(op->b);
  }
  std::string List(const std::vector<Expr>& args) {
    std::string s;
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + Top(args[i]);
    return s;
  }

  std::string VisitIntImm(const IntImm* op) override {
    if (op->type.is_bool()) return op->value ? "true" : "false";
    std::string s = std::to_string(op->value);
    return op->type == DataType::Int64() ? s : s + "i" + std::to_string(op->type.bits);
  }
  std::string VisitFloatImm(const FloatImm* op) override {
    std::string s = FloatText(op->value);
    return op->type == DataType::Float32() ? s : s + "f" + std::to_string(op->type.bits);
  }
  std::string VisitVar(const VarNode* op) override { return op->name; }
  std::string VisitBinary(const Binary* op) override {
    if (IsFunction(op->op)) {
      return std::string(BinaryOpSymbol(op->op)) + "(" + Top(op->a) + ", " + Top(op->b) + ")";
    }
    return "(" + Infix(op) + ")";
  }
  std::string VisitNot(const Not* op) override { return "!" + VisitExpr(op->a); }
  std::string VisitSelect(const Select* op) override {
    return "select(" + List({op->cond, op->true_value, op->false_value}) + ")";
  }
  std::string VisitCast(const Cast* op) override {
    return op->type.ToString() + "(" + Top(op->value) + ")";
  }
  std::string VisitLoad(const Load* op) override {
    return op->buffer->name + "[" + List(op->indices) + "]";
  }
  std::string VisitCall(const Call* op) override {
    return std::string(IntrinsicName(op->op)) + "(" + List(op->args) + ")";
  }
};

std::string Axes(const std::vector<Axis>& axes) {
  std::string s;
  for (size_t i = 0; i < axes.size(); ++i) {
    s += (i ? ", " : "") + axes[i].var->name + ": " + std::to_string(axes[i].extent);
  }
  return s;
}

}  // namespace

std::string Print(const Workload& workload, Layout layout, bool mark_constants) {
  std::vector<std::string> statements;
  for (const Buffer& in : workload.inputs()) {
    const bool constant = mark_constants && workload.IsConstantInput(in.get());
    std::string s = "input " + in->name + ": " + (constant ? "const " : "") +
                    in->dtype.ToString() + "[";
    for (size_t i = 0; i < in->shape.size(); ++i) s += (i ? ", " : "") + std::to_string(in->shape[i]);
    statements.push_back(s + "]");
  }
  ExprText text;
  for (const ComputeStage& st : workload.stages()) {
    std::string s = st.name + "[" + Axes(st.axes) + "]: " + st.output->dtype.ToString() + " = ";
    if (st.reduce == ReduceKind::kNone) {
      s += text.Top(st.body);
    } else {
      s += std::string(ReduceKindName(st.reduce)) + "[" + Axes(st.reduce_axes) + "](" +
           text.Top(st.body) + ")";
    }
    statements.push_back(s);
  }
  std::string out;
  for (size_t i = 0; i < statements.size(); ++i) {
    if (layout == Layout::kOneLine) {
      out += (i ? "; " : "") + statements[i];
    } else {
      out += statements[i] + "\n";
    }
  }
  return out;
}

}  // namespace tuned::ir::tdl
