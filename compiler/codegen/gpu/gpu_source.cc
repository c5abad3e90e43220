// The GPU source printer (see gpu_source.h). A Printer prints one kernel; the dialect decides
// spellings only, never structure, so CUDA C and OpenCL C of one program read line by line alike.

#include "compiler/codegen/gpu/gpu_source.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "compiler/analysis/unroll.h"
#include "compiler/codegen/gpu/vector_access.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/simplify.h"

namespace tuned::codegen::gpu {
namespace {

using namespace tuned::ir;
using lower::gpu::GpuKernel;
using lower::gpu::GpuProgram;

// Identifiers a name from the schedule must not take (C, CUDA and OpenCL keywords and the math
// functions the printer calls).
const std::set<std::string>& Reserved() {
  static const std::set<std::string> words = {
      "auto", "bool", "break", "case", "char", "const", "constant", "continue", "default", "do",
      "double", "else", "erf", "erff", "exp", "expf", "fabs", "fabsf", "float", "fmax", "fmaxf", "fmin", "fminf",
      "for", "global", "half", "if", "int", "kernel", "local", "log", "logf", "long", "max", "min",
      "private", "restrict", "return", "short", "signed", "sizeof", "sqrt", "sqrtf", "static",
      "struct", "switch", "tanh", "tanhf", "unsigned", "void", "volatile", "while", "blockIdx",
      "threadIdx", "blockDim", "gridDim", "barrier"};
  return words;
}

std::string Sanitize(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  if (Reserved().count(out)) out += "_";
  return out;
}

class Printer : private ExprFunctor<std::string(const Expr&)>,
                private StmtFunctor<void(const Stmt&, int)> {
 public:
  Printer(const GpuKernel& kernel, Dialect dialect) : kernel_(kernel), dialect_(dialect) {
    index_type_ = kernel.index_32bit ? "int" : Cuda() ? "long long" : "long";
  }

  bool uses_floordiv = false;
  bool uses_double = false;

  std::string Print() {
    std::ostringstream head;
    for (const lower::gpu::ThreadAxis& axis : kernel_.axes) {
      bounds_[axis.var.get()] = {0, axis.extent - 1};
      int d = lower::gpu::TagDimension(axis.tag);
      std::string source = lower::gpu::IsThreadIdx(axis.tag)
                               ? (Cuda() ? axis.tag : "get_local_id(" + std::to_string(d) + ")")
                               : (Cuda() ? axis.tag : "get_group_id(" + std::to_string(d) + ")");
      head << "  const " << index_type_ << " " << VarName(axis.var.get()) << " = (" << index_type_
           << ")" << source << ";\n";
    }
    for (const Buffer& b : kernel_.shared) BufferName(b.get());  // names in declaration order
    VisitStmt(kernel_.body, 1);
    // Vector accesses need 16-byte aligned arrays; the others keep the default alignment.
    for (const Buffer& b : kernel_.shared) {
      bool align = vector_shared_.count(b.get()) > 0;
      head << "  " << (Cuda() ? "__shared__ " : "__local ") << (align && Cuda() ? "__align__(16) " : "")
           << TypeName(b->dtype) << " " << BufferName(b.get()) << "[" << b->num_elements() << "]"
           << (align && !Cuda() ? " __attribute__((aligned(16)))" : "") << ";\n";
    }
    std::ostringstream os;
    os << Signature() << " {\n" << head.str() << body_.str() << "}\n";
    return os.str();
  }

  std::string FunctionName() const { return Sanitize(kernel_.name); }

 private:
  bool Cuda() const { return dialect_ == Dialect::kCuda; }

  std::string Signature() {
    std::ostringstream os;
    if (Cuda()) {
      os << "extern \"C\" __global__ void __launch_bounds__(" << kernel_.threads_per_block() << ") ";
    } else {
      os << "__kernel __attribute__((reqd_work_group_size(" << kernel_.block[0] << ", "
         << kernel_.block[1] << ", " << kernel_.block[2] << "))) void ";
    }
    os << FunctionName() << "(";
    for (size_t i = 0; i < kernel_.params.size(); ++i) {
      const Buffer& b = kernel_.params[i];
      bool written = false;
      for (const Buffer& w : kernel_.written) written |= w == b;
      os << (i ? ", " : "") << (Cuda() ? "" : "__global ") << (written ? "" : "const ")
         << TypeName(b->dtype) << "* " << (Cuda() ? "__restrict__ " : "restrict ") << BufferName(b.get());
    }
    os << ")";
    return os.str();
  }

  std::string TypeName(DataType t) {
    if (t.is_float()) {
      if (t.bits == 64) uses_double = true;
      return t.bits == 64 ? "double" : "float";
    }
    if (t.is_bool()) return "bool";
    if (t.bits == 8) return Cuda() ? "signed char" : "char";
    if (t.bits == 32) return "int";
    return index_type_ == "int" ? std::string(Cuda() ? "long long" : "long") : index_type_;
  }
  // Index arithmetic (int64 in the IR) prints in the kernel's index type.
  std::string IntTypeName(DataType t) { return t.is_int() && t.bits == 64 ? index_type_ : TypeName(t); }

  std::string Unique(const std::string& base, std::map<std::string, int>& taken) {
    std::string name = Sanitize(base);
    int& count = taken[name];
    return count++ == 0 ? name : name + "_" + std::to_string(count - 1);
  }
  std::string VarName(const VarNode* v) {
    auto it = var_names_.find(v);
    if (it == var_names_.end()) it = var_names_.emplace(v, Unique(v->name, names_)).first;
    return it->second;
  }
  std::string BufferName(const BufferNode* b) {
    auto it = buffer_names_.find(b);
    if (it == buffer_names_.end()) it = buffer_names_.emplace(b, Unique(b->name, names_)).first;
    return it->second;
  }

  static std::string Pad(int indent) { return std::string(2 * size_t(indent), ' '); }

  // ---- expressions ----
  std::string VisitIntImm(const IntImm* op) override {
    if (op->type.is_bool()) return op->value ? "true" : "false";
    std::string digits = std::to_string(op->value);
    if (op->value > INT32_MAX || op->value < INT32_MIN) digits += Cuda() ? "LL" : "L";
    return op->value < 0 ? "(" + digits + ")" : digits;
  }
  std::string VisitFloatImm(const FloatImm* op) override {
    bool f64 = op->type.bits == 64;
    if (f64) uses_double = true;
    if (std::isinf(op->value)) {
      bool neg = op->value < 0;
      if (Cuda()) {
        return f64 ? std::string("__longlong_as_double(") + (neg ? "0xfff0000000000000LL" : "0x7ff0000000000000LL") + ")"
                   : std::string("__int_as_float(") + (neg ? "0xff800000" : "0x7f800000") + ")";
      }
      return std::string(neg ? "(-" : "(") + (f64 ? "(double)INFINITY" : "INFINITY") + ")";
    }
    char text[64];
    std::snprintf(text, sizeof(text), f64 ? "%.17g" : "%.9g", op->value);
    std::string s = text;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (!f64) s += "f";
    return op->value < 0 ? "(" + s + ")" : s;
  }
  std::string VisitVar(const VarNode* op) override {
    if (lane_.var == op) return std::to_string(lane_.value);
    return VarName(op);
  }
  std::string VisitBinary(const Binary* op) override {
    std::string a = VisitExpr(op->a), b = VisitExpr(op->b);
    bool is_float = op->a.type().is_float();
    switch (op->op) {
      case BinaryOp::kFloorDiv:
      case BinaryOp::kFloorMod: {
        if (is_float) break;
        const int64_t* divisor = AsConstInt(op->b);
        bool plain = divisor && *divisor > 0 && ConstBound(op->a, bounds_).lo >= 0;
        const char* c_op = op->op == BinaryOp::kFloorDiv ? " / " : " % ";
        if (plain) return "(" + a + c_op + b + ")";
        uses_floordiv = true;
        return std::string(op->op == BinaryOp::kFloorDiv ? "tuned_floordiv(" : "tuned_floormod(") + a + ", " + b + ")";
      }
      case BinaryOp::kMin:
      case BinaryOp::kMax: {
        bool is_min = op->op == BinaryOp::kMin;
        if (is_float) {
          bool f32 = op->a.type().bits == 32;
          std::string fn = std::string(is_min ? "fmin" : "fmax") + (Cuda() && f32 ? "f" : "");
          return fn + "(" + a + ", " + b + ")";
        }
        return "((" + a + ") " + (is_min ? "<" : ">") + " (" + b + ") ? (" + a + ") : (" + b + "))";
      }
      default: break;
    }
    return "(" + a + " " + BinaryOpSymbol(op->op) + " " + b + ")";
  }
  std::string VisitNot(const Not* op) override { return "(!" + VisitExpr(op->a) + ")"; }
  std::string VisitSelect(const Select* op) override {
    return "(" + VisitExpr(op->cond) + " ? " + VisitExpr(op->true_value) + " : " +
           VisitExpr(op->false_value) + ")";
  }
  std::string VisitCast(const Cast* op) override {
    if (op->type.is_bool()) return "(" + VisitExpr(op->value) + " != 0)";
    return "((" + IntTypeName(op->type) + ")" + VisitExpr(op->value) + ")";
  }
  std::string Access(const Buffer& buffer, const std::vector<Expr>& indices) {
    Expr flat = lower::gpu::FlatIndex(buffer, indices);
    if (lane_.var) flat = Substitute(flat, {{lane_.var, MakeInt(lane_.value, lane_.var->type)}});
    return BufferName(buffer.get()) + "[" + VisitExpr(Simplify(flat, bounds_)) + "]";
  }
  std::string VisitLoad(const Load* op) override {
    auto vector = lane_.vectors.find(op);
    if (vector != lane_.vectors.end()) return vector->second + "." + "xyzw"[lane_.value - lane_.min];
    return Access(op->buffer, op->indices);
  }
  std::string VisitCall(const Call* op) override {
    std::string a = VisitExpr(op->args[0]);
    bool f32 = op->type.bits == 32;
    std::string suffix = Cuda() && f32 ? "f" : "";
    switch (op->op) {
      case Intrinsic::kSigmoid: {
        std::string one = f32 ? "1.0f" : "1.0";
        return "(" + one + " / (" + one + " + exp" + suffix + "(-" + a + ")))";
      }
      default: return std::string(IntrinsicName(op->op)) + suffix + "(" + a + ")";
    }
  }

  // ---- statements ----
  void VisitFor(const For* op, int indent) override {
    if (op->kind == ForKind::kVectorized) {
      auto aligned = [this](const BufferNode* b) { return BaseAligned(kernel_, b); };
      if (std::optional<VectorLoop> plan = PlanVectorLoop(*op, bounds_, aligned)) {
        PrintVectorLoop(*op, *plan, indent);
        return;
      }
    }
    ir::Interval mn = ConstBound(op->min, bounds_), ext = ConstBound(op->extent, bounds_);
    if (mn.bounded() && ext.bounded()) bounds_[op->var.get()] = {mn.lo, mn.hi + ext.hi - 1};
    std::string v = VarName(op->var.get());
    const int64_t* zero = AsConstInt(op->min);
    std::string end = zero && *zero == 0 ? VisitExpr(op->extent) : VisitExpr(op->min + op->extent);
    // The loops the CPU code generator unrolls (explicitly, or by an enclosing
    // auto_unroll_max_step) are the ones the GPU compiler is asked to unroll.
    if (op->kind == ForKind::kUnrolled || analysis::UnrollOf(*op, unroll_budget_) == analysis::Unroll::kAuto) {
      body_ << Pad(indent) << "#pragma unroll\n";
    }
    body_ << Pad(indent) << "for (" << index_type_ << " " << v << " = " << VisitExpr(op->min) << "; "
          << v << " < " << end << "; ++" << v << ") {\n";
    const int64_t outer_budget = unroll_budget_;
    unroll_budget_ = analysis::BudgetInside(*op, unroll_budget_);
    VisitStmt(op->body, indent + 1);
    unroll_budget_ = outer_budget;
    body_ << Pad(indent) << "}\n";
  }
  // ---- vector loops (decided by PlanVectorLoop) ----
  std::string VectorType(int64_t width) { return "float" + std::to_string(width); }
  std::string Pointer(const BufferNode* b, const Expr& offset) {
    if (b->scope == MemoryScope::kShared) vector_shared_.insert(b);
    return BufferName(b) + " + " + VisitExpr(offset);
  }
  std::string VectorLoad(const VectorRun& run, int64_t width) {
    std::string at = Pointer(run.load->buffer.get(), run.first_offset);
    if (Cuda()) return "*reinterpret_cast<const " + VectorType(width) + "*>(" + at + ")";
    return "vload" + std::to_string(width) + "(0, " + at + ")";
  }
  void PrintVectorLoop(const For& loop, const VectorLoop& plan, int indent) {
    // A copy reads one vector into the store; anything else computes each lane from vectors.
    bool copy = plan.loads.size() == 1 && plan.store->value.as<Load>() == plan.loads[0].load;
    bool braces = plan.guard.defined() || !copy;
    if (braces) body_ << Pad(indent) << (plan.guard.defined() ? "if (" + VisitExpr(plan.guard) + ") {" : "{") << "\n";
    int inner = braces ? indent + 1 : indent;
    std::string value;
    if (copy) {
      value = VectorLoad(plan.loads[0], plan.width);
    } else {
      std::map<const Load*, std::string> vectors;
      for (const VectorRun& run : plan.loads) {
        std::string name = Unique(run.load->buffer->name + "_vec", names_);
        body_ << Pad(inner) << "const " << VectorType(plan.width) << " " << name << " = "
              << VectorLoad(run, plan.width) << ";\n";
        vectors[run.load] = name;
      }
      const int64_t first = *AsConstInt(loop.min);
      value = Cuda() ? "make_" + VectorType(plan.width) + "(" : "(" + VectorType(plan.width) + ")(";
      for (int64_t lane = 0; lane < plan.width; ++lane) {
        lane_ = {loop.var.get(), first, first + lane, vectors};
        value += (lane ? ", " : "") + VisitExpr(plan.store->value);
      }
      lane_ = {};
      value += ")";
    }
    std::string at = Pointer(plan.store->buffer.get(), plan.stored.first_offset);
    if (Cuda()) {
      body_ << Pad(inner) << "*reinterpret_cast<" << VectorType(plan.width) << "*>(" << at << ") = " << value << ";\n";
    } else {
      body_ << Pad(inner) << "vstore" << plan.width << "(" << value << ", 0, " << at << ");\n";
    }
    if (braces) body_ << Pad(indent) << "}\n";
  }

  void VisitStore(const Store* op, int indent) override {
    body_ << Pad(indent) << Access(op->buffer, op->indices) << " = " << VisitExpr(op->value) << ";\n";
  }
  void VisitAllocate(const Allocate* op, int indent) override {
    body_ << Pad(indent) << TypeName(op->buffer->dtype) << " " << BufferName(op->buffer.get()) << "["
          << op->buffer->num_elements() << "];\n";
    VisitStmt(op->body, indent);
  }
  void VisitIfThenElse(const IfThenElse* op, int indent) override {
    body_ << Pad(indent) << "if (" << VisitExpr(op->cond) << ") {\n";
    VisitStmt(op->then_case, indent + 1);
    if (op->else_case.defined()) {
      body_ << Pad(indent) << "} else {\n";
      VisitStmt(op->else_case, indent + 1);
    }
    body_ << Pad(indent) << "}\n";
  }
  void VisitSeq(const Seq* op, int indent) override {
    for (const Stmt& s : op->stmts) VisitStmt(s, indent);
  }
  void VisitBarrier(const Barrier*, int indent) override {
    body_ << Pad(indent) << (Cuda() ? "__syncthreads();" : "barrier(CLK_LOCAL_MEM_FENCE);") << "\n";
  }

  const GpuKernel& kernel_;
  Dialect dialect_;
  std::string index_type_;
  int64_t unroll_budget_ = 0;  // auto_unroll_max_step in force (0: none)
  VarBounds bounds_;
  // While printing one lane of a vector loop: its variable's value, and the vectors loaded.
  struct Lane {
    const VarNode* var = nullptr;
    int64_t min = 0, value = 0;
    std::map<const Load*, std::string> vectors;
  } lane_;
  std::set<const BufferNode*> vector_shared_;  // shared arrays with vector accesses
  std::map<std::string, int> names_;
  std::map<const VarNode*, std::string> var_names_;
  std::map<const BufferNode*, std::string> buffer_names_;
  std::ostringstream body_;
};

std::string FloorHelpers(Dialect dialect) {
  std::string type = dialect == Dialect::kCuda ? "long long" : "long";
  std::string qualifiers = dialect == Dialect::kCuda ? "static __device__ __forceinline__ " : "static inline ";
  return "// Division rounding towards negative infinity, as the IR defines it.\n" + qualifiers + type +
         " tuned_floordiv(" + type + " a, " + type + " b) {\n  " + type +
         " q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n" + qualifiers +
         type + " tuned_floormod(" + type + " a, " + type + " b) {\n  " + type +
         " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n\n";
}

}  // namespace

std::string PrintGpuSource(const GpuProgram& program, Dialect dialect) {
  std::ostringstream kernels;
  bool floordiv = false, f64 = false;
  for (const GpuKernel& kernel : program.kernels) {
    Printer printer(kernel, dialect);
    std::string text = printer.Print();
    floordiv |= printer.uses_floordiv;
    f64 |= printer.uses_double;
    kernels << "// " << printer.FunctionName() << ": grid (" << kernel.grid[0] << ", " << kernel.grid[1]
            << ", " << kernel.grid[2] << "), block (" << kernel.block[0] << ", " << kernel.block[1] << ", "
            << kernel.block[2] << "), " << kernel.shared_bytes << " bytes of shared memory\n"
            << text << "\n";
  }
  std::ostringstream os;
  os << "// " << program.name << ": " << program.kernels.size() << " kernel"
     << (program.kernels.size() == 1 ? "" : "s") << ", launched in order. Generated by tuned.\n";
  if (f64 && dialect == Dialect::kOpencl) os << "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  os << "\n";
  if (floordiv) os << FloorHelpers(dialect);
  os << kernels.str();
  std::string text = os.str();
  return text.substr(0, text.size() - 1);  // one newline at the end
}

std::string KernelFunctionName(const GpuKernel& kernel) { return Sanitize(kernel.name); }

Dialect DialectOf(const target::Target& target) {
  return target.kind == target::TargetKind::kCuda ? Dialect::kCuda : Dialect::kOpencl;
}

lower::gpu::GpuLimits LimitsOf(const target::Target& target) {
  lower::gpu::GpuLimits limits;
  if (target.kind == target::TargetKind::kCuda) {
    limits.max_threads_per_block = target.cuda.max_threads_per_block;
    limits.max_shared_bytes = target.cuda.max_shared_memory_per_block;
    return limits;
  }
  limits.max_threads_per_block = target.opencl.max_work_group_size;
  limits.max_block = {0, 0, 0};
  limits.max_shared_bytes = target.opencl.local_memory_bytes;
  return limits;
}

}  // namespace tuned::codegen::gpu
