// Loop nest generation: each live stage becomes the nest of its leaf loops. Stages computed at
// a loop are emitted inside it (producers before the loop's body, reverse-attached consumers
// after it); a reduction gets an init nest before its first reduction loop (or where
// decompose_reduction put it); buffers placed at a loop are allocated around its body.

#include <algorithm>

#include "compiler/ir/ir_mutator.h"
#include "compiler/lower/lower_internal.h"

namespace tuned::lower {
namespace {

using ir::Expr;
using ir::Stmt;
using schedule::AttachKind;
using schedule::LoopRelKind;
using schedule::Stage;

// Redirects accesses of placed buffers to their allocation, shifted by the region's offset.
class PlacementRewriter : public ir::IRMutator {
 public:
  explicit PlacementRewriter(const LoweringContext& ctx) : ctx_(ctx) {}

 protected:
  Expr MutateLoad(const ir::Load* op, const Expr& self) override {
    std::vector<Expr> indices;
    bool changed = MutateIndices(op->indices, indices);
    auto it = ctx_.placements.find(op->buffer.get());
    if (it == ctx_.placements.end()) return changed ? ir::MakeLoad(op->buffer, indices) : self;
    return ir::MakeLoad(it->second.allocated, it->second.Locate(std::move(indices)));
  }

 private:
  const LoweringContext& ctx_;
};

Expr Combine(ir::ReduceKind kind, const Expr& acc, const Expr& value) {
  switch (kind) {
    case ir::ReduceKind::kMax: return ir::Max(acc, value);
    case ir::ReduceKind::kMin: return ir::Min(acc, value);
    default: return acc + value;
  }
}

class NestGenerator {
 public:
  explicit NestGenerator(LoweringContext& ctx) : ctx_(ctx), state_(ctx.state), rewriter_(ctx) {}

  Status Validate() const {
    for (int id : state_.order) {
      const Stage& st = state_.stages[id];
      if (!st.is_live()) continue;
      if (st.attach == AttachKind::kComputeAt || st.attach == AttachKind::kReverseComputeAt) {
        if (!state_.stages[st.attach_stage].is_live()) {
          return InvalidArgumentError("block " + st.name + " is computed at a loop of block " +
                                      state_.stages[st.attach_stage].name + ", which was inlined");
        }
      }
      if (st.is_reduction()) {
        int first_reduce = FirstReducePosition(st);
        if (InitPosition(st) > first_reduce) {
          return InvalidArgumentError("block " + st.name + ": its reduction init is inside reduction loop " +
                                      st.loops[st.leaves[first_reduce]].name);
        }
      }
    }
    return CheckReadsFollowWrites();
  }

  LoopNests Generate(bool prepack_constants) {
    const std::vector<bool> constant = prepack_constants ? ConstantStages() : std::vector<bool>(state_.stages.size());
    std::vector<Stmt> top, prepack;
    LoopNests nests;
    for (int id : state_.order) {
      const Stage& st = state_.stages[id];
      if (!st.is_live() || st.attach != AttachKind::kRoot) continue;
      if (constant[size_t(id)]) {
        prepack.push_back(GenLevel(id, 0, false));
        nests.packed.push_back(ctx_.placements.at(st.output.get()).allocated);
      } else {
        top.push_back(GenLevel(id, 0, false));
      }
    }
    nests.body = WrapAllocations(-1, -1, ir::MakeSeq(std::move(top)), constant);
    if (!prepack.empty()) nests.prepack = ir::MakeSeq(std::move(prepack));
    return nests;
  }

 private:
  // The root stages that read constant inputs only (directly or through other such stages),
  // write a buffer of their own and have nothing computed inside their loops: a weight's
  // packed copy, which the kernel's prepack entry computes once, before its calls.
  std::vector<bool> ConstantStages() const {
    std::vector<bool> constant(state_.stages.size());
    for (int id : state_.order) {  // producers first
      const Stage& st = state_.stages[id];
      auto placed = ctx_.placements.find(st.output.get());
      if (!st.is_live() || st.attach != AttachKind::kRoot || placed == ctx_.placements.end() ||
          placed->second.stage != -1) {
        continue;
      }
      std::vector<ir::Buffer> reads = state_.ReadBuffers(id);
      bool from_constants = !reads.empty();
      for (const ir::Buffer& b : reads) {
        const int producer = state_.ProducerOf(b.get());
        from_constants &= producer < 0 ? state_.workload->IsConstantInput(b.get()) : constant[size_t(producer)];
      }
      for (const Stage& other : state_.stages) {
        from_constants &= !(other.is_live() && other.attach != AttachKind::kRoot && other.attach_stage == id);
      }
      constant[size_t(id)] = from_constants;
    }
    return constant;
  }

  int RootAncestor(int id) const {
    while (state_.stages[id].attach == AttachKind::kComputeAt ||
           state_.stages[id].attach == AttachKind::kReverseComputeAt) {
      id = state_.stages[id].attach_stage;
    }
    return id;
  }

  // Whether `inner` runs inside `outer`'s loops after `outer` computed what it reads: the block
  // through which `inner` hangs under `outer` was placed there by reverse_compute_at.
  bool IsReverseAttachedUnder(int inner, int outer) const {
    for (int s = inner; state_.stages[s].attach == AttachKind::kComputeAt ||
                        state_.stages[s].attach == AttachKind::kReverseComputeAt;) {
      const Stage& st = state_.stages[s];
      if (st.attach_stage == outer) return st.attach == AttachKind::kReverseComputeAt;
      s = st.attach_stage;
    }
    return false;
  }

  int OrderPosition(int id) const {
    return int(std::find(state_.order.begin(), state_.order.end(), id) - state_.order.begin());
  }

  // Every consumer must run after its producer: inside the producer's loops (reverse attach),
  // inside the consumer loop the producer is computed at (checked by bound inference), or in a
  // later root nest.
  Status CheckReadsFollowWrites() const {
    for (int id : state_.order) {
      const Stage& st = state_.stages[id];
      if (!st.is_live() || st.attach == AttachKind::kComputeAt) continue;
      for (int c : state_.ConsumersOf(id)) {
        if (IsReverseAttachedUnder(c, id)) continue;
        if (OrderPosition(RootAncestor(id)) < OrderPosition(RootAncestor(c))) continue;
        return InvalidArgumentError("block " + state_.stages[c].name + " reads block " + st.name +
                                    " before it is computed");
      }
    }
    return Status::Ok();
  }

  static int FirstReducePosition(const Stage& st) {
    for (size_t p = 0; p < st.leaves.size(); ++p) {
      if (st.loops[st.leaves[p]].is_reduce) return int(p);
    }
    return int(st.leaves.size());
  }

  static int InitPosition(const Stage& st) {
    return st.init_loop >= 0 && st.LeafPosition(st.init_loop) >= 0 ? st.LeafPosition(st.init_loop)
                                                                    : FirstReducePosition(st);
  }

  Stmt GenLevel(int id, int pos, bool in_main) {
    const Stage& st = state_.stages[id];
    const StageInfo& info = ctx_.info[id];
    if (st.is_reduction() && !in_main && pos == InitPosition(st)) {
      return ir::MakeSeq({InitNest(id, pos), GenLevel(id, pos, true)});
    }
    if (pos == int(st.leaves.size())) return BodyStmt(id);
    int l = st.leaves[pos];
    std::vector<Stmt> body;
    for (int child : Attached(id, l, AttachKind::kComputeAt)) body.push_back(GenLevel(child, 0, false));
    body.push_back(GenLevel(id, pos + 1, in_main));
    for (int child : Attached(id, l, AttachKind::kReverseComputeAt)) body.push_back(GenLevel(child, 0, false));
    Stmt inner = WrapAllocations(id, l, ir::MakeSeq(std::move(body)));
    const schedule::Loop& loop = st.loops[l];
    return ir::MakeFor(info.loop_var[l], ir::MakeInt(0), ir::MakeInt(info.loop_extent[l]), loop.kind,
                       inner, loop.thread_tag, loop.auto_unroll_max_step, loop.prefetch_ahead);
  }

  std::vector<int> Attached(int stage, int loop, AttachKind kind) const {
    std::vector<int> found;
    for (int id : state_.order) {
      const Stage& st = state_.stages[id];
      if (st.is_live() && st.attach == kind && st.attach_stage == stage && st.attach_loop == loop) {
        found.push_back(id);
      }
    }
    return found;
  }

  // `skip`: stages whose buffers are not allocated here (the prepacked ones: arguments).
  Stmt WrapAllocations(int stage, int loop, Stmt body, const std::vector<bool>& skip = {}) const {
    // In reverse stage order, so that allocations read in stage order from the outside in.
    for (auto id = state_.order.rbegin(); id != state_.order.rend(); ++id) {
      auto it = ctx_.placements.find(state_.stages[*id].output.get());
      if (!state_.stages[*id].is_live() || it == ctx_.placements.end()) continue;
      if (!skip.empty() && skip[size_t(*id)]) continue;
      if (it->second.stage == stage && it->second.loop == loop) {
        body = ir::MakeAllocate(it->second.allocated, body);
      }
    }
    return body;
  }

  // Conditions under which an iteration of the stage's nest is a real point of its domain.
  std::vector<Expr> Predicates(int id, bool spatial_only) const {
    const Stage& st = state_.stages[id];
    const StageInfo& info = ctx_.info[id];
    std::vector<Expr> preds;
    for (const schedule::LoopRel& rel : st.rels) {
      if (rel.kind != LoopRelKind::kSplit) continue;
      if (spatial_only && st.loops[rel.parent_or_outer].is_reduce) continue;
      int64_t parent_extent = info.loop_extent[rel.parent_or_outer];
      if (info.loop_extent[rel.outer_or_inner] * info.loop_extent[rel.inner_or_fused] > parent_extent) {
        preds.push_back(info.loop_value[rel.parent_or_outer] < parent_extent);
      }
    }
    if (st.attach == AttachKind::kComputeAt || st.attach == AttachKind::kReverseComputeAt) {
      for (size_t d = 0; d < st.axes.size(); ++d) {
        preds.push_back(info.root_value[d] >= 0);
        preds.push_back(info.root_value[d] < st.axes[d].extent);
      }
    }
    std::vector<Expr> kept;
    for (const Expr& p : preds) {
      Expr simple = ir::Simplify(p, ctx_.bounds);
      const int64_t* value = ir::AsConstInt(simple);
      if (value == nullptr || *value == 0) kept.push_back(simple);
    }
    return kept;
  }

  static Stmt Guard(const std::vector<Expr>& preds, Stmt body) {
    if (preds.empty()) return body;
    Expr cond = preds[0];
    for (size_t i = 1; i < preds.size(); ++i) cond = cond && preds[i];
    return ir::MakeIfThenElse(cond, body);
  }

  // The stage's output access: placed buffers are region-sized and offset.
  std::pair<ir::Buffer, std::vector<Expr>> OutputAccess(int id, const ir::VarMap& rename) const {
    const Stage& st = state_.stages[id];
    const StageInfo& info = ctx_.info[id];
    std::vector<Expr> indices;
    for (size_t d = 0; d < st.axes.size(); ++d) indices.push_back(ir::Substitute(info.root_value[d], rename));
    auto it = ctx_.placements.find(st.output.get());
    if (it == ctx_.placements.end()) return {st.output, indices};
    return {it->second.allocated, it->second.Locate(std::move(indices))};
  }

  Stmt BodyStmt(int id) {
    const Stage& st = state_.stages[id];
    const StageInfo& info = ctx_.info[id];
    ir::VarMap to_root;
    for (size_t a = 0; a < st.axes.size(); ++a) to_root[st.axes[a].var.get()] = info.root_value[a];
    for (size_t a = 0; a < st.reduce_axes.size(); ++a) {
      to_root[st.reduce_axes[a].var.get()] = info.root_value[st.axes.size() + a];
    }
    Expr value = rewriter_.Mutate(ir::Substitute(st.body, to_root));
    auto [buffer, indices] = OutputAccess(id, {});
    if (st.is_reduction()) value = Combine(st.reduce, ir::MakeLoad(buffer, indices), value);
    return Guard(Predicates(id, false), ir::MakeStore(buffer, indices, value));
  }

  // out[spatial point] = init, over the spatial leaves from `pos` inwards (fresh variables, so
  // that the init nest and the main nest bind different loops).
  Stmt InitNest(int id, int pos) {
    const Stage& st = state_.stages[id];
    const StageInfo& info = ctx_.info[id];
    ir::VarMap rename;
    std::vector<std::pair<int, ir::Var>> loops;  // (loop id, fresh variable), outermost first
    for (size_t p = size_t(pos); p < st.leaves.size(); ++p) {
      int l = st.leaves[p];
      if (st.loops[l].is_reduce) continue;
      ir::Var fresh = ir::MakeVar(info.loop_var[l]->name + ".init");
      ctx_.bounds[fresh.get()] = ctx_.bounds[info.loop_var[l].get()];
      rename[info.loop_var[l].get()] = Expr(fresh);
      loops.emplace_back(l, fresh);
    }
    auto [buffer, indices] = OutputAccess(id, rename);
    std::vector<Expr> preds;
    for (const Expr& p : Predicates(id, true)) preds.push_back(ir::Substitute(p, rename));
    Stmt body = Guard(preds, ir::MakeStore(buffer, indices, ir::ReduceIdentity(st.reduce, st.body.type())));
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      const schedule::Loop& loop = st.loops[it->first];
      body = ir::MakeFor(it->second, ir::MakeInt(0), ir::MakeInt(info.loop_extent[it->first]),
                         loop.kind, body, loop.thread_tag, loop.auto_unroll_max_step, loop.prefetch_ahead);
    }
    return body;
  }

  LoweringContext& ctx_;
  const schedule::ScheduleState& state_;
  PlacementRewriter rewriter_;
};

}  // namespace

StatusOr<LoopNests> GenerateLoopNests(LoweringContext& ctx, bool prepack_constants) {
  NestGenerator generator(ctx);
  TUNED_RETURN_IF_ERROR(generator.Validate());
  return generator.Generate(prepack_constants);
}

}  // namespace tuned::lower
