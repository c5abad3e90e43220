#ifndef TUNED_SERVER_SEARCH_SKETCH_RULES_INTERNAL_H_
#define TUNED_SERVER_SEARCH_SKETCH_RULES_INTERNAL_H_

/// \file
/// Steps the CPU and the GPU design-space rules share (design_space.cc, gpu_design_space.cc):
/// finding live stages, inlining elementwise producers, the epilogue a tile can take, counting a
/// stage's points.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/schedule/schedule.h"

namespace tuned::search::rules {

/// The points of `axes`: the product of their extents (a stage's outputs, or its terms per output).
int64_t Points(const std::vector<ir::Axis>& axes);
/// Names of the live stages, in order.
std::vector<std::string> LiveStages(const schedule::Schedule& sch);
/// The live stage named `name`, or null once a rule has inlined it.
const schedule::Stage* LiveStage(const schedule::Schedule& sch, const std::string& name);
/// Its index in the schedule's stages (what StageOf gives for its block), without a get_block
/// in the trace; nullopt once a rule has inlined it.
std::optional<int> LiveStageIndex(const schedule::Schedule& sch, const std::string& name);
/// Inlines every live stage that is neither the output nor a reduction, except those in `keep`.
Status InlineElementwise(schedule::Schedule& sch, const std::vector<std::string>& keep = {});
/// An elementwise consumer that reads `stage`'s output at its own indices, or "".
std::string EpilogueOf(const schedule::Schedule& sch, int stage);

}  // namespace tuned::search::rules

#endif  // TUNED_SERVER_SEARCH_SKETCH_RULES_INTERNAL_H_
