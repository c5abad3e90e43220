// Step 2b of GPU lowering (lower_gpu.h): cross-thread reductions. A reduction loop bound to a
// threadIdx axis has every thread of the block update the same output element: as written,
// a race. Here each such loop becomes a reduction in two phases, so that the threads share the
// work of one element (a row sum over 1024 threads instead of one):
//
//   X[i] = init                          for tx in [0, T) threadIdx.x:
//   for tx in [0, T) threadIdx.x:          acc = identity               (local, per thread)
//     for r ...: X[i] = X[i] + v    =>     for r ...: acc = acc + v
//                                          red[tx] = acc                (shared, per block)
//                                          if (tx < 4 && tx + 4 < T) red[tx] = red[tx] + red[tx + 4]
//                                          ...  (halving the stride down to 1: a tree)
//                                          if (tx == 0) X[i] = init + red[0]
//
// The barriers between the tree's steps come from the barrier step like any other (each step
// reads what the previous one wrote); every step is a statement every thread reaches, only its
// store is guarded. The identity (0, the lowest, the highest value) starts each partial, so the
// init is combined once, by the thread that writes the result.

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/simplify.h"
#include "compiler/lower/gpu/gpu_internal.h"

namespace tuned::lower::gpu {
namespace {

using ir::Expr;
using ir::Stmt;

bool SameIndices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ir::StructurallyEqual(a[i], b[i])) return false;
  }
  return true;
}

// The stores of `body` into global buffers whose indices do not use `var`: what every thread
// along `var` would write alike. (Local buffers are per thread; a shared one inside is another
// block's, filled by loops of its own bound to the same axis.)
std::vector<const ir::Store*> StoresIndependentOf(const Stmt& body, const ir::VarNode* var) {
  struct Finder : ir::IRVisitor {
    const ir::VarNode* var;
    std::vector<const ir::Store*> found;
    void VisitStore(const ir::Store* op) override {
      bool uses = false;
      for (const Expr& index : op->indices) uses = uses || ir::UsesVar(index, var);
      if (!uses && op->buffer->scope == ir::MemoryScope::kGlobal) found.push_back(op);
      ir::IRVisitor::VisitStore(op);
    }
  } finder;
  finder.var = var;
  finder.Visit(body);
  return finder.found;
}

// How an update `X[i] = X[i] op v` combines: kAdd, kMax or kMin (else nothing).
std::optional<ir::BinaryOp> CombinerOf(const ir::Store& update) {
  const auto* binary = update.value.as<ir::Binary>();
  if (binary == nullptr) return std::nullopt;
  if (binary->op != ir::BinaryOp::kAdd && binary->op != ir::BinaryOp::kMax && binary->op != ir::BinaryOp::kMin) {
    return std::nullopt;
  }
  const auto* acc = binary->a.as<ir::Load>();
  if (acc == nullptr || acc->buffer != update.buffer || !SameIndices(acc->indices, update.indices)) return std::nullopt;
  return binary->op;
}

Expr IdentityOf(ir::BinaryOp op, ir::DataType type) {
  switch (op) {
    case ir::BinaryOp::kMax: return ir::MakeLowest(type);
    case ir::BinaryOp::kMin: return ir::MakeHighest(type);
    default: return ir::MakeZero(type);
  }
}

// Redirects the reduced element X[i] to the thread's partial result.
class ToPartial : public ir::IRMutator {
 public:
  ToPartial(const ir::Store& update, ir::Buffer partial) : update_(update), partial_(std::move(partial)) {}

 protected:
  Expr MutateLoad(const ir::Load* op, const Expr& self) override {
    if (op->buffer == update_.buffer && SameIndices(op->indices, update_.indices)) {
      return ir::MakeLoad(partial_, {ir::MakeInt(0)});
    }
    return ir::IRMutator::MutateLoad(op, self);
  }
  Stmt MutateStore(const ir::Store* op, const Stmt& self) override {
    if (op->buffer == update_.buffer && SameIndices(op->indices, update_.indices)) {
      return ir::MakeStore(partial_, {ir::MakeInt(0)}, Mutate(op->value));
    }
    return ir::IRMutator::MutateStore(op, self);
  }

 private:
  const ir::Store& update_;
  const ir::Buffer partial_;
};

class CrossThreadReductions : public ir::IRMutator {
 public:
  Status status = Status::Ok();

 protected:
  Stmt MutateSeq(const ir::Seq* op, const Stmt& self) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt& s : op->stmts) {
      const auto* loop = s.as<ir::For>();
      const ir::Store* init = out.empty() ? nullptr : out.back().as<ir::Store>();
      std::vector<const ir::Store*> reduced = loop != nullptr ? ReducedStores(*loop) : std::vector<const ir::Store*>();
      if (!reduced.empty()) {
        StatusOr<Stmt> lowered = Lower(*loop, reduced, init);
        if (!lowered.ok()) {
          status = lowered.status();
          return self;
        }
        out.pop_back();  // the init: combined into the result by one thread
        out.push_back(*lowered);
        changed = true;
        continue;
      }
      Stmt mutated = Mutate(s);
      changed = changed || !mutated.same_as(s);
      out.push_back(mutated);
    }
    return changed ? ir::MakeSeq(std::move(out)) : self;
  }

  Stmt MutateFor(const ir::For* op, const Stmt& self) override {
    if (!ReducedStores(*op).empty()) {
      status = InvalidArgumentError("loop " + op->var->name + " (" + op->thread_tag +
                                    ") reduces across threads, but its reduction's init is not right before it");
      return self;
    }
    return ir::IRMutator::MutateFor(op, self);
  }

 private:
  // The stores every thread along `loop` updates alike, when it is a threadIdx loop reducing
  // across threads (none otherwise). A loop of one iteration has no other thread to combine
  // with (its index may not name it at all once simplified).
  static std::vector<const ir::Store*> ReducedStores(const ir::For& loop) {
    const int64_t* extent = ir::AsConstInt(loop.extent);
    if (loop.kind != ir::ForKind::kThreadBinding || loop.thread_tag.rfind("threadIdx.", 0) != 0 ||
        (extent != nullptr && *extent <= 1)) {
      return {};
    }
    return StoresIndependentOf(loop.body, loop.var.get());
  }

  StatusOr<Stmt> Lower(const ir::For& loop, const std::vector<const ir::Store*>& stores, const ir::Store* init) {
    const std::string where = "cross-thread reduction over " + loop.var->name + " (" + loop.thread_tag + ")";
    const ir::Store& update = *stores.front();
    for (const ir::Store* s : stores) {
      if (s->buffer != update.buffer || !SameIndices(s->indices, update.indices)) {
        return InvalidArgumentError(where + ": it updates more than one element of " + update.buffer->name);
      }
    }
    std::optional<ir::BinaryOp> combine = CombinerOf(update);
    if (!combine) return InvalidArgumentError(where + ": " + update.buffer->name + " is not updated by +, max or min");
    if (init == nullptr || init->buffer != update.buffer || !SameIndices(init->indices, update.indices)) {
      return InvalidArgumentError(where + ": the init of " + update.buffer->name + " is not right before the loop");
    }
    const int64_t* threads = ir::AsConstInt(loop.extent);
    const int64_t* first = ir::AsConstInt(loop.min);
    if (threads == nullptr || first == nullptr || *first != 0) {
      return InvalidArgumentError(where + ": the loop's bounds are not constant from 0");
    }
    const ir::DataType type = update.buffer->dtype;
    const std::string base = update.buffer->name;
    ir::Buffer partial = ir::MakeBuffer(base + "_partial", type, {1}, ir::MemoryScope::kLocal);
    ir::Buffer shared = ir::MakeBuffer(base + "_shared", type, {*threads}, ir::MemoryScope::kShared);
    const Expr tx = ir::AsExpr(loop.var);
    auto combined = [&](Expr a, Expr b) { return ir::MakeBinary(*combine, std::move(a), std::move(b)); };

    std::vector<Stmt> body;
    body.push_back(ir::MakeStore(partial, {ir::MakeInt(0)}, IdentityOf(*combine, type)));
    body.push_back(ToPartial(update, partial).Mutate(loop.body));
    body.push_back(ir::MakeStore(shared, {tx}, ir::MakeLoad(partial, {ir::MakeInt(0)})));
    int64_t span = 1;
    while (span < *threads) span *= 2;
    for (int64_t stride = span / 2; stride >= 1; stride /= 2) {
      Expr guard = tx < ir::MakeInt(stride);
      if (stride * 2 > *threads) guard = guard && (tx + ir::MakeInt(stride) < ir::MakeInt(*threads));
      body.push_back(ir::MakeIfThenElse(
          ir::Simplify(guard),
          ir::MakeStore(shared, {tx}, combined(ir::MakeLoad(shared, {tx}), ir::MakeLoad(shared, {tx + ir::MakeInt(stride)})))));
    }
    body.push_back(ir::MakeIfThenElse(ir::Eq(tx, ir::MakeInt(0)),
                                      ir::MakeStore(update.buffer, update.indices,
                                                    combined(init->value, ir::MakeLoad(shared, {ir::MakeInt(0)})))));
    Stmt per_thread = ir::MakeAllocate(partial, ir::MakeSeq(std::move(body)));
    Stmt bound = ir::MakeFor(loop.var, loop.min, loop.extent, loop.kind, per_thread, loop.thread_tag,
                             loop.auto_unroll_max_step, loop.prefetch_ahead);
    return ir::MakeAllocate(shared, bound);
  }
};

}  // namespace

StatusOr<LoweredFunc> LowerCrossThreadReductions(LoweredFunc func) {
  CrossThreadReductions pass;
  ir::Stmt body = pass.Mutate(func.body);
  TUNED_RETURN_IF_ERROR(pass.status);
  func.body = std::move(body);
  return func;
}

}  // namespace tuned::lower::gpu
