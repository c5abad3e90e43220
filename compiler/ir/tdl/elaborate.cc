#include "compiler/ir/tdl/elaborate.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "common/check.h"

namespace tuned::ir::tdl {
namespace {

// Words the grammar gives a meaning wherever a name stands (functions and dtypes are told from
// tensors by the bracket that follows, so a stage may be called `exp`).
constexpr const char* kReserved[] = {"param", "input", "sum", "max", "min", "true", "false"};

bool IsReserved(const std::string& name) {
  for (const char* r : kReserved) {
    if (name == r) return true;
  }
  return false;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// The leftmost token of an expression: where a reader sees it start.
const Token& FirstToken(const AstExpr& e) {
  if (e.kind == AstExpr::Kind::kBinary) return FirstToken(*e.args[0]);
  return e.token;
}

// Whether MakeBinary/MakeSelect can unify the two operand types (an immediate adopts the other
// side's type: an integer one any number type, a float one any float type).
bool Unifiable(const Expr& a, const Expr& b) {
  if (a.type() == b.type()) return true;
  auto adopts = [](const Expr& imm, const Expr& other) {
    if (imm.as<IntImm>() && imm.type().is_int()) return !other.type().is_bool();
    if (imm.as<FloatImm>()) return other.type().is_float();
    return false;
  };
  return adopts(b, a) || adopts(a, b);
}

struct Function {
  const char* name;
  int arity;
};
constexpr Function kFunctions[] = {
    {"exp", 1},  {"log", 1}, {"sqrt", 1}, {"tanh", 1},     {"sigmoid", 1},  {"fabs", 1},
    {"erf", 1},  {"min", 2}, {"max", 2},  {"floordiv", 2}, {"floormod", 2}, {"select", 3}};

class Elaborator {
 public:
  Elaborator(const Source& source, const ElaborateOptions& options)
      : source_(source), options_(options) {}

  StatusOr<Workload> Run(const AstProgram& program) {
    for (const AstStatement& st : program.statements) {
      switch (st.kind) {
        case AstStatement::Kind::kParam:
          for (const AstParam& p : st.params) TUNED_RETURN_IF_ERROR(DeclareParam(p));
          break;
        case AstStatement::Kind::kInput:
          TUNED_RETURN_IF_ERROR(DeclareInput(st.input));
          break;
        case AstStatement::Kind::kStage:
          TUNED_RETURN_IF_ERROR(DefineStage(st.stage));
          break;
      }
    }
    for (const auto& [name, value] : options_.params) {
      if (!params_.count(name)) {
        return InvalidArgumentError(source_.name + ": --param " + name + "=" + value +
                                    ": no parameter '" + name + "'; expected one of " +
                                    JoinNames(param_order_));
      }
    }
    if (stage_count_ == 0) {
      return InvalidArgumentError(source_.name + ": no stage; expected at least one line such as "
                                                 "'C[i: M] = A[i] * 2'");
    }
    return builder_.BuildKeyed("tdl", options_.key);
  }

 private:
  Status Error(const Token& at, const std::string& message) const {
    return ErrorAt(source_, at, message);
  }

  Status CheckNewName(const Token& name, const char* what) const {
    if (IsReserved(name.text)) {
      return Error(name, "'" + name.text + "' is a reserved word; expected another name for the " + what);
    }
    if (params_.count(name.text) || tensors_.count(name.text)) {
      return Error(name, "'" + name.text + "' is already defined; expected a new name for the " + what);
    }
    return Status::Ok();
  }

  Status DeclareParam(const AstParam& p) {
    TUNED_RETURN_IF_ERROR(CheckNewName(p.name, "parameter"));
    std::optional<int64_t> value;
    for (const auto& [name, text] : options_.params) {
      if (name != p.name.text) continue;
      int64_t v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size()) {
        return InvalidArgumentError(source_.name + ": --param " + name + "=" + text + ": '" + text +
                                    "' is not an integer; expected --param " + name + "=<integer>");
      }
      value = v;
    }
    if (!value && p.value) {
      TUNED_ASSIGN_OR_RETURN(value, Constant(*p.value));
    }
    if (!value) {
      return Error(p.name, "parameter '" + p.name.text + "' has no value; expected --param " +
                               p.name.text + "=<integer> or a default ('param " + p.name.text +
                               " = 128')");
    }
    params_[p.name.text] = *value;
    param_order_.push_back(p.name.text);
    return Status::Ok();
  }

  StatusOr<DataType> Dtype(const Token& t) const {
    StatusOr<DataType> type = ParseDataType(t.text);
    if (!type.ok()) {
      return Error(t, "unknown dtype '" + t.text +
                          "'; expected float32, float64, float16, int32, int8 or int64");
    }
    return *type;
  }

  // An extent or a dimension: a positive integer computed from literals and parameters.
  StatusOr<int64_t> Extent(const AstExpr& e, const Token& of, const std::string& what) {
    TUNED_ASSIGN_OR_RETURN(int64_t v, Constant(e));
    if (v < 1) {
      return Error(FirstToken(e), "the " + what + " of '" + of.text + "' is " + std::to_string(v) +
                                      ", which makes the buffer empty; expected an extent of at "
                                      "least 1");
    }
    return v;
  }

  Status CheckSize(const Token& name, DataType dtype, const std::vector<int64_t>& shape) const {
    double bytes = double(dtype.bytes());
    for (int64_t d : shape) bytes *= double(d);
    if (bytes > double(options_.limits.max_buffer_bytes)) {
      // Printed as a double: the product can be far past what an int64_t holds.
      std::ostringstream needed;
      needed << std::setprecision(bytes < 1e15 ? 15 : 3) << bytes;
      return Error(name, "buffer '" + name.text + "' needs " + needed.str() +
                             " bytes; expected at most " +
                             std::to_string(options_.limits.max_buffer_bytes));
    }
    return Status::Ok();
  }

  Status DeclareInput(const AstInput& in) {
    TUNED_RETURN_IF_ERROR(CheckNewName(in.name, "input"));
    TUNED_ASSIGN_OR_RETURN(DataType dtype, Dtype(in.dtype));
    std::vector<int64_t> shape;
    for (const AstExprPtr& d : in.shape) {
      TUNED_ASSIGN_OR_RETURN(int64_t extent, Extent(*d, in.name, "dimension " + std::to_string(shape.size())));
      shape.push_back(extent);
    }
    TUNED_RETURN_IF_ERROR(CheckSize(in.name, dtype, shape));
    tensors_[in.name.text] = builder_.Input(in.name.text, dtype, shape, in.constant);
    tensor_order_.push_back(in.name.text);
    return Status::Ok();
  }

  Status Overflow(const Token& op) const {
    return Error(op, "'" + op.text + "' overflows 64-bit integers in a shape; expected extents "
                                     "that fit");
  }

  StatusOr<int64_t> Constant(const AstExpr& e) {
    switch (e.kind) {
      case AstExpr::Kind::kInt: {
        TUNED_ASSIGN_OR_RETURN(Expr v, Literal(e));
        if (v.type() != DataType::Int64()) break;
        return *AsConstInt(v);
      }
      case AstExpr::Kind::kName: {
        auto it = params_.find(e.token.text);
        if (it != params_.end()) return it->second;
        return Error(e.token, "'" + e.token.text + "' is not a parameter; expected an integer or "
                                                   "one of the parameters (" +
                                  JoinNames(param_order_) + ")");
      }
      case AstExpr::Kind::kUnary:
        if (e.token.text != "-") break;
        {
          TUNED_ASSIGN_OR_RETURN(int64_t v, Constant(*e.args[0]));
          int64_t negated = 0;
          if (__builtin_sub_overflow(int64_t(0), v, &negated)) return Overflow(e.token);
          return negated;
        }
      case AstExpr::Kind::kBinary: {
        TUNED_ASSIGN_OR_RETURN(int64_t a, Constant(*e.args[0]));
        TUNED_ASSIGN_OR_RETURN(int64_t b, Constant(*e.args[1]));
        const std::string& op = e.token.text;
        int64_t result = 0;
        bool overflow = false;
        if (op == "+") {
          overflow = __builtin_add_overflow(a, b, &result);
        } else if (op == "-") {
          overflow = __builtin_sub_overflow(a, b, &result);
        } else if (op == "*") {
          overflow = __builtin_mul_overflow(a, b, &result);
        } else if (op == "/") {
          if (b == 0) return Error(e.token, "division by zero in '/'; expected a non-zero divisor");
          overflow = a == std::numeric_limits<int64_t>::min() && b == -1;
          if (!overflow) result = a / b;
        } else {
          break;
        }
        if (overflow) return Overflow(e.token);
        return result;
      }
      default:
        break;
    }
    return Error(FirstToken(e), "unexpected '" + FirstToken(e).text +
                                    "' in a shape; expected integers, parameters, + - * / and "
                                    "parentheses");
  }

  StatusOr<Expr> Literal(const AstExpr& e) const {
    const std::string& text = e.token.text;
    size_t suffix = text.find_first_of("if");
    std::string digits = text.substr(0, suffix);
    std::string type = suffix == std::string::npos ? "" : text.substr(suffix);
    if (e.kind == AstExpr::Kind::kInt) {
      DataType t = type == "i8" ? DataType::Int8() : type == "i32" ? DataType::Int32() : DataType::Int64();
      if (!type.empty() && type != "i8" && type != "i32" && type != "i64") {
        return Error(e.token, "unknown integer suffix in '" + text + "'; expected i8, i32 or i64");
      }
      int64_t v = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (ec != std::errc() || end != digits.data() + digits.size()) {
        return Error(e.token, "integer '" + text + "' is out of range; expected at most 2^63 - 1");
      }
      return MakeInt(v, t);
    }
    if (!type.empty() && type != "f32" && type != "f64") {
      return Error(e.token, "unknown float suffix in '" + text + "'; expected f32 or f64");
    }
    // A literal past its dtype's range would be an infinity, which the language cannot write
    // back (found by fuzz_workload_language: '6665e0533…' printed as 'inf').
    const bool f64 = type == "f64";
    const double v = std::strtod(digits.c_str(), nullptr);
    if (!std::isfinite(f64 ? v : double(static_cast<float>(v)))) {
      return Error(e.token, "float '" + text + "' is out of range for " +
                                std::string(f64 ? "float64" : "float32") + "; expected at most " +
                                (f64 ? "1.797e+308" : "3.403e+38") + " in magnitude");
    }
    return MakeFloat(v, f64 ? DataType::Float64() : DataType::Float32());
  }

  // ---- stages ----

  Status DefineStage(const AstStage& stage) {
    TUNED_RETURN_IF_ERROR(CheckNewName(stage.name, "stage"));
    current_ = &stage;
    stage_reductions_.clear();
    CollectReductions(*stage.body);
    std::vector<int64_t> shape;
    std::set<std::string> names;
    for (const AstAxis& a : stage.axes) {
      TUNED_RETURN_IF_ERROR(CheckAxisName(a, names));
      TUNED_ASSIGN_OR_RETURN(int64_t extent, Extent(*a.extent, stage.name, "axis '" + a.name.text + "'"));
      shape.push_back(extent);
    }
    const AstExpr* body = stage.body.get();
    ReduceKind reduce = ReduceKind::kNone;
    std::vector<int64_t> reduce_shape;
    const std::vector<AstAxis>* reduce_axes = nullptr;
    if (body->kind == AstExpr::Kind::kReduce) {
      reduce = body->token.text == "sum" ? ReduceKind::kSum
               : body->token.text == "max" ? ReduceKind::kMax : ReduceKind::kMin;
      reduce_axes = &body->axes;
      for (const AstAxis& a : body->axes) {
        TUNED_RETURN_IF_ERROR(CheckAxisName(a, names));
        TUNED_ASSIGN_OR_RETURN(int64_t extent, Extent(*a.extent, stage.name, "reduction axis '" + a.name.text + "'"));
        reduce_shape.push_back(extent);
      }
      body = body->args[0].get();
    }
    // First with stand-in axes: every error surfaces here and the body's type is known.
    std::vector<Expr> stand_in, stand_in_reduce;
    for (const AstAxis& a : stage.axes) stand_in.push_back(Expr(MakeVar(a.name.text)));
    if (reduce_axes) {
      for (const AstAxis& a : *reduce_axes) stand_in_reduce.push_back(Expr(MakeVar(a.name.text)));
    }
    TUNED_ASSIGN_OR_RETURN(Expr checked, Body(*body, stage.axes, stand_in, reduce_axes, stand_in_reduce));
    if (checked.type().is_bool()) {
      return Error(FirstToken(*body), "the body of stage '" + stage.name.text +
                                          "' is a condition (bool); expected a number, e.g. "
                                          "select(cond, 1.0, 0.0)");
    }
    DataType dtype = checked.type();
    if (stage.dtype) {
      TUNED_ASSIGN_OR_RETURN(dtype, Dtype(*stage.dtype));
      if (MakeCast(dtype, checked).type() != checked.type()) {
        return Error(*stage.dtype, "dtype mismatch: stage '" + stage.name.text + "' is declared " +
                                       dtype.ToString() + " but its body is " +
                                       checked.type().ToString() + "; expected a cast, e.g. " +
                                       dtype.ToString() + "(...)");
      }
    }
    TUNED_RETURN_IF_ERROR(CheckSize(stage.name, dtype, shape));
    // Then for real, on the builder's axes (named by position, so the user's names vanish).
    tensors_[stage.name.text] = builder_.Compute(
        stage.name.text, dtype, shape, reduce_shape, reduce,
        [&](const std::vector<Expr>& axes, const std::vector<Expr>& raxes) {
          StatusOr<Expr> e = Body(*body, stage.axes, axes, reduce_axes, raxes);
          TUNED_CHECK(e.ok()) << "second elaboration failed: " << e.status().message();
          return *e;
        });
    tensor_order_.push_back(stage.name.text);
    ++stage_count_;
    current_ = nullptr;
    return Status::Ok();
  }

  // Every reduction axis declared anywhere in the stage's body, for the error that names one
  // used outside its reduction.
  void CollectReductions(const AstExpr& e) {
    if (e.kind == AstExpr::Kind::kReduce) {
      for (const AstAxis& a : e.axes) stage_reductions_.emplace(a.name.text, e.token.text);
    }
    for (const AstExprPtr& a : e.args) CollectReductions(*a);
  }

  Status CheckAxisName(const AstAxis& a, std::set<std::string>& names) const {
    if (IsReserved(a.name.text)) {
      return Error(a.name, "'" + a.name.text + "' is a reserved word; expected another axis name");
    }
    if (params_.count(a.name.text)) {
      return Error(a.name, "axis '" + a.name.text + "' has the name of a parameter; expected "
                                                      "another axis name");
    }
    if (!names.insert(a.name.text).second) {
      return Error(a.name, "axis '" + a.name.text + "' is declared twice; expected another name");
    }
    return Status::Ok();
  }

  StatusOr<Expr> Body(const AstExpr& body, const std::vector<AstAxis>& axes,
                      const std::vector<Expr>& axis_vars, const std::vector<AstAxis>* reduce_axes,
                      const std::vector<Expr>& reduce_vars) {
    scope_.clear();
    for (size_t i = 0; i < axes.size(); ++i) scope_[axes[i].name.text] = axis_vars[i];
    reduce_scope_.clear();
    if (reduce_axes) {
      for (size_t i = 0; i < reduce_axes->size(); ++i) {
        reduce_scope_[(*reduce_axes)[i].name.text] = reduce_vars[i];
      }
    }
    return Value(body);
  }

  Status TypeError(const AstExpr& at, const std::string& message) const {
    return Error(FirstToken(at), "dtype mismatch: " + message);
  }

  StatusOr<Expr> Value(const AstExpr& e) {
    switch (e.kind) {
      case AstExpr::Kind::kInt:
      case AstExpr::Kind::kFloat:
        return Literal(e);
      case AstExpr::Kind::kName: return Name(e);
      case AstExpr::Kind::kRead: return Read(e);
      case AstExpr::Kind::kCall: return Call(e);
      case AstExpr::Kind::kReduce:
        return Error(e.token, "a reduction inside an expression; expected '" + e.token.text +
                                  "[...](...)' as the whole body of a stage (compute the rest in "
                                  "a next stage)");
      case AstExpr::Kind::kUnary: return Unary(e);
      case AstExpr::Kind::kBinary: return Binary(e);
    }
    TUNED_UNREACHABLE("expression kind");
  }

  StatusOr<Expr> Name(const AstExpr& e) {
    const std::string& name = e.token.text;
    if (name == "true" || name == "false") return MakeBool(name == "true");
    if (auto it = scope_.find(name); it != scope_.end()) return it->second;
    if (auto it = reduce_scope_.find(name); it != reduce_scope_.end()) return it->second;
    if (auto it = params_.find(name); it != params_.end()) return MakeInt(it->second);
    if (auto it = stage_reductions_.find(name); it != stage_reductions_.end()) {
      return Error(e.token, "reduction axis '" + name + "' used outside its reduction; expected it "
                                "inside " + it->second + "[...](...)");
    }
    if (tensors_.count(name)) {
      return Error(e.token, "tensor '" + name + "' without indices; expected '" + name + "[...]'");
    }
    std::vector<std::string> known;
    for (const auto& [n, v] : scope_) known.push_back(n);
    for (const auto& [n, v] : reduce_scope_) known.push_back(n);
    for (const std::string& p : param_order_) known.push_back(p);
    return Error(e.token, "unknown name '" + name + "'; expected an axis or a parameter (" +
                              JoinNames(known) + ")");
  }

  StatusOr<Expr> Read(const AstExpr& e) {
    const std::string& name = e.token.text;
    auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      std::string why = current_ && current_->name.text == name ? " (a stage cannot read itself)" : "";
      return Error(e.token, "unknown tensor '" + name + "'" + why +
                                "; expected one of the tensors defined before (" +
                                JoinNames(tensor_order_) + ")");
    }
    const Buffer& buffer = it->second;
    const size_t rank = buffer->shape.size();
    if (e.args.size() > rank) {
      return Error(FirstToken(*e.args[rank]),
                   "index out of the declared rank: '" + name + "' has " + std::to_string(rank) +
                       " dimension" + (rank == 1 ? "" : "s") + "; expected ']'");
    }
    if (e.args.size() < rank) {
      return Error(e.token, "'" + name + "' has " + std::to_string(rank) + " dimensions but is read with " +
                                std::to_string(e.args.size()) + " index" +
                                (e.args.size() == 1 ? "" : "es") + "; expected " +
                                std::to_string(rank) + " indices");
    }
    std::vector<Expr> indices;
    for (const AstExprPtr& a : e.args) {
      TUNED_ASSIGN_OR_RETURN(Expr index, Value(*a));
      if (!index.type().is_int()) {
        return TypeError(*a, "an index of '" + name + "' is " + index.type().ToString() +
                                 "; expected an integer");
      }
      indices.push_back(std::move(index));
    }
    return MakeLoad(buffer, std::move(indices));
  }

  StatusOr<Expr> Call(const AstExpr& e) {
    const std::string& name = e.token.text;
    std::vector<Expr> args;
    for (const AstExprPtr& a : e.args) {
      TUNED_ASSIGN_OR_RETURN(Expr v, Value(*a));
      args.push_back(std::move(v));
    }
    if (StatusOr<DataType> cast = ParseDataType(name); cast.ok()) {
      if (args.size() != 1) return Arity(e, 1);
      if (args[0].type().is_bool()) {
        return TypeError(*e.args[0], "cannot cast a condition (bool) to " + name +
                                         "; expected select(cond, 1, 0)");
      }
      return MakeCast(*cast, args[0]);
    }
    const Function* fn = nullptr;
    std::vector<std::string> names;
    for (const Function& f : kFunctions) {
      if (name == f.name) fn = &f;
      names.push_back(f.name);
    }
    if (fn == nullptr) {
      std::string hint = name == "sum" ? " (a reduction is written sum[k: K](...))" : "";
      return Error(e.token, "unknown function '" + name + "'" + hint + "; expected a cast or one of " +
                                JoinNames(names));
    }
    if (int(args.size()) != fn->arity) return Arity(e, fn->arity);
    if (fn->arity == 1) {
      if (!args[0].type().is_float()) {
        return TypeError(*e.args[0], name + " of " + args[0].type().ToString() +
                                         "; expected a float (cast it, e.g. float32(...))");
      }
      static const std::map<std::string, Intrinsic> kIntrinsics = {
          {"exp", Intrinsic::kExp},   {"log", Intrinsic::kLog},   {"sqrt", Intrinsic::kSqrt},
          {"tanh", Intrinsic::kTanh}, {"fabs", Intrinsic::kFabs}, {"sigmoid", Intrinsic::kSigmoid},
          {"erf", Intrinsic::kErf}};
      return MakeCall(kIntrinsics.at(name), {args[0]});
    }
    if (name == "select") {
      if (!args[0].type().is_bool()) {
        return TypeError(*e.args[0], "the condition of select is " + args[0].type().ToString() +
                                         "; expected a comparison");
      }
      TUNED_RETURN_IF_ERROR(Operands(*e.args[1], args[1], args[2], "select"));
      return MakeSelect(args[0], args[1], args[2]);
    }
    TUNED_RETURN_IF_ERROR(Operands(*e.args[0], args[0], args[1], name));
    if (args[0].type().is_bool() || args[1].type().is_bool()) {
      return TypeError(*e.args[0], name + " of a condition (bool); expected numbers");
    }
    const bool integer_only = name == "floordiv" || name == "floormod";
    if (integer_only && !(args[0].type().is_int() && args[1].type().is_int())) {
      return TypeError(*e.args[0], name + " of " + args[0].type().ToString() + "; expected integers");
    }
    BinaryOp op = name == "min" ? BinaryOp::kMin : name == "max" ? BinaryOp::kMax
                  : name == "floordiv" ? BinaryOp::kFloorDiv : BinaryOp::kFloorMod;
    return MakeBinary(op, args[0], args[1]);
  }

  Status Arity(const AstExpr& e, int arity) const {
    return Error(e.token, "'" + e.token.text + "' takes " + std::to_string(arity) + " argument" +
                              (arity == 1 ? "" : "s") + " but is given " +
                              std::to_string(e.args.size()) + "; expected " +
                              std::to_string(arity));
  }

  Status Operands(const AstExpr& at, const Expr& a, const Expr& b, const std::string& op) const {
    if (Unifiable(a, b)) return Status::Ok();
    return TypeError(at, "operands of '" + op + "' are " + a.type().ToString() + " and " +
                             b.type().ToString() + "; expected one dtype (cast one side, e.g. " +
                             a.type().ToString() + "(...))");
  }

  StatusOr<Expr> Unary(const AstExpr& e) {
    TUNED_ASSIGN_OR_RETURN(Expr a, Value(*e.args[0]));
    if (e.token.text == "!") {
      if (!a.type().is_bool()) {
        return TypeError(e, "'!' of " + a.type().ToString() + "; expected a condition");
      }
      return MakeNot(a);
    }
    if (a.type().is_bool()) return TypeError(e, "'-' of a condition; expected a number");
    if (const IntImm* i = a.as<IntImm>()) return MakeInt(-i->value, a.type());
    if (const FloatImm* f = a.as<FloatImm>()) return MakeFloat(-f->value, a.type());
    return MakeBinary(BinaryOp::kSub, MakeZero(a.type()), a);
  }

  StatusOr<Expr> Binary(const AstExpr& e) {
    TUNED_ASSIGN_OR_RETURN(Expr a, Value(*e.args[0]));
    TUNED_ASSIGN_OR_RETURN(Expr b, Value(*e.args[1]));
    const std::string& op = e.token.text;
    static const std::map<std::string, BinaryOp> kOps = {
        {"+", BinaryOp::kAdd}, {"-", BinaryOp::kSub}, {"*", BinaryOp::kMul},  {"/", BinaryOp::kDiv},
        {"==", BinaryOp::kEQ}, {"!=", BinaryOp::kNE}, {"<", BinaryOp::kLT},   {"<=", BinaryOp::kLE},
        {">", BinaryOp::kGT},  {">=", BinaryOp::kGE}, {"&&", BinaryOp::kAnd}, {"||", BinaryOp::kOr}};
    const BinaryOp kind = kOps.at(op);
    const bool logical = kind == BinaryOp::kAnd || kind == BinaryOp::kOr;
    if (logical != a.type().is_bool() || logical != b.type().is_bool()) {
      const Expr& wrong = logical != a.type().is_bool() ? a : b;
      return TypeError(logical != a.type().is_bool() ? *e.args[0] : *e.args[1],
                       "'" + op + "' on " + wrong.type().ToString() + "; expected " +
                           (logical ? "conditions" : "numbers"));
    }
    TUNED_RETURN_IF_ERROR(Operands(*e.args[0], a, b, op));
    return MakeBinary(kind, a, b);
  }

  const Source& source_;
  const ElaborateOptions& options_;
  WorkloadBuilder builder_;
  std::map<std::string, int64_t> params_;
  std::vector<std::string> param_order_;
  std::map<std::string, Buffer> tensors_;
  std::vector<std::string> tensor_order_;
  const AstStage* current_ = nullptr;
  std::map<std::string, Expr> scope_, reduce_scope_;
  std::map<std::string, std::string> stage_reductions_;  // axis name -> sum/max/min
  int stage_count_ = 0;
};

}  // namespace

StatusOr<Workload> Elaborate(const AstProgram& program, const Source& source,
                             const ElaborateOptions& options) {
  return Elaborator(source, options).Run(program);
}

}  // namespace tuned::ir::tdl
