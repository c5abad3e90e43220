// Translation of lowered loop programs into LLVM IR. The rules are documented once, in
// codegen_llvm.h; this file is their implementation:
//   CheckFunc         rejects programs the CPU back end cannot run (unbound names, GPU loops)
//   CodeGen           walks statements and expressions with an IRBuilder; in a vectorized loop
//                     body every value is either uniform (a scalar) or one value per lane (an
//                     LLVM vector), and `mask_` holds the active lanes under lane-dependent
//                     branches
//   BuildModule       one kernel function plus its packed-argument wrapper per LoweredFunc

#include <bit>
#include <cctype>
#include <functional>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MathExtras.h>
#include <llvm/Support/raw_ostream.h>

#include "common/check.h"
#include "common/logging.h"
#include "compiler/analysis/access.h"
#include "compiler/analysis/fma.h"
#include "compiler/analysis/loop_analysis.h"
#include "compiler/analysis/unroll.h"
#include "compiler/codegen/llvm/llvm_internal.h"
#include "compiler/codegen/llvm/vector_math_internal.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/simplify.h"

namespace tuned::codegen::internal {
namespace {

using namespace tuned::ir;
using namespace tuned::analysis;
using lower::LoweredFunc;

// Vectorized loops wider than this are strip-mined into chunks of kChunkLanes lanes.
constexpr int64_t kMaxLanes = 64;
constexpr int64_t kChunkLanes = 16;
constexpr unsigned kBufferAlign = 64;

bool IsCIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Checks scoping (every variable bound by an enclosing loop, every buffer an argument or
// allocated around its use) and that the program only uses what the CPU back end supports.
class FuncChecker : public IRVisitor {
 public:
  explicit FuncChecker(const LoweredFunc& func) {
    for (const Buffer& b : func.args) buffers_.insert(b.get());
  }
  Status status;

  using IRVisitor::Visit;
  void Visit(const Stmt& s) override {
    if (status.ok()) IRVisitor::Visit(s);
  }

 protected:
  void VisitAllocate(const Allocate* op) override {
    bool inserted = buffers_.insert(op->buffer.get()).second;
    IRVisitor::VisitAllocate(op);
    if (inserted) buffers_.erase(op->buffer.get());
  }
  void VisitVar(const VarNode* op) override {
    if (!vars_.count(op)) Fail("variable " + op->name + " is used outside a loop that binds it");
  }
  void VisitLoad(const Load* op) override {
    CheckBuffer(op->buffer);
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const Store* op) override {
    CheckBuffer(op->buffer);
    IRVisitor::VisitStore(op);
  }
  void VisitFor(const For* op) override {
    if (op->kind == ForKind::kThreadBinding) {
      Fail("loop " + op->var->name + " is bound to " + op->thread_tag +
           ", which needs a GPU code generator");
      return;
    }
    if (!op->var->type.is_int()) Fail("loop variable " + op->var->name + " is not an integer");
    Visit(op->min);
    Visit(op->extent);
    vars_.insert(op->var.get());
    Visit(op->body);
    vars_.erase(op->var.get());
  }

 private:
  void CheckBuffer(const Buffer& b) {
    if (!buffers_.count(b.get())) Fail("buffer " + b->name + " is neither an argument nor allocated");
  }
  void VisitBarrier(const Barrier*) override { Fail("a GPU barrier cannot be compiled for a CPU target"); }
  void Fail(std::string message) {
    if (status.ok()) status = InvalidArgumentError(std::move(message));
  }
  std::unordered_set<const VarNode*> vars_;
  std::unordered_set<const BufferNode*> buffers_;
};

Status CheckFunc(const LoweredFunc& func) {
  const std::string where = "kernel " + func.name;
  if (!IsCIdentifier(func.name)) {
    return InvalidArgumentError("kernel name '" + func.name + "' is not a C identifier");
  }
  if (func.args.empty()) return InvalidArgumentError(where + ": no arguments");
  if (!func.body.defined()) return InvalidArgumentError(where + ": no body");
  std::unordered_set<const BufferNode*> seen;
  for (const Buffer& b : func.args) {
    if (!seen.insert(b.get()).second) {
      return InvalidArgumentError(where + ": buffer " + b->name + " is passed twice");
    }
    if (b->scope != MemoryScope::kGlobal) {
      return InvalidArgumentError(where + ": argument " + b->name + " is not in global scope");
    }
  }
  FuncChecker checker(func);
  checker.Visit(func.body);
  return checker.status.WithContext(where);
}

class CodeGen : private ExprFunctor<llvm::Value*(const Expr&)>,
                private StmtFunctor<void(const Stmt&)> {
 public:
  CodeGen(llvm::Module& module, const target::Target& target, int num_threads)
      : ctx_(module.getContext()), module_(module), b_(ctx_), cpu_(target.cpu),
        features_(target.FeatureString()), num_threads_(num_threads),
        x86_(llvm::Triple(LlvmTriple(target)).isX86()), avx512_(x86_ && target.Fp32VectorLanes() == 16),
        register_lanes_(std::max(1, target.Fp32VectorLanes())) {}

  void AddKernel(const LoweredFunc& func) {
    kernel_name_ = func.name;
    streamed_outputs_.clear();
    arguments_.clear();
    for (const Buffer& arg : func.args) {
      arguments_.insert(arg.get());
      const int64_t bytes = arg->num_elements() * int64_t(arg->dtype.bytes());
      if (x86_ && bytes >= kMinStreamingStoreBytes && !analysis::LoadsFrom(func.body, arg.get())) {
        streamed_outputs_.insert(arg.get());
      }
    }
    llvm::Type* ptr = PtrType();
    std::vector<llvm::Type*> params(func.args.size(), ptr);
    llvm::Function* fn = llvm::Function::Create(
        llvm::FunctionType::get(b_.getVoidTy(), params, false), llvm::Function::ExternalLinkage,
        func.name, module_);
    SetFunctionAttributes(fn);
    frame_ = Frame{};
    frame_.fn = fn;
    for (size_t i = 0; i < func.args.size(); ++i) {
      llvm::Argument* arg = fn->getArg(static_cast<unsigned>(i));
      arg->setName(func.args[i]->name);
      SetBufferParamAttributes(fn, static_cast<unsigned>(i), func.body, func.args[i].get());
      frame_.buffers[func.args[i].get()] = arg;
    }
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    EmitStmt(func.body);
    EndFunction();

    // void name_packed(void* const* args): loads each pointer and calls the kernel.
    llvm::Function* packed = llvm::Function::Create(
        llvm::FunctionType::get(b_.getVoidTy(), {ptr}, false), llvm::Function::ExternalLinkage,
        PackedName(func.name), module_);
    SetFunctionAttributes(packed);
    packed->getArg(0)->setName("args");
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", packed));
    std::vector<llvm::Value*> call_args;
    for (size_t i = 0; i < func.args.size(); ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, packed->getArg(0), i);
      call_args.push_back(b_.CreateLoad(ptr, slot, func.args[i]->name));
    }
    b_.CreateCall(fn, call_args);
    b_.CreateRetVoid();
  }

 private:
  // An integer operation on two emitted values in a block. A value defined earlier in the block
  // that is being emitted into dominates what follows it there, so it may be reused as is.
  struct IntegerKey {
    const llvm::BasicBlock* block;
    BinaryOp op;
    const llvm::Value* a;
    const llvm::Value* c;
    bool operator==(const IntegerKey&) const = default;
  };
  struct IntegerKeyHash {
    size_t operator()(const IntegerKey& k) const {
      size_t h = std::hash<const void*>()(k.block);
      for (const void* p : {static_cast<const void*>(k.a), static_cast<const void*>(k.c)}) {
        h = h * 31 + std::hash<const void*>()(p);
      }
      return h * 31 + size_t(k.op);
    }
  };

  // Per-function state: what names mean in the function being emitted.
  struct Frame {
    llvm::Function* fn = nullptr;
    std::unordered_map<const VarNode*, llvm::Value*> vars;
    std::unordered_map<const BufferNode*, llvm::Value*> buffers;
    bool in_parallel = false;
    bool streamed = false;  // it wrote with streaming stores: an sfence before it returns
    std::unordered_map<IntegerKey, llvm::Value*, IntegerKeyHash> integer_values;  // in its blocks
  };
  // The vectorized loop whose body is being emitted: `var` takes `lanes` values from `base`.
  struct VectorScope {
    Var var;
    unsigned lanes;
    llvm::Value* base;
    int64_t base_divisor;  // a known divisor of `base` (analysis::KnownDivisor)
  };

  // ---- types and attributes ----

  llvm::Type* PtrType() { return llvm::PointerType::get(ctx_, 0); }

  llvm::Type* ScalarType(DataType t) {
    if (t.is_bool()) return b_.getInt1Ty();
    if (t.is_int()) return b_.getIntNTy(t.bits);
    switch (t.bits) {
      case 16: return b_.getHalfTy();
      case 32: return b_.getFloatTy();
      case 64: return b_.getDoubleTy();
      default: break;
    }
    TUNED_UNREACHABLE("float type of " << int(t.bits) << " bits");
    return nullptr;
  }

  // Buffers store bool as one byte.
  llvm::Type* StorageType(DataType t) { return t.is_bool() ? b_.getInt8Ty() : ScalarType(t); }

  // `scalar`, or a vector of it as wide as `like` is.
  static llvm::Type* ShapedLike(llvm::Type* scalar, const llvm::Value* like) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType())) {
      return llvm::FixedVectorType::get(scalar, vt->getNumElements());
    }
    return scalar;
  }

  static bool IsVector(const llvm::Value* v) { return v->getType()->isVectorTy(); }

  void SetFunctionAttributes(llvm::Function* fn) {
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr("target-cpu", cpu_);
    if (!features_.empty()) fn->addFnAttr("target-features", features_);
  }

  void SetBufferParamAttributes(llvm::Function* fn, unsigned index, const Stmt& body,
                                const BufferNode* buffer) {
    fn->addParamAttr(index, llvm::Attribute::NoAlias);
    fn->addParamAttr(index, llvm::Attribute::NoCapture);
    fn->addParamAttr(index, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(kBufferAlign)));
    if (!StoresTo(body, buffer)) fn->addParamAttr(index, llvm::Attribute::ReadOnly);
  }

  llvm::Value* Widen(llvm::Value* v) {
    if (!vector_ || IsVector(v)) return v;
    return b_.CreateVectorSplat(vector_->lanes, v);
  }

  void MatchLanes(llvm::Value*& a, llvm::Value*& c) {
    if (IsVector(a) && !IsVector(c)) c = b_.CreateVectorSplat(VectorLanes(a), c);
    if (IsVector(c) && !IsVector(a)) a = b_.CreateVectorSplat(VectorLanes(c), a);
  }

  static unsigned VectorLanes(const llvm::Value* v) {
    return llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements();
  }

  llvm::AllocaInst* EntryAlloca(llvm::Type* type, const std::string& name) {
    llvm::BasicBlock& entry = frame_.fn->getEntryBlock();
    llvm::IRBuilder<> entry_builder(&entry, entry.begin());
    llvm::AllocaInst* slot = entry_builder.CreateAlloca(type, nullptr, name);
    slot->setAlignment(llvm::Align(kBufferAlign));
    return slot;
  }

  llvm::FunctionCallee RuntimeFunction(const char* name, llvm::Type* ret,
                                       std::vector<llvm::Type*> params) {
    llvm::FunctionCallee callee =
        module_.getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
    if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      fn->addFnAttr(llvm::Attribute::NoUnwind);
    }
    return callee;
  }

  // ---- statements ----

  void EmitStmt(const Stmt& s) { VisitStmt(s); }

  void VisitSeq(const Seq* op) override {
    for (const Stmt& c : op->stmts) EmitStmt(c);
  }

  void VisitBarrier(const Barrier*) override { TUNED_UNREACHABLE("barriers are refused by CheckFunc"); }

  void VisitFor(const For* op) override {
    const int64_t saved_unroll = auto_unroll_;
    const std::optional<Interval> range = ConstantLoopRange(*op);
    if (range) bounds_[op->var.get()] = *range;
    const int64_t* const_extent = AsConstInt(op->extent);
    const Unroll unroll = UnrollOf(*op, auto_unroll_);
    auto_unroll_ = BudgetInside(*op, auto_unroll_);

    llvm::Value* min = CastValue(Emit(op->min), op->min.type(), op->var->type);
    const Prefetch saved_prefetch = prefetch_;
    if (op->prefetch_ahead > 0) prefetch_ = {op->var, op->prefetch_ahead};
    std::optional<LaneFold> fold = vector_ || !const_extent ? std::nullopt : MatchLaneFold(*op, *const_extent);
    if (fold) {
      EmitLaneFold(*op, *fold, min, *const_extent);
    } else if (unroll != Unroll::kNone) {
      EmitUnrolled(op, min, *const_extent);
    } else if (op->kind == ForKind::kVectorized && !vector_) {
      std::string blocker = VectorizeBlocker(*op, bounds_);
      if (blocker.empty() && *const_extent > 0) {
        EmitVectorized(op, min, *const_extent);
      } else {
        if (!blocker.empty()) {
          Logger("codegen")->debug("kernel {}: vectorized loop {} emitted as a loop: {}",
                                   kernel_name_, op->var->name, blocker);
        }
        EmitSerial(op, min, /*vectorize_hint=*/true);
      }
    } else if (op->kind == ForKind::kParallel && !vector_ && !frame_.in_parallel) {
      EmitParallel(op, min);
    } else {
      EmitSerial(op, min, /*vectorize_hint=*/false);
    }
    auto_unroll_ = saved_unroll;
    prefetch_ = saved_prefetch;
    bounds_.erase(op->var.get());
    frame_.vars.erase(op->var.get());
  }

  // Emits a counted loop i in [begin, end) (i64) and calls `body(i)` inside it.
  void EmitCountedLoop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                       const std::function<void(llvm::Value*)>& body, bool vectorize_hint) {
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, name + ".header", frame_.fn);
    llvm::BasicBlock* loop_body = llvm::BasicBlock::Create(ctx_, name + ".body", frame_.fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", frame_.fn);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* i = b_.CreatePHI(begin->getType(), 2, name);
    i->addIncoming(begin, preheader);
    b_.CreateCondBr(b_.CreateICmpSLT(i, end), loop_body, exit);
    b_.SetInsertPoint(loop_body);
    body(i);
    llvm::Value* next = b_.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1), name + ".next",
                                     /*HasNUW=*/false, /*HasNSW=*/true);
    llvm::BranchInst* back = b_.CreateBr(header);
    if (vectorize_hint) back->setMetadata(llvm::LLVMContext::MD_loop, VectorizeHint());
    i->addIncoming(next, b_.GetInsertBlock());
    b_.SetInsertPoint(exit);
  }

  llvm::MDNode* VectorizeHint() {
    llvm::Metadata* enable[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                                llvm::ConstantAsMetadata::get(b_.getTrue())};
    llvm::TempMDTuple self = llvm::MDNode::getTemporary(ctx_, {});
    llvm::Metadata* ops[] = {self.get(), llvm::MDNode::get(ctx_, enable)};
    llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, ops);
    loop->replaceOperandWith(0, loop);
    return loop;
  }

  void EmitSerial(const For* op, llvm::Value* min, bool vectorize_hint) {
    llvm::Type* t = ScalarType(op->var->type);
    llvm::Value* extent = CastValue(Emit(op->extent), op->extent.type(), op->var->type);
    EmitCountedLoop(
        llvm::ConstantInt::get(t, 0), extent, op->var->name,
        [&](llvm::Value* i) {
          frame_.vars[op->var.get()] = b_.CreateAdd(min, i, op->var->name);
          EmitStmt(op->body);
        },
        vectorize_hint);
  }

  // A serial loop that folds a contiguous run of a local float32 buffer into one element,
  // B[i] = B[i] + A[.. v ..] (or max, min; B's index invariant): an rfactor's combine of its
  // vector lanes (schedule.h: RFactor). Emitted as one vector load folded in halves, log2(n)
  // dependent operations instead of a chain of n: 32 lanes' chain was a fifth of a layer norm.
  // Only a local buffer's: the order of a sum over an argument stays the one the loop writes.
  struct LaneFold {
    const Store* store;
    BinaryOp op;
    const Load* elements;
  };
  std::optional<LaneFold> MatchLaneFold(const For& loop, int64_t extent) {
    if (extent < 4 || extent > kMaxLanes || !std::has_single_bit(uint64_t(extent))) return std::nullopt;
    const Store* store = loop.body.as<Store>();
    if (store == nullptr || store->buffer->dtype != DataType::Float32()) return std::nullopt;
    const Binary* fold = store->value.as<Binary>();
    if (fold == nullptr || (fold->op != BinaryOp::kAdd && fold->op != BinaryOp::kMax && fold->op != BinaryOp::kMin)) {
      return std::nullopt;
    }
    const Load* acc = fold->a.as<Load>();
    const Load* elements = fold->b.as<Load>();
    if (acc == nullptr || elements == nullptr || acc->buffer.get() != store->buffer.get()) return std::nullopt;
    if (elements->buffer.get() == store->buffer.get() || elements->buffer->dtype != DataType::Float32() ||
        elements->buffer->scope != MemoryScope::kLocal) {
      return std::nullopt;
    }
    for (size_t d = 0; d < store->indices.size(); ++d) {
      if (!ir::StructurallyEqual(acc->indices[d], store->indices[d])) return std::nullopt;
    }
    Expr target = FlatOffset(store->buffer->shape, store->indices, bounds_);
    Expr source = FlatOffset(elements->buffer->shape, elements->indices, bounds_);
    if (analysis::ClassifyAccess(target, loop.var, bounds_) != AccessPattern::kInvariant ||
        analysis::ClassifyAccess(source, loop.var, bounds_) != AccessPattern::kUnitStride) {
      return std::nullopt;
    }
    return LaneFold{store, fold->op, elements};
  }

  void EmitLaneFold(const For& loop, const LaneFold& fold, llvm::Value* min, int64_t extent) {
    llvm::Type* element = b_.getFloatTy();
    frame_.vars[loop.var.get()] = min;
    Expr source = FlatOffset(fold.elements->buffer->shape, fold.elements->indices, bounds_);
    llvm::Value* first =
        b_.CreateInBoundsGEP(element, frame_.buffers.at(fold.elements->buffer.get()), Emit(source));
    llvm::Value* v = b_.CreateAlignedLoad(llvm::FixedVectorType::get(element, unsigned(extent)), first,
                                          ElementAlign(element));
    // The same operations as the scalar ones (VisitBinary), on halves, then on the result.
    auto combine = [&](llvm::Value* a, llvm::Value* c) -> llvm::Value* {
      switch (fold.op) {
        case BinaryOp::kMax: return b_.CreateSelect(b_.CreateFCmpOLT(a, c), c, a);
        case BinaryOp::kMin: return b_.CreateSelect(b_.CreateFCmpOLT(c, a), c, a);
        default: return b_.CreateFAdd(a, c);
      }
    };
    for (int64_t width = extent; width > 1; width /= 2) {
      std::vector<int> low(size_t(width / 2)), high(size_t(width / 2));
      for (int64_t k = 0; k < width / 2; ++k) {
        low[size_t(k)] = int(k);
        high[size_t(k)] = int(k + width / 2);
      }
      v = combine(b_.CreateShuffleVector(v, low), b_.CreateShuffleVector(v, high));
    }
    llvm::Value* folded = b_.CreateExtractElement(v, uint64_t(0));
    Expr target = FlatOffset(fold.store->buffer->shape, fold.store->indices, bounds_);
    llvm::Value* slot = b_.CreateInBoundsGEP(element, frame_.buffers.at(fold.store->buffer.get()), Emit(target));
    llvm::Value* old = b_.CreateAlignedLoad(element, slot, ElementAlign(element));
    b_.CreateAlignedStore(combine(old, folded), slot, ElementAlign(element));
  }

  void EmitUnrolled(const For* op, llvm::Value* min, int64_t extent) {
    llvm::Type* t = ScalarType(op->var->type);
    for (int64_t k = 0; k < extent; ++k) {
      frame_.vars[op->var.get()] = b_.CreateAdd(min, llvm::ConstantInt::get(t, k, true));
      EmitStmt(op->body);
    }
  }

  void EmitVectorized(const For* op, llvm::Value* min, int64_t extent) {
    llvm::Type* t = ScalarType(op->var->type);
    const int64_t min_divisor = analysis::KnownDivisor(op->min);
    if (extent > register_lanes_ && extent <= kMaxLanes && !std::has_single_bit(uint64_t(extent))) {
      // One register at a time: a vector of 48 lanes is no type the back end splits cleanly
      // (the pieces of a 3 x 16 register tile came back through the stack, 17x slower).
      for (int64_t first = 0; first < extent; first += register_lanes_) {
        llvm::Value* base = b_.CreateAdd(min, llvm::ConstantInt::get(t, first));
        EmitVectorBody(op, base, static_cast<unsigned>(std::min(register_lanes_, extent - first)),
                       first == 0 ? min_divisor : std::gcd(min_divisor, first));
      }
      return;
    }
    if (extent <= kMaxLanes) {
      EmitVectorBody(op, min, static_cast<unsigned>(extent), min_divisor);
      return;
    }
    int64_t chunks = extent / kChunkLanes, rest = extent % kChunkLanes;
    EmitCountedLoop(
        llvm::ConstantInt::get(t, 0), llvm::ConstantInt::get(t, chunks), op->var->name + ".chunk",
        [&](llvm::Value* c) {
          llvm::Value* base =
              b_.CreateAdd(min, b_.CreateMul(c, llvm::ConstantInt::get(t, kChunkLanes)));
          EmitVectorBody(op, base, static_cast<unsigned>(kChunkLanes),
                         std::gcd(analysis::KnownDivisor(op->min), kChunkLanes));
        },
        /*vectorize_hint=*/false);
    if (rest > 0) {
      llvm::Value* base = b_.CreateAdd(min, llvm::ConstantInt::get(t, chunks * kChunkLanes));
      EmitVectorBody(op, base, static_cast<unsigned>(rest),
                     std::gcd(analysis::KnownDivisor(op->min), chunks * kChunkLanes));
    }
  }

  void EmitVectorBody(const For* op, llvm::Value* base, unsigned lanes, int64_t base_divisor) {
    llvm::Type* t = ScalarType(op->var->type);
    std::vector<llvm::Constant*> steps;
    for (unsigned i = 0; i < lanes; ++i) steps.push_back(llvm::ConstantInt::get(t, i));
    const VectorScope* saved = vector_;
    llvm::Value* saved_mask = mask_;
    VectorScope scope{op->var, lanes, base, base_divisor};
    vector_ = &scope;
    mask_ = nullptr;
    frame_.vars[op->var.get()] =
        b_.CreateAdd(b_.CreateVectorSplat(lanes, base), llvm::ConstantVector::get(steps),
                     op->var->name);
    EmitStmt(op->body);
    vector_ = saved;
    mask_ = saved_mask;
  }

  // Outlines the loop body into `<kernel>_parallel<N>(begin, end, closure)` and runs it through
  // tuned_parallel_for. The body itself goes into an always-inline function whose buffer
  // parameters are noalias, so alias information survives the closure.
  void EmitParallel(const For* op, llvm::Value* min) {
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Type* ptr = PtrType();
    llvm::Value* extent =
        CastValue(Emit(op->extent), op->extent.type(), DataType::Int64());
    FreeSymbols free = CollectFreeSymbols(op->body);
    std::erase(free.vars, op->var.get());

    // Closure layout: {min, buffers..., vars...}.
    std::vector<llvm::Type*> fields{min->getType()};
    std::vector<llvm::Value*> values{min};
    for (const Buffer& b : free.buffers) {
      fields.push_back(ptr);
      values.push_back(frame_.buffers.at(b.get()));
    }
    for (const VarNode* v : free.vars) {
      llvm::Value* value = frame_.vars.at(v);
      fields.push_back(value->getType());
      values.push_back(value);
    }
    const std::string name = kernel_name_ + "_parallel" + std::to_string(outlined_++);

    std::vector<llvm::Type*> impl_params{i64, i64};
    impl_params.insert(impl_params.end(), fields.begin(), fields.end());
    llvm::Function* impl = llvm::Function::Create(
        llvm::FunctionType::get(b_.getVoidTy(), impl_params, false),
        llvm::Function::InternalLinkage, name + "_body", module_);
    SetFunctionAttributes(impl);
    impl->addFnAttr(llvm::Attribute::AlwaysInline);
    for (size_t k = 0; k < free.buffers.size(); ++k) {
      SetBufferParamAttributes(impl, static_cast<unsigned>(3 + k), op->body, free.buffers[k].get());
    }

    llvm::StructType* closure_type = llvm::StructType::get(ctx_, fields);
    llvm::Function* trampoline = llvm::Function::Create(
        llvm::FunctionType::get(b_.getVoidTy(), {i64, i64, ptr}, false),
        llvm::Function::InternalLinkage, name, module_);
    SetFunctionAttributes(trampoline);

    // Caller side: fill the closure and launch.
    llvm::AllocaInst* closure = EntryAlloca(closure_type, name + ".closure");
    for (size_t k = 0; k < values.size(); ++k) {
      b_.CreateStore(values[k], b_.CreateStructGEP(closure_type, closure, static_cast<unsigned>(k)));
    }
    llvm::FunctionCallee launch = RuntimeFunction(
        "tuned_parallel_for", b_.getVoidTy(), {i64, b_.getInt32Ty(), ptr, ptr});
    b_.CreateCall(launch, {extent, b_.getInt32(num_threads_), trampoline, closure});
    llvm::IRBuilderBase::InsertPoint resume = b_.saveIP();

    // Trampoline: unpack the closure.
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", trampoline));
    std::vector<llvm::Value*> impl_args{trampoline->getArg(0), trampoline->getArg(1)};
    for (size_t k = 0; k < fields.size(); ++k) {
      llvm::Value* slot =
          b_.CreateStructGEP(closure_type, trampoline->getArg(2), static_cast<unsigned>(k));
      impl_args.push_back(b_.CreateLoad(fields[k], slot));
    }
    b_.CreateCall(impl, impl_args);
    b_.CreateRetVoid();

    // Body: iterations [begin, end) of the loop, in a fresh frame.
    Frame saved = std::move(frame_);
    frame_ = Frame{};
    frame_.fn = impl;
    frame_.in_parallel = true;
    for (size_t k = 0; k < free.buffers.size(); ++k) {
      llvm::Argument* arg = impl->getArg(static_cast<unsigned>(3 + k));
      arg->setName(free.buffers[k]->name);
      frame_.buffers[free.buffers[k].get()] = arg;
    }
    for (size_t k = 0; k < free.vars.size(); ++k) {
      llvm::Argument* arg = impl->getArg(static_cast<unsigned>(3 + free.buffers.size() + k));
      arg->setName(free.vars[k]->name);
      frame_.vars[free.vars[k]] = arg;
    }
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", impl));
    llvm::Value* inner_min = impl->getArg(2);
    EmitCountedLoop(
        impl->getArg(0), impl->getArg(1), op->var->name,
        [&](llvm::Value* i) {
          llvm::Value* offset = b_.CreateSExtOrTrunc(OpaqueCopy(i), inner_min->getType());
          frame_.vars[op->var.get()] = b_.CreateAdd(inner_min, offset, op->var->name);
          EmitStmt(op->body);
        },
        /*vectorize_hint=*/false);
    EndFunction();
    frame_ = std::move(saved);
    b_.restoreIP(resume);
  }

  // `value`, passed through an empty inline-asm statement so that LLVM's ScalarEvolution sees an
  // unknown instead of the parallel loop's induction variable. Otherwise every address of a
  // many-piece parallel body is a recurrence of that loop, and each time LLVM computes the loop's
  // trip count it drops its cached analysis of all of them: about a fifth of a convolution's O3
  // time (docs/codegen_llvm.md). The statement emits no instruction.
  llvm::Value* OpaqueCopy(llvm::Value* value) {
    llvm::FunctionType* type = llvm::FunctionType::get(value->getType(), {value->getType()}, false);
    llvm::InlineAsm* copy = llvm::InlineAsm::get(type, "", "=r,0", /*hasSideEffects=*/false);
    return b_.CreateCall(copy, {value}, value->getName() + ".opaque");
  }

  void VisitAllocate(const Allocate* op) override {
    const Buffer& buffer = op->buffer;
    llvm::Type* element = StorageType(buffer->dtype);
    int64_t count = buffer->num_elements();
    int64_t bytes = count * static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(element));
    bool on_stack = bytes <= (buffer->scope == MemoryScope::kGlobal ? kMaxStackScratchBytes : kMaxStackBytes);
    llvm::Value* storage = nullptr;
    if (on_stack) {
      storage = EntryAlloca(llvm::ArrayType::get(element, static_cast<uint64_t>(count)),
                            buffer->name);
      stack_buffers_[buffer.get()] = count;
    } else {
      llvm::FunctionCallee alloc =
          RuntimeFunction("tuned_runtime_alloc", PtrType(), {b_.getInt64Ty()});
      storage = b_.CreateCall(alloc, {b_.getInt64(bytes)}, buffer->name);
    }
    frame_.buffers[buffer.get()] = storage;
    EmitStmt(op->body);
    frame_.buffers.erase(buffer.get());
    stack_buffers_.erase(buffer.get());
    if (!on_stack) {
      b_.CreateCall(RuntimeFunction("tuned_runtime_free", b_.getVoidTy(), {PtrType()}), {storage});
    }
  }

  void VisitIfThenElse(const IfThenElse* op) override {
    llvm::Value* cond = Emit(op->cond);
    if (IsVector(cond)) {
      // Lane-dependent condition: both arms run, each with its lanes masked.
      llvm::Value* then_mask = AndMask(cond);
      llvm::Value* else_mask = op->else_case.defined() ? AndMask(b_.CreateNot(cond)) : nullptr;
      llvm::Value* saved = mask_;
      mask_ = then_mask;
      EmitStmt(op->then_case);
      if (else_mask) {
        mask_ = else_mask;
        EmitStmt(op->else_case);
      }
      mask_ = saved;
      return;
    }
    llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", frame_.fn);
    llvm::BasicBlock* else_bb =
        op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", frame_.fn) : nullptr;
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "if.end", frame_.fn);
    b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : done);
    b_.SetInsertPoint(then_bb);
    EmitStmt(op->then_case);
    b_.CreateBr(done);
    if (else_bb) {
      b_.SetInsertPoint(else_bb);
      EmitStmt(op->else_case);
      b_.CreateBr(done);
    }
    b_.SetInsertPoint(done);
  }

  llvm::Value* AndMask(llvm::Value* cond) { return mask_ ? b_.CreateAnd(mask_, cond) : cond; }

  // ---- memory ----

  llvm::Align ElementAlign(llvm::Type* element) {
    return module_.getDataLayout().getABITypeAlign(element);
  }

  // Emits `e` with the lane variable bound to its first lane's value (scalar).
  llvm::Value* EmitAtFirstLane(const Expr& e) {
    const VectorScope* saved = vector_;
    llvm::Value* saved_mask = mask_;
    llvm::Value* saved_var = frame_.vars.at(saved->var.get());
    frame_.vars[saved->var.get()] = saved->base;
    vector_ = nullptr;
    mask_ = nullptr;
    llvm::Value* value = Emit(e);
    vector_ = saved;
    mask_ = saved_mask;
    frame_.vars[saved->var.get()] = saved_var;
    return value;
  }

  // kSpan: a small constant stride read as the contiguous span of the lanes' elements and
  // shuffled (analysis::LoadsAsSpan); loads only. kMaskedInvariant: one element for every lane,
  // read only when some lane is active (a broadcast weight in the masked tail vector of a
  // tile): a branch around a scalar load, where a gather of the same address would cost a load
  // per lane.
  // kLaneStores: a store of constant stride without a mask, one scalar store per lane at a
  // constant distance from the first. A scatter computes a 64-bit address per lane and is
  // microcoded: a convolution tile vectorized along its output channels and written to NCHW
  // (a 7x7 stem) ran 11% slower with it.
  enum class AccessKind { kScalar, kContiguous, kSpan, kLaneStores, kGather, kMaskedInvariant };
  struct AccessPlan {
    AccessKind kind;
    int64_t stride = 0;  // kSpan's and kLaneStores'
  };

  AccessPlan PlanAccess(const Expr& offset, bool load) {
    if (!vector_) return {AccessKind::kScalar};
    const AccessAlong along = AnalyzeAccess(offset, vector_->var, bounds_);
    switch (along.pattern) {
      case AccessPattern::kInvariant: return {mask_ ? AccessKind::kMaskedInvariant : AccessKind::kScalar};
      case AccessPattern::kUnitStride: return {AccessKind::kContiguous};
      case AccessPattern::kStrided:
        if (load && LoadsAsSpan(along)) return {AccessKind::kSpan, *along.stride};
        if (!load && !mask_ && along.stride) return {AccessKind::kLaneStores, *along.stride};
        return {AccessKind::kGather};
    }
    TUNED_UNREACHABLE("access pattern");
  }

  // The lanes of a stride-`stride` access read from the span starting at `first`: one load of
  // (lanes - 1) * stride + 1 elements (masked by each active lane's own element, so no lane
  // reads where it would not), then every stride-th element. The span lies between the first
  // and the last lane's elements, inside the buffer whenever they are. A masked span is
  // rounded up to a power of two with the extra elements masked off: X86 has masked loads of
  // those widths only and would load any other width element by element.
  llvm::Value* SpanLoad(llvm::Type* element, llvm::Value* first, int64_t stride, llvm::Align align) {
    const unsigned lanes = vector_->lanes;
    const unsigned elements = unsigned((int64_t(lanes) - 1) * stride + 1);
    const unsigned span = mask_ ? unsigned(llvm::PowerOf2Ceil(elements)) : elements;
    llvm::Type* span_type = llvm::FixedVectorType::get(element, span);
    llvm::Value* wide = nullptr;
    if (mask_) {
      // Span element p belongs to lane p / stride when p is a multiple of stride; the others
      // take a false lane of the second operand.
      llvm::SmallVector<int, 64> owner;
      for (unsigned p = 0; p < span; ++p) {
        owner.push_back(p < elements && p % stride == 0 ? int(p / stride) : int(lanes));
      }
      llvm::Value* none = llvm::ConstantInt::getFalse(llvm::FixedVectorType::get(b_.getInt1Ty(), lanes));
      llvm::Value* span_mask = b_.CreateShuffleVector(mask_, none, owner);
      wide = b_.CreateMaskedLoad(span_type, first, align, span_mask, llvm::Constant::getNullValue(span_type));
    } else {
      wide = b_.CreateAlignedLoad(span_type, first, align);
    }
    llvm::SmallVector<int, 16> picks;
    for (unsigned lane = 0; lane < lanes; ++lane) picks.push_back(int(lane * stride));
    return b_.CreateShuffleVector(wide, picks);
  }

  llvm::Value* AllLanes() {
    return llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(b_.getInt1Ty(), vector_->lanes));
  }

  llvm::Value* VisitLoad(const Load* op) override {
    const Buffer& buffer = op->buffer;
    llvm::Value* base = frame_.buffers.at(buffer.get());
    llvm::Type* element = StorageType(buffer->dtype);
    llvm::Align align = ElementAlign(element);
    Expr offset = FlatOffset(buffer->shape, op->indices, bounds_);
    llvm::Value* raw = nullptr;
    const AccessPlan plan = PlanAccess(offset, /*load=*/true);
    switch (plan.kind) {
      case AccessKind::kScalar: {
        llvm::Value* index = Emit(offset);
        if (IsVector(index)) {  // an index that loads a lane-dependent value
          raw = Gather(element, base, index, align);
        } else {
          raw = b_.CreateAlignedLoad(element, b_.CreateInBoundsGEP(element, base, index), align,
                                     buffer->name);
        }
        break;
      }
      case AccessKind::kContiguous: {
        llvm::Value* first = b_.CreateInBoundsGEP(element, base, EmitAtFirstLane(offset));
        llvm::Type* vt = llvm::FixedVectorType::get(element, vector_->lanes);
        if (mask_ && WholeVectorInStackBuffer(buffer.get(), offset)) {
          raw = b_.CreateSelect(mask_, b_.CreateAlignedLoad(vt, first, align, buffer->name),
                                llvm::Constant::getNullValue(vt));
        } else if (mask_) {
          raw = b_.CreateMaskedLoad(vt, first, align, mask_, llvm::Constant::getNullValue(vt));
        } else {
          PrefetchAhead(buffer.get(), element, first, offset);
          raw = b_.CreateAlignedLoad(vt, first, align, buffer->name);
        }
        break;
      }
      case AccessKind::kSpan:
        raw = SpanLoad(element, b_.CreateInBoundsGEP(element, base, EmitAtFirstLane(offset)), plan.stride, align);
        break;
      case AccessKind::kLaneStores:  // a store's plan only
      case AccessKind::kGather:
        raw = Gather(element, base, Widen(Emit(offset)), align);
        break;
      case AccessKind::kMaskedInvariant: {
        llvm::Value* index = Emit(offset);
        if (IsVector(index)) {  // an index that loads a lane-dependent value
          raw = Gather(element, base, index, align);
          break;
        }
        llvm::Value* any_lane = b_.CreateOrReduce(mask_);
        raw = Branch(
            any_lane,
            [&] { return b_.CreateAlignedLoad(element, b_.CreateInBoundsGEP(element, base, index), align); },
            [&] { return llvm::Constant::getNullValue(element); });
        break;
      }
    }
    return FromStorage(raw, buffer->dtype);
  }

  llvm::Value* Gather(llvm::Type* element, llvm::Value* base, llvm::Value* offsets,
                      llvm::Align align) {
    llvm::Value* ptrs = b_.CreateInBoundsGEP(element, base, offsets);
    llvm::Type* vt = llvm::FixedVectorType::get(element, VectorLanes(offsets));
    return b_.CreateMaskedGather(vt, ptrs, align, mask_ ? mask_ : AllLanes(),
                                 llvm::Constant::getNullValue(vt));
  }

  llvm::Value* FromStorage(llvm::Value* raw, DataType dtype) {
    if (dtype.is_bool()) return b_.CreateICmpNE(raw, llvm::Constant::getNullValue(raw->getType()));
    if (dtype.is_float() && dtype.bits == 16) {
      return b_.CreateFPExt(raw, ShapedLike(b_.getFloatTy(), raw));
    }
    return raw;
  }

  void VisitStore(const Store* op) override {
    const Buffer& buffer = op->buffer;
    llvm::Value* base = frame_.buffers.at(buffer.get());
    llvm::Type* element = StorageType(buffer->dtype);
    llvm::Align align = ElementAlign(element);
    llvm::Value* value = CastValue(Emit(op->value), op->value.type(), buffer->dtype);
    if (buffer->dtype.is_bool()) value = b_.CreateZExt(value, ShapedLike(element, value));
    Expr offset = FlatOffset(buffer->shape, op->indices, bounds_);
    const AccessPlan plan = PlanAccess(offset, /*load=*/false);
    AccessKind kind = plan.kind;
    // One element written under a lane mask: the scatter writes it from the active lanes.
    if (kind == AccessKind::kMaskedInvariant) kind = AccessKind::kGather;
    if (kind == AccessKind::kScalar) {
      // VectorizeBlocker keeps lane-invariant stores out of vector bodies.
      TUNED_CHECK(!IsVector(value)) << "vector value stored to one element of " << buffer->name;
      b_.CreateAlignedStore(value, b_.CreateInBoundsGEP(element, base, Emit(offset)), align);
      return;
    }
    value = Widen(value);
    if (kind == AccessKind::kContiguous) {
      llvm::Value* first = b_.CreateInBoundsGEP(element, base, EmitAtFirstLane(offset));
      if (mask_ && WholeVectorInStackBuffer(buffer.get(), offset)) {
        llvm::Value* old = b_.CreateAlignedLoad(value->getType(), first, align);
        b_.CreateAlignedStore(b_.CreateSelect(mask_, value, old), first, align);
      } else if (mask_) {
        b_.CreateMaskedStore(value, first, align, mask_);
      } else if (Streams(buffer.get(), offset)) {
        const uint64_t vector_bytes = vector_->lanes * module_.getDataLayout().getTypeAllocSize(element);
        llvm::StoreInst* store = b_.CreateAlignedStore(value, first, llvm::Align(vector_bytes));
        store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                           llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
        frame_.streamed = true;
      } else {
        b_.CreateAlignedStore(value, first, align);
      }
      return;
    }
    if (kind == AccessKind::kLaneStores) {
      llvm::Value* first = b_.CreateInBoundsGEP(element, base, EmitAtFirstLane(offset));
      for (unsigned lane = 0; lane < vector_->lanes; ++lane) {
        b_.CreateAlignedStore(b_.CreateExtractElement(value, uint64_t(lane)),
                              b_.CreateInBoundsGEP(element, first, b_.getInt64(plan.stride * lane)), align);
      }
      return;
    }
    llvm::Value* ptrs = b_.CreateInBoundsGEP(element, base, Widen(Emit(offset)));
    b_.CreateMaskedScatter(value, ptrs, align, mask_ ? mask_ : AllLanes());
  }

  // Before a vector load of an argument at `first` inside a loop annotated prefetch_ahead: a
  // prefetch of the element that many iterations of that loop ahead, where the load's address
  // moves with it by a constant stride. Rows of a softmax go to memory while the row before is
  // computed on (exp costs as much as the row's transfer), rather than one after the other.
  // A prefetch past the buffer's end does not fault.
  void PrefetchAhead(const BufferNode* buffer, llvm::Type* element, llvm::Value* first, const Expr& offset) {
    if (!prefetch_.loop.get() || !arguments_.count(buffer)) return;
    std::optional<int64_t> stride = analysis::StrideAlong(offset, prefetch_.loop, bounds_);
    if (!stride || *stride == 0) return;
    llvm::Value* ahead = b_.CreateGEP(element, first, b_.getInt64(*stride * prefetch_.iterations));
    b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {PtrType()},
                       {ahead, b_.getInt32(0) /* read */, b_.getInt32(3) /* keep in all caches */,
                        b_.getInt32(1) /* data */});
  }

  // Whether every lane of a contiguous vector access at `offset` lies inside a stack buffer of
  // the kernel, masked lanes included. Such a buffer is private to the call (and to its thread),
  // so a masked access may read all lanes and write back the inactive ones unchanged: plain
  // loads, stores and selects, which LLVM promotes to registers where masked loads and stores
  // keep a register tile's accumulators in memory (the edge tiles of a padded split).
  bool WholeVectorInStackBuffer(const BufferNode* buffer, const Expr& offset) {
    auto it = stack_buffers_.find(buffer);
    if (it == stack_buffers_.end()) return false;
    const Interval range = ConstBound(offset, bounds_);
    return range.lo >= 0 && range.hi < it->second;
  }

  // Whether a whole contiguous vector store at `offset` into `buffer` streams: the buffer is one
  // of streamed_outputs_, the vector is 16, 32 or 64 bytes and its first lane's offset a
  // multiple of its lanes (the buffer's base is aligned to kBufferAlign).
  bool Streams(const BufferNode* buffer, const Expr& offset) {
    if (!streamed_outputs_.count(buffer)) return false;
    const int64_t bytes = vector_->lanes * int64_t(buffer->dtype.bytes());
    if (bytes != 16 && bytes != 32 && bytes != 64) return false;
    const Expr at_first = Substitute(offset, {{vector_->var.get(), MakeInt(0, vector_->var->type)}});
    return std::gcd(analysis::KnownDivisor(at_first), vector_->base_divisor) % vector_->lanes == 0;
  }

  // Returns from the function being emitted; streaming stores are ordered before whatever
  // follows it (the caller or the parallel loop's join reading the output) by an sfence.
  void EndFunction() {
    if (frame_.streamed) b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
    b_.CreateRetVoid();
  }

  // ---- expressions ----

  llvm::Value* Emit(const Expr& e) { return VisitExpr(e); }

  llvm::Value* VisitIntImm(const IntImm* op) override {
    if (op->type.is_bool()) return b_.getInt1(op->value != 0);
    return llvm::ConstantInt::get(ScalarType(op->type), static_cast<uint64_t>(op->value), true);
  }
  llvm::Value* VisitFloatImm(const FloatImm* op) override {
    return llvm::ConstantFP::get(ScalarType(op->type), op->value);
  }
  llvm::Value* VisitVar(const VarNode* op) override { return frame_.vars.at(op); }
  llvm::Value* VisitNot(const Not* op) override { return b_.CreateNot(Emit(op->a)); }
  llvm::Value* VisitCast(const Cast* op) override {
    return CastValue(Emit(op->value), op->value.type(), op->type);
  }

  llvm::Value* CastValue(llvm::Value* v, DataType from, DataType to) {
    if (from == to) return v;
    llvm::Type* dst = ShapedLike(ScalarType(to), v);
    if (to.is_bool()) {
      llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
      return from.is_float() ? b_.CreateFCmpUNE(v, zero) : b_.CreateICmpNE(v, zero);
    }
    if (from.is_bool()) return to.is_float() ? b_.CreateUIToFP(v, dst) : b_.CreateZExt(v, dst);
    if (from.is_int() && to.is_int()) return b_.CreateSExtOrTrunc(v, dst);
    if (from.is_int()) return b_.CreateSIToFP(v, dst);
    if (to.is_int()) {
      // Truncate towards zero in 64 bits, then wrap to the width (as the interpreter does).
      llvm::Value* wide = b_.CreateFPToSI(v, ShapedLike(b_.getInt64Ty(), v));
      return b_.CreateSExtOrTrunc(wide, dst);
    }
    return b_.CreateFPCast(v, dst);
  }

  llvm::Value* FusedMulAdd(const Binary* mul, llvm::Value* addend, bool negate_product) {
    llvm::Value* x = Emit(mul->a);
    llvm::Value* y = Emit(mul->b);
    if (negate_product) x = b_.CreateFNeg(x);
    MatchLanes(x, y);
    MatchLanes(x, addend);
    MatchLanes(y, addend);
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {x, y, addend});
  }

  llvm::Value* VisitBinary(const Binary* op) override {
    DataType t = op->a.type();
    if (op->op == BinaryOp::kAnd || op->op == BinaryOp::kOr) return EmitLogical(op);
    if (std::optional<FmaContraction> fma = MatchFma(*op)) {
      llvm::Value* addend = Emit(*fma->addend);
      if (fma->negate_addend) addend = b_.CreateFNeg(addend);
      return FusedMulAdd(fma->mul, addend, fma->negate_product);
    }
    llvm::Value* a = Emit(op->a);
    llvm::Value* c = Emit(op->b);
    if (op->op == BinaryOp::kDiv && t.is_float() && IsVector(a) && !IsVector(c)) {
      // By a divisor uniform across the lanes: times its reciprocal, one scalar division that
      // LICM hoists with the divisor (a softmax's row sum), where a vector division costs as
      // much as a dozen multiplications. The quotient may differ from the exact one in the last bit.
      llvm::Value* reciprocal = b_.CreateFDiv(llvm::ConstantFP::get(c->getType(), 1.0), c);
      return b_.CreateFMul(a, b_.CreateVectorSplat(VectorLanes(a), reciprocal));
    }
    MatchLanes(a, c);
    if (t.is_float()) return EmitArithmetic(op->op, t, op->b, a, c);
    // Integer arithmetic is numbered by value within a block: an unrolled tile repeats the
    // index arithmetic of every access (a fused loop's floordiv and floormod in each of
    // thousands of loads), and emitting each once per block cut a 7x7 stem's IR to a fraction,
    // which LLVM's passes had spent seconds on.
    const IntegerKey key{b_.GetInsertBlock(), op->op, a, c};
    auto [it, inserted] = frame_.integer_values.try_emplace(key, nullptr);
    if (inserted) it->second = EmitArithmetic(op->op, t, op->b, a, c);
    return it->second;
  }

  // The instructions of `op` on emitted operands (`divisor`: the IR of the right operand).
  llvm::Value* EmitArithmetic(BinaryOp op, DataType t, const Expr& divisor, llvm::Value* a, llvm::Value* c) {
    const bool fp = t.is_float();
    const bool boolean = t.is_bool();
    switch (op) {
      case BinaryOp::kAdd: return fp ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
      case BinaryOp::kSub: return fp ? b_.CreateFSub(a, c) : b_.CreateSub(a, c);
      case BinaryOp::kMul: return fp ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
      case BinaryOp::kDiv: return fp ? b_.CreateFDiv(a, c) : b_.CreateSDiv(a, c);
      case BinaryOp::kFloorDiv:
        if (fp) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, c));
        return IntFloorDivMod(divisor, a, c, /*mod=*/false);
      case BinaryOp::kFloorMod:
        if (fp) {
          llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, c));
          return b_.CreateFSub(a, b_.CreateFMul(q, c));
        }
        return IntFloorDivMod(divisor, a, c, /*mod=*/true);
      // std::min(a, b) is (b < a) ? b : a and std::max(a, b) is (a < b) ? b : a.
      case BinaryOp::kMin:
        if (fp) return b_.CreateSelect(b_.CreateFCmpOLT(c, a), c, a);
        return b_.CreateBinaryIntrinsic(boolean ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, a, c);
      case BinaryOp::kMax:
        if (fp) return b_.CreateSelect(b_.CreateFCmpOLT(a, c), c, a);
        return b_.CreateBinaryIntrinsic(boolean ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, a, c);
      case BinaryOp::kEQ: return fp ? b_.CreateFCmpOEQ(a, c) : b_.CreateICmpEQ(a, c);
      case BinaryOp::kNE: return fp ? b_.CreateFCmpUNE(a, c) : b_.CreateICmpNE(a, c);
      case BinaryOp::kLT:
        return fp ? b_.CreateFCmpOLT(a, c) : boolean ? b_.CreateICmpULT(a, c) : b_.CreateICmpSLT(a, c);
      case BinaryOp::kLE:
        return fp ? b_.CreateFCmpOLE(a, c) : boolean ? b_.CreateICmpULE(a, c) : b_.CreateICmpSLE(a, c);
      case BinaryOp::kGT:
        return fp ? b_.CreateFCmpOGT(a, c) : boolean ? b_.CreateICmpUGT(a, c) : b_.CreateICmpSGT(a, c);
      case BinaryOp::kGE:
        return fp ? b_.CreateFCmpOGE(a, c) : boolean ? b_.CreateICmpUGE(a, c) : b_.CreateICmpSGE(a, c);
      case BinaryOp::kAnd:
      case BinaryOp::kOr: break;
    }
    TUNED_UNREACHABLE("binary op " << BinaryOpSymbol(op));
    return nullptr;
  }

  // Floor division / modulo from truncating sdiv / srem: the quotient is one less when the
  // remainder is non-zero and has the other sign than the divisor.
  llvm::Value* IntFloorDivMod(const Expr& divisor, llvm::Value* a, llvm::Value* c, bool mod) {
    llvm::Value* q = b_.CreateSDiv(a, c);
    llvm::Value* r = b_.CreateSRem(a, c);
    llvm::Value* zero = llvm::Constant::getNullValue(r->getType());
    llvm::Value* adjust = nullptr;
    const int64_t* constant = AsConstInt(divisor);
    if (constant && *constant > 0) {
      adjust = b_.CreateICmpSLT(r, zero);
    } else {
      adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, c), zero));
    }
    if (mod) return b_.CreateSelect(adjust, b_.CreateAdd(r, c), r);
    return b_.CreateSub(q, b_.CreateZExt(adjust, q->getType()));
  }

  llvm::Value* EmitLogical(const Binary* op) {
    const bool is_and = op->op == BinaryOp::kAnd;
    llvm::Value* a = Emit(op->a);
    if (!NeedsGuard(op->b)) {
      llvm::Value* c = Emit(op->b);
      MatchLanes(a, c);
      return is_and ? b_.CreateAnd(a, c) : b_.CreateOr(a, c);
    }
    if (IsVector(a)) {
      // Evaluate the right side only in the lanes where it decides the result.
      llvm::Value* saved = mask_;
      mask_ = AndMask(is_and ? a : b_.CreateNot(a));
      llvm::Value* c = Widen(Emit(op->b));
      mask_ = saved;
      return is_and ? b_.CreateAnd(a, c) : b_.CreateOr(a, c);
    }
    llvm::Value* decided = b_.getInt1(!is_and);
    return Branch(
        is_and ? a : b_.CreateNot(a), [&] { return Emit(op->b); }, [&] { return decided; });
  }

  llvm::Value* VisitSelect(const Select* op) override {
    llvm::Value* cond = Emit(op->cond);
    if (!NeedsGuard(op->true_value) && !NeedsGuard(op->false_value)) {
      llvm::Value* t = Emit(op->true_value);
      llvm::Value* f = Emit(op->false_value);
      MatchLanes(t, f);
      if (IsVector(cond)) {
        t = Widen(t);
        f = Widen(f);
      }
      return b_.CreateSelect(cond, t, f);
    }
    if (IsVector(cond)) {
      llvm::Value* saved = mask_;
      llvm::Value* true_mask = AndMask(cond);
      llvm::Value* false_mask = AndMask(b_.CreateNot(cond));
      mask_ = true_mask;
      llvm::Value* t = Widen(Emit(op->true_value));
      mask_ = false_mask;
      llvm::Value* f = Widen(Emit(op->false_value));
      mask_ = saved;
      return b_.CreateSelect(cond, t, f);
    }
    return Branch(
        cond, [&] { return Emit(op->true_value); }, [&] { return Emit(op->false_value); });
  }

  // if (cond) then_value() else else_value(), each evaluated only on its path; a scalar arm
  // meeting a vector arm is broadcast at the end of its block.
  llvm::Value* Branch(llvm::Value* cond, const std::function<llvm::Value*()>& then_value,
                      const std::function<llvm::Value*()>& else_value) {
    llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "sel.then", frame_.fn);
    llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx_, "sel.else", frame_.fn);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "sel.end", frame_.fn);
    b_.CreateCondBr(cond, then_bb, else_bb);
    b_.SetInsertPoint(then_bb);
    llvm::Value* t = then_value();
    llvm::BasicBlock* then_end = b_.GetInsertBlock();
    b_.SetInsertPoint(else_bb);
    llvm::Value* f = else_value();
    llvm::BasicBlock* else_end = b_.GetInsertBlock();
    if (IsVector(t) && !IsVector(f)) f = b_.CreateVectorSplat(VectorLanes(t), f);
    b_.CreateBr(done);
    b_.SetInsertPoint(then_end);
    if (IsVector(f) && !IsVector(t)) t = b_.CreateVectorSplat(VectorLanes(f), t);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    llvm::PHINode* phi = b_.CreatePHI(t->getType(), 2);
    phi->addIncoming(t, then_end);
    phi->addIncoming(f, else_end);
    return phi;
  }

  llvm::Value* VisitCall(const Call* op) override {
    DataType arg_type = op->args[0].type();
    llvm::Value* x = Emit(op->args[0]);
    // Half-precision math happens in float32.
    if (arg_type.bits == 16) x = b_.CreateFPExt(x, ShapedLike(b_.getFloatTy(), x));
    llvm::Value* result = nullptr;
    switch (op->op) {
      case Intrinsic::kExp: result = Exp(x); break;
      case Intrinsic::kLog: result = b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, x); break;
      case Intrinsic::kSqrt: result = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); break;
      case Intrinsic::kFabs: result = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); break;
      case Intrinsic::kTanh:
        result = Float32(x) ? internal::EmitTanhF32(b_, x) : CallLibm(x, "tanhf", "tanh");
        break;
      case Intrinsic::kErf:
        result = Float32(x) ? internal::EmitErfF32(b_, x) : CallLibm(x, "erff", "erf");
        break;
      case Intrinsic::kSigmoid: {
        llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
        llvm::Value* e = Exp(b_.CreateFNeg(x));
        result = b_.CreateFDiv(one, b_.CreateFAdd(one, e));
        break;
      }
    }
    TUNED_CHECK(result != nullptr) << "intrinsic " << IntrinsicName(op->op);
    llvm::Type* want = ShapedLike(ScalarType(op->type), result);
    return result->getType() == want ? result : b_.CreateFPCast(result, want);
  }

  static bool Float32(const llvm::Value* x) { return x->getType()->getScalarType()->isFloatTy(); }

  // float32 inline (vector_math_internal.h: no libm call per lane), float64 through LLVM.
  llvm::Value* Exp(llvm::Value* x) {
    if (Float32(x)) return internal::EmitExpF32(b_, x, avx512_);
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
  }

  // A libm function per lane (LLVM has no intrinsic for it).
  llvm::Value* CallLibm(llvm::Value* x, const char* float_name, const char* double_name) {
    llvm::Type* scalar = x->getType()->getScalarType();
    const char* name = scalar->isDoubleTy() ? double_name : float_name;
    llvm::FunctionCallee fn = module_.getOrInsertFunction(name, scalar, scalar);
    if (!IsVector(x)) return b_.CreateCall(fn, {x});
    llvm::Value* out = llvm::PoisonValue::get(x->getType());
    for (unsigned i = 0; i < VectorLanes(x); ++i) {
      llvm::Value* lane = b_.CreateCall(fn, {b_.CreateExtractElement(x, i)});
      out = b_.CreateInsertElement(out, lane, i);
    }
    return out;
  }

  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  const std::string cpu_;
  const std::string features_;
  const int num_threads_;
  const bool x86_;
  const bool avx512_;  // x86 with AVX-512F: vector_math may use its instructions
  const int64_t register_lanes_;  // float32 lanes of the target's vector registers
  std::string kernel_name_;
  int outlined_ = 0;
  std::unordered_set<const BufferNode*> streamed_outputs_;  // the kernel's outputs written streaming
  std::unordered_map<const BufferNode*, int64_t> stack_buffers_;  // stack arrays in scope: elements
  std::unordered_set<const BufferNode*> arguments_;  // the kernel's buffer arguments
  struct Prefetch {
    Var loop;  // the innermost loop annotated prefetch_ahead (none: undefined)
    int64_t iterations = 0;
  };
  Prefetch prefetch_;

  Frame frame_;
  const VectorScope* vector_ = nullptr;  // the vectorized loop being emitted, if any
  llvm::Value* mask_ = nullptr;  // active lanes (i1 vector); null: all lanes active
  int64_t auto_unroll_ = 0;      // auto_unroll_max_step of the innermost annotated loop
  VarBounds bounds_;             // constant bounds of the enclosing loop variables
};

}  // namespace

StatusOr<std::unique_ptr<llvm::Module>> BuildModule(llvm::LLVMContext& context,
                                                    const std::vector<LoweredFunc>& funcs,
                                                    const target::Target& target,
                                                    const CodegenOptions& options) {
  if (funcs.empty()) return InvalidArgumentError("no kernels to compile");
  std::unordered_set<std::string> names;
  // Each kernel, and its prepack entry where it has packed buffers.
  std::vector<LoweredFunc> kernels;
  for (const LoweredFunc& f : funcs) {
    kernels.push_back(f);
    if (f.prepack.defined()) kernels.push_back(lower::PrepackFunc(f));
  }
  for (const LoweredFunc& f : kernels) {
    TUNED_RETURN_IF_ERROR(CheckFunc(f));
    if (!names.insert(f.name).second || !names.insert(PackedName(f.name)).second) {
      return InvalidArgumentError("kernel name " + f.name + " is used twice");
    }
  }
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateTargetMachine(target));
  auto module = std::make_unique<llvm::Module>(funcs.front().name, context);
  module->setTargetTriple(tm->getTargetTriple().str());
  module->setDataLayout(tm->createDataLayout());
  int threads = options.num_threads > 0 ? options.num_threads : target.num_cores;
  CodeGen codegen(*module, target, threads);
  for (const LoweredFunc& f : kernels) codegen.AddKernel(f);
  std::string errors;
  llvm::raw_string_ostream stream(errors);
  if (llvm::verifyModule(*module, &stream)) {
    return InternalError("kernel " + funcs.front().name + ": generated LLVM IR is invalid: " +
                         errors.substr(0, 500));
  }
  return module;
}

}  // namespace tuned::codegen::internal
