// Primitives that create stages or move where a stage is computed: cache_read, cache_write,
// rfactor, compute_at, reverse_compute_at, compute_inline, reverse_compute_inline,
// decompose_reduction.

#include <algorithm>

#include "compiler/ir/ir_mutator.h"
#include "compiler/schedule/nesting_checks.h"
#include "compiler/schedule/schedule.h"

namespace tuned::schedule {
namespace {

using ir::Buffer;
using ir::Expr;

// Rewrites loads of one buffer, either to another buffer or to an expression of the indices.
class LoadRewriter : public ir::IRMutator {
 public:
  LoadRewriter(const ir::BufferNode* from, std::function<Expr(const std::vector<Expr>&)> to)
      : from_(from), to_(std::move(to)) {}

 protected:
  Expr MutateLoad(const ir::Load* op, const Expr& self) override {
    std::vector<Expr> indices;
    MutateIndices(op->indices, indices);
    if (op->buffer.get() == from_) return to_(indices);
    return ir::IRMutator::MutateLoad(op, self);
  }

 private:
  const ir::BufferNode* from_;
  std::function<Expr(const std::vector<Expr>&)> to_;
};

Expr ReplaceLoads(const Expr& body, const Buffer& from,
                  std::function<Expr(const std::vector<Expr>&)> to) {
  LoadRewriter rewriter(from.get(), std::move(to));
  return rewriter.Mutate(body);
}

// True if every load of `buffer` in `body` indexes it exactly by `axes`.
bool ReadsElementwise(const Expr& body, const Buffer& buffer, const std::vector<ir::Axis>& axes) {
  struct Checker : ir::IRVisitor {
    const ir::BufferNode* buffer;
    const std::vector<ir::Axis>* axes;
    bool ok = true;
    void VisitLoad(const ir::Load* op) override {
      if (op->buffer.get() == buffer) {
        if (op->indices.size() != axes->size()) {
          ok = false;
        } else {
          for (size_t d = 0; d < axes->size(); ++d) {
            ok &= op->indices[d].get() == (*axes)[d].var.get();
          }
        }
      }
      IRVisitor::VisitLoad(op);
    }
  } checker;
  checker.buffer = buffer.get();
  checker.axes = &axes;
  checker.Visit(body);
  return checker.ok;
}

bool HasAttachedBlocks(const ScheduleState& state, int stage) {
  for (const Stage& st : state.stages) {
    if (st.is_live() && st.attach_stage == stage &&
        (st.attach == AttachKind::kComputeAt || st.attach == AttachKind::kReverseComputeAt)) {
      return true;
    }
  }
  return false;
}

// A copy stage `name`: out[axes] = source[axes].
Stage MakeCopyStage(const std::string& name, const Buffer& source, const Buffer& out) {
  Stage st;
  st.name = name;
  st.output = out;
  static const char* kNames = "ijklmnopqrstuvwxyz";
  std::vector<Expr> indices;
  for (size_t d = 0; d < source->shape.size(); ++d) {
    std::string axis = name + "." + (d < 18 ? std::string(1, kNames[d]) : "ax" + std::to_string(d));
    // Loop names are the short axis names; the variable carries the stage for readability.
    st.axes.push_back({ir::MakeVar(axis), source->shape[d]});
    st.loops.push_back({d < 18 ? std::string(1, kNames[d]) : "ax" + std::to_string(d), false});
    st.leaves.push_back(int(d));
    indices.push_back(Expr(st.axes.back().var));
  }
  st.body = ir::MakeLoad(source, indices);
  return st;
}

}  // namespace

std::string Schedule::UniqueStageName(const std::string& base) const {
  auto taken = [&](const std::string& n) {
    for (const Stage& st : state_.stages) {
      if (st.name == n) return true;
    }
    return false;
  };
  if (!taken(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!taken(n)) return n;
  }
}

int Schedule::AddStage(Stage stage, int position) {
  int id = int(state_.stages.size());
  state_.stages.push_back(std::move(stage));
  state_.order.insert(state_.order.begin() + position, id);
  return id;
}

StatusOr<BlockRV> Schedule::CacheRead(BlockRV block, int read_index, const std::string& scope_name) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  TUNED_ASSIGN_OR_RETURN(ir::MemoryScope scope, ir::ParseMemoryScope(scope_name));
  std::vector<Buffer> reads = state_.ReadBuffers(stage);
  if (read_index < 0 || read_index >= int(reads.size())) {
    return InvalidArgumentError("cache_read of block " + state_.stages[stage].name + ": read index " +
                                std::to_string(read_index) + ", the block reads " +
                                std::to_string(reads.size()) + " buffers");
  }
  Buffer source = reads[read_index];
  std::string name = UniqueStageName(source->name + "_" + scope_name);
  Buffer cache = ir::MakeBuffer(name, source->dtype, source->shape, scope);
  state_.stages[stage].body = ReplaceLoads(state_.stages[stage].body, source,
                                           [&](const std::vector<Expr>& idx) { return ir::MakeLoad(cache, idx); });
  int position = int(std::find(state_.order.begin(), state_.order.end(), stage) - state_.order.begin());
  Stage copy = MakeCopyStage(name, source, cache);
  // The copy runs where its consumer runs, so that it is ready before the consumer reads it.
  const Stage& consumer = state_.stages[stage];
  if (consumer.attach == AttachKind::kComputeAt || consumer.attach == AttachKind::kReverseComputeAt) {
    copy.attach = consumer.attach;
    copy.attach_stage = consumer.attach_stage;
    copy.attach_loop = consumer.attach_loop;
  }
  int id = AddStage(std::move(copy), position);
  BlockRV out{NewRV({RVValue::Kind::kBlock, id})};
  Instruction& inst = Record(InstKind::kCacheRead, {TraceArg::RV(block.id)});
  inst.int_attrs = {read_index};
  inst.str_attrs = {scope_name};
  inst.outputs = {out.id};
  return out;
}

StatusOr<BlockRV> Schedule::CacheWrite(BlockRV block, const std::string& scope_name) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  TUNED_ASSIGN_OR_RETURN(ir::MemoryScope scope, ir::ParseMemoryScope(scope_name));
  Stage& st = state_.stages[stage];
  if (st.attach != AttachKind::kRoot) {
    return InvalidArgumentError("cache_write of block " + st.name +
                                ": the block must be at the root (cache before moving it)");
  }
  if (HasAttachedBlocks(state_, stage)) {
    return InvalidArgumentError("cache_write of block " + st.name +
                                ": other blocks are computed at its loops (cache before moving them)");
  }
  Buffer original = st.output;
  std::string name = UniqueStageName(original->name + "_" + scope_name);
  Buffer cache = ir::MakeBuffer(name, original->dtype, original->shape, scope);
  st.output = cache;
  Stage writeback = MakeCopyStage(name, cache, original);
  writeback.is_output = st.is_output;
  st.is_output = false;
  int position = int(std::find(state_.order.begin(), state_.order.end(), stage) - state_.order.begin());
  int id = AddStage(std::move(writeback), position + 1);
  BlockRV out{NewRV({RVValue::Kind::kBlock, id})};
  Instruction& inst = Record(InstKind::kCacheWrite, {TraceArg::RV(block.id)});
  inst.str_attrs = {scope_name};
  inst.outputs = {out.id};
  return out;
}

StatusOr<BlockRV> Schedule::RFactor(BlockRV block, Factor factor, RFactorOrder order) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  const std::string where = "rfactor of block " + state_.stages[stage].name;
  int64_t lanes = 0;
  TraceArg factor_arg;
  if (const int64_t* v = std::get_if<int64_t>(&factor)) {
    lanes = *v;
    factor_arg = TraceArg::Int(*v);
  } else if (const IntRV* rv = std::get_if<IntRV>(&factor)) {
    lanes = Get(*rv);
    factor_arg = TraceArg::RV(rv->id);
  } else {
    return InvalidArgumentError(where + ": the factor must be given");
  }
  const Stage& st = state_.stages[stage];
  if (!st.is_reduction()) return InvalidArgumentError(where + ": it is not a reduction");
  bool untransformed = st.attach == AttachKind::kRoot && st.rels.empty() && !HasAttachedBlocks(state_, stage) &&
                       int(st.leaves.size()) == st.num_root_loops();
  for (size_t l = 0; untransformed && l < st.leaves.size(); ++l) untransformed = st.leaves[l] == int(l);
  if (!untransformed) {
    return InvalidArgumentError(where + ": the block must be at the root with its loops untouched (rfactor first)");
  }
  const bool chunks = order == RFactorOrder::kChunks;
  // Chunks divide the outermost reduction axis: over trailing dimensions of a row-major buffer,
  // each chunk is then one run of memory.
  const size_t split_index = chunks ? 0 : st.reduce_axes.size() - 1;
  const ir::Axis& split_axis = st.reduce_axes[split_index];
  if (lanes < 2 || lanes >= split_axis.extent) {
    return InvalidArgumentError(where + ": factor " + std::to_string(lanes) + " must be in [2, " +
                                std::to_string(split_axis.extent) + ")");
  }
  const int64_t outer = (split_axis.extent + lanes - 1) / lanes;
  const std::string new_axis = chunks ? "chunk" : "lane";

  // The partial stage: one partial result per lane, each over every `lanes`-th element (or per
  // chunk, each over `outer` consecutive elements).
  Stage partial;
  partial.name = UniqueStageName(st.name + "_rf");
  partial.reduce = st.reduce;
  ir::VarMap renamed;
  std::vector<int64_t> shape;
  for (const ir::Axis& a : st.axes) {
    partial.axes.push_back({ir::MakeVar(partial.name + "." + a.var->name), a.extent});
    renamed[a.var.get()] = Expr(partial.axes.back().var);
    shape.push_back(a.extent);
  }
  ir::Var part = ir::MakeVar(partial.name + "." + new_axis);  // the lane or chunk
  partial.axes.push_back({part, lanes});
  shape.push_back(lanes);
  // The other reduction axes keep their places around the steps of the split one.
  ir::Var step = ir::MakeVar(partial.name + ".step");
  for (size_t r = 0; r < st.reduce_axes.size(); ++r) {
    const ir::Axis& a = st.reduce_axes[r];
    if (r == split_index) {
      partial.reduce_axes.push_back({step, outer});
      continue;
    }
    partial.reduce_axes.push_back({ir::MakeVar(partial.name + "." + a.var->name), a.extent});
    renamed[a.var.get()] = Expr(partial.reduce_axes.back().var);
  }
  Expr element = chunks ? Expr(part) * ir::MakeInt(outer) + Expr(step) : Expr(step) * ir::MakeInt(lanes) + Expr(part);
  renamed[split_axis.var.get()] = element;
  partial.body = ir::Substitute(st.body, renamed);
  if (outer * lanes != split_axis.extent) {
    // Lanes past the end contribute the identity.
    partial.body = ir::MakeSelect(element < ir::MakeInt(split_axis.extent), partial.body,
                                  ir::ReduceIdentity(st.reduce, partial.body.type()));
  }
  partial.output = ir::MakeBuffer(partial.name, st.output->dtype, shape,
                                  chunks ? ir::MemoryScope::kGlobal : ir::MemoryScope::kLocal);
  for (const ir::Axis& a : partial.axes) partial.loops.push_back({a.var->name.substr(partial.name.size() + 1), false});
  for (const ir::Axis& a : partial.reduce_axes) {
    partial.loops.push_back({a.var->name.substr(partial.name.size() + 1), true});
  }
  for (int l = 0; l < partial.num_root_loops(); ++l) partial.leaves.push_back(l);

  // The block now combines the lanes' (or chunks') partial results.
  Stage& combined = state_.stages[stage];
  ir::Var lane_index = ir::MakeVar(combined.name + "." + new_axis);
  std::vector<Expr> indices;
  for (const ir::Axis& a : combined.axes) indices.push_back(Expr(a.var));
  indices.push_back(Expr(lane_index));
  combined.body = ir::MakeLoad(partial.output, indices);
  combined.reduce_axes = {{lane_index, lanes}};
  combined.loops.resize(combined.axes.size());
  combined.loops.push_back({new_axis, true});
  combined.leaves.clear();
  for (int l = 0; l < combined.num_root_loops(); ++l) combined.leaves.push_back(l);

  int position = int(std::find(state_.order.begin(), state_.order.end(), stage) - state_.order.begin());
  int id = AddStage(std::move(partial), position);
  BlockRV out{NewRV({RVValue::Kind::kBlock, id})};
  std::vector<TraceArg> args = {TraceArg::RV(block.id), factor_arg};
  if (chunks) args.push_back(TraceArg::Int(1));  // traces of lanes keep their two arguments
  Instruction& inst = Record(InstKind::kRFactor, args);
  inst.outputs = {out.id};
  return out;
}

Status Schedule::ComputeAt(BlockRV block, LoopRV loop_rv) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  TUNED_ASSIGN_OR_RETURN(auto target, ResolveLoop(loop_rv));
  auto [target_stage, target_loop] = target;
  Stage& st = state_.stages[stage];
  std::string where = "compute_at of block " + st.name;
  if (target_loop == kInlineLocation) {
    TUNED_RETURN_IF_ERROR(ComputeInline(block));
    trace_.instructions.pop_back();  // recorded below as the compute_at it came from
  } else if (target_loop == kRootLocation) {
    st.attach = AttachKind::kRoot;
    st.attach_stage = st.attach_loop = -1;
  } else {
    const Stage& consumer = state_.stages[target_stage];
    if (st.is_output) return InvalidArgumentError(where + ": it writes the output");
    if (target_stage == stage) return InvalidArgumentError(where + ": cannot compute at its own loop");
    if (!consumer.is_live() || consumer.LeafPosition(target_loop) < 0) {
      return InvalidArgumentError(where + ": loop " + LoopName(target_stage, target_loop) +
                                  " is not a current loop");
    }
    if (state_.IsAttachedUnder(target_stage, stage)) {
      return InvalidArgumentError(where + ": block " + consumer.name + " is computed inside it");
    }
    int position = consumer.LeafPosition(target_loop);
    for (int c : state_.ConsumersOf(stage)) {
      bool covered = c == target_stage;
      // A consumer computed under the target block must sit at or inside the target loop.
      for (int s = c; !covered && state_.stages[s].attach == AttachKind::kComputeAt;) {
        const Stage& cs = state_.stages[s];
        if (cs.attach_stage == target_stage) {
          covered = consumer.LeafPosition(cs.attach_loop) >= position;
          break;
        }
        s = cs.attach_stage;
      }
      if (!covered) {
        return InvalidArgumentError(where + ": loop " + LoopName(target_stage, target_loop) +
                                    " does not cover its consumer " + state_.stages[c].name);
      }
    }
    st.attach = AttachKind::kComputeAt;
    st.attach_stage = target_stage;
    st.attach_loop = target_loop;
    st.layout_stage = st.layout_loop = -1;  // a region per iteration has no blocks to lay out
  }
  Record(InstKind::kComputeAt, {TraceArg::RV(block.id), TraceArg::RV(loop_rv.id)});
  return Status::Ok();
}

Status Schedule::ReverseComputeAt(BlockRV block, LoopRV loop_rv) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  TUNED_ASSIGN_OR_RETURN(auto target, ResolveLoop(loop_rv));
  auto [producer, target_loop] = target;
  Stage& st = state_.stages[stage];
  std::string where = "reverse_compute_at of block " + st.name;
  if (target_loop < 0) return InvalidArgumentError(where + ": the target must be a loop");
  if (st.is_reduction()) return InvalidArgumentError(where + ": it is a reduction");
  const Stage& prod = state_.stages[producer];
  if (producer == stage) return InvalidArgumentError(where + ": cannot compute at its own loop");
  if (!prod.is_live() || prod.LeafPosition(target_loop) < 0) {
    return InvalidArgumentError(where + ": loop " + LoopName(producer, target_loop) +
                                " is not a current loop");
  }
  std::vector<Buffer> reads = state_.ReadBuffers(stage);
  if (std::find(reads.begin(), reads.end(), prod.output) == reads.end()) {
    return InvalidArgumentError(where + ": it does not read block " + prod.name);
  }
  if (!ReadsElementwise(st.body, prod.output, st.axes)) {
    return InvalidArgumentError(where + ": it reads block " + prod.name + " at other indices than its own");
  }
  if (state_.IsAttachedUnder(producer, stage)) {
    return InvalidArgumentError(where + ": block " + prod.name + " is computed inside it");
  }
  AttachKind old_attach = st.attach;
  int old_stage = st.attach_stage, old_loop = st.attach_loop;
  st.attach = AttachKind::kReverseComputeAt;
  st.attach_stage = producer;
  st.attach_loop = target_loop;
  if (Status nesting = CheckReductionNesting(state_, producer, prod.leaves); !nesting.ok()) {
    st.attach = old_attach;
    st.attach_stage = old_stage;
    st.attach_loop = old_loop;
    return nesting.WithContext(where);
  }
  Record(InstKind::kReverseComputeAt, {TraceArg::RV(block.id), TraceArg::RV(loop_rv.id)});
  return Status::Ok();
}

Status Schedule::BlockLayout(BlockRV block, LoopRV loop_rv) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  TUNED_ASSIGN_OR_RETURN(auto target, ResolveLoop(loop_rv));
  auto [consumer, loop] = target;
  Stage& st = state_.stages[stage];
  std::string where = "block_layout of block " + st.name;
  if (loop < 0) return InvalidArgumentError(where + ": the target must be a loop");
  if (st.attach != AttachKind::kRoot) return InvalidArgumentError(where + ": it is not computed at the root");
  if (st.is_output) return InvalidArgumentError(where + ": it writes the output, whose layout is the caller's");
  const std::vector<int> consumers = state_.ConsumersOf(stage);
  if (std::find(consumers.begin(), consumers.end(), consumer) == consumers.end()) {
    return InvalidArgumentError(where + ": block " + state_.stages[consumer].name + " does not read it");
  }
  if (state_.stages[consumer].LeafPosition(loop) < 0) {
    return InvalidArgumentError(where + ": loop " + LoopName(consumer, loop) + " is not a current loop");
  }
  st.layout_stage = consumer;
  st.layout_loop = loop;
  Record(InstKind::kBlockLayout, {TraceArg::RV(block.id), TraceArg::RV(loop_rv.id)});
  return Status::Ok();
}

Status Schedule::ComputeInline(BlockRV block) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  Stage& st = state_.stages[stage];
  std::string where = "compute_inline of block " + st.name;
  if (st.is_output) return InvalidArgumentError(where + ": it writes the output");
  if (st.is_reduction()) return InvalidArgumentError(where + ": it is a reduction");
  if (HasAttachedBlocks(state_, stage)) {
    return InvalidArgumentError(where + ": other blocks are computed at its loops");
  }
  for (int c : state_.ConsumersOf(stage)) {
    Stage& consumer = state_.stages[c];
    consumer.body = ReplaceLoads(consumer.body, st.output, [&](const std::vector<Expr>& idx) {
      ir::VarMap map;
      for (size_t d = 0; d < st.axes.size(); ++d) map[st.axes[d].var.get()] = idx[d];
      return ir::Substitute(st.body, map);
    });
  }
  st.attach = AttachKind::kInline;
  Record(InstKind::kComputeInline, {TraceArg::RV(block.id)});
  return Status::Ok();
}

Status Schedule::ReverseComputeInline(BlockRV block) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  Stage& st = state_.stages[stage];
  std::string where = "reverse_compute_inline of block " + st.name;
  if (st.is_reduction()) return InvalidArgumentError(where + ": it is a reduction");
  if (HasAttachedBlocks(state_, stage)) {
    return InvalidArgumentError(where + ": other blocks are computed at its loops");
  }
  int producer = -1;
  for (const Buffer& b : state_.ReadBuffers(stage)) {
    int p = state_.ProducerOf(b.get());
    if (p < 0) continue;
    if (producer >= 0) return InvalidArgumentError(where + ": it reads more than one block");
    producer = p;
  }
  if (producer < 0) return InvalidArgumentError(where + ": it reads no block");
  Stage& prod = state_.stages[producer];
  if (prod.is_reduction()) return InvalidArgumentError(where + ": its producer " + prod.name + " is a reduction");
  if (state_.ConsumersOf(producer).size() != 1) {
    return InvalidArgumentError(where + ": its producer " + prod.name + " has other consumers");
  }
  if (!ReadsElementwise(st.body, prod.output, st.axes) || st.axes.size() != prod.axes.size()) {
    return InvalidArgumentError(where + ": it reads block " + prod.name + " at other indices than its own");
  }
  // The consumer's body, in the producer's axes, with the producer's value in place of its load.
  ir::VarMap to_producer_axes;
  for (size_t d = 0; d < st.axes.size(); ++d) to_producer_axes[st.axes[d].var.get()] = Expr(prod.axes[d].var);
  Expr producer_body = prod.body;
  prod.body = ReplaceLoads(ir::Substitute(st.body, to_producer_axes), prod.output,
                           [&](const std::vector<Expr>&) { return producer_body; });
  prod.output = st.output;
  prod.is_output = st.is_output;
  st.attach = AttachKind::kInline;
  Record(InstKind::kReverseComputeInline, {TraceArg::RV(block.id)});
  return Status::Ok();
}

Status Schedule::DecomposeReduction(BlockRV block, LoopRV loop_rv) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  TUNED_ASSIGN_OR_RETURN(auto target, ResolveLoop(loop_rv));
  Stage& st = state_.stages[stage];
  std::string where = "decompose_reduction of block " + st.name;
  if (!st.is_reduction()) return InvalidArgumentError(where + ": it is not a reduction");
  if (target.first != stage || target.second < 0 || st.LeafPosition(target.second) < 0) {
    return InvalidArgumentError(where + ": the loop must be a current loop of the block");
  }
  int position = st.LeafPosition(target.second);
  for (int p = 0; p < position; ++p) {
    if (st.loops[st.leaves[p]].is_reduce) {
      return InvalidArgumentError(where + ": loop " + st.loops[target.second].name +
                                  " is inside reduction loop " + st.loops[st.leaves[p]].name);
    }
  }
  int old_init = st.init_loop;
  st.init_loop = target.second;
  if (Status nesting = CheckReductionNesting(state_, stage, st.leaves); !nesting.ok()) {
    st.init_loop = old_init;
    return nesting.WithContext(where);
  }
  Record(InstKind::kDecomposeReduction, {TraceArg::RV(block.id), TraceArg::RV(loop_rv.id)});
  return Status::Ok();
}

}  // namespace tuned::schedule
