// Primitives that restructure or annotate the loops of one block: split, fuse, reorder,
// parallel, vectorize, unroll, bind, annotate.

#include <algorithm>
#include <set>

#include "compiler/schedule/nesting_checks.h"
#include "compiler/schedule/schedule.h"

namespace tuned::schedule {
namespace {

// A loop that a primitive may transform: a current leaf of a live block.
StatusOr<std::pair<int, int>> LeafLoop(const ScheduleState& state, std::pair<int, int> sl,
                                       const char* primitive) {
  auto [stage, loop] = sl;
  if (loop < 0) {
    return InvalidArgumentError(std::string(primitive) + ": the root or inline location is not a loop");
  }
  const Stage& st = state.stages[stage];
  if (!st.is_live()) {
    return InvalidArgumentError(std::string(primitive) + ": block " + st.name + " was inlined");
  }
  if (st.LeafPosition(loop) < 0) {
    return InvalidArgumentError(std::string(primitive) + ": loop " + st.loops[loop].name +
                                " of block " + st.name + " was already split or fused");
  }
  return sl;
}

// Blocks computed at `loop` of `stage`.
std::vector<int> AttachedAt(const ScheduleState& state, int stage, int loop) {
  std::vector<int> found;
  for (size_t i = 0; i < state.stages.size(); ++i) {
    const Stage& st = state.stages[i];
    if (st.is_live() && st.attach_stage == stage && st.attach_loop == loop &&
        (st.attach == AttachKind::kComputeAt || st.attach == AttachKind::kReverseComputeAt)) {
      found.push_back(int(i));
    }
  }
  return found;
}

// Blocks laid out in the tiles of `loop` of `stage` (block_layout).
std::vector<int> LaidOutAt(const ScheduleState& state, int stage, int loop) {
  std::vector<int> found;
  for (size_t i = 0; i < state.stages.size(); ++i) {
    const Stage& st = state.stages[i];
    if (st.is_live() && st.layout_stage == stage && st.layout_loop == loop) found.push_back(int(i));
  }
  return found;
}

}  // namespace

StatusOr<std::vector<LoopRV>> Schedule::Split(LoopRV loop_rv, const std::vector<Factor>& factors) {
  TUNED_ASSIGN_OR_RETURN(auto resolved, ResolveLoop(loop_rv));
  TUNED_ASSIGN_OR_RETURN(auto sl, LeafLoop(state_, resolved, "split"));
  auto [stage, loop] = sl;
  Stage& st = state_.stages[stage];
  std::string where = "split of loop " + st.loops[loop].name + " of block " + st.name;
  if (factors.size() < 2) return InvalidArgumentError(where + ": needs at least 2 factors");
  int64_t extent = st.LoopExtents(st.RootExtents())[loop];
  std::vector<int64_t> values(factors.size(), 0);
  std::vector<TraceArg> inputs = {TraceArg::RV(loop_rv.id)};
  int inferred = -1;
  int64_t product = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (std::holds_alternative<std::monostate>(factors[i])) {
      if (inferred >= 0) return InvalidArgumentError(where + ": more than one factor is inferred");
      inferred = int(i);
      inputs.push_back(TraceArg::None());
      continue;
    }
    if (const int64_t* v = std::get_if<int64_t>(&factors[i])) {
      values[i] = *v;
      inputs.push_back(TraceArg::Int(*v));
    } else {
      IntRV rv = std::get<IntRV>(factors[i]);
      if (rv.id >= rvs_.size() || rvs_[rv.id].kind != RVValue::Kind::kInt) {
        return InvalidArgumentError(where + ": factor v" + std::to_string(rv.id) + " is not an integer");
      }
      values[i] = rvs_[rv.id].value;
      inputs.push_back(TraceArg::RV(rv.id));
    }
    if (values[i] < 1) {
      return InvalidArgumentError(where + ": factor " + std::to_string(values[i]) + " is not positive");
    }
    product *= values[i];
  }
  if (inferred >= 0) {
    values[inferred] = (extent + product - 1) / product;
  } else if (product < extent) {
    return InvalidArgumentError(where + ": factors multiply to " + std::to_string(product) +
                                ", loop extent is " + std::to_string(extent));
  }

  // Split the innermost factor off first; what remains outside is split again.
  const std::string base = st.loops[loop].name;
  const bool is_reduce = st.loops[loop].is_reduce;
  std::vector<int> new_loops(values.size());
  int current = loop;
  for (size_t i = values.size() - 1; i >= 1; --i) {
    int outer = int(st.loops.size());
    st.loops.push_back({i == 1 ? base + "_0" : base + "_o" + std::to_string(i), is_reduce});
    int inner = int(st.loops.size());
    st.loops.push_back({base + "_" + std::to_string(i), is_reduce});
    st.rels.push_back({LoopRelKind::kSplit, current, outer, inner, values[i]});
    new_loops[i] = inner;
    current = outer;
  }
  new_loops[0] = current;
  int pos = st.LeafPosition(loop);
  st.leaves.erase(st.leaves.begin() + pos);
  st.leaves.insert(st.leaves.begin() + pos, new_loops.begin(), new_loops.end());
  // Whatever was inside the loop is now inside its innermost part; an init nest placed before
  // it goes before the outermost part.
  for (int child : AttachedAt(state_, stage, loop)) state_.stages[child].attach_loop = new_loops.back();
  // One iteration of the loop is one of its outermost part: a layout keeps its blocks.
  for (int laid_out : LaidOutAt(state_, stage, loop)) state_.stages[laid_out].layout_loop = new_loops.front();
  if (st.init_loop == loop) st.init_loop = new_loops.front();

  std::vector<LoopRV> outs;
  std::vector<uint32_t> ids;
  for (int l : new_loops) {
    outs.push_back({NewRV({RVValue::Kind::kLoop, stage, l})});
    ids.push_back(outs.back().id);
  }
  Record(InstKind::kSplit, std::move(inputs)).outputs = ids;
  return outs;
}

StatusOr<LoopRV> Schedule::Fuse(const std::vector<LoopRV>& loop_rvs) {
  if (loop_rvs.size() < 2) return InvalidArgumentError("fuse: needs at least 2 loops");
  std::vector<int> loops;
  int stage = -1;
  for (LoopRV rv : loop_rvs) {
    TUNED_ASSIGN_OR_RETURN(auto resolved, ResolveLoop(rv));
    TUNED_ASSIGN_OR_RETURN(auto sl, LeafLoop(state_, resolved, "fuse"));
    if (stage >= 0 && sl.first != stage) {
      return InvalidArgumentError("fuse: loops " + LoopName(stage, loops[0]) + " and " +
                                  LoopName(sl.first, sl.second) + " are in different blocks");
    }
    stage = sl.first;
    loops.push_back(sl.second);
  }
  Stage& st = state_.stages[stage];
  int first = st.LeafPosition(loops[0]);
  for (size_t i = 0; i < loops.size(); ++i) {
    if (st.LeafPosition(loops[i]) != first + int(i)) {
      return InvalidArgumentError("fuse: loops of block " + st.name +
                                  " must be adjacent and given outermost first");
    }
    if (st.loops[loops[i]].is_reduce != st.loops[loops[0]].is_reduce) {
      return InvalidArgumentError("fuse: loops " + st.loops[loops[0]].name + " and " +
                                  st.loops[loops[i]].name + " of block " + st.name +
                                  " mix spatial and reduction loops");
    }
    if (i + 1 < loops.size() && !AttachedAt(state_, stage, loops[i]).empty()) {
      return InvalidArgumentError("fuse: loop " + st.loops[loops[i]].name + " of block " + st.name +
                                  " has a block computed at it");
    }
    if (i + 1 < loops.size() && !LaidOutAt(state_, stage, loops[i]).empty()) {
      return InvalidArgumentError("fuse: loop " + st.loops[loops[i]].name + " of block " + st.name +
                                  " has a block laid out in its tiles");
    }
    if (i > 0 && st.init_loop == loops[i]) {
      return InvalidArgumentError("fuse: loop " + st.loops[loops[i]].name + " of block " + st.name +
                                  " has the reduction init before it");
    }
  }
  int fused = loops[0];
  for (size_t i = 1; i < loops.size(); ++i) {
    int next = int(st.loops.size());
    st.loops.push_back({st.loops[fused].name + "_" + st.loops[loops[i]].name + (i + 1 == loops.size() ? "_fused" : ""),
                        st.loops[fused].is_reduce});
    st.rels.push_back({LoopRelKind::kFuse, fused, loops[i], next, 0});
    fused = next;
  }
  for (int child : AttachedAt(state_, stage, loops.back())) state_.stages[child].attach_loop = fused;
  for (int laid_out : LaidOutAt(state_, stage, loops.back())) state_.stages[laid_out].layout_loop = fused;
  if (st.init_loop == loops[0]) st.init_loop = fused;
  st.leaves.erase(st.leaves.begin() + first, st.leaves.begin() + first + int(loops.size()));
  st.leaves.insert(st.leaves.begin() + first, fused);

  LoopRV out{NewRV({RVValue::Kind::kLoop, stage, fused})};
  std::vector<TraceArg> inputs;
  for (LoopRV rv : loop_rvs) inputs.push_back(TraceArg::RV(rv.id));
  Record(InstKind::kFuse, std::move(inputs)).outputs = {out.id};
  return out;
}

Status Schedule::Reorder(const std::vector<LoopRV>& loop_rvs) {
  if (loop_rvs.empty()) return InvalidArgumentError("reorder: needs at least one loop");
  std::vector<int> loops;
  int stage = -1;
  for (LoopRV rv : loop_rvs) {
    TUNED_ASSIGN_OR_RETURN(auto resolved, ResolveLoop(rv));
    TUNED_ASSIGN_OR_RETURN(auto sl, LeafLoop(state_, resolved, "reorder"));
    if (stage >= 0 && sl.first != stage) {
      return InvalidArgumentError("reorder: loops " + LoopName(stage, loops[0]) + " and " +
                                  LoopName(sl.first, sl.second) + " are in different loop nests");
    }
    if (std::find(loops.begin(), loops.end(), sl.second) != loops.end()) {
      return InvalidArgumentError("reorder: loop " + LoopName(sl.first, sl.second) + " given twice");
    }
    stage = sl.first;
    loops.push_back(sl.second);
  }
  Stage& st = state_.stages[stage];
  std::vector<int> positions;
  for (int l : loops) positions.push_back(st.LeafPosition(l));
  std::sort(positions.begin(), positions.end());
  std::vector<int> reordered = st.leaves;
  for (size_t i = 0; i < loops.size(); ++i) reordered[positions[i]] = loops[i];
  TUNED_RETURN_IF_ERROR(CheckReductionNesting(state_, stage, reordered).WithContext("reorder"));
  st.leaves = std::move(reordered);
  std::vector<TraceArg> inputs;
  for (LoopRV rv : loop_rvs) inputs.push_back(TraceArg::RV(rv.id));
  Record(InstKind::kReorder, std::move(inputs));
  return Status::Ok();
}

Status Schedule::SetLoopKind(LoopRV loop_rv, InstKind inst, ir::ForKind kind, const std::string& tag) {
  const char* name = InstKindName(inst);
  TUNED_ASSIGN_OR_RETURN(auto resolved, ResolveLoop(loop_rv));
  TUNED_ASSIGN_OR_RETURN(auto sl, LeafLoop(state_, resolved, name));
  Loop& loop = state_.stages[sl.first].loops[sl.second];
  std::string where = std::string(name) + " of loop " + LoopName(sl.first, sl.second);
  // A reduction loop may be bound to a threadIdx axis: GPU lowering turns it into a
  // cross-thread reduction (compiler/lower/gpu/cross_thread_reduction.cc).
  const bool thread_reduction = kind == ir::ForKind::kThreadBinding && tag.rfind("threadIdx.", 0) == 0;
  if (loop.is_reduce && kind != ir::ForKind::kUnrolled && kind != ir::ForKind::kSerial && !thread_reduction) {
    return InvalidArgumentError(where + ": it is a reduction loop" +
                                (kind == ir::ForKind::kThreadBinding ? " (only threadIdx may bind one)" : ""));
  }
  if (loop.kind != ir::ForKind::kSerial && loop.kind != kind) {
    return InvalidArgumentError(where + ": it is already " + ir::ForKindName(loop.kind));
  }
  loop.kind = kind;
  loop.thread_tag = tag;
  Instruction& recorded = Record(inst, {TraceArg::RV(loop_rv.id)});
  if (!tag.empty()) recorded.str_attrs = {tag};
  return Status::Ok();
}

Status Schedule::Parallel(LoopRV loop) {
  return SetLoopKind(loop, InstKind::kParallel, ir::ForKind::kParallel, "");
}
Status Schedule::Vectorize(LoopRV loop) {
  return SetLoopKind(loop, InstKind::kVectorize, ir::ForKind::kVectorized, "");
}
Status Schedule::Unroll(LoopRV loop) {
  return SetLoopKind(loop, InstKind::kUnroll, ir::ForKind::kUnrolled, "");
}

Status Schedule::Bind(LoopRV loop, const std::string& thread_tag) {
  static const std::set<std::string> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                              "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  if (!kTags.count(thread_tag)) {
    return InvalidArgumentError("bind: unknown thread axis '" + thread_tag +
                                "' (expected blockIdx.x/y/z or threadIdx.x/y/z)");
  }
  return SetLoopKind(loop, InstKind::kBind, ir::ForKind::kThreadBinding, thread_tag);
}

Status Schedule::Annotate(LoopRV loop_rv, const std::string& key, int64_t value) {
  TUNED_ASSIGN_OR_RETURN(auto resolved, ResolveLoop(loop_rv));
  TUNED_ASSIGN_OR_RETURN(auto sl, LeafLoop(state_, resolved, "annotate"));
  Loop& loop = state_.stages[sl.first].loops[sl.second];
  int64_t* field = key == "auto_unroll_max_step" ? &loop.auto_unroll_max_step
                   : key == "prefetch_ahead"     ? &loop.prefetch_ahead
                                                 : nullptr;
  if (field == nullptr) {
    return InvalidArgumentError("annotate: unknown annotation '" + key +
                                "' (known: auto_unroll_max_step, prefetch_ahead)");
  }
  if (value < 0) {
    return InvalidArgumentError("annotate: " + key + " must not be negative, got " + std::to_string(value));
  }
  *field = value;
  Instruction& recorded = Record(InstKind::kAnnotate, {TraceArg::RV(loop_rv.id)});
  recorded.str_attrs = {key};
  recorded.int_attrs = {value};
  return Status::Ok();
}

}  // namespace tuned::schedule
