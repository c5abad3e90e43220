#ifndef TUNED_COMPILER_IR_IR_H_
#define TUNED_COMPILER_IR_IR_H_

/// \file
/// The IR: immutable, shared expression and statement nodes.
///
/// Semantics:
/// - Integer arithmetic is 64-bit two's complement for index math; FloorDiv/FloorMod round
///   towards negative infinity (so split/fuse index math is exact for negative offsets too);
///   Div on integers truncates, on floats is IEEE division.
/// - Select(c, t, f) evaluates only the chosen operand: a Load in the other one is never
///   performed (this is what makes zero-padding safe: the out-of-bounds branch is not read).
/// - Loads and stores take one index per buffer dimension; buffers are row-major.
/// - For loops run `var` over [min, min + extent); their kind is a promise about how the
///   iterations may run (parallel: independent; vectorized: lanes; unrolled: copies).
/// Nodes are built only through the Make functions below, which check their operands.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/type.h"

namespace tuned::ir {

enum class ExprKind : uint8_t {
  kIntImm, kFloatImm, kVar, kBinary, kNot, kSelect, kCast, kLoad, kCall
};
enum class StmtKind : uint8_t { kFor, kStore, kAllocate, kIfThenElse, kSeq, kBarrier };

enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kFloorDiv, kFloorMod, kMin, kMax,
  kEQ, kNE, kLT, kLE, kGT, kGE, kAnd, kOr
};
enum class Intrinsic : uint8_t { kExp, kLog, kSqrt, kTanh, kFabs, kSigmoid, kErf };
enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };
enum class MemoryScope : uint8_t { kGlobal, kLocal, kShared };

const char* BinaryOpSymbol(BinaryOp op);
bool IsComparison(BinaryOp op);
const char* IntrinsicName(Intrinsic op);
const char* ForKindName(ForKind kind);
const char* MemoryScopeName(MemoryScope scope);
StatusOr<MemoryScope> ParseMemoryScope(std::string_view name);

struct ExprNode {
  ExprNode(ExprKind k, DataType t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
  const ExprKind kind;
  const DataType type;
};

/// A shared handle to an immutable expression node; copying is cheap.
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  Expr(int value);     // NOLINT: int64 immediate
  Expr(int64_t value); // NOLINT: int64 immediate

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  DataType type() const { return node_->type; }
  bool same_as(const Expr& other) const { return node_ == other.node_; }
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  MemoryScope scope = MemoryScope::kGlobal;

  int64_t num_elements() const;
};
/// Buffers are shared and compared by identity.
using Buffer = std::shared_ptr<const BufferNode>;
Buffer MakeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape,
                  MemoryScope scope = MemoryScope::kGlobal);

struct IntImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  IntImm(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  const int64_t value;
};

struct FloatImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  FloatImm(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  const double value;
};

/// A variable; two Vars are the same variable only if they are the same node.
struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  VarNode(DataType t, std::string n) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};

struct Binary : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBinary;
  Binary(DataType t, BinaryOp o, Expr x, Expr y)
      : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
  const BinaryOp op;
  const Expr a, b;
};

struct Not : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  explicit Not(Expr x) : ExprNode(kKind, DataType::Bool()), a(std::move(x)) {}
  const Expr a;
};

struct Select : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  Select(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t.type()), cond(std::move(c)), true_value(std::move(t)),
        false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
};

struct Cast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  Cast(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  const Expr value;
};

struct Load : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kLoad;
  Load(Buffer b, std::vector<Expr> idx)
      : ExprNode(kKind, b->dtype.bits == 16 ? DataType::Float32() : b->dtype),
        buffer(std::move(b)), indices(std::move(idx)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
};

struct Call : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  Call(DataType t, Intrinsic o, std::vector<Expr> a) : ExprNode(kKind, t), op(o), args(std::move(a)) {}
  const Intrinsic op;
  const std::vector<Expr> args;
};

using Var = std::shared_ptr<const VarNode>;
Var MakeVar(std::string name, DataType type = DataType::Int64());
inline Expr AsExpr(const Var& v) { return Expr(v); }

// ---- statements ----

struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  const StmtKind kind;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> node_;
};

struct For : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  For(Var v, Expr mn, Expr ext, ForKind k, std::string tag, int64_t unroll, int64_t prefetch, Stmt b)
      : StmtNode(kKind), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), kind(k),
        thread_tag(std::move(tag)), auto_unroll_max_step(unroll), prefetch_ahead(prefetch), body(std::move(b)) {}
  const Var var;
  const Expr min, extent;
  const ForKind kind;
  const std::string thread_tag;       // "blockIdx.x", "threadIdx.y", ... for kThreadBinding.
  const int64_t auto_unroll_max_step; // Unroll inner loops whose total steps fit; 0: off.
  // Prefetch what the contiguous vector loads of arguments inside read this many iterations
  // ahead (along the loop's stride of their address); 0: off. CPU code generator only.
  const int64_t prefetch_ahead;
  const Stmt body;
};

struct Store : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  Store(Buffer b, std::vector<Expr> idx, Expr v)
      : StmtNode(kKind), buffer(std::move(b)), indices(std::move(idx)), value(std::move(v)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
  const Expr value;
};

/// Allocates `buffer` (in its memory scope) for the duration of `body`.
struct Allocate : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  Allocate(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
  const Buffer buffer;
  const Stmt body;
};

struct IfThenElse : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  IfThenElse(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  // May be undefined.
};

struct Seq : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  explicit Seq(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  const std::vector<Stmt> stmts;
};

/// Waits until every thread of a GPU block has arrived, and makes their shared-memory writes
/// visible to each other. Only GPU kernels hold barriers (compiler/lower/gpu inserts them), and
/// only where every thread of the block reaches them (never under a thread-dependent branch).
struct Barrier : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBarrier;
  Barrier() : StmtNode(kKind) {}
};

// ---- constructors (checked) ----

Expr MakeInt(int64_t value, DataType type = DataType::Int64());
Expr MakeFloat(double value, DataType type = DataType::Float32());
/// true / false: an integer immediate of type bool.
Expr MakeBool(bool value);
/// A zero / the lowest / the highest value of `type` (identities of sum, max, min).
Expr MakeZero(DataType type);
Expr MakeLowest(DataType type);
Expr MakeHighest(DataType type);
/// Binary op with operand types unified: an integer immediate adopts the other side's type.
Expr MakeBinary(BinaryOp op, Expr a, Expr b);
Expr MakeNot(Expr a);
Expr MakeSelect(Expr cond, Expr t, Expr f);
Expr MakeCast(DataType type, Expr value);
Expr MakeLoad(Buffer buffer, std::vector<Expr> indices);
Expr MakeCall(Intrinsic op, std::vector<Expr> args);

Stmt MakeFor(Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag = "",
             int64_t auto_unroll_max_step = 0, int64_t prefetch_ahead = 0);
Stmt MakeStore(Buffer buffer, std::vector<Expr> indices, Expr value);
Stmt MakeAllocate(Buffer buffer, Stmt body);
Stmt MakeIfThenElse(Expr cond, Stmt then_case, Stmt else_case = Stmt());
/// A sequence; nested sequences are flattened and a single statement is returned as is.
Stmt MakeSeq(std::vector<Stmt> stmts);
Stmt MakeBarrier();

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr FloorDiv(Expr a, Expr b);
Expr FloorMod(Expr a, Expr b);
Expr Min(Expr a, Expr b);
Expr Max(Expr a, Expr b);
Expr Eq(Expr a, Expr b);

/// The constant value of an integer (or bool) immediate, if `e` is one.
const int64_t* AsConstInt(const Expr& e);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_IR_H_
