// Barrier insertion. Walking a kernel's body in program order, `pending` holds the shared
// buffers read and written since the last barrier. Before a statement that reads a buffer
// written there (read-after-write) or writes one read there (write-after-read), a barrier goes
// in; at the end of a loop body, one goes in when the next iteration would do the same
// (the loop-carried case: the next tile's fill must wait until every thread read this one).
// A statement counts with all of its accesses (conservative: one barrier before a loop rather
// than one per iteration). Barriers are placed only where every thread of the block gets: not
// under a branch whose condition depends on the thread or on memory.

#include <set>

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/lower/gpu/gpu_internal.h"

namespace tuned::lower::gpu {
namespace {

using ir::Expr;
using ir::Stmt;

struct Accesses {
  std::set<const ir::BufferNode*> reads, writes;

  bool MustWaitBefore(const Accesses& next) const {
    for (const ir::BufferNode* b : next.reads) {
      if (writes.count(b)) return true;
    }
    for (const ir::BufferNode* b : next.writes) {
      if (reads.count(b)) return true;
    }
    return false;
  }
  void Add(const Accesses& other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
  }
  void Clear() { reads.clear(), writes.clear(); }
};

Accesses SharedAccesses(const Stmt& s) {
  struct Collector : ir::IRVisitor {
    Accesses found;
    void VisitLoad(const ir::Load* op) override {
      if (op->buffer->scope == ir::MemoryScope::kShared) found.reads.insert(op->buffer.get());
      IRVisitor::VisitLoad(op);
    }
    void VisitStore(const ir::Store* op) override {
      if (op->buffer->scope == ir::MemoryScope::kShared) found.writes.insert(op->buffer.get());
      IRVisitor::VisitStore(op);
    }
  } collector;
  collector.Visit(s);
  return collector.found;
}

// Whether all threads of a block agree on `cond`: it uses no threadIdx axis and loads nothing.
bool IsUniform(const Expr& cond, const std::set<const ir::VarNode*>& thread_vars) {
  struct Finder : ir::IRVisitor {
    const std::set<const ir::VarNode*>* thread_vars;
    bool varies = false;
    void VisitVar(const ir::VarNode* v) override { varies |= thread_vars->count(v) > 0; }
    void VisitLoad(const ir::Load*) override { varies = true; }
  } finder;
  finder.thread_vars = &thread_vars;
  finder.Visit(cond);
  return !finder.varies;
}

class BarrierInserter {
 public:
  BarrierInserter(const GpuKernel& kernel) : kernel_(kernel) {
    for (const ThreadAxis& axis : kernel.axes) {
      if (IsThreadIdx(axis.tag)) thread_vars_.insert(axis.var.get());
    }
  }

  Status status;

  // `divergent`: the condition of the innermost thread-dependent branch around `s`, if any.
  Stmt Insert(const Stmt& s, Accesses& pending, const Expr& divergent) {
    if (const ir::Seq* seq = s.as<ir::Seq>()) {
      std::vector<Stmt> out;
      for (const Stmt& c : seq->stmts) out.push_back(Insert(c, pending, divergent));
      return ir::MakeSeq(std::move(out));
    }
    if (s.as<ir::Barrier>()) {
      pending.Clear();
      return s;
    }
    Accesses all = SharedAccesses(s);
    std::vector<Stmt> out;
    if (pending.MustWaitBefore(all)) {
      out.push_back(Barrier(divergent, all));
      pending.Clear();
    }
    out.push_back(InsertInside(s, all, pending, divergent));
    return ir::MakeSeq(std::move(out));
  }

 private:
  Stmt InsertInside(const Stmt& s, const Accesses& all, Accesses& pending, const Expr& divergent) {
    if (all.reads.empty() && all.writes.empty()) return s;
    if (const ir::For* op = s.as<ir::For>()) {
      Stmt body = Insert(op->body, pending, divergent);
      const int64_t* extent = ir::AsConstInt(op->extent);
      if ((extent == nullptr || *extent > 1) && pending.MustWaitBefore(SharedAccesses(op->body))) {
        body = ir::MakeSeq({body, Barrier(divergent, all)});
        pending.Clear();
      }
      return ir::MakeFor(op->var, op->min, op->extent, op->kind, body, op->thread_tag,
                         op->auto_unroll_max_step, op->prefetch_ahead);
    }
    if (const ir::IfThenElse* op = s.as<ir::IfThenElse>()) {
      Expr inner = divergent.defined() || IsUniform(op->cond, thread_vars_) ? divergent : op->cond;
      Accesses else_pending = pending;
      Stmt then_case = Insert(op->then_case, pending, inner);
      Stmt else_case = op->else_case.defined() ? Insert(op->else_case, else_pending, inner) : Stmt();
      pending.Add(else_pending);
      return ir::MakeIfThenElse(op->cond, then_case, else_case);
    }
    if (const ir::Allocate* op = s.as<ir::Allocate>()) {
      return ir::MakeAllocate(op->buffer, Insert(op->body, pending, divergent));
    }
    pending.Add(all);  // a store
    return s;
  }

  Stmt Barrier(const Expr& divergent, const Accesses& what) {
    if (divergent.defined() && status.ok()) {
      std::set<std::string> names;
      for (const ir::BufferNode* b : what.reads) names.insert(b->name);
      for (const ir::BufferNode* b : what.writes) names.insert(b->name);
      std::string buffers;
      for (const std::string& n : names) buffers += (buffers.empty() ? "" : ", ") + n;
      status = InvalidArgumentError("kernel " + kernel_.name + ": shared " + buffers +
                                    " needs a barrier under the thread-dependent condition " +
                                    ir::ToString(divergent) + ", which not every thread reaches");
    }
    return ir::MakeBarrier();
  }

  const GpuKernel& kernel_;
  std::set<const ir::VarNode*> thread_vars_;
};

}  // namespace

StatusOr<Stmt> InsertBarriers(const GpuKernel& kernel) {
  BarrierInserter inserter(kernel);
  Accesses pending;
  Stmt body = inserter.Insert(kernel.body, pending, Expr());
  TUNED_RETURN_IF_ERROR(inserter.status);
  return body;
}

}  // namespace tuned::lower::gpu
