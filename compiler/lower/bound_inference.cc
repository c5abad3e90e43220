// Bound inference: which region of its domain each stage computes, and where each intermediate
// buffer is allocated with which region.
//
// A stage at the root computes its whole domain. A stage computed at loop L of a consumer
// computes, per iteration of L, the union of what its consumers read inside L: their index
// expressions are evaluated as symbolic intervals, loops outside L (and L itself) fixed and
// loops inside L relaxed over their ranges. A stage computed at loop L of its producer (reverse)
// covers what the producer writes inside one iteration of L. Extents must be constants; when
// the symbolic extent is not, its constant upper bound over all loop ranges is used.

#include <algorithm>
#include <unordered_map>

#include "compiler/ir/ir_mutator.h"
#include "compiler/lower/lower_internal.h"

namespace tuned::lower {
namespace {

using ir::Expr;
using schedule::AttachKind;
using schedule::LoopRelKind;
using schedule::Stage;

using RelaxMap = std::unordered_map<const ir::VarNode*, ir::Interval>;

struct SymInterval {
  Expr min, max;
  bool ok = true;
  bool is_point() const { return min.same_as(max); }
};

SymInterval Point(const Expr& e) { return {e, e, true}; }

bool UsesRelaxed(const Expr& e, const RelaxMap& relax) {
  struct Finder : ir::IRVisitor {
    const RelaxMap* relax;
    bool found = false;
    void VisitVar(const ir::VarNode* v) override { found |= relax->count(v) > 0; }
  } finder;
  finder.relax = &relax;
  finder.Visit(e);
  return finder.found;
}

SymInterval EvalInterval(const Expr& e, const RelaxMap& relax) {
  if (const ir::VarNode* v = e.as<ir::VarNode>()) {
    auto it = relax.find(v);
    if (it == relax.end()) return Point(e);
    return {ir::MakeInt(it->second.lo, e.type()), ir::MakeInt(it->second.hi, e.type()), true};
  }
  const ir::Binary* op = e.as<ir::Binary>();
  if (op == nullptr || !UsesRelaxed(e, relax)) {
    if (!UsesRelaxed(e, relax)) return Point(e);
    return {Expr(), Expr(), false};
  }
  SymInterval a = EvalInterval(op->a, relax), b = EvalInterval(op->b, relax);
  if (!a.ok || !b.ok) return {Expr(), Expr(), false};
  const int64_t* cb = b.is_point() ? ir::AsConstInt(b.min) : nullptr;
  const int64_t* ca = a.is_point() ? ir::AsConstInt(a.min) : nullptr;
  switch (op->op) {
    case ir::BinaryOp::kAdd: return {a.min + b.min, a.max + b.max, true};
    case ir::BinaryOp::kSub: return {a.min - b.max, a.max - b.min, true};
    case ir::BinaryOp::kMul:
      if (ca) std::swap(a, b), std::swap(ca, cb);
      if (cb) {
        return *cb >= 0 ? SymInterval{a.min * *cb, a.max * *cb, true}
                        : SymInterval{a.max * *cb, a.min * *cb, true};
      }
      return {Expr(), Expr(), false};
    case ir::BinaryOp::kFloorDiv:
      if (cb && *cb > 0) return {ir::FloorDiv(a.min, *cb), ir::FloorDiv(a.max, *cb), true};
      return {Expr(), Expr(), false};
    case ir::BinaryOp::kFloorMod:
      if (cb && *cb > 0) {
        if (a.is_point()) return Point(ir::FloorMod(a.min, *cb));
        return {ir::MakeInt(0, e.type()), ir::MakeInt(*cb - 1, e.type()), true};
      }
      return {Expr(), Expr(), false};
    case ir::BinaryOp::kMin: return {ir::Min(a.min, b.min), ir::Min(a.max, b.max), true};
    case ir::BinaryOp::kMax: return {ir::Max(a.min, b.min), ir::Max(a.max, b.max), true};
    default: return {Expr(), Expr(), false};
  }
}

// Collects the index lists of every load of `buffer` in `e`.
std::vector<std::vector<Expr>> LoadsOf(const Expr& e, const ir::BufferNode* buffer) {
  struct Collector : ir::IRVisitor {
    const ir::BufferNode* buffer;
    std::vector<std::vector<Expr>> found;
    void VisitLoad(const ir::Load* op) override {
      if (op->buffer.get() == buffer) found.push_back(op->indices);
      IRVisitor::VisitLoad(op);
    }
  } collector;
  collector.buffer = buffer;
  collector.Visit(e);
  return collector.found;
}

class BoundInference {
 public:
  explicit BoundInference(LoweringContext& ctx) : ctx_(ctx), state_(ctx.state) {}

  Status Run() {
    for (int id : state_.order) {
      if (state_.stages[id].is_live()) TUNED_RETURN_IF_ERROR(Compute(id));
    }
    for (int id : state_.order) {
      if (state_.stages[id].is_live()) TUNED_RETURN_IF_ERROR(Place(id));
    }
    return Status::Ok();
  }

 private:
  Status Compute(int id) {
    StageInfo& info = ctx_.info[id];
    if (info.done) return Status::Ok();
    const Stage& st = state_.stages[id];
    if (info.in_progress) {
      return InvalidArgumentError("block " + st.name + " is computed inside itself");
    }
    info.in_progress = true;
    std::vector<Expr> mins;
    std::vector<int64_t> extents;
    for (const ir::Axis& a : st.axes) {
      mins.push_back(ir::MakeInt(0));
      extents.push_back(a.extent);
    }
    if (st.attach == AttachKind::kComputeAt) {
      TUNED_RETURN_IF_ERROR(RegionReadByConsumers(id, st.attach_stage, st.attach_loop, mins, extents));
    } else if (st.attach == AttachKind::kReverseComputeAt) {
      TUNED_RETURN_IF_ERROR(RegionWrittenByProducer(id, mins, extents));
    }
    for (const ir::Axis& a : st.reduce_axes) {
      mins.push_back(ir::MakeInt(0));
      extents.push_back(a.extent);
    }
    Finish(id, std::move(mins), std::move(extents));
    return Status::Ok();
  }

  void Finish(int id, std::vector<Expr> mins, std::vector<int64_t> extents) {
    StageInfo& info = ctx_.info[id];
    const Stage& st = state_.stages[id];
    info.domain_min = std::move(mins);
    info.domain_extent = std::move(extents);
    info.loop_extent = st.LoopExtents(info.domain_extent);
    info.loop_var.assign(st.loops.size(), nullptr);
    info.loop_value.assign(st.loops.size(), Expr());
    for (int l : st.leaves) {
      info.loop_var[l] = ir::MakeVar(st.name + "." + st.loops[l].name);
      info.loop_value[l] = Expr(info.loop_var[l]);
      ctx_.bounds[info.loop_var[l].get()] = {0, info.loop_extent[l] - 1};
    }
    for (auto it = st.rels.rbegin(); it != st.rels.rend(); ++it) {
      if (it->kind == LoopRelKind::kSplit) {
        info.loop_value[it->parent_or_outer] =
            info.loop_value[it->outer_or_inner] * it->factor + info.loop_value[it->inner_or_fused];
      } else {
        int64_t inner_extent = info.loop_extent[it->outer_or_inner];
        info.loop_value[it->parent_or_outer] = ir::FloorDiv(info.loop_value[it->inner_or_fused], inner_extent);
        info.loop_value[it->outer_or_inner] = ir::FloorMod(info.loop_value[it->inner_or_fused], inner_extent);
      }
    }
    for (int r = 0; r < st.num_root_loops(); ++r) {
      info.root_value.push_back(ir::Simplify(info.domain_min[r] + info.loop_value[r], ctx_.bounds));
    }
    info.in_progress = false;
    info.done = true;
  }

  // Every variable of loops inside leaf position `pos` of `stage`: its own inner leaves and all
  // loops of stages computed (transitively) at or inside that loop.
  void CollectRelaxed(int stage, int pos, RelaxMap& relax) const {
    const Stage& st = state_.stages[stage];
    const StageInfo& info = ctx_.info[stage];
    for (size_t p = size_t(pos + 1); p < st.leaves.size(); ++p) {
      int l = st.leaves[p];
      relax[info.loop_var[l].get()] = {0, info.loop_extent[l] - 1};
    }
    for (size_t i = 0; i < state_.stages.size(); ++i) {
      const Stage& child = state_.stages[i];
      if (!child.is_live() || child.attach_stage != stage || !ctx_.info[i].done) continue;
      if (child.attach != AttachKind::kComputeAt && child.attach != AttachKind::kReverseComputeAt) continue;
      // A block computed at the loop at `pos` runs inside it, so its loops vary too.
      if (st.LeafPosition(child.attach_loop) >= pos) CollectRelaxed(int(i), -1, relax);
    }
  }

  // A shared buffer serves every thread of a block, so the threadIdx-bound loops around its
  // attach point vary too: its region is what the whole block reads (storage scope above thread
  // rank). A local buffer belongs to one thread and keeps them fixed, like any outer loop.
  void RelaxEnclosingThreadLoops(int stage, int pos, RelaxMap& relax) const {
    for (int s = stage, p = pos;;) {
      const Stage& st = state_.stages[s];
      const StageInfo& info = ctx_.info[s];
      for (int q = 0; q <= p && q < int(st.leaves.size()); ++q) {
        int l = st.leaves[q];
        if (st.loops[l].kind == ir::ForKind::kThreadBinding && st.loops[l].thread_tag.rfind("threadIdx", 0) == 0) {
          relax[info.loop_var[l].get()] = {0, info.loop_extent[l] - 1};
        }
      }
      if (st.attach != AttachKind::kComputeAt && st.attach != AttachKind::kReverseComputeAt) return;
      p = state_.stages[st.attach_stage].LeafPosition(st.attach_loop);
      s = st.attach_stage;
    }
  }

  // Turns per-dimension intervals into region mins and constant extents.
  void ToRegion(const std::vector<SymInterval>& dims, const std::vector<int64_t>& full,
                std::vector<Expr>& mins, std::vector<int64_t>& extents) const {
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!dims[d].ok) {
        mins[d] = ir::MakeInt(0);
        extents[d] = full[d];
        continue;
      }
      Expr mn = ir::Simplify(dims[d].min, ctx_.bounds);
      Expr extent = ir::Simplify(dims[d].max - mn + 1, ctx_.bounds);
      ir::Interval bound = ir::ConstBound(extent, ctx_.bounds);
      if (!bound.bounded() || bound.hi < 1) {
        mins[d] = ir::MakeInt(0);
        extents[d] = full[d];
        continue;
      }
      mins[d] = mn;
      extents[d] = bound.hi;
    }
  }

  // The region of `id`'s buffer its consumers read in one iteration of loop `loop` of stage
  // `target` (where it is computed, or the tile its layout follows).
  Status RegionReadByConsumers(int id, int target, int loop, std::vector<Expr>& mins,
                               std::vector<int64_t>& extents) {
    const Stage& st = state_.stages[id];
    TUNED_RETURN_IF_ERROR(Compute(target));
    int pos = state_.stages[target].LeafPosition(loop);
    std::string where = "block " + st.name + (st.attach == AttachKind::kComputeAt ? " computed at" : " laid out by") +
                        " a loop of " + state_.stages[target].name;
    if (pos < 0) return InvalidArgumentError(where + ": the loop is no longer a leaf");
    std::vector<int> consumers = state_.ConsumersOf(id);
    for (int c : consumers) TUNED_RETURN_IF_ERROR(Compute(c));
    RelaxMap relax;
    CollectRelaxed(target, pos, relax);
    if (st.output->scope == ir::MemoryScope::kShared) RelaxEnclosingThreadLoops(target, pos, relax);
    std::vector<SymInterval> dims(st.axes.size());
    bool first = true;
    for (int c : consumers) {
      const Stage& cs = state_.stages[c];
      bool covered = c == target;
      for (int s = c; !covered && (state_.stages[s].attach == AttachKind::kComputeAt ||
                                   state_.stages[s].attach == AttachKind::kReverseComputeAt);) {
        if (state_.stages[s].attach_stage == target) {
          covered = state_.stages[target].LeafPosition(state_.stages[s].attach_loop) >= pos;
          break;
        }
        s = state_.stages[s].attach_stage;
      }
      if (!covered) return InvalidArgumentError(where + ": the loop does not cover consumer " + cs.name);
      ir::VarMap to_root;
      const StageInfo& ci = ctx_.info[c];
      for (size_t a = 0; a < cs.axes.size(); ++a) to_root[cs.axes[a].var.get()] = ci.root_value[a];
      for (size_t a = 0; a < cs.reduce_axes.size(); ++a) {
        to_root[cs.reduce_axes[a].var.get()] = ci.root_value[cs.axes.size() + a];
      }
      for (const std::vector<Expr>& indices : LoadsOf(cs.body, st.output.get())) {
        for (size_t d = 0; d < indices.size(); ++d) {
          SymInterval iv = EvalInterval(ir::Substitute(indices[d], to_root), relax);
          if (!iv.ok) {
            dims[d].ok = false;
          } else if (dims[d].ok) {
            dims[d] = first ? iv : SymInterval{ir::Min(dims[d].min, iv.min), ir::Max(dims[d].max, iv.max), true};
          }
        }
        first = false;
      }
    }
    if (first) return InvalidArgumentError(where + ": no consumer reads it there");
    std::vector<int64_t> full;
    for (const ir::Axis& a : st.axes) full.push_back(a.extent);
    ToRegion(dims, full, mins, extents);
    return Status::Ok();
  }

  // Whether the points a stage writes in one iteration of leaf position `pos` form a dense box:
  // per root axis, loops outside the position select a block and the loops inside cover it
  // completely. Strided or partial coverage (a fixed inner split part with a relaxed outer one,
  // a fused loop cut in the middle unless one of its parts runs once, an imperfect split below
  // the root) is not a box.
  // Whether the values past `loop`'s extent (an imperfect split of it runs them, guarded) lie
  // past its root loop's extent too: true for the outer part of a split, of a split, ... of a
  // root loop, whose region is then clipped by the root's extent; false for an inner part,
  // whose excess values would reach into the next outer iteration's part.
  static bool ExcessLeavesTheRoot(const Stage& st, int loop) {
    while (loop >= st.num_root_loops()) {
      const schedule::LoopRel* parent = nullptr;
      for (const schedule::LoopRel& rel : st.rels) {
        if (rel.kind == LoopRelKind::kSplit && rel.outer_or_inner == loop) parent = &rel;
      }
      if (parent == nullptr) return false;
      loop = parent->parent_or_outer;
    }
    return true;
  }

  bool WritesDenseRegion(int id, int pos) const {
    enum Cover { kFixed, kFull, kBlock, kBad };
    const Stage& st = state_.stages[id];
    const StageInfo& info = ctx_.info[id];
    std::vector<Cover> cover(st.loops.size(), kBad);
    for (size_t p = 0; p < st.leaves.size(); ++p) cover[st.leaves[p]] = int(p) > pos ? kFull : kFixed;
    for (auto it = st.rels.rbegin(); it != st.rels.rend(); ++it) {
      if (it->kind == LoopRelKind::kSplit) {
        Cover o = cover[it->outer_or_inner], i = cover[it->inner_or_fused];
        Cover c = kBad;
        if (o == kFixed && i == kFixed) c = kFixed;
        else if (o == kFull && i == kFull) c = kFull;
        else if ((o == kFixed || o == kBlock) && (i == kFull || (o == kFixed && i == kBlock))) c = kBlock;
        bool imperfect = info.loop_extent[it->outer_or_inner] * info.loop_extent[it->inner_or_fused] >
                         info.loop_extent[it->parent_or_outer];
        if (imperfect && c != kFixed && !ExcessLeavesTheRoot(st, it->parent_or_outer)) c = kBad;
        cover[it->parent_or_outer] = c;
      } else {
        Cover f = cover[it->inner_or_fused];
        Cover parts = f == kFixed || f == kFull ? f : kBad;
        cover[it->parent_or_outer] = cover[it->outer_or_inner] = parts;
        // A block of a fused loop one of whose parts runs once is a block of the other part.
        if (f == kBlock && info.loop_extent[it->outer_or_inner] == 1) {
          cover[it->parent_or_outer] = kBlock;
          cover[it->outer_or_inner] = kFull;
        } else if (f == kBlock && info.loop_extent[it->parent_or_outer] == 1) {
          cover[it->parent_or_outer] = kFull;
          cover[it->outer_or_inner] = kBlock;
        }
      }
    }
    for (size_t d = 0; d < st.axes.size(); ++d) {
      if (cover[d] == kBad) return false;
    }
    return true;
  }

  Status RegionWrittenByProducer(int id, std::vector<Expr>& mins, std::vector<int64_t>& extents) {
    const Stage& st = state_.stages[id];
    int producer = st.attach_stage;
    TUNED_RETURN_IF_ERROR(Compute(producer));
    const Stage& ps = state_.stages[producer];
    int pos = ps.LeafPosition(st.attach_loop);
    std::string where = "block " + st.name + " computed at a loop of its producer " + ps.name;
    if (pos < 0) return InvalidArgumentError(where + ": the loop is no longer a leaf");
    for (int p = 0; p <= pos; ++p) {
      if (ps.loops[ps.leaves[p]].is_reduce) {
        return InvalidArgumentError(where + ": the loop is inside reduction loop " +
                                    ps.loops[ps.leaves[p]].name);
      }
    }
    if (ps.axes.size() != st.axes.size()) return InvalidArgumentError(where + ": shapes differ");
    if (!WritesDenseRegion(producer, pos)) {
      return InvalidArgumentError(where + ": the producer does not write a dense box inside the loop");
    }
    RelaxMap relax;
    CollectRelaxed(producer, pos, relax);
    std::vector<SymInterval> dims;
    for (size_t d = 0; d < ps.axes.size(); ++d) {
      dims.push_back(EvalInterval(ctx_.info[producer].root_value[d], relax));
    }
    std::vector<int64_t> full;
    for (const ir::Axis& a : st.axes) full.push_back(a.extent);
    ToRegion(dims, full, mins, extents);
    return Status::Ok();
  }

  // block_layout: per dimension of `id`'s buffer, the extent of the blocks it is laid out in
  // (the region read in one iteration of the layout loop), 0 where that covers the dimension
  // whole. A block that does not divide its dimension leaves the last block partly unused: an
  // imperfect tile's region starts at a multiple of its extent all the same.
  StatusOr<std::vector<int64_t>> LayoutBlocks(int id) {
    const Stage& st = state_.stages[id];
    std::vector<Expr> mins(st.axes.size(), ir::MakeInt(0));
    std::vector<int64_t> extents;
    for (const ir::Axis& a : st.axes) extents.push_back(a.extent);
    TUNED_RETURN_IF_ERROR(RegionReadByConsumers(id, st.layout_stage, st.layout_loop, mins, extents));
    std::vector<int64_t> block(extents.size(), 0);
    for (size_t d = 0; d < extents.size(); ++d) {
      const int64_t full = st.axes[d].extent;
      if (extents[d] < full) block[d] = extents[d];
    }
    return block;
  }

  Status Place(int id) {
    const Stage& st = state_.stages[id];
    if (st.is_output) return Status::Ok();
    const StageInfo& info = ctx_.info[id];
    BufferPlacement placement;
    size_t dims = st.axes.size();
    std::vector<Expr> offset(info.domain_min.begin(), info.domain_min.begin() + dims);
    std::vector<int64_t> shape(info.domain_extent.begin(), info.domain_extent.begin() + dims);
    if (st.attach == AttachKind::kComputeAt) {
      placement.stage = st.attach_stage;
      placement.loop = st.attach_loop;
    } else {
      // A root stage whose consumers all sit inside one of its own loops keeps only the region
      // written in one iteration of that loop (e.g. a register tile read back by a cache_write
      // copy).
      std::vector<int> consumers = state_.ConsumersOf(id);
      bool all_inside = !consumers.empty();
      for (int c : consumers) {
        const Stage& cs = state_.stages[c];
        all_inside &= cs.attach == AttachKind::kReverseComputeAt && cs.attach_stage == id &&
                      cs.attach_loop == state_.stages[consumers[0]].attach_loop;
      }
      if (all_inside) {
        const StageInfo& ci = ctx_.info[consumers[0]];
        placement.stage = id;
        placement.loop = state_.stages[consumers[0]].attach_loop;
        offset.assign(ci.domain_min.begin(), ci.domain_min.begin() + dims);
        shape.assign(ci.domain_extent.begin(), ci.domain_extent.begin() + dims);
        if (st.is_reduction()) {
          int init = st.init_loop >= 0 ? st.LeafPosition(st.init_loop) : -1;
          if (init >= 0 && init <= st.LeafPosition(placement.loop)) {
            return InvalidArgumentError("block " + st.name + ": its reduction init is outside the "
                                        "loop its buffer is allocated in");
          }
        }
      } else {
        offset.assign(dims, ir::MakeInt(0));
        shape = st.output->shape;
        if (st.layout_stage >= 0) {
          TUNED_ASSIGN_OR_RETURN(placement.block, LayoutBlocks(id));
        }
      }
    }
    placement.allocated = ir::MakeBuffer(st.output->name, st.output->dtype, shape, st.output->scope);
    placement.offset = std::move(offset);
    ctx_.placements[st.output.get()] = std::move(placement);
    return Status::Ok();
  }

  LoweringContext& ctx_;
  const schedule::ScheduleState& state_;
};

}  // namespace

Status InferBounds(LoweringContext& ctx) {
  BoundInference inference(ctx);
  return inference.Run();
}

}  // namespace tuned::lower
