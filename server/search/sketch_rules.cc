#include "server/search/sketch_rules_internal.h"

namespace tuned::search::rules {

using schedule::BlockRV;
using schedule::Schedule;
using schedule::Stage;

std::vector<std::string> LiveStages(const Schedule& sch) {
  std::vector<std::string> names;
  for (int id : sch.state().order) {
    if (sch.state().stages[id].is_live()) names.push_back(sch.state().stages[id].name);
  }
  return names;
}

const Stage* LiveStage(const Schedule& sch, const std::string& name) {
  for (const Stage& st : sch.state().stages) {
    if (st.is_live() && st.name == name) return &st;
  }
  return nullptr;
}

Status InlineElementwise(Schedule& sch) {
  for (const std::string& name : LiveStages(sch)) {
    const Stage* st = LiveStage(sch, name);
    if (st == nullptr || st->is_output || st->is_reduction()) continue;
    TUNED_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
    TUNED_RETURN_IF_ERROR(sch.ComputeInline(block));
  }
  return Status::Ok();
}

std::string EpilogueOf(const Schedule& sch, int stage) {
  std::vector<int> consumers = sch.state().ConsumersOf(stage);
  if (consumers.size() != 1) return "";
  const Stage& c = sch.state().stages[consumers[0]];
  if (c.is_reduction() || c.axes.size() != sch.state().stages[stage].axes.size()) return "";
  return c.name;
}

}  // namespace tuned::search::rules
