#include "compiler/ir/evaluator.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/check.h"

namespace tuned::ir {
namespace {

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

double RoundToHalf(double v) {
  if (!std::isfinite(v)) return v;
  double mag = std::fabs(v);
  if (mag >= 65520.0) return std::copysign(INFINITY, v);
  int exp;
  std::frexp(mag, &exp);  // mag = m * 2^exp, m in [0.5, 1)
  // 11 significant bits for normals; subnormals have a fixed quantum of 2^-24.
  double quantum = std::ldexp(1.0, std::max(exp - 11, -24));
  return std::copysign(std::nearbyint(mag / quantum) * quantum, v);
}

}  // namespace

double RoundToType(double value, DataType type) {
  if (type.is_float()) {
    if (type.bits == 32) return double(float(value));
    if (type.bits == 16) return RoundToHalf(value);
    return value;
  }
  if (type.is_bool()) return value != 0 ? 1 : 0;
  int64_t v = int64_t(value);
  switch (type.bits) {
    case 8: return double(int8_t(uint8_t(v)));
    case 32: return double(int32_t(uint32_t(v)));
    default: return double(v);
  }
}

int64_t ExprEvaluator::Offset(const HostTensor& tensor, const std::vector<Expr>& indices) {
  const std::vector<int64_t>& shape = tensor.buffer->shape;
  int64_t offset = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    int64_t i = int64_t(Eval(indices[d]));
    if (i < 0 || i >= shape[d]) {
      Fail(OutOfRangeError("access " + tensor.buffer->name + " dimension " + std::to_string(d) +
                           " at " + std::to_string(i) + ", extent " + std::to_string(shape[d])));
      return -1;
    }
    offset = offset * shape[d] + i;
  }
  return offset;
}

double ExprEvaluator::VisitIntImm(const IntImm* op) { return double(op->value); }

double ExprEvaluator::VisitFloatImm(const FloatImm* op) { return op->value; }

double ExprEvaluator::VisitVar(const VarNode* op) {
  auto it = vars.find(op);
  if (it == vars.end()) {
    Fail(InternalError("unbound variable " + op->name));
    return 0;
  }
  return double(it->second);
}

double ExprEvaluator::VisitBinary(const Binary* op) {
  double a = Eval(op->a);
  // && and || short-circuit like C.
  if (op->op == BinaryOp::kAnd && a == 0) return 0;
  if (op->op == BinaryOp::kOr && a != 0) return 1;
  double b = Eval(op->b);
  bool is_int = op->a.type().is_int() || op->a.type().is_bool();
  // Integer operands only: converting a float such as a max-reduction's -inf is undefined.
  const int64_t x = is_int ? int64_t(a) : 0, y = is_int ? int64_t(b) : 0;
  const bool divisor_is_zero = is_int ? y == 0 : b == 0;
  switch (op->op) {
    case BinaryOp::kAdd: return is_int ? double(x + y) : a + b;
    case BinaryOp::kSub: return is_int ? double(x - y) : a - b;
    case BinaryOp::kMul: return is_int ? double(x * y) : a * b;
    case BinaryOp::kDiv:
      if (is_int) {
        if (y == 0) return Fail(InvalidArgumentError("integer division by zero")), 0;
        return double(x / y);
      }
      return a / b;
    case BinaryOp::kFloorDiv:
      if (divisor_is_zero) return Fail(InvalidArgumentError("floordiv by zero")), 0;
      return is_int ? double(FloorDivInt(x, y)) : std::floor(a / b);
    case BinaryOp::kFloorMod:
      if (divisor_is_zero) return Fail(InvalidArgumentError("floormod by zero")), 0;
      return is_int ? double(x - FloorDivInt(x, y) * y) : a - std::floor(a / b) * b;
    case BinaryOp::kMin: return std::min(a, b);
    case BinaryOp::kMax: return std::max(a, b);
    case BinaryOp::kEQ: return a == b;
    case BinaryOp::kNE: return a != b;
    case BinaryOp::kLT: return a < b;
    case BinaryOp::kLE: return a <= b;
    case BinaryOp::kGT: return a > b;
    case BinaryOp::kGE: return a >= b;
    case BinaryOp::kAnd: return b != 0;
    case BinaryOp::kOr: return b != 0;
  }
  return 0;
}

double ExprEvaluator::VisitNot(const Not* op) { return Eval(op->a) == 0 ? 1 : 0; }

double ExprEvaluator::VisitSelect(const Select* op) {
  return Eval(op->cond) != 0 ? Eval(op->true_value) : Eval(op->false_value);
}

double ExprEvaluator::VisitCast(const Cast* op) {
  double v = Eval(op->value);
  if (op->type.is_int() && op->value.type().is_float()) v = std::trunc(v);
  return RoundToType(v, op->type);
}

double ExprEvaluator::VisitLoad(const Load* op) {
  auto it = tensors.find(op->buffer.get());
  if (it == tensors.end()) {
    Fail(InternalError("load of unbound buffer " + op->buffer->name));
    return 0;
  }
  int64_t offset = Offset(*it->second, op->indices);
  if (offset >= 0 && on_load) on_load(op->buffer.get(), offset);
  return offset < 0 ? 0 : it->second->data[offset];
}

double ExprEvaluator::VisitCall(const Call* op) {
  double a = Eval(op->args[0]);
  switch (op->op) {
    case Intrinsic::kExp: return std::exp(a);
    case Intrinsic::kLog: return std::log(a);
    case Intrinsic::kSqrt: return std::sqrt(a);
    case Intrinsic::kTanh: return std::tanh(a);
    case Intrinsic::kFabs: return std::fabs(a);
    case Intrinsic::kSigmoid: return 1.0 / (1.0 + std::exp(-a));
    case Intrinsic::kErf: return std::erf(a);
  }
  return 0;
}

std::map<std::string, std::vector<double>> RandomInputs(const Workload& workload, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, std::vector<double>> inputs;
  for (const Buffer& b : workload.inputs()) {
    std::vector<double>& data = inputs[b->name];
    data.resize(b->num_elements());
    if (b->dtype.is_int()) {
      std::uniform_int_distribution<int> dist(-8, 8);
      for (double& v : data) v = dist(rng);
    } else {
      std::uniform_real_distribution<double> dist(-1.0, 1.0);
      for (double& v : data) v = RoundToType(dist(rng), b->dtype);
    }
  }
  return inputs;
}

StatusOr<std::map<std::string, std::vector<double>>> EvaluateReference(
    const Workload& workload, const std::map<std::string, std::vector<double>>& inputs,
    std::vector<double>* output_scale) {
  std::map<const BufferNode*, HostTensor> storage;
  ExprEvaluator eval;
  for (const Buffer& b : workload.inputs()) {
    auto it = inputs.find(b->name);
    if (it == inputs.end() || int64_t(it->second.size()) != b->num_elements()) {
      return InvalidArgumentError("reference: input " + b->name + " missing or of wrong size");
    }
    HostTensor& t = storage[b.get()];
    t = {b, it->second, false};
    eval.tensors[b.get()] = &t;
  }
  std::map<std::string, std::vector<double>> results;
  if (output_scale != nullptr) output_scale->clear();
  for (const ComputeStage& st : workload.stages()) {
    HostTensor& out = storage[st.output.get()];
    out = {st.output, std::vector<double>(st.output->num_elements()), false};
    eval.tensors[st.output.get()] = &out;
    std::vector<int64_t> point(st.axes.size(), 0), rpoint(st.reduce_axes.size(), 0);
    double init = eval.Eval(st.Init());
    std::vector<double>* scales =
        &st == &workload.output_stage() && st.reduce == ReduceKind::kSum ? output_scale : nullptr;
    if (scales != nullptr) scales->assign(size_t(st.output->num_elements()), 0.0);
    // Walk the output row-major; for each point walk the reduction domain row-major.
    for (int64_t flat = 0; flat < st.output->num_elements(); ++flat) {
      int64_t rem = flat;
      for (size_t d = st.axes.size(); d-- > 0;) {
        eval.vars[st.axes[d].var.get()] = rem % st.axes[d].extent;
        rem /= st.axes[d].extent;
      }
      double acc = init, squares = 0;
      int64_t rsize = 1;
      for (const Axis& r : st.reduce_axes) rsize *= r.extent;
      for (int64_t rflat = 0; rflat < rsize; ++rflat) {
        int64_t rr = rflat;
        for (size_t d = st.reduce_axes.size(); d-- > 0;) {
          eval.vars[st.reduce_axes[d].var.get()] = rr % st.reduce_axes[d].extent;
          rr /= st.reduce_axes[d].extent;
        }
        double v = eval.Eval(st.body);
        switch (st.reduce) {
          case ReduceKind::kNone: acc = v; break;
          case ReduceKind::kSum:
            acc += v;
            squares += v * v;
            break;
          case ReduceKind::kMax: acc = std::max(acc, v); break;
          case ReduceKind::kMin: acc = std::min(acc, v); break;
        }
      }
      out.data[flat] = acc;
      if (scales != nullptr) (*scales)[size_t(flat)] = std::sqrt(squares);
      if (!eval.error().ok()) return eval.error().WithContext("reference of stage " + st.name);
    }
    results[st.name] = out.data;
  }
  return results;
}

double MaxRelativeError(const std::vector<double>& actual, const std::vector<double>& expected,
                        const std::vector<double>& scales) {
  if (actual.size() != expected.size() || (!scales.empty() && scales.size() != expected.size())) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double scale = std::max({1.0, std::fabs(expected[i]), scales.empty() ? 0.0 : scales[i]});
    double err = std::fabs(actual[i] - expected[i]) / scale;
    if (std::isnan(err)) return INFINITY;
    worst = std::max(worst, err);
  }
  return worst;
}

double ToleranceFor(DataType type) {
  if (type.is_int()) return 0;
  if (type.bits == 16) return 1e-2;
  if (type.bits == 32) return 1e-4;
  return 1e-9;
}

}  // namespace tuned::ir
