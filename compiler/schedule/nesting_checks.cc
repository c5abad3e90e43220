#include "compiler/schedule/nesting_checks.h"

#include <algorithm>

namespace tuned::schedule {

Status CheckReductionNesting(const ScheduleState& state, int stage, const std::vector<int>& leaves) {
  const Stage& st = state.stages[stage];
  if (!st.is_reduction()) return Status::Ok();
  auto position = [&](int loop) {
    auto it = std::find(leaves.begin(), leaves.end(), loop);
    return it == leaves.end() ? -1 : int(it - leaves.begin());
  };
  int first_reduce = int(leaves.size());
  for (size_t p = 0; p < leaves.size(); ++p) {
    if (st.loops[leaves[p]].is_reduce) {
      first_reduce = int(p);
      break;
    }
  }
  int init = st.init_loop >= 0 ? position(st.init_loop) : first_reduce;
  if (init > first_reduce) {
    return InvalidArgumentError("block " + st.name + ": the reduction init would be inside reduction loop " +
                                st.loops[leaves[first_reduce]].name);
  }
  for (const Stage& child : state.stages) {
    if (!child.is_live() || child.attach != AttachKind::kReverseComputeAt || child.attach_stage != stage) {
      continue;
    }
    int pos = position(child.attach_loop);
    if (pos >= first_reduce) {
      return InvalidArgumentError("block " + child.name + " would be computed inside reduction loop " +
                                  st.loops[leaves[first_reduce]].name + " of block " + st.name);
    }
    if (pos >= init) {
      return InvalidArgumentError("block " + child.name + " would be computed inside the reduction "
                                  "init nest of block " + st.name);
    }
  }
  return Status::Ok();
}

}  // namespace tuned::schedule
