#include "compiler/ir/ir_printer.h"

#include <cstdio>
#include <sstream>

namespace tuned::ir {
namespace {

std::string FormatFloat(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep floats visibly floats
  return s;
}

void Print(std::ostream& os, const Expr& e);

void PrintList(std::ostream& os, const std::vector<Expr>& list) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) os << ", ";
    Print(os, list[i]);
  }
}

void Print(std::ostream& os, const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm: {
      const IntImm* op = e.as<IntImm>();
      if (op->type.is_bool()) {
        os << (op->value ? "true" : "false");
        return;
      }
      os << op->value;
      if (op->type != DataType::Int64()) os << "i" << int(op->type.bits);
      return;
    }
    case ExprKind::kFloatImm: {
      const FloatImm* op = e.as<FloatImm>();
      os << FormatFloat(op->value);
      if (op->type != DataType::Float32()) os << "f" << int(op->type.bits);
      return;
    }
    case ExprKind::kVar: os << e.as<VarNode>()->name; return;
    case ExprKind::kBinary: {
      const Binary* op = e.as<Binary>();
      switch (op->op) {
        case BinaryOp::kFloorDiv:
        case BinaryOp::kFloorMod:
        case BinaryOp::kMin:
        case BinaryOp::kMax:
          os << BinaryOpSymbol(op->op) << "(";
          Print(os, op->a);
          os << ", ";
          Print(os, op->b);
          os << ")";
          return;
        default:
          os << "(";
          Print(os, op->a);
          os << " " << BinaryOpSymbol(op->op) << " ";
          Print(os, op->b);
          os << ")";
          return;
      }
    }
    case ExprKind::kNot: os << "!"; Print(os, e.as<Not>()->a); return;
    case ExprKind::kSelect: {
      const Select* op = e.as<Select>();
      os << "select(";
      Print(os, op->cond);
      os << ", ";
      Print(os, op->true_value);
      os << ", ";
      Print(os, op->false_value);
      os << ")";
      return;
    }
    case ExprKind::kCast:
      os << e->type.ToString() << "(";
      Print(os, e.as<Cast>()->value);
      os << ")";
      return;
    case ExprKind::kLoad: {
      const Load* op = e.as<Load>();
      os << op->buffer->name << "[";
      PrintList(os, op->indices);
      os << "]";
      return;
    }
    case ExprKind::kCall: {
      const Call* op = e.as<Call>();
      os << IntrinsicName(op->op) << "(";
      PrintList(os, op->args);
      os << ")";
      return;
    }
  }
}

void PrintStmt(std::ostream& os, const Stmt& s, int indent) {
  std::string pad(2 * indent, ' ');
  switch (s->kind) {
    case StmtKind::kFor: {
      const For* op = s.as<For>();
      os << pad << "for " << op->var->name << " in [";
      Print(os, op->min);
      os << ", +";
      Print(os, op->extent);
      os << ")";
      if (op->kind != ForKind::kSerial) os << " " << ForKindName(op->kind);
      if (!op->thread_tag.empty()) os << "(" << op->thread_tag << ")";
      if (op->auto_unroll_max_step > 0) os << " auto_unroll_max_step=" << op->auto_unroll_max_step;
      os << ":\n";
      PrintStmt(os, op->body, indent + 1);
      return;
    }
    case StmtKind::kStore: {
      const Store* op = s.as<Store>();
      os << pad << op->buffer->name << "[";
      PrintList(os, op->indices);
      os << "] = ";
      Print(os, op->value);
      os << "\n";
      return;
    }
    case StmtKind::kAllocate: {
      const Allocate* op = s.as<Allocate>();
      os << pad << "allocate " << op->buffer->name << ": " << op->buffer->dtype.ToString() << "[";
      for (size_t i = 0; i < op->buffer->shape.size(); ++i) {
        os << (i ? ", " : "") << op->buffer->shape[i];
      }
      os << "] " << MemoryScopeName(op->buffer->scope) << "\n";
      PrintStmt(os, op->body, indent);
      return;
    }
    case StmtKind::kIfThenElse: {
      const IfThenElse* op = s.as<IfThenElse>();
      os << pad << "if ";
      Print(os, op->cond);
      os << ":\n";
      PrintStmt(os, op->then_case, indent + 1);
      if (op->else_case.defined()) {
        os << pad << "else:\n";
        PrintStmt(os, op->else_case, indent + 1);
      }
      return;
    }
    case StmtKind::kSeq:
      for (const Stmt& c : s.as<Seq>()->stmts) PrintStmt(os, c, indent);
      return;
  }
}

}  // namespace

std::string ToString(const Expr& e) {
  std::ostringstream os;
  Print(os, e);
  return os.str();
}

std::string ToString(const Stmt& s) {
  std::ostringstream os;
  PrintStmt(os, s, 0);
  return os.str();
}

}  // namespace tuned::ir
