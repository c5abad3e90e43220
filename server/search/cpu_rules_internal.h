#ifndef TUNED_SERVER_SEARCH_CPU_RULES_INTERNAL_H_
#define TUNED_SERVER_SEARCH_CPU_RULES_INTERNAL_H_

/// \file
/// Steps of the CPU design space (design_space.cc) that live in files of their own: the rules of
/// reductions along a contiguous row (row_reduction_rules.cc) and across rows
/// (column_reduction_rules.cc), and the vector tiling of a loop they share with the elementwise
/// rule.

#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"
#include "server/search/search_strategy.h"

namespace tuned::search::rules {

/// `loops` (at least one, adjacent) as one loop: fused, or the loop itself when it is alone.
StatusOr<schedule::LoopRV> FuseAll(schedule::Schedule& sch, const std::vector<schedule::LoopRV>& loops);

/// Tiles `loop` in two, the inner tile at most four of the target's vectors (padded where that
/// does not divide the extent) and vectorized; returns {outer, inner}.
StatusOr<std::vector<schedule::LoopRV>> TileInVectors(schedule::Schedule& sch, schedule::LoopRV loop,
                                                      const SearchContext& ctx);

/// Most vectors per row of a register tile (with 8 rows: the 16 vector registers of AVX2 are
/// 4 x 4 accumulators).
inline constexpr int kMaxInnerVectors = 4;

/// The most rows a parallel row reduction reduces together.
inline constexpr int kMaxRowsTogether = 8;

/// A reduction whose vectors run along its reduction axis (VectorizesAlongReduction, vector_axis.h):
/// partial results one, two or four vectors wide (rfactor; several vectors are independent
/// accumulators that hide the add's latency) reduced along the row and combined, one output
/// element at a time, an epilogue after each; the outputs are parallel unless `parallel` is false
/// (the reduction goes inside a consumer's parallel loop), up to `max_rows_together` of them
/// reduced together in each step (a decision).
Status TileRowReduction(schedule::Schedule& sch, const std::string& name, const SearchContext& ctx, bool parallel,
                        int max_rows_together = kMaxRowsTogether);

/// A row reduction with fewer outputs than cores (a sum over a whole tensor, a norm) split into
/// contiguous chunks of its first reduction axis, one per core (rfactor in chunks): the chunks
/// are tiled as rows of their own (TileRowReduction, in parallel, one at a time), and the block
/// adds up each output's chunks after them. Fails where the outputs already fill the cores.
Status TileRowReductionInChunks(schedule::Schedule& sch, const std::string& name, const SearchContext& ctx);

/// A reduction across rows (ReducesAcrossRows, vector_axis.h) whose output row fits in a register
/// tile's row of vectors (kMaxInnerVectors), too short to share among the cores (a sum over a
/// batch of rows, a bias's gradient): its first reduction axis split into contiguous chunks of
/// whole rows, one per core (rfactor in chunks), each chunk streamed once with the output row's
/// vectors in registers, and the block adding up the chunks after them, an epilogue after each
/// output. Fails where ColumnChunksApply does.
Status TileColumnReductionInChunks(schedule::Schedule& sch, const std::string& name, const SearchContext& ctx);
/// Whether TileColumnReductionInChunks applies to stage `name`; otherwise why not (the stage
/// does not reduce across rows, its output row is longer, or its rows are too few).
Status ColumnChunksApply(const schedule::Schedule& sch, const std::string& name, const SearchContext& ctx);

/// Elementwise stages that more than one stage reads (softmax's exponentials: the row sum and the
/// quotients): with fused rows they are computed once per row rather than inlined into each reader.
std::vector<std::string> SharedElementwise(const schedule::Schedule& sch);

/// The most rows one step of fused rows covers.
inline constexpr int kMaxFusedRowsTogether = 4;

/// The output stage's rows (every loop but the last, fused) in parallel, its last loop in vectors,
/// and the stages `in_rows` (row reductions and shared elementwise stages, producers first)
/// computed inside each step, so a row is read from memory once and its later passes hit the
/// cache. A step is one row, or, where the output reads an input every row shares
/// (SharesAnInputAcrossRows), one to kMaxFusedRowsTogether rows (a decision) unrolled inside
/// each vector of the last loop.
Status FuseRows(schedule::Schedule& sch, const std::vector<std::string>& in_rows, const SearchContext& ctx);

}  // namespace tuned::search::rules

#endif  // TUNED_SERVER_SEARCH_CPU_RULES_INTERNAL_H_
