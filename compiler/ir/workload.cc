#include "compiler/ir/workload.h"

#include <algorithm>
#include <sstream>

#include "common/check.h"
#include "common/sha256.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_printer.h"

namespace tuned::ir {

const char* ReduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kNone: return "none";
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
  }
  return "?";
}

Expr ReduceIdentity(ReduceKind kind, DataType type) {
  switch (kind) {
    case ReduceKind::kMax: return MakeLowest(type);
    case ReduceKind::kMin: return MakeHighest(type);
    default: return MakeZero(type);
  }
}

Expr ComputeStage::Init() const { return ReduceIdentity(reduce, body.type()); }

std::vector<Buffer> Workload::arguments() const {
  std::vector<Buffer> args = inputs_;
  args.push_back(output_stage().output);
  return args;
}

int Workload::FindStage(std::string_view name) const {
  for (size_t i = 0; i < stages_.size(); ++i) {
    if (stages_[i].name == name) return int(i);
  }
  return -1;
}

std::string Workload::Definition() const {
  std::ostringstream os;
  auto shape = [](const Buffer& b) {
    std::string s = b->dtype.ToString() + "[";
    for (size_t i = 0; i < b->shape.size(); ++i) s += (i ? "," : "") + std::to_string(b->shape[i]);
    return s + "]";
  };
  for (const Buffer& in : inputs_) {
    os << "input " << in->name << ": " << (IsConstantInput(in.get()) ? "const " : "") << shape(in) << "\n";
  }
  for (const ComputeStage& st : stages_) {
    os << st.name << ": " << shape(st.output) << " [";
    for (size_t i = 0; i < st.axes.size(); ++i) os << (i ? ", " : "") << st.axes[i].var->name;
    os << "] = ";
    if (st.reduce != ReduceKind::kNone) {
      os << ReduceKindName(st.reduce) << "(";
      for (size_t i = 0; i < st.reduce_axes.size(); ++i) {
        os << (i ? ", " : "") << st.reduce_axes[i].var->name << ":" << st.reduce_axes[i].extent;
      }
      os << "; " << ToString(st.body) << ")\n";
    } else {
      os << ToString(st.body) << "\n";
    }
  }
  return os.str();
}

Buffer WorkloadBuilder::Input(std::string name, DataType dtype, std::vector<int64_t> shape, bool constant) {
  Buffer b = MakeBuffer(std::move(name), dtype, std::move(shape));
  workload_.inputs_.push_back(b);
  if (constant) workload_.constant_inputs_.push_back(b.get());
  return b;
}

bool Workload::IsConstantInput(const BufferNode* buffer) const {
  return std::find(constant_inputs_.begin(), constant_inputs_.end(), buffer) != constant_inputs_.end();
}

std::vector<bool> Workload::ConstantInputFlags() const {
  std::vector<bool> flags;
  for (const Buffer& in : inputs_) flags.push_back(IsConstantInput(in.get()));
  return flags;
}

// Counts arithmetic operations on values in a body (each Binary/Call is one); index arithmetic
// (int64), conditions, loads and casts are free.
static double CountOps(const Expr& e) {
  struct Counter : IRVisitor {
    double n = 0;
    void Count(DataType t) { n += t != DataType::Int64() && !t.is_bool() ? 1 : 0; }
    void VisitBinary(const Binary* op) override {
      Count(op->type);
      IRVisitor::VisitBinary(op);
    }
    void VisitCall(const Call* op) override {
      Count(op->type);
      IRVisitor::VisitCall(op);
    }
  } counter;
  counter.Visit(e);
  return counter.n;
}

static std::vector<Axis> MakeAxes(const std::vector<int64_t>& extents, const char* prefix,
                                  size_t first_index) {
  static const char* kNames = "ijklmnopqrstuvwxyz";
  std::vector<Axis> axes;
  for (size_t i = 0; i < extents.size(); ++i) {
    size_t n = first_index + i;
    std::string name = n < 18 ? std::string(1, kNames[n]) : "ax" + std::to_string(n);
    axes.push_back({MakeVar(std::string(prefix) + name), extents[i]});
  }
  return axes;
}

Buffer WorkloadBuilder::Compute(std::string name, DataType dtype, std::vector<int64_t> shape,
                                std::vector<int64_t> reduce_shape, ReduceKind reduce,
                                const BodyFn& body) {
  TUNED_CHECK((reduce == ReduceKind::kNone) == reduce_shape.empty())
      << "stage " << name << ": reduction axes need a reduce kind";
  ComputeStage st;
  st.name = name;
  st.output = MakeBuffer(name, dtype, shape);
  st.axes = MakeAxes(shape, "", 0);
  st.reduce_axes = MakeAxes(reduce_shape, "r", 0);
  st.reduce = reduce;
  std::vector<Expr> axes, raxes;
  for (const Axis& a : st.axes) axes.push_back(Expr(a.var));
  for (const Axis& a : st.reduce_axes) raxes.push_back(Expr(a.var));
  st.body = MakeCast(dtype, body(axes, raxes));
  // In double: the spec parser refuses oversized buffers only after the build, and a product
  // of extents may not fit an int64_t.
  double points = 1;
  for (int64_t d : shape) points *= double(d);
  for (int64_t r : reduce_shape) points *= double(r);
  // A reduction step is the body plus the combine; a plain stage is its body.
  workload_.flops_ += points * (CountOps(st.body) + (reduce == ReduceKind::kNone ? 0 : 1));
  workload_.stages_.push_back(std::move(st));
  return workload_.stages_.back().output;
}

Buffer WorkloadBuilder::Compute(std::string name, DataType dtype, std::vector<int64_t> shape,
                                const std::function<Expr(const std::vector<Expr>&)>& body) {
  return Compute(std::move(name), dtype, std::move(shape), {}, ReduceKind::kNone,
                 [&](const std::vector<Expr>& axes, const std::vector<Expr>&) { return body(axes); });
}

std::string FormatSpec(const std::string& op,
                       const std::vector<std::pair<std::string, std::string>>& params) {
  std::string s = op + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    s += (i ? "," : "") + params[i].first + "=" + params[i].second;
  }
  return s + ")";
}

Workload WorkloadBuilder::BuildOp(std::string op,
                                  std::vector<std::pair<std::string, std::string>> params) {
  TUNED_CHECK(!workload_.stages_.empty()) << "workload " << op << " has no stage";
  workload_.key_ = FormatSpec(op, params);
  workload_.op_ = std::move(op);
  workload_.params_ = std::move(params);
  workload_.key_sha256_ = Sha256Hex(workload_.key_);
  return std::move(workload_);
}

Workload WorkloadBuilder::BuildCustom() {
  TUNED_CHECK(!workload_.stages_.empty()) << "custom workload has no stage";
  workload_.key_ = workload_.Definition();
  workload_.key_sha256_ = Sha256Hex(workload_.key_);
  return std::move(workload_);
}

Workload WorkloadBuilder::BuildKeyed(std::string op,
                                     const std::function<std::string(const Workload&)>& key_of) {
  TUNED_CHECK(!workload_.stages_.empty()) << "workload " << op << " has no stage";
  workload_.op_ = std::move(op);
  workload_.key_ = key_of(workload_);
  workload_.key_sha256_ = Sha256Hex(workload_.key_);
  return std::move(workload_);
}

}  // namespace tuned::ir
