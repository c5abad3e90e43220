// The host/device split: the loop program's root nests become kernels, launched in order.
// Global buffers allocated at the top are intermediates between kernels; in each nest, every
// thread-bound loop becomes the kernel's axis of its tag (all loops of one tag must agree on the
// extent), and shared buffers move to kernel scope.

#include <map>
#include <set>

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/simplify.h"
#include "compiler/lower/gpu/gpu_internal.h"

namespace tuned::lower::gpu {
namespace {

using ir::Expr;
using ir::Stmt;

const char* const kTagOrder[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z",
                                 "threadIdx.x", "threadIdx.y", "threadIdx.z"};

// Replaces thread-bound loops by their axis variable and takes shared allocations out. An axis
// is as long as its longest loop; every blockIdx loop of an axis must have its extent (a grid is
// one size), a shorter threadIdx loop is guarded.
class KernelBuilder : public ir::IRMutator {
 public:
  explicit KernelBuilder(std::string kernel) : kernel_(std::move(kernel)) {}

  void CollectAxes(const Stmt& s) {
    struct Collector : ir::IRVisitor {
      KernelBuilder* self;
      void VisitFor(const ir::For* op) override {
        if (op->kind == ir::ForKind::kThreadBinding) self->AddLoop(op);
        IRVisitor::VisitFor(op);
      }
    } collector;
    collector.self = this;
    collector.Visit(s);
  }

  Status status;
  std::map<std::string, ThreadAxis> axes;
  std::map<std::string, std::string> axis_loop;  // tag -> first loop bound to it (for messages)
  std::vector<ir::Buffer> shared;

 protected:
  Stmt MutateFor(const ir::For* op, const Stmt& self) override {
    if (op->kind != ir::ForKind::kThreadBinding) return IRMutator::MutateFor(op, self);
    const ThreadAxis& axis = axes.at(op->thread_tag);
    const int64_t extent = *ir::AsConstInt(op->extent);
    Stmt body = op->body;
    // A loop shorter than its axis runs on the first `extent` threads of it. Where the body
    // touches shared memory, the guard moves down to its stores, so that the barriers it may
    // need stay where every thread reaches them (and so that a shared block inside, filled by
    // the whole axis, is not cut short).
    if (extent < axis.extent) {
      Expr guard = Expr(axis.var) < extent;
      body = TouchesShared(body) ? SinkGuard(body, guard, op->thread_tag) : ir::MakeIfThenElse(guard, body);
    }
    return Mutate(ir::Substitute(body, {{op->var.get(), op->min + Expr(axis.var)}}));
  }

  static bool TouchesShared(const Stmt& s) {
    struct Finder : ir::IRVisitor {
      bool found = false;
      void VisitLoad(const ir::Load* op) override {
        found |= op->buffer->scope == ir::MemoryScope::kShared;
        IRVisitor::VisitLoad(op);
      }
      void VisitStore(const ir::Store* op) override {
        found |= op->buffer->scope == ir::MemoryScope::kShared;
        IRVisitor::VisitStore(op);
      }
    } finder;
    finder.Visit(s);
    return finder.found;
  }

  // `if (guard) s` with the condition on each store instead: the same program, since loop
  // extents and branch conditions here never depend on what a guarded store writes.
  // A loop inside bound to the same axis runs on its own threads: the guard stops there.
  static Stmt SinkGuard(const Stmt& s, const Expr& guard, const std::string& tag) {
    if (const ir::Seq* op = s.as<ir::Seq>()) {
      std::vector<Stmt> stmts;
      for (const Stmt& c : op->stmts) stmts.push_back(SinkGuard(c, guard, tag));
      return ir::MakeSeq(std::move(stmts));
    }
    if (const ir::For* op = s.as<ir::For>()) {
      if (op->kind == ir::ForKind::kThreadBinding && op->thread_tag == tag) return s;
      return ir::MakeFor(op->var, op->min, op->extent, op->kind, SinkGuard(op->body, guard, tag), op->thread_tag,
                         op->auto_unroll_max_step, op->prefetch_ahead);
    }
    if (const ir::Allocate* op = s.as<ir::Allocate>()) {
      return ir::MakeAllocate(op->buffer, SinkGuard(op->body, guard, tag));
    }
    if (const ir::IfThenElse* op = s.as<ir::IfThenElse>()) {
      return ir::MakeIfThenElse(op->cond, SinkGuard(op->then_case, guard, tag),
                                op->else_case.defined() ? SinkGuard(op->else_case, guard, tag) : Stmt());
    }
    if (s.as<ir::Store>()) return ir::MakeIfThenElse(guard, s);
    return s;
  }

  Stmt MutateAllocate(const ir::Allocate* op, const Stmt& self) override {
    if (op->buffer->scope == ir::MemoryScope::kGlobal) {
      Fail("global buffer " + op->buffer->name + " is allocated inside the kernel");
      return self;
    }
    if (op->buffer->scope != ir::MemoryScope::kShared) return IRMutator::MutateAllocate(op, self);
    shared.push_back(op->buffer);
    return Mutate(op->body);
  }

 private:
  void AddLoop(const ir::For* op) {
    const int64_t* extent = ir::AsConstInt(op->extent);
    if (extent == nullptr) {
      Fail("loop " + op->var->name + " bound to " + op->thread_tag + " has no constant extent");
      return;
    }
    auto it = axes.find(op->thread_tag);
    if (it == axes.end()) {
      axes.emplace(op->thread_tag, ThreadAxis{op->thread_tag, ir::MakeVar(op->thread_tag), *extent});
      axis_loop[op->thread_tag] = op->var->name;
    } else if (it->second.extent != *extent && !IsThreadIdx(op->thread_tag)) {
      Fail("inconsistent extents of " + op->thread_tag + ": " + std::to_string(it->second.extent) +
           " (loop " + axis_loop[op->thread_tag] + ") and " + std::to_string(*extent) + " (loop " +
           op->var->name + "); every loop bound to one blockIdx axis needs the same extent");
    } else if (*extent > it->second.extent) {
      it->second.extent = *extent;
      axis_loop[op->thread_tag] = op->var->name;
    }
  }
  void Fail(const std::string& message) {
    if (status.ok()) status = InvalidArgumentError("kernel " + kernel_ + ": " + message);
  }
  std::string kernel_;
};

// Global buffers a kernel loads and stores, in the order of `order`.
void CollectParams(const Stmt& body, const std::vector<ir::Buffer>& order, GpuKernel& kernel) {
  struct Collector : ir::IRVisitor {
    std::set<const ir::BufferNode*> used, written;
    void VisitLoad(const ir::Load* op) override {
      used.insert(op->buffer.get());
      IRVisitor::VisitLoad(op);
    }
    void VisitStore(const ir::Store* op) override {
      used.insert(op->buffer.get());
      written.insert(op->buffer.get());
      IRVisitor::VisitStore(op);
    }
  } collector;
  collector.Visit(body);
  for (const ir::Buffer& b : order) {
    if (collector.used.count(b.get())) kernel.params.push_back(b);
    if (collector.written.count(b.get())) kernel.written.push_back(b);
  }
}

}  // namespace

StatusOr<GpuProgram> SplitDevice(const LoweredFunc& func) {
  GpuProgram program;
  program.name = func.name;
  program.args = func.args;
  Stmt body = func.body;
  while (const ir::Allocate* alloc = body.as<ir::Allocate>()) {
    if (alloc->buffer->scope != ir::MemoryScope::kGlobal) {
      return InvalidArgumentError("buffer " + alloc->buffer->name + " (" +
                                  ir::MemoryScopeName(alloc->buffer->scope) +
                                  " scope) would live outside every kernel: compute its block at a "
                                  "loop inside the kernel that reads it");
    }
    program.intermediates.push_back(alloc->buffer);
    body = alloc->body;
  }
  std::vector<Stmt> nests;
  if (const ir::Seq* seq = body.as<ir::Seq>()) nests = seq->stmts;
  else nests.push_back(body);
  std::vector<ir::Buffer> order = program.args;
  order.insert(order.end(), program.intermediates.begin(), program.intermediates.end());
  for (size_t k = 0; k < nests.size(); ++k) {
    GpuKernel kernel;
    kernel.name = nests.size() == 1 ? func.name : func.name + "_" + std::to_string(k);
    KernelBuilder builder(kernel.name);
    builder.CollectAxes(nests[k]);
    TUNED_RETURN_IF_ERROR(builder.status);
    Stmt spmd = builder.Mutate(nests[k]);
    TUNED_RETURN_IF_ERROR(builder.status);
    if (builder.axes.empty()) {
      return InvalidArgumentError("kernel " + kernel.name + " has no loop bound to blockIdx/threadIdx");
    }
    for (const char* tag : kTagOrder) {
      auto it = builder.axes.find(tag);
      if (it == builder.axes.end()) continue;
      (IsThreadIdx(tag) ? kernel.block : kernel.grid)[size_t(TagDimension(tag))] = it->second.extent;
      kernel.axes.push_back(it->second);
    }
    ir::VarBounds bounds;
    for (const ThreadAxis& axis : kernel.axes) bounds[axis.var.get()] = {0, axis.extent - 1};
    kernel.body = ir::Simplify(spmd, bounds);
    kernel.shared = builder.shared;
    for (const ir::Buffer& b : kernel.shared) kernel.shared_bytes += b->num_elements() * b->dtype.bytes();
    CollectParams(kernel.body, order, kernel);
    program.kernels.push_back(std::move(kernel));
  }
  return program;
}

Expr FlatIndex(const ir::Buffer& buffer, const std::vector<Expr>& indices) {
  Expr flat = ir::MakeInt(0);
  for (size_t d = 0; d < indices.size(); ++d) flat = flat * buffer->shape[d] + indices[d];
  return ir::Simplify(flat);
}

bool IsThreadIdx(const std::string& tag) { return tag.rfind("threadIdx", 0) == 0; }

int TagDimension(const std::string& tag) { return tag.back() - 'x'; }

}  // namespace tuned::lower::gpu
