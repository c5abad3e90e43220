#include "compiler/ir/ir_printer.h"

#include <cstdio>
#include <sstream>

#include "compiler/ir/expr_functor.h"

namespace tuned::ir {
namespace {

std::string FormatFloat(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep floats visibly floats
  return s;
}

// Prints expressions inline and statements one per line, indented by nesting depth.
class Printer : public ExprFunctor<void(const Expr&)>, public StmtFunctor<void(const Stmt&, int)> {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}

 protected:
  void VisitIntImm(const IntImm* op) override {
    if (op->type.is_bool()) {
      os_ << (op->value ? "true" : "false");
      return;
    }
    os_ << op->value;
    if (op->type != DataType::Int64()) os_ << "i" << int(op->type.bits);
  }
  void VisitFloatImm(const FloatImm* op) override {
    os_ << FormatFloat(op->value);
    if (op->type != DataType::Float32()) os_ << "f" << int(op->type.bits);
  }
  void VisitVar(const VarNode* op) override { os_ << op->name; }
  void VisitBinary(const Binary* op) override {
    switch (op->op) {
      case BinaryOp::kFloorDiv:
      case BinaryOp::kFloorMod:
      case BinaryOp::kMin:
      case BinaryOp::kMax:
        os_ << BinaryOpSymbol(op->op) << "(";
        VisitExpr(op->a);
        os_ << ", ";
        VisitExpr(op->b);
        os_ << ")";
        return;
      default:
        os_ << "(";
        VisitExpr(op->a);
        os_ << " " << BinaryOpSymbol(op->op) << " ";
        VisitExpr(op->b);
        os_ << ")";
        return;
    }
  }
  void VisitNot(const Not* op) override {
    os_ << "!";
    VisitExpr(op->a);
  }
  void VisitSelect(const Select* op) override {
    os_ << "select(";
    VisitExpr(op->cond);
    os_ << ", ";
    VisitExpr(op->true_value);
    os_ << ", ";
    VisitExpr(op->false_value);
    os_ << ")";
  }
  void VisitCast(const Cast* op) override {
    os_ << op->type.ToString() << "(";
    VisitExpr(op->value);
    os_ << ")";
  }
  void VisitLoad(const Load* op) override {
    os_ << op->buffer->name << "[";
    PrintList(op->indices);
    os_ << "]";
  }
  void VisitCall(const Call* op) override {
    os_ << IntrinsicName(op->op) << "(";
    PrintList(op->args);
    os_ << ")";
  }

  void VisitFor(const For* op, int indent) override {
    os_ << Pad(indent) << "for " << op->var->name << " in [";
    VisitExpr(op->min);
    os_ << ", +";
    VisitExpr(op->extent);
    os_ << ")";
    if (op->kind != ForKind::kSerial) os_ << " " << ForKindName(op->kind);
    if (!op->thread_tag.empty()) os_ << "(" << op->thread_tag << ")";
    if (op->auto_unroll_max_step > 0) os_ << " auto_unroll_max_step=" << op->auto_unroll_max_step;
    if (op->prefetch_ahead > 0) os_ << " prefetch_ahead=" << op->prefetch_ahead;
    os_ << ":\n";
    VisitStmt(op->body, indent + 1);
  }
  void VisitStore(const Store* op, int indent) override {
    os_ << Pad(indent) << op->buffer->name << "[";
    PrintList(op->indices);
    os_ << "] = ";
    VisitExpr(op->value);
    os_ << "\n";
  }
  void VisitAllocate(const Allocate* op, int indent) override {
    os_ << Pad(indent) << "allocate " << op->buffer->name << ": " << op->buffer->dtype.ToString()
        << "[";
    for (size_t i = 0; i < op->buffer->shape.size(); ++i) {
      os_ << (i ? ", " : "") << op->buffer->shape[i];
    }
    os_ << "] " << MemoryScopeName(op->buffer->scope) << "\n";
    VisitStmt(op->body, indent);
  }
  void VisitIfThenElse(const IfThenElse* op, int indent) override {
    os_ << Pad(indent) << "if ";
    VisitExpr(op->cond);
    os_ << ":\n";
    VisitStmt(op->then_case, indent + 1);
    if (op->else_case.defined()) {
      os_ << Pad(indent) << "else:\n";
      VisitStmt(op->else_case, indent + 1);
    }
  }
  void VisitSeq(const Seq* op, int indent) override {
    for (const Stmt& c : op->stmts) VisitStmt(c, indent);
  }
  void VisitBarrier(const Barrier*, int indent) override { os_ << Pad(indent) << "barrier\n"; }

 private:
  static std::string Pad(int indent) { return std::string(2 * size_t(indent), ' '); }
  void PrintList(const std::vector<Expr>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) os_ << ", ";
      VisitExpr(list[i]);
    }
  }

  std::ostream& os_;
};

}  // namespace

std::string ToString(const Expr& e) {
  std::ostringstream os;
  Printer(os).VisitExpr(e);
  return os.str();
}

std::string ToString(const Stmt& s) {
  std::ostringstream os;
  Printer(os).VisitStmt(s, 0);
  return os.str();
}

}  // namespace tuned::ir
