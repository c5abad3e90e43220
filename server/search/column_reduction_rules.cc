// The CPU rule of a reduction across rows with a short output row (cpu_rules_internal.h): a sum
// over a batch of rows, a bias's gradient.

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

// The fewest rows of a chunk: shorter chunks cost more to start and add up than their share.
constexpr int64_t kMinChunkRows = 64;

}  // namespace

Status ColumnChunksApply(const Schedule& sch, const std::string& name, const SearchContext& ctx) {
  std::optional<int> found = LiveStageIndex(sch, name);  // read only: no get_block in the trace
  if (!found) return InvalidArgumentError("no stage " + name);
  const int stage = *found;
  const Stage& st = sch.state().stages[stage];
  if (!ReducesAcrossRows(sch, stage)) return InvalidArgumentError("stage " + name + " does not reduce across rows");
  // The whole output row is kept in vector registers while a chunk streams its rows.
  if (Points(st.axes) > int64_t(kMaxInnerVectors) * ctx.vector_lanes) {
    return InvalidArgumentError("stage " + name + " has outputs enough to share among the cores");
  }
  // A chunk per core, as for a row reduction (TileRowReductionInChunks).
  const int64_t chunks = ctx.num_cores;
  if (chunks < 2 || st.reduce_axes.front().extent < chunks * kMinChunkRows) {
    return InvalidArgumentError("stage " + name + " is too short to reduce in chunks");
  }
  return Status::Ok();
}

Status TileColumnReductionInChunks(Schedule& sch, const std::string& name, const SearchContext& ctx) {
  TUNED_RETURN_IF_ERROR(ColumnChunksApply(sch, name, ctx));
  TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  const int stage = sch.StageOf(block);
  const size_t num_spatial = sch.state().stages[stage].axes.size();
  const int64_t chunks = ctx.num_cores;
  const std::string epilogue = EpilogueOf(sch, stage);
  TUNED_ASSIGN_OR_RETURN(BlockRV partial, sch.RFactor(block, chunks, schedule::RFactorOrder::kChunks));
  TUNED_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(partial, "local"));
  // The partial block's loops: the output's, the chunk, then the reduction's.
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(partial));
  const LoopRV chunk = loops[num_spatial];
  TUNED_ASSIGN_OR_RETURN(auto lanes, sch.Split(loops[num_spatial - 1], {Factor{}, Factor{int64_t(ctx.vector_lanes)}}));
  // Each core streams its chunk's rows once, the whole output row innermost: its vectors
  // accumulate in registers, and the write-back stores them when the chunk is done.
  std::vector<LoopRV> order = {chunk};
  order.insert(order.end(), loops.begin(), loops.begin() + long(num_spatial) - 1);
  order.insert(order.end(), loops.begin() + long(num_spatial) + 1, loops.end());
  order.push_back(lanes[0]);
  order.push_back(lanes[1]);
  TUNED_RETURN_IF_ERROR(sch.Reorder(order));
  TUNED_RETURN_IF_ERROR(sch.Unroll(lanes[0]));
  TUNED_RETURN_IF_ERROR(sch.Vectorize(lanes[1]));
  TUNED_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, chunk));
  TUNED_RETURN_IF_ERROR(sch.Parallel(chunk));
  if (epilogue.empty()) return Status::Ok();
  // The epilogue of each output right after its chunks are added up: a parallel loop of its own
  // over a row this short would cost more to start than it computes.
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> combined, sch.GetLoops(block));
  TUNED_ASSIGN_OR_RETURN(BlockRV epi, sch.GetBlock(epilogue));
  return sch.ReverseComputeAt(epi, combined[num_spatial - 1]);
}

}  // namespace tuned::search::rules
