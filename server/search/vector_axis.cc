#include "server/search/vector_axis.h"

#include <map>

#include "compiler/analysis/access.h"
#include "compiler/ir/ir_mutator.h"

namespace tuned::search {
namespace {

using schedule::Stage;

// Every load in the stage's body of a workload input, or with `stages_too` of any buffer.
std::vector<const ir::Load*> Loads(const schedule::ScheduleState& state, const Stage& st, bool stages_too) {
  struct Finder : ir::IRVisitor {
    const schedule::ScheduleState* state;
    bool stages_too;
    std::vector<const ir::Load*> loads;
    void VisitLoad(const ir::Load* op) override {
      if (stages_too || state->ProducerOf(op->buffer.get()) < 0) loads.push_back(op);
      IRVisitor::VisitLoad(op);
    }
  } finder;
  finder.state = &state;
  finder.stages_too = stages_too;
  finder.Visit(st.body);
  return finder.loads;
}

// Every axis of the stage, spatial and reduction, over its whole extent.
ir::VarBounds BoundsOf(const Stage& st) {
  ir::VarBounds bounds;
  for (const auto* axes : {&st.axes, &st.reduce_axes}) {
    for (const ir::Axis& a : *axes) bounds[a.var.get()] = ir::Interval{0, a.extent - 1};
  }
  return bounds;
}

// How a load moves along an axis: not at all, contiguously, or with unit stride in one
// dimension that is not the last (a panel makes it contiguous); anything else: nullopt.
enum class AlongAxis { kInvariant, kContiguous, kPanel };
std::optional<AlongAxis> Classify(const ir::Load& load, const ir::Var& axis, const ir::VarBounds& bounds) {
  std::optional<int64_t> flat =
      analysis::StrideAlong(analysis::RowMajorOffset(load.buffer->shape, load.indices), axis, bounds);
  if (flat && *flat == 0) return AlongAxis::kInvariant;
  if (flat && *flat == 1) return AlongAxis::kContiguous;
  int walked = 0;
  for (const ir::Expr& index : load.indices) {
    if (!ir::UsesVar(index, axis.get())) continue;
    std::optional<int64_t> stride = analysis::StrideAlong(index, axis, bounds);
    if (!stride || *stride != 1) return std::nullopt;
    ++walked;
  }
  if (walked != 1) return std::nullopt;
  return AlongAxis::kPanel;
}

}  // namespace

std::optional<OtherVectorAxis> FindOtherVectorAxis(const schedule::Schedule& sch, int stage, int lanes) {
  const Stage& st = sch.state().stages[stage];
  if (st.axes.size() < 2) return std::nullopt;
  const ir::VarBounds bounds = BoundsOf(st);
  std::vector<const ir::Load*> loads = Loads(sch.state(), st, /*stages_too=*/false);
  const ir::Axis& last = st.axes.back();
  bool last_is_poor = last.extent % lanes != 0;
  for (const ir::Load* load : loads) {
    std::optional<AlongAxis> along = Classify(*load, last.var, bounds);
    last_is_poor |= !along || (*along != AlongAxis::kInvariant && *along != AlongAxis::kContiguous);
  }
  if (!last_is_poor) return std::nullopt;

  std::optional<OtherVectorAxis> best;
  for (size_t a = 0; a + 1 < st.axes.size(); ++a) {
    const ir::Axis& axis = st.axes[a];
    if (axis.extent % lanes != 0) continue;  // whole vectors only: no masks in the hot loop
    OtherVectorAxis candidate{int(a), {}};
    bool usable = true;
    for (const ir::Load* load : loads) {
      std::optional<AlongAxis> along = Classify(*load, axis.var, bounds);
      usable &= along.has_value();
      if (!usable) break;
      bool listed = false;
      for (const ir::BufferNode* b : candidate.panels) listed |= b == load->buffer.get();
      if (*along == AlongAxis::kPanel && !listed) candidate.panels.push_back(load->buffer.get());
    }
    if (usable && (!best || axis.extent > st.axes[best->axis].extent)) best = candidate;
  }
  return best;
}

bool VectorizesAlongReduction(const schedule::Schedule& sch, int stage, int lanes) {
  const Stage& st = sch.state().stages[stage];
  if (st.reduce_axes.empty() || st.reduce_axes.back().extent < 2 * lanes) return false;
  const ir::VarBounds bounds = BoundsOf(st);
  bool reduction_contiguous = false;
  for (const ir::Load* load : Loads(sch.state(), st, /*stages_too=*/true)) {
    std::optional<AlongAxis> along = Classify(*load, st.reduce_axes.back().var, bounds);
    reduction_contiguous |= along == AlongAxis::kContiguous;
    if (!st.axes.empty() && Classify(*load, st.axes.back().var, bounds) == AlongAxis::kContiguous) return false;
  }
  return reduction_contiguous;
}

bool ReducesAcrossRows(const schedule::Schedule& sch, int stage) {
  const Stage& st = sch.state().stages[stage];
  if (st.axes.empty() || st.reduce_axes.empty()) return false;
  const ir::VarBounds bounds = BoundsOf(st);
  for (const ir::Load* load : Loads(sch.state(), st, /*stages_too=*/true)) {
    std::optional<AlongAxis> along_rows = Classify(*load, st.reduce_axes.front().var, bounds);
    if (Classify(*load, st.axes.back().var, bounds) == AlongAxis::kContiguous && along_rows != AlongAxis::kInvariant &&
        along_rows != AlongAxis::kContiguous) {
      return true;
    }
  }
  return false;
}

bool SharesAnInputAcrossRows(const schedule::Schedule& sch, int stage) {
  const Stage& st = sch.state().stages[stage];
  if (st.axes.size() < 2) return false;
  const ir::VarBounds bounds = BoundsOf(st);
  for (const ir::Load* load : Loads(sch.state(), st, /*stages_too=*/false)) {
    bool same_for_every_row = true;
    for (size_t a = 0; a + 1 < st.axes.size(); ++a) {
      same_for_every_row &= Classify(*load, st.axes[a].var, bounds) == AlongAxis::kInvariant;
    }
    if (same_for_every_row && Classify(*load, st.axes.back().var, bounds) != AlongAxis::kInvariant) return true;
  }
  return false;
}

}  // namespace tuned::search
