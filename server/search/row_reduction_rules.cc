// The CPU rules of reductions along a contiguous row (cpu_rules_internal.h): softmax's maximum
// and sum, layer norm's moments, a mean over the last axis, a matrix-vector product along rows.

#include <algorithm>
#include <optional>

#include "server/search/cpu_rules_internal.h"
#include "server/search/sketch_rules_internal.h"
#include "server/search/vector_axis.h"

namespace tuned::search::rules {

using schedule::BlockRV;
using schedule::Factor;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::Stage;

namespace {

// The fewest vectors of a chunk's row: shorter chunks cost more to start and combine than their
// share of the row.
constexpr int kMinChunkVectors = 64;

// How many iterations of a parallel row loop ahead its inputs are prefetched (none, one or
// two): a row's transfer then overlaps the compute on the row before instead of following it.
// A softmax over 4096x4096, one trace: about 15% faster one row ahead (docs/search.md).
Status SamplePrefetch(Schedule& sch, LoopRV rows) {
  TUNED_ASSIGN_OR_RETURN(auto ahead, sch.SampleCategorical({0, 1, 2}, {1.0 / 3, 1.0 / 3, 1.0 / 3}));
  return sch.Annotate(rows, "prefetch_ahead", sch.Get(ahead));
}

}  // namespace

Status TileRowReduction(Schedule& sch, const std::string& name, const SearchContext& ctx, bool parallel,
                        int max_rows_together) {
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  const int stage = sch.StageOf(block);
  const std::string epilogue = EpilogueOf(sch, stage);
  const int64_t extent = sch.state().stages[stage].reduce_axes.back().extent;
  std::vector<int64_t> widths;
  for (int vectors : {1, 2, 4}) {
    if (int64_t(vectors) * ctx.vector_lanes < extent) widths.push_back(int64_t(vectors) * ctx.vector_lanes);
  }
  std::vector<double> probs(widths.size(), 1.0 / double(widths.size()));
  TUNED_ASSIGN_OR_RETURN(auto width, sch.SampleCategorical(widths, probs));
  TUNED_ASSIGN_OR_RETURN(BlockRV partial, sch.RFactor(block, width));
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  std::vector<LoopRV> spatial(loops.begin(), loops.end() - 1);
  std::optional<LoopRV> output_loop;
  if (!spatial.empty()) {
    TUNED_ASSIGN_OR_RETURN(output_loop, FuseAll(sch, spatial));
    if (parallel && max_rows_together > 1) {
      // Several outputs' rows reduced together, one row after another within each step: each
      // core reads that many streams at once, which keeps its prefetchers busy where one
      // stream leaves memory bandwidth unused, and that many more accumulators hide the add.
      TUNED_ASSIGN_OR_RETURN(auto rows, sch.SamplePerfectTile(*output_loop, 2, max_rows_together));
      TUNED_ASSIGN_OR_RETURN(auto split, sch.Split(*output_loop, {rows[0], rows[1]}));
      output_loop = split[0];
    }
    TUNED_RETURN_IF_ERROR(sch.ComputeAt(partial, *output_loop));
  }
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> partial_loops, sch.GetLoops(partial));
  // The reduction loops, then the spatial ones (the rows reduced together) and the lanes: the
  // lanes go innermost.
  const size_t lane_position = sch.state().stages[sch.StageOf(partial)].axes.size() - 1;
  std::vector<LoopRV> order(partial_loops.begin() + long(lane_position) + 1, partial_loops.end());
  order.insert(order.end(), partial_loops.begin(), partial_loops.begin() + long(lane_position) + 1);
  TUNED_RETURN_IF_ERROR(sch.Reorder(order));
  for (size_t i = 0; i < lane_position; ++i) TUNED_RETURN_IF_ERROR(sch.Unroll(partial_loops[i]));
  TUNED_ASSIGN_OR_RETURN(auto lanes, sch.Split(partial_loops[lane_position],
                                               {Factor{}, Factor{int64_t(ctx.vector_lanes)}}));
  TUNED_RETURN_IF_ERROR(sch.Vectorize(lanes[1]));
  TUNED_RETURN_IF_ERROR(sch.Unroll(lanes[0]));
  if (!epilogue.empty() && output_loop) {
    TUNED_ASSIGN_OR_RETURN(BlockRV epi, sch.GetBlock(epilogue));
    TUNED_RETURN_IF_ERROR(sch.ReverseComputeAt(epi, *output_loop));
  }
  if (!output_loop || !parallel) return Status::Ok();
  TUNED_RETURN_IF_ERROR(SamplePrefetch(sch, *output_loop));
  return sch.Parallel(*output_loop);
}

Status TileRowReductionInChunks(Schedule& sch, const std::string& name, const SearchContext& ctx) {
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  const Stage& st = sch.state().stages[sch.StageOf(block)];
  const int64_t outputs = Points(st.axes);
  if (outputs >= ctx.num_cores) return InvalidArgumentError("stage " + name + " has an output for every core");
  // A chunk per core. More per core, or several read together, measured no faster (a 64 MiB
  // sum, docs/search.md); the parallel loop hands each core a contiguous range anyway.
  const int64_t chunks = (ctx.num_cores + outputs - 1) / outputs;
  if (chunks >= st.reduce_axes.front().extent || Points(st.reduce_axes) / chunks < int64_t(kMinChunkVectors) * ctx.vector_lanes) {
    return InvalidArgumentError("stage " + name + " is too short to reduce in chunks");
  }
  TUNED_ASSIGN_OR_RETURN(BlockRV chunked, sch.RFactor(block, chunks, schedule::RFactorOrder::kChunks));
  return TileRowReduction(sch, sch.state().stages[sch.StageOf(chunked)].name, ctx, true, /*max_rows_together=*/1);
}

std::vector<std::string> SharedElementwise(const Schedule& sch) {
  std::vector<std::string> shared;
  for (int id : sch.state().order) {
    const Stage& st = sch.state().stages[id];
    if (st.is_live() && !st.is_output && !st.is_reduction() && sch.state().ConsumersOf(id).size() > 1) {
      shared.push_back(st.name);
    }
  }
  return shared;
}

Status FuseRows(Schedule& sch, const std::vector<std::string>& in_rows, const SearchContext& ctx) {
  std::string output;
  for (const std::string& name : LiveStages(sch)) {
    const Stage* st = LiveStage(sch, name);
    if (st->is_output && !st->is_reduction() && st->attach == schedule::AttachKind::kRoot) output = name;
  }
  if (output.empty() || in_rows.empty()) return InvalidArgumentError("no rows to fuse reductions into");
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(output));
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  if (loops.size() < 2) return InvalidArgumentError("no rows to fuse reductions into");
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> row_vectors, TileInVectors(sch, loops.back(), ctx));
  std::vector<LoopRV> outer(loops.begin(), loops.end() - 1);
  TUNED_ASSIGN_OR_RETURN(LoopRV rows, FuseAll(sch, outer));
  if (SharesAnInputAcrossRows(sch, sch.StageOf(block))) {
    // A step of the output covers one to kMaxFusedRowsTogether rows (a decision), each vector
    // of the input they share loaded once for them all; their reductions run one row after
    // another before it. Without such an input, the decision only widened the space: a softmax
    // tuned no faster with it.
    TUNED_ASSIGN_OR_RETURN(auto together, sch.SamplePerfectTile(rows, 2, kMaxFusedRowsTogether));
    TUNED_ASSIGN_OR_RETURN(auto row_tiles, sch.Split(rows, {together[0], together[1]}));
    TUNED_RETURN_IF_ERROR(sch.Reorder({row_tiles[0], row_vectors[0], row_tiles[1], row_vectors[1]}));
    TUNED_RETURN_IF_ERROR(sch.Unroll(row_tiles[1]));
    rows = row_tiles[0];
  }
  for (auto it = in_rows.rbegin(); it != in_rows.rend(); ++it) {
    TUNED_ASSIGN_OR_RETURN(BlockRV inner, sch.GetBlock(*it));
    if (!sch.state().stages[sch.StageOf(inner)].is_reduction()) {
      TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> inner_loops, sch.GetLoops(inner));
      TUNED_ASSIGN_OR_RETURN(auto vectors, sch.Split(inner_loops.back(), {Factor{}, Factor{int64_t(ctx.vector_lanes)}}));
      TUNED_RETURN_IF_ERROR(sch.Vectorize(vectors[1]));
    }
    TUNED_RETURN_IF_ERROR(sch.ComputeAt(inner, rows));
  }
  TUNED_RETURN_IF_ERROR(SamplePrefetch(sch, rows));
  return sch.Parallel(rows);
}

}  // namespace tuned::search::rules
