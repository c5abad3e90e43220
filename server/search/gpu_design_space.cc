#include "server/search/gpu_design_space.h"

#include <string>

#include "server/search/sketch_rules_internal.h"

namespace tuned::search {
namespace {

using rules::EpilogueOf;
using rules::InlineElementwise;
using rules::LiveStage;
using rules::LiveStages;

using schedule::BlockRV;
using schedule::Factor;
using schedule::IntRV;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::Stage;

// Largest per-thread tile of one spatial axis (a thread's registers hold the product).
constexpr int kMaxPerThread = 8;
// Largest inner reduction tile: what one shared-memory stage holds along a reduction axis.
constexpr int kMaxReduceTile = 32;
// Vector lengths a cooperative fetch samples from.
const std::vector<int64_t> kFetchVectors = {1, 2, 4};

StatusOr<IntRV> SampleUniform(Schedule& sch, const std::vector<int64_t>& choices) {
  std::vector<double> probs(choices.size(), 1.0 / double(choices.size()));
  return sch.SampleCategorical(choices, probs);
}

// The threadIdx tags of `n` spatial thread loops, outermost first: the innermost is x, the one
// before y, the others (fused) z. Returned as one tag per group of loops fused together.
struct ThreadGroups {
  std::vector<std::vector<size_t>> groups;  // indices of spatial axes, outermost group first
  std::vector<std::string> tags;
};
ThreadGroups GroupThreads(size_t n) {
  ThreadGroups g;
  if (n >= 3) {
    std::vector<size_t> outer;
    for (size_t i = 0; i + 2 < n; ++i) outer.push_back(i);
    g.groups.push_back(outer);
    g.tags.push_back("threadIdx.z");
  }
  if (n >= 2) {
    g.groups.push_back({n - 2});
    g.tags.push_back("threadIdx.y");
  }
  if (n >= 1) {
    g.groups.push_back({n - 1});
    g.tags.push_back("threadIdx.x");
  }
  return g;
}

// Lets the block's threads fill a shared stage: its loops fused, its innermost run split by a
// sampled vector length (vectorized), the rest split by the thread extents (the sampled thread
// tiles of the spatial axes) and bound to the same threadIdx axes as the compute.
Status CooperativeFetch(Schedule& sch, BlockRV fill, const std::vector<IntRV>& thread_tiles,
                        const ThreadGroups& groups) {
  const Stage& st = sch.state().stages[sch.StageOf(fill)];
  const int64_t innermost = st.axes.empty() ? 1 : st.axes.back().extent;
  const bool float32 = st.output->dtype.is_float() && st.output->dtype.bits == 32;
  std::vector<int64_t> vectors;
  for (int64_t v : kFetchVectors) {
    if (v == 1 || (float32 && innermost % v == 0)) vectors.push_back(v);
  }
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(fill));
  if (loops.empty()) return Status::Ok();
  LoopRV fused = loops[0];
  if (loops.size() > 1) {
    TUNED_ASSIGN_OR_RETURN(fused, sch.Fuse(loops));
  }
  TUNED_ASSIGN_OR_RETURN(IntRV vector, SampleUniform(sch, vectors));
  std::vector<Factor> factors = {std::monostate{}};
  for (IntRV tile : thread_tiles) factors.push_back(tile);
  factors.push_back(vector);  // always split, so a mutated length replays the same structure
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(fused, factors));
  size_t next = 1;
  for (size_t g = 0; g < groups.groups.size(); ++g) {
    std::vector<LoopRV> group(parts.begin() + long(next), parts.begin() + long(next + groups.groups[g].size()));
    next += groups.groups[g].size();
    LoopRV bound = group[0];
    if (group.size() > 1) {
      TUNED_ASSIGN_OR_RETURN(bound, sch.Fuse(group));
    }
    TUNED_RETURN_IF_ERROR(sch.Bind(bound, groups.tags[g]));
  }
  return sch.Vectorize(parts.back());
}

Status TileReduction(Schedule& sch, const std::string& name) {
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  const int stage = sch.StageOf(block);
  const size_t num_spatial = sch.state().stages[stage].axes.size();
  std::vector<int> inputs;  // read indices of the workload's inputs, staged in shared memory
  std::vector<ir::Buffer> reads = sch.state().ReadBuffers(stage);
  for (size_t i = 0; i < reads.size(); ++i) {
    if (sch.state().ProducerOf(reads[i].get()) < 0) inputs.push_back(int(i));
  }
  const std::string epilogue = EpilogueOf(sch, stage);

  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  std::vector<LoopRV> blocks, threads, per_thread, reduce_outer, reduce_inner;
  std::vector<IntRV> thread_tiles;
  for (size_t l = 0; l < loops.size(); ++l) {
    const bool spatial = l < num_spatial;
    TUNED_ASSIGN_OR_RETURN(std::vector<IntRV> tiles,
                           sch.SamplePerfectTile(loops[l], spatial ? 3 : 2, spatial ? kMaxPerThread : kMaxReduceTile));
    TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(loops[l], std::vector<Factor>(tiles.begin(), tiles.end())));
    if (spatial) {
      blocks.push_back(parts[0]);
      threads.push_back(parts[1]);
      per_thread.push_back(parts[2]);
      thread_tiles.push_back(tiles[1]);
    } else {
      reduce_outer.push_back(parts[0]);
      reduce_inner.push_back(parts[1]);
    }
  }
  std::vector<LoopRV> order;
  for (auto* level : {&blocks, &threads, &reduce_outer, &reduce_inner, &per_thread}) {
    order.insert(order.end(), level->begin(), level->end());
  }
  TUNED_RETURN_IF_ERROR(sch.Reorder(order));
  LoopRV block_loop = blocks[0];
  if (blocks.size() > 1) {
    TUNED_ASSIGN_OR_RETURN(block_loop, sch.Fuse(blocks));
  }
  TUNED_RETURN_IF_ERROR(sch.Bind(block_loop, "blockIdx.x"));
  const ThreadGroups groups = GroupThreads(num_spatial);
  LoopRV last_thread;
  for (size_t g = 0; g < groups.groups.size(); ++g) {
    std::vector<LoopRV> group;
    for (size_t axis : groups.groups[g]) group.push_back(threads[axis]);
    LoopRV bound = group[0];
    if (group.size() > 1) {
      TUNED_ASSIGN_OR_RETURN(bound, sch.Fuse(group));
    }
    TUNED_RETURN_IF_ERROR(sch.Bind(bound, groups.tags[g]));
    last_thread = bound;
  }
  TUNED_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(block, "local"));
  TUNED_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, last_thread));
  if (!epilogue.empty()) {
    TUNED_ASSIGN_OR_RETURN(BlockRV epi, sch.GetBlock(epilogue));
    TUNED_RETURN_IF_ERROR(sch.ReverseComputeInline(epi));
  }
  if (reduce_outer.empty()) return Status::Ok();
  for (int read : inputs) {
    TUNED_ASSIGN_OR_RETURN(BlockRV shared, sch.CacheRead(block, read, "shared"));
    TUNED_RETURN_IF_ERROR(sch.ComputeAt(shared, reduce_outer.back()));
    TUNED_RETURN_IF_ERROR(CooperativeFetch(sch, shared, thread_tiles, groups));
  }
  TUNED_ASSIGN_OR_RETURN(IntRV unroll, SampleUniform(sch, UnrollSteps()));
  return sch.Annotate(reduce_outer.back(), "auto_unroll_max_step", sch.Get(unroll));
}

Status BindElementwise(Schedule& sch, const std::string& name) {
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  const size_t num_spatial = sch.state().stages[sch.StageOf(block)].axes.size();
  if (num_spatial == 0) return Status::Ok();  // nothing to bind: the candidate check refuses it
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  std::vector<LoopRV> spatial(loops.begin(), loops.begin() + long(num_spatial));
  LoopRV fused = spatial[0];
  if (spatial.size() > 1) {
    TUNED_ASSIGN_OR_RETURN(fused, sch.Fuse(spatial));
  }
  TUNED_ASSIGN_OR_RETURN(IntRV threads, SampleUniform(sch, GpuThreadCounts()));
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(fused, {std::monostate{}, threads}));
  TUNED_RETURN_IF_ERROR(sch.Bind(parts[0], "blockIdx.x"));
  return sch.Bind(parts[1], "threadIdx.x");
}

// A reduction with fewer outputs than terms per output (a row sum, softmax's rows, a GEMV, a
// reduction to one value): one thread per output leaves most of the GPU idle, so the sketch
// that reduces across threads is worth sampling.
bool FewOutputsManyTerms(const Stage& st) {
  if (!st.is_reduction()) return false;
  return rules::Points(st.axes) <= rules::Points(st.reduce_axes);
}

// One output per block, its terms split over the block's threads: the reduction loops fused,
// split by a sampled thread count, the thread part bound to threadIdx.x outside the rest (so
// consecutive threads read consecutive terms at every step); GPU lowering makes it a
// cross-thread reduction (compiler/lower/gpu/cross_thread_reduction.cc).
Status ReduceAcrossThreads(Schedule& sch, const std::string& name) {
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  const Stage& st = sch.state().stages[sch.StageOf(block)];
  const size_t num_spatial = st.axes.size();
  int64_t terms = 1;
  for (const auto& axis : st.reduce_axes) terms *= axis.extent;
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  std::vector<LoopRV> spatial(loops.begin(), loops.begin() + long(num_spatial));
  std::vector<LoopRV> reduce(loops.begin() + long(num_spatial), loops.end());
  LoopRV fused_reduce = reduce[0];
  if (reduce.size() > 1) {
    TUNED_ASSIGN_OR_RETURN(fused_reduce, sch.Fuse(reduce));
  }
  std::vector<int64_t> counts;  // more threads than terms would idle
  for (int64_t n : GpuThreadCounts()) {
    if (n == GpuThreadCounts().front() || n <= terms) counts.push_back(n);
  }
  TUNED_ASSIGN_OR_RETURN(IntRV threads, SampleUniform(sch, counts));
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(fused_reduce, {std::monostate{}, threads}));
  std::vector<LoopRV> order;
  if (!spatial.empty()) {
    LoopRV fused_spatial = spatial[0];
    if (spatial.size() > 1) {
      TUNED_ASSIGN_OR_RETURN(fused_spatial, sch.Fuse(spatial));
    }
    TUNED_RETURN_IF_ERROR(sch.Bind(fused_spatial, "blockIdx.x"));
    order.push_back(fused_spatial);
  }
  order.push_back(parts[1]);
  order.push_back(parts[0]);
  TUNED_RETURN_IF_ERROR(sch.Reorder(order));
  TUNED_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
  TUNED_ASSIGN_OR_RETURN(IntRV unroll, SampleUniform(sch, UnrollSteps()));
  return sch.Annotate(parts[0], "auto_unroll_max_step", sch.Get(unroll));
}

// `across_threads`: the reductions FewOutputsManyTerms picks reduce across threads.
Status ApplyGpuRules(Schedule& sch, bool across_threads) {
  TUNED_RETURN_IF_ERROR(InlineElementwise(sch));
  for (const std::string& name : LiveStages(sch)) {
    const Stage* st = LiveStage(sch, name);
    if (st == nullptr || st->attach != schedule::AttachKind::kRoot) continue;
    if (across_threads && FewOutputsManyTerms(*st)) {
      TUNED_RETURN_IF_ERROR(ReduceAcrossThreads(sch, name));
    } else if (st->is_reduction() && !st->axes.empty()) {
      TUNED_RETURN_IF_ERROR(TileReduction(sch, name));
    } else {
      TUNED_RETURN_IF_ERROR(BindElementwise(sch, name));
    }
  }
  return Status::Ok();
}

}  // namespace

const std::vector<int64_t>& GpuThreadCounts() {
  static const std::vector<int64_t> kCounts = {32, 64, 128, 256, 512, 1024};
  return kCounts;
}

std::vector<Sketch> GenerateGpuSketches(const SearchContext& context) {
  std::vector<Sketch> sketches = {Sketch{"gpu-tile", [](Schedule& sch) { return ApplyGpuRules(sch, false); }}};
  Schedule probe(context.workload, 0);
  bool any = false;
  for (const std::string& name : LiveStages(probe)) {
    const Stage* st = LiveStage(probe, name);
    any = any || (st != nullptr && FewOutputsManyTerms(*st));
  }
  if (any) {
    sketches.push_back(Sketch{"gpu-cross-thread", [](Schedule& sch) { return ApplyGpuRules(sch, true); }});
  }
  return sketches;
}

}  // namespace tuned::search
