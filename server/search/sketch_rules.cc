#include "server/search/sketch_rules_internal.h"

#include <algorithm>
#include <optional>

namespace tuned::search::rules {

using schedule::BlockRV;
using schedule::Schedule;
using schedule::Stage;

int64_t Points(const std::vector<ir::Axis>& axes) {
  int64_t points = 1;
  for (const ir::Axis& a : axes) points *= a.extent;
  return points;
}

std::vector<std::string> LiveStages(const Schedule& sch) {
  std::vector<std::string> names;
  for (int id : sch.state().order) {
    if (sch.state().stages[id].is_live()) names.push_back(sch.state().stages[id].name);
  }
  return names;
}

std::optional<int> LiveStageIndex(const Schedule& sch, const std::string& name) {
  const std::vector<Stage>& stages = sch.state().stages;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].is_live() && stages[i].name == name) return int(i);
  }
  return std::nullopt;
}

const Stage* LiveStage(const Schedule& sch, const std::string& name) {
  std::optional<int> index = LiveStageIndex(sch, name);
  return index ? &sch.state().stages[*index] : nullptr;
}

Status InlineElementwise(Schedule& sch, const std::vector<std::string>& keep) {
  for (const std::string& name : LiveStages(sch)) {
    const Stage* st = LiveStage(sch, name);
    if (st == nullptr || st->is_output || st->is_reduction()) continue;
    if (std::find(keep.begin(), keep.end(), name) != keep.end()) continue;
    TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
    TUNED_RETURN_IF_ERROR(sch.ComputeInline(block));
  }
  return Status::Ok();
}

std::string EpilogueOf(const Schedule& sch, int stage) {
  std::vector<int> consumers = sch.state().ConsumersOf(stage);
  if (consumers.size() != 1) return "";
  const Stage& c = sch.state().stages[consumers[0]];
  const Stage& producer = sch.state().stages[stage];
  if (c.is_reduction() || c.axes.size() != producer.axes.size()) return "";
  for (size_t d = 0; d < c.axes.size(); ++d) {
    if (c.axes[d].extent != producer.axes[d].extent) return "";  // a broadcast, not a tile's epilogue
  }
  // A consumer that also reads another stage (softmax's quotient of two row reductions) would
  // need that stage inside this one's tile.
  for (const ir::Buffer& read : sch.state().ReadBuffers(consumers[0])) {
    int p = sch.state().ProducerOf(read.get());
    if (p >= 0 && p != stage) return "";
  }
  return c.name;
}

}  // namespace tuned::search::rules
