#include "compiler/schedule/schedule_state.h"

#include <algorithm>

#include "common/check.h"
#include "compiler/ir/ir_mutator.h"

namespace tuned::schedule {

int Stage::LeafPosition(int loop) const {
  auto it = std::find(leaves.begin(), leaves.end(), loop);
  return it == leaves.end() ? -1 : int(it - leaves.begin());
}

std::vector<int64_t> Stage::RootExtents() const {
  std::vector<int64_t> extents;
  for (const ir::Axis& a : axes) extents.push_back(a.extent);
  for (const ir::Axis& a : reduce_axes) extents.push_back(a.extent);
  return extents;
}

std::vector<int64_t> Stage::LoopExtents(const std::vector<int64_t>& root_extents) const {
  std::vector<int64_t> ext(loops.size(), 0);
  std::copy(root_extents.begin(), root_extents.end(), ext.begin());
  for (const LoopRel& r : rels) {
    if (r.kind == LoopRelKind::kSplit) {
      int64_t parent = ext[r.parent_or_outer];
      ext[r.outer_or_inner] = (parent + r.factor - 1) / r.factor;
      ext[r.inner_or_fused] = std::min(r.factor, parent);
    } else {
      ext[r.inner_or_fused] = ext[r.parent_or_outer] * ext[r.outer_or_inner];
    }
  }
  return ext;
}

int ScheduleState::ProducerOf(const ir::BufferNode* buffer) const {
  for (int id : order) {
    if (stages[id].is_live() && stages[id].output.get() == buffer) return id;
  }
  return -1;
}

namespace {

struct LoadCollector : ir::IRVisitor {
  std::vector<ir::Buffer> buffers;
  void VisitLoad(const ir::Load* op) override {
    bool seen = false;
    for (const ir::Buffer& b : buffers) seen |= b == op->buffer;
    if (!seen) buffers.push_back(op->buffer);
    IRVisitor::VisitLoad(op);
  }
};

}  // namespace

std::vector<ir::Buffer> ScheduleState::ReadBuffers(int stage) const {
  LoadCollector collector;
  collector.Visit(stages[stage].body);
  return collector.buffers;
}

std::vector<int> ScheduleState::ConsumersOf(int stage) const {
  std::vector<int> consumers;
  for (int id : order) {
    if (id == stage || !stages[id].is_live()) continue;
    for (const ir::Buffer& b : ReadBuffers(id)) {
      if (b == stages[stage].output) {
        consumers.push_back(id);
        break;
      }
    }
  }
  return consumers;
}

bool ScheduleState::IsAttachedUnder(int inner, int outer) const {
  for (int s = inner, hops = 0; hops <= int(stages.size()); ++hops) {
    const Stage& st = stages[s];
    if (st.attach != AttachKind::kComputeAt && st.attach != AttachKind::kReverseComputeAt) return false;
    if (st.attach_stage == outer) return true;
    s = st.attach_stage;
  }
  return false;
}

ScheduleState MakeInitialState(std::shared_ptr<const ir::Workload> workload) {
  ScheduleState state;
  const auto& defs = workload->stages();
  for (size_t i = 0; i < defs.size(); ++i) {
    const ir::ComputeStage& def = defs[i];
    Stage st;
    st.name = def.name;
    st.output = def.output;
    st.axes = def.axes;
    st.reduce_axes = def.reduce_axes;
    st.reduce = def.reduce;
    st.body = def.body;
    st.is_output = i + 1 == defs.size();
    for (const ir::Axis& a : def.axes) st.loops.push_back({a.var->name, false});
    for (const ir::Axis& a : def.reduce_axes) st.loops.push_back({a.var->name, true});
    for (int l = 0; l < st.num_root_loops(); ++l) st.leaves.push_back(l);
    state.order.push_back(int(state.stages.size()));
    state.stages.push_back(std::move(st));
  }
  state.workload = std::move(workload);
  return state;
}

}  // namespace tuned::schedule
