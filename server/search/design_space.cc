#include "server/search/design_space.h"

#include <algorithm>

#include "compiler/analysis/access.h"
#include "compiler/ir/ir_mutator.h"
#include "server/search/gpu_design_space.h"
#include "server/search/cpu_rules_internal.h"
#include "server/search/sketch_rules_internal.h"
#include "server/search/vector_axis.h"
#include "target/target.h"

namespace tuned::search {
namespace {

using rules::EpilogueOf;
using rules::FuseRows;
using rules::InlineElementwise;
using rules::LiveStage;
using rules::LiveStages;
using rules::SharedElementwise;
using rules::TileRowReduction;

using schedule::BlockRV;
using schedule::Factor;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::Stage;

// Largest innermost tile of a non-vectorized spatial loop (register rows).
constexpr int kMaxInnerRows = 8;
using rules::kMaxInnerVectors;
// Largest reduction tile kept in cache between reuses.
constexpr int kMaxInnerReduce = 64;

// How far a tiled loop may be padded past its extent: enough for a prime or odd extent to reach
// a multiple of a vector or a register tile (257 to 264 or 272), little enough that the guarded
// edge tiles stay a small share of the work. Lowering keeps the guard out of the full tiles.
constexpr int kMaxTilePaddingPercent = 15;

// Vector registers a register tile leaves to its operands (a loaded vector and a broadcast one).
constexpr int kOperandRegisters = 2;

// `padding_percent`: how far the tile's product may pass the loop's extent (0: a perfect tile).
// `innermost`, when given, receives the innermost factor sampled.
std::vector<LoopRV> TileLoop(Schedule& sch, LoopRV loop, int levels, int max_innermost,
                             int padding_percent, Status& status, int min_innermost = 1,
                             int64_t* innermost = nullptr) {
  auto tiles = sch.SampleTile(loop, levels, max_innermost, padding_percent, {}, min_innermost);
  if (!tiles.ok()) {
    status = tiles.status();
    return {};
  }
  if (innermost) *innermost = sch.Get(tiles->back());
  std::vector<Factor> factors(tiles->begin(), tiles->end());
  auto parts = sch.Split(loop, factors);
  if (!parts.ok()) {
    status = parts.status();
    return {};
  }
  return *parts;
}

// The index of the read buffer whose innermost dimension is indexed by `axis` (a candidate for
// packing: it is read with unit stride along the vectorized loop), or -1.
int PackCandidate(const Schedule& sch, int stage, const ir::VarNode* axis) {
  struct Finder : ir::IRVisitor {
    const ir::VarNode* axis;
    std::vector<const ir::BufferNode*> found;
    void VisitLoad(const ir::Load* op) override {
      if (!op->indices.empty() && ir::UsesVar(op->indices.back(), axis)) found.push_back(op->buffer.get());
      IRVisitor::VisitLoad(op);
    }
  } finder;
  finder.axis = axis;
  finder.Visit(sch.state().stages[stage].body);
  std::vector<ir::Buffer> reads = sch.state().ReadBuffers(stage);
  for (size_t i = 0; i < reads.size(); ++i) {
    bool is_input = sch.state().ProducerOf(reads[i].get()) < 0;
    if (is_input && std::count(finder.found.begin(), finder.found.end(), reads[i].get()) > 0) {
      return int(i);
    }
  }
  return -1;
}

// The index of `buffer` among the buffers `stage` reads.
int ReadIndexOf(const Schedule& sch, int stage, const ir::BufferNode* buffer) {
  std::vector<ir::Buffer> reads = sch.state().ReadBuffers(stage);
  for (size_t i = 0; i < reads.size(); ++i) {
    if (reads[i].get() == buffer) return int(i);
  }
  return -1;
}

// The dimension of `panel`'s buffer that `stage` walks along with its spatial axis `axis`.
int PanelDimension(const Schedule& sch, int stage, int panel, size_t axis) {
  const Stage& consumer = sch.state().stages[stage];
  return analysis::DimensionWalked(consumer.body, sch.state().stages[panel].output.get(),
                                   consumer.axes[axis].var.get());
}

// Vectorizes a copy stage (one loop per dimension) along dimension `dim`, moved innermost.
Status VectorizeAlong(Schedule& sch, BlockRV copy, size_t dim) {
  TUNED_ASSIGN_OR_RETURN(auto loops, sch.GetLoops(copy));
  if (dim >= loops.size()) return InvalidArgumentError("no dimension to vectorize the copy along");
  if (dim + 1 != loops.size()) {
    std::vector<LoopRV> order(loops.begin(), loops.end());
    std::rotate(order.begin() + long(dim), order.begin() + long(dim) + 1, order.end());
    TUNED_RETURN_IF_ERROR(sch.Reorder(order));
  }
  return sch.Vectorize(loops[dim]);
}

// Packs a panel whose source is strided along the vector dimension `dim` (a weight transposed
// so that its output channels run innermost): the copy walks one vector-wide column of the
// source at a time, outermost, so that the lines each gather touches are touched again by the
// next gathers. Copied row by row instead, every gather fetches `lanes` lines that are evicted
// before their neighbours are read (a row stride of a multiple of 1 KiB maps them onto a few
// cache sets): the pack took a fifth of a 256-channel 3x3 convolution's time.
Status PackAlong(Schedule& sch, BlockRV panel, size_t dim, int lanes) {
  const Stage& st = sch.state().stages[sch.StageOf(panel)];
  const bool strided_source = dim + 1 < st.axes.size();
  if (!strided_source || st.axes[dim].extent <= lanes || st.axes[dim].extent % lanes != 0) {
    return VectorizeAlong(sch, panel, dim);
  }
  TUNED_ASSIGN_OR_RETURN(auto loops, sch.GetLoops(panel));
  TUNED_ASSIGN_OR_RETURN(auto column, sch.Split(loops[dim], {Factor{}, Factor{int64_t(lanes)}}));
  std::vector<LoopRV> order = {column[0]};
  for (size_t l = 0; l < loops.size(); ++l) {
    if (l != dim) order.push_back(loops[l]);
  }
  order.push_back(column[1]);
  TUNED_RETURN_IF_ERROR(sch.Reorder(order));
  return sch.Vectorize(column[1]);
}

// The choices that make one sketch of the CPU rules differ from another.
struct SketchOptions {
  // Stage the input read along the vectorized axis into a contiguous panel (cache_read).
  bool pack = false;
  // Tile the last spatial loop directly, its innermost tile one vector of at most the target's
  // lanes that divides the extent (28 as 4 x 7), where whole target vectors would leave a
  // masked tail vector in every row (28 as 16 + 12).
  bool short_vectors = false;
  // Vectorize along another spatial axis than the last (vector_axis.h), staging the inputs it
  // walks across into panels with that axis innermost.
  bool other_vector_axis = false;
  // Tile as S R S R S rather than S S R R S: the outer reduction tile runs outside the middle
  // spatial tiles, so one pass over a reduction block sweeps a wide spatial tile whose
  // accumulator stays in cache (a GEMV streams whole rows of its matrix; a GEMM keeps a
  // k-block of its panels hot across the middle tiles).
  bool reduce_outside_middle = false;
  // Vectorize a reduction along its reduction axis where that axis is the contiguous one
  // (VectorizesAlongReduction): rfactor into vector-wide partial results, combined per output.
  bool reduction_lanes = false;
  // With reduction_lanes: the row reductions are computed inside the output stage's loop over
  // its rows (softmax: a row's maximum and sum, then its quotients), so a row is read from
  // memory once and its later passes hit the cache.
  bool fused_rows = false;
  // With fused_rows: the elementwise stages that several of a row's passes read (layer norm's
  // centred values, softmax's exponentials) are recomputed in each pass rather than kept in a
  // row buffer, so every pass reads the input row alone: one store and one load less per
  // element against repeating its arithmetic.
  bool recompute_shared = false;
  // With reduction_lanes: a row reduction with fewer outputs than cores is reduced in chunks of
  // its row on every core (TileRowReductionInChunks), then the chunks are added up.
  bool chunked_rows = false;
  // A reduction across rows with a short output row is reduced in chunks of its rows on every
  // core (TileColumnReductionInChunks), then the chunks are added up.
  bool chunked_columns = false;
};

// The narrowest short vector worth its lanes: a quarter of the target's.
int MinShortVector(int lanes) { return std::max(2, lanes / 4); }

// Whether a loop of `extent` has a short vector to offer: whole target vectors do not divide it
// and a divisor of at least MinShortVector lanes does.
bool HasShortVector(int64_t extent, int lanes) {
  if (extent <= lanes || extent % lanes == 0) return false;
  for (int width = lanes; width >= MinShortVector(lanes); --width) {
    if (extent % width == 0) return true;
  }
  return false;
}

Status TileReduction(Schedule& sch, const std::string& name, const SearchContext& ctx,
                     const SketchOptions& options) {
  const bool pack = options.pack;
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  int stage = sch.StageOf(block);
  // Read what is needed now: primitives below add stages and invalidate references into them.
  const Stage& st = sch.state().stages[stage];
  const size_t num_spatial = st.axes.size();
  const int64_t last_extent = num_spatial ? st.axes.back().extent : 0;
  const ir::VarNode* innermost_axis = num_spatial ? st.axes.back().var.get() : nullptr;
  int pack_index = pack && innermost_axis ? PackCandidate(sch, stage, innermost_axis) : -1;
  if (pack && pack_index < 0) return InvalidArgumentError("no input to pack");
  size_t vector_axis = num_spatial - 1;
  std::vector<const ir::BufferNode*> panels;
  if (options.other_vector_axis) {
    std::optional<OtherVectorAxis> other = FindOtherVectorAxis(sch, stage, ctx.vector_lanes);
    if (!other) return InvalidArgumentError("no other axis to vectorize");
    vector_axis = size_t(other->axis);
    panels = other->panels;
  }
  const int64_t vector_extent = num_spatial ? st.axes[vector_axis].extent : 0;
  if (options.reduce_outside_middle && (st.reduce_axes.empty() || num_spatial == 0)) {
    return InvalidArgumentError("no reduction loop to move outside the middle tiles");
  }
  std::string epilogue = EpilogueOf(sch, stage);

  TUNED_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(block, "local"));
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  std::vector<LoopRV> outer, middle, inner, reduce_outer, reduce_inner;
  Status status;
  std::vector<LoopRV> lanes;  // the vector lanes of the last spatial loop, innermost of all
  // The register tile's accumulators (the product of the innermost spatial tiles, in vectors)
  // must fit in the vector registers with the operands: a larger tile spills in the hot loop,
  // and such tiles, most of the space when a few extents allow 7 or 8 rows, measure well
  // enough to hold the search away from tiles that fit. Each loop's innermost tile is sampled
  // within what the loops before it left.
  int64_t accumulators_left = std::max(1, ctx.vector_registers - kOperandRegisters);
  for (size_t l = 0; l < loops.size(); ++l) {
    if (l < num_spatial) {
      bool last = l == vector_axis;  // the loop that holds the vector lanes
      bool counts_registers = !last;  // its innermost tile: rows of accumulators
      LoopRV loop = loops[l];
      int max_inner = last ? 4 * ctx.vector_lanes : kMaxInnerRows;
      int min_inner = 1;
      int padding = kMaxTilePaddingPercent;
      if (last && options.short_vectors) {
        if (!HasShortVector(last_extent, ctx.vector_lanes)) return InvalidArgumentError("no short vector");
        max_inner = ctx.vector_lanes;
        min_inner = MinShortVector(ctx.vector_lanes);
        padding = 0;  // a padded short vector would be a masked one again
      } else if (last && vector_extent > ctx.vector_lanes) {
        // The lanes are split off first (the last vector masked where they do not divide the
        // extent), and the register tile holds up to four vectors of them.
        TUNED_ASSIGN_OR_RETURN(auto split, sch.Split(loop, {Factor{}, Factor{int64_t(ctx.vector_lanes)}}));
        loop = split[0];
        lanes.push_back(split[1]);
        max_inner = kMaxInnerVectors;  // padded too: 17 vectors tile as 6 x 3 (18), 63 as 16 x 4
        counts_registers = true;
      }
      if (counts_registers) max_inner = int(std::min<int64_t>(max_inner, accumulators_left));
      int64_t innermost = 1;
      auto parts = TileLoop(sch, loop, 3, max_inner, padding, status, min_inner, &innermost);
      TUNED_RETURN_IF_ERROR(status);
      if (counts_registers) accumulators_left /= innermost;
      outer.push_back(parts[0]);
      middle.push_back(parts[1]);
      inner.push_back(parts[2]);
    } else {
      auto parts = TileLoop(sch, loops[l], 2, kMaxInnerReduce, kMaxTilePaddingPercent, status);
      TUNED_RETURN_IF_ERROR(status);
      reduce_outer.push_back(parts[0]);
      reduce_inner.push_back(parts[1]);
    }
  }
  // The vector axis's register tile runs innermost, just outside its lanes.
  std::rotate(inner.begin() + long(vector_axis), inner.begin() + long(vector_axis) + 1, inner.end());
  std::vector<LoopRV> order;
  const auto levels = options.reduce_outside_middle
                          ? std::vector<std::vector<LoopRV>*>{&outer, &reduce_outer, &middle, &reduce_inner, &inner, &lanes}
                          : std::vector<std::vector<LoopRV>*>{&outer, &middle, &reduce_outer, &reduce_inner, &inner, &lanes};
  for (auto* level : levels) {
    order.insert(order.end(), level->begin(), level->end());
  }
  TUNED_RETURN_IF_ERROR(sch.Reorder(order));
  if (!middle.empty()) {
    // The accumulator is copied back where its tile is complete: after every reduction loop.
    LoopRV complete = options.reduce_outside_middle && !reduce_outer.empty() ? outer.back() : middle.back();
    TUNED_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, complete));
    TUNED_RETURN_IF_ERROR(VectorizeAlong(sch, write_back, vector_axis));
  }
  if (!epilogue.empty()) {
    TUNED_ASSIGN_OR_RETURN(BlockRV epi, sch.GetBlock(epilogue));
    TUNED_RETURN_IF_ERROR(sch.ReverseComputeInline(epi));
  }
  // A panel of a constant input (a model's weight) is laid out whole, once, by the kernel's
  // prepack entry, in blocks of what one middle tile reads (all of the reduction, one register
  // tile wide), so that the hot loops stream through one run of memory; a panel of any other
  // input is staged per outer tile, in every call.
  auto place_panel = [&](BlockRV panel, const ir::BufferNode* input) -> Status {
    if (!ctx.workload->IsConstantInput(input)) return sch.ComputeAt(panel, outer.back());
    return middle.empty() ? Status::Ok() : sch.BlockLayout(panel, middle.back());
  };
  if (pack_index >= 0) {
    const ir::BufferNode* input = sch.state().ReadBuffers(stage)[size_t(pack_index)].get();
    TUNED_ASSIGN_OR_RETURN(BlockRV panel, sch.CacheRead(block, pack_index, "global"));
    TUNED_RETURN_IF_ERROR(place_panel(panel, input));
    TUNED_ASSIGN_OR_RETURN(auto panel_loops, sch.GetLoops(panel));
    TUNED_RETURN_IF_ERROR(sch.Vectorize(panel_loops.back()));
  }
  for (const ir::BufferNode* input : panels) {
    TUNED_ASSIGN_OR_RETURN(BlockRV panel, sch.CacheRead(block, ReadIndexOf(sch, stage, input), "global"));
    TUNED_RETURN_IF_ERROR(place_panel(panel, input));
    TUNED_RETURN_IF_ERROR(PackAlong(sch, panel, PanelDimension(sch, stage, sch.StageOf(panel), vector_axis),
                                    ctx.vector_lanes));
  }
  if (!lanes.empty()) {
    TUNED_RETURN_IF_ERROR(sch.Vectorize(lanes.back()));
  } else if (!inner.empty()) {
    TUNED_RETURN_IF_ERROR(sch.Vectorize(inner.back()));
  }
  if (!middle.empty()) {
    std::vector<double> probs(UnrollSteps().size(), 1.0 / double(UnrollSteps().size()));
    TUNED_ASSIGN_OR_RETURN(auto unroll, sch.SampleCategorical(UnrollSteps(), probs));
    TUNED_RETURN_IF_ERROR(sch.Annotate(middle.back(), "auto_unroll_max_step", sch.Get(unroll)));
  }
  if (outer.empty()) return Status::Ok();
  TUNED_ASSIGN_OR_RETURN(LoopRV fused, rules::FuseAll(sch, outer));
  return sch.Parallel(fused);
}

Status TileElementwise(Schedule& sch, const std::string& name, const SearchContext& ctx) {
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  if (loops.empty()) return Status::Ok();
  TUNED_ASSIGN_OR_RETURN(auto parts, rules::TileInVectors(sch, loops.back(), ctx));
  std::vector<LoopRV> outer(loops.begin(), loops.end() - 1);
  outer.push_back(parts[0]);
  TUNED_ASSIGN_OR_RETURN(LoopRV parallel, rules::FuseAll(sch, outer));
  return sch.Parallel(parallel);
}

Status ApplyRules(Schedule& sch, const SearchContext& ctx, SketchOptions options) {
  std::vector<std::string> shared = options.fused_rows ? SharedElementwise(sch) : std::vector<std::string>{};
  if (options.recompute_shared) {
    if (shared.empty()) return InvalidArgumentError("no elementwise stage that several passes read");
    shared.clear();
  }
  TUNED_RETURN_IF_ERROR(InlineElementwise(sch, shared));
  // Every option is about tiling a reduction: without one a sketch would be the plain one again.
  bool tiled_a_reduction = false;
  bool chunked_a_reduction = false;
  std::vector<std::string> row_reductions;
  for (const std::string& name : LiveStages(sch)) {
    const Stage* st = LiveStage(sch, name);
    if (st == nullptr || st->attach != schedule::AttachKind::kRoot) continue;
    // Tiled around its reductions below, with the shared stages.
    if (options.fused_rows && (st->is_output || !st->is_reduction())) continue;
    if (st->is_reduction() && options.reduction_lanes &&
        VectorizesAlongReduction(sch, sch.StageOf(*sch.GetBlock(name)), ctx.vector_lanes)) {
      TUNED_RETURN_IF_ERROR(options.chunked_rows ? rules::TileRowReductionInChunks(sch, name, ctx)
                                                 : TileRowReduction(sch, name, ctx, !options.fused_rows));
      tiled_a_reduction = true;
      row_reductions.push_back(name);
    } else if (options.fused_rows) {
      return InvalidArgumentError("stage " + name + " is not a row reduction to fuse");
    } else if (st->is_reduction()) {
      // Chunks where the reduction crosses rows into a short row; any other reduction of the
      // workload (the total of the column sums) is tiled as in the plain sketch.
      if (options.chunked_columns && rules::ColumnChunksApply(sch, name, ctx).ok()) {
        TUNED_RETURN_IF_ERROR(rules::TileColumnReductionInChunks(sch, name, ctx));
        chunked_a_reduction = true;
      } else {
        TUNED_RETURN_IF_ERROR(TileReduction(sch, name, ctx, options));
      }
      tiled_a_reduction = true;
      // Pack, or vectorize along another axis, the first reduction only: later ones read
      // what it produced.
      options.pack = false;
      options.other_vector_axis = false;
    } else {
      TUNED_RETURN_IF_ERROR(TileElementwise(sch, name, ctx));
    }
  }
  if (!tiled_a_reduction &&
      (options.pack || options.short_vectors || options.other_vector_axis || options.reduce_outside_middle ||
       options.chunked_columns)) {
    return InvalidArgumentError("no reduction to tile");
  }
  if (options.chunked_columns && !chunked_a_reduction) {
    return InvalidArgumentError("no reduction across rows to reduce in chunks");
  }
  if (options.reduction_lanes && row_reductions.empty()) {
    return InvalidArgumentError("no reduction to vectorize along its reduction axis");
  }
  if (options.fused_rows) {
    std::vector<std::string> in_rows;
    for (const std::string& name : LiveStages(sch)) {
      bool listed = std::count(row_reductions.begin(), row_reductions.end(), name) ||
                    std::count(shared.begin(), shared.end(), name);
      if (listed) in_rows.push_back(name);
    }
    return FuseRows(sch, in_rows, ctx);
  }
  return Status::Ok();
}

}  // namespace

namespace rules {

StatusOr<LoopRV> FuseAll(Schedule& sch, const std::vector<LoopRV>& loops) {
  if (loops.size() == 1) return loops[0];
  return sch.Fuse(loops);
}

StatusOr<std::vector<LoopRV>> TileInVectors(Schedule& sch, LoopRV loop, const SearchContext& ctx) {
  Status status;
  auto parts = TileLoop(sch, loop, 2, 4 * ctx.vector_lanes, kMaxTilePaddingPercent, status);
  TUNED_RETURN_IF_ERROR(status);
  TUNED_RETURN_IF_ERROR(sch.Vectorize(parts[1]));
  return parts;
}

}  // namespace rules

const std::vector<int64_t>& UnrollSteps() {
  static const std::vector<int64_t> kSteps = {0, 16, 64, 512};
  return kSteps;
}

bool IsGpuContext(const SearchContext& context) {
  StatusOr<target::Target> target = target::ParseTarget(context.target);
  return target.ok() && target->kind != target::TargetKind::kLlvmCpu;
}

std::vector<Sketch> GenerateSketches(const SearchContext& context) {
  if (IsGpuContext(context)) return GenerateGpuSketches(context);
  std::vector<Sketch> sketches;
  // A sketch exists only where its rules apply: something to pack, a short vector to use.
  std::vector<std::pair<std::string, SketchOptions>> variants = {
      {"tile", {}},
      {"tile+pack", {.pack = true}},
      {"tile+short-vector", {.short_vectors = true}},
      {"tile+pack+short-vector", {.pack = true, .short_vectors = true}},
      {"tile+other-vector-axis", {.other_vector_axis = true}},
      {"tile+reduce-outside", {.reduce_outside_middle = true}},
      {"tile+reduction-lanes", {.reduction_lanes = true}},
      {"tile+reduction-lanes+fused-rows", {.reduction_lanes = true, .fused_rows = true}},
      {"tile+reduction-lanes+fused-rows+recompute",
       {.reduction_lanes = true, .fused_rows = true, .recompute_shared = true}},
      {"tile+reduction-lanes+chunks", {.reduction_lanes = true, .chunked_rows = true}},
      {"tile+column-chunks", {.chunked_columns = true}},
  };
  for (const auto& [name, options] : variants) {
    Schedule probe(context.workload, 0);
    bool plain = !options.pack && !options.short_vectors && !options.other_vector_axis &&
                 !options.reduce_outside_middle && !options.reduction_lanes && !options.chunked_columns;
    if (!plain && !ApplyRules(probe, context, options).ok()) continue;
    sketches.push_back({name, [context, options](Schedule& sch) { return ApplyRules(sch, context, options); }});
  }
  return sketches;
}

StatusOr<Schedule> SampleSketch(const SearchContext& context, const Sketch& sketch, uint64_t seed) {
  Schedule sch(context.workload, seed);
  TUNED_RETURN_IF_ERROR(sketch.apply(sch).WithContext("sketch " + sketch.name));
  return sch;
}

}  // namespace tuned::search
