#include "compiler/ir/ir.h"

#include <limits>

#include "common/check.h"

namespace tuned::ir {

const char* BinaryOpSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kFloorDiv: return "floordiv";
    case BinaryOp::kFloorMod: return "floormod";
    case BinaryOp::kMin: return "min";
    case BinaryOp::kMax: return "max";
    case BinaryOp::kEQ: return "==";
    case BinaryOp::kNE: return "!=";
    case BinaryOp::kLT: return "<";
    case BinaryOp::kLE: return "<=";
    case BinaryOp::kGT: return ">";
    case BinaryOp::kGE: return ">=";
    case BinaryOp::kAnd: return "&&";
    case BinaryOp::kOr: return "||";
  }
  return "?";
}

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEQ || op == BinaryOp::kNE || op == BinaryOp::kLT ||
         op == BinaryOp::kLE || op == BinaryOp::kGT || op == BinaryOp::kGE;
}

const char* IntrinsicName(Intrinsic op) {
  switch (op) {
    case Intrinsic::kExp: return "exp";
    case Intrinsic::kLog: return "log";
    case Intrinsic::kSqrt: return "sqrt";
    case Intrinsic::kTanh: return "tanh";
    case Intrinsic::kFabs: return "fabs";
    case Intrinsic::kSigmoid: return "sigmoid";
    case Intrinsic::kErf: return "erf";
  }
  return "?";
}

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kThreadBinding: return "thread_binding";
  }
  return "?";
}

const char* MemoryScopeName(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::kGlobal: return "global";
    case MemoryScope::kLocal: return "local";
    case MemoryScope::kShared: return "shared";
  }
  return "?";
}

StatusOr<MemoryScope> ParseMemoryScope(std::string_view name) {
  for (MemoryScope s : {MemoryScope::kGlobal, MemoryScope::kLocal, MemoryScope::kShared}) {
    if (name == MemoryScopeName(s)) return s;
  }
  return InvalidArgumentError("unknown memory scope '" + std::string(name) +
                              "' (expected global, local or shared)");
}

Expr::Expr(int value) : Expr(MakeInt(value)) {}
Expr::Expr(int64_t value) : Expr(MakeInt(value)) {}

int64_t BufferNode::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Buffer MakeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape, MemoryScope scope) {
  for (int64_t d : shape) TUNED_CHECK(d > 0) << "buffer " << name << " has extent " << d;
  return std::make_shared<const BufferNode>(BufferNode{std::move(name), dtype, std::move(shape), scope});
}

Var MakeVar(std::string name, DataType type) {
  return std::make_shared<const VarNode>(type, std::move(name));
}

Expr MakeInt(int64_t value, DataType type) {
  TUNED_CHECK(type.is_int()) << "integer immediate of type " << type.ToString();
  return Expr(std::make_shared<const IntImm>(type, value));
}

Expr MakeBool(bool value) {
  return Expr(std::make_shared<const IntImm>(DataType::Bool(), value ? 1 : 0));
}

Expr MakeFloat(double value, DataType type) {
  TUNED_CHECK(type.is_float()) << "float immediate of type " << type.ToString();
  if (type.bits == 16) type = DataType::Float32();
  return Expr(std::make_shared<const FloatImm>(type, value));
}

Expr MakeZero(DataType type) {
  return type.is_float() ? MakeFloat(0.0, type) : MakeInt(0, type);
}

Expr MakeLowest(DataType type) {
  if (type.is_float()) return MakeFloat(-std::numeric_limits<double>::infinity(), type);
  return MakeInt(type.bits == 8 ? -128 : type.bits == 32 ? std::numeric_limits<int32_t>::min()
                                                         : std::numeric_limits<int64_t>::min(),
                 type);
}

Expr MakeHighest(DataType type) {
  if (type.is_float()) return MakeFloat(std::numeric_limits<double>::infinity(), type);
  return MakeInt(type.bits == 8 ? 127 : type.bits == 32 ? std::numeric_limits<int32_t>::max()
                                                        : std::numeric_limits<int64_t>::max(),
                 type);
}

// An integer immediate adopts the type of the other operand, so `x * 2` works for any x.
static void UnifyTypes(Expr& a, Expr& b) {
  if (a.type() == b.type()) return;
  if (const int64_t* v = AsConstInt(b)) {
    b = b.type().is_int() && a.type().is_float() ? MakeFloat(double(*v), a.type())
        : a.type().is_int()                       ? MakeInt(*v, a.type())
                                                  : b;
  } else if (const int64_t* u = AsConstInt(a)) {
    a = a.type().is_int() && b.type().is_float() ? MakeFloat(double(*u), b.type())
        : b.type().is_int()                       ? MakeInt(*u, b.type())
                                                  : a;
  }
  if (const FloatImm* f = b.as<FloatImm>(); f && a.type().is_float()) b = MakeFloat(f->value, a.type());
  if (const FloatImm* f = a.as<FloatImm>(); f && b.type().is_float()) a = MakeFloat(f->value, b.type());
}

Expr MakeBinary(BinaryOp op, Expr a, Expr b) {
  TUNED_CHECK(a.defined() && b.defined()) << "binary " << BinaryOpSymbol(op) << " of undefined";
  UnifyTypes(a, b);
  TUNED_CHECK(a.type() == b.type()) << "operands of " << BinaryOpSymbol(op) << " have types "
                                    << a.type().ToString() << " and " << b.type().ToString();
  DataType result = a.type();
  if (IsComparison(op)) result = DataType::Bool();
  if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {
    TUNED_CHECK(a.type().is_bool()) << "logical op on " << a.type().ToString();
  }
  return Expr(std::make_shared<const Binary>(result, op, std::move(a), std::move(b)));
}

Expr MakeNot(Expr a) {
  TUNED_CHECK(a.type().is_bool()) << "not of " << a.type().ToString();
  return Expr(std::make_shared<const Not>(std::move(a)));
}

Expr MakeSelect(Expr cond, Expr t, Expr f) {
  TUNED_CHECK(cond.type().is_bool()) << "select condition of type " << cond.type().ToString();
  UnifyTypes(t, f);
  TUNED_CHECK(t.type() == f.type()) << "select branches of types " << t.type().ToString()
                                    << " and " << f.type().ToString();
  return Expr(std::make_shared<const Select>(std::move(cond), std::move(t), std::move(f)));
}

Expr MakeCast(DataType type, Expr value) {
  if (type.bits == 16 && type.is_float()) type = DataType::Float32();
  if (value.type() == type) return value;
  return Expr(std::make_shared<const Cast>(type, std::move(value)));
}

Expr MakeLoad(Buffer buffer, std::vector<Expr> indices) {
  TUNED_CHECK(indices.size() == buffer->shape.size())
      << "load of " << buffer->name << " with " << indices.size() << " indices for "
      << buffer->shape.size() << " dimensions";
  for (const Expr& i : indices) TUNED_CHECK(i.type().is_int()) << "non-integer index";
  return Expr(std::make_shared<const Load>(std::move(buffer), std::move(indices)));
}

Expr MakeCall(Intrinsic op, std::vector<Expr> args) {
  TUNED_CHECK(!args.empty() && args[0].type().is_float()) << IntrinsicName(op) << " needs a float";
  DataType t = args[0].type();
  return Expr(std::make_shared<const Call>(t, op, std::move(args)));
}

Stmt MakeFor(Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag,
             int64_t auto_unroll_max_step, int64_t prefetch_ahead) {
  TUNED_CHECK(body.defined()) << "for " << var->name << " without body";
  return Stmt(std::make_shared<const For>(std::move(var), std::move(min), std::move(extent), kind,
                                          std::move(thread_tag), auto_unroll_max_step, prefetch_ahead,
                                          std::move(body)));
}

Stmt MakeStore(Buffer buffer, std::vector<Expr> indices, Expr value) {
  TUNED_CHECK(indices.size() == buffer->shape.size())
      << "store to " << buffer->name << " with " << indices.size() << " indices";
  if (buffer->dtype != value.type()) value = MakeCast(buffer->dtype, value);
  return Stmt(std::make_shared<const Store>(std::move(buffer), std::move(indices), std::move(value)));
}

Stmt MakeAllocate(Buffer buffer, Stmt body) {
  return Stmt(std::make_shared<const Allocate>(std::move(buffer), std::move(body)));
}

Stmt MakeIfThenElse(Expr cond, Stmt then_case, Stmt else_case) {
  TUNED_CHECK(cond.type().is_bool()) << "if condition of type " << cond.type().ToString();
  return Stmt(std::make_shared<const IfThenElse>(std::move(cond), std::move(then_case),
                                                 std::move(else_case)));
}

Stmt MakeSeq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const Seq* inner = s.as<Seq>()) {
      flat.insert(flat.end(), inner->stmts.begin(), inner->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<const Seq>(std::move(flat)));
}

Stmt MakeBarrier() { return Stmt(std::make_shared<const Barrier>()); }

Expr operator+(Expr a, Expr b) { return MakeBinary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return MakeBinary(BinaryOp::kSub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return MakeBinary(BinaryOp::kMul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return MakeBinary(BinaryOp::kDiv, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return MakeBinary(BinaryOp::kLT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return MakeBinary(BinaryOp::kLE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return MakeBinary(BinaryOp::kGT, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return MakeBinary(BinaryOp::kGE, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return MakeBinary(BinaryOp::kAnd, std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return MakeBinary(BinaryOp::kOr, std::move(a), std::move(b)); }
Expr operator!(Expr a) { return MakeNot(std::move(a)); }
Expr FloorDiv(Expr a, Expr b) { return MakeBinary(BinaryOp::kFloorDiv, std::move(a), std::move(b)); }
Expr FloorMod(Expr a, Expr b) { return MakeBinary(BinaryOp::kFloorMod, std::move(a), std::move(b)); }
Expr Min(Expr a, Expr b) { return MakeBinary(BinaryOp::kMin, std::move(a), std::move(b)); }
Expr Max(Expr a, Expr b) { return MakeBinary(BinaryOp::kMax, std::move(a), std::move(b)); }
Expr Eq(Expr a, Expr b) { return MakeBinary(BinaryOp::kEQ, std::move(a), std::move(b)); }

const int64_t* AsConstInt(const Expr& e) {
  const IntImm* imm = e.as<IntImm>();
  return imm ? &imm->value : nullptr;
}

}  // namespace tuned::ir
