#ifndef TUNED_COMPILER_SCHEDULE_NESTING_CHECKS_H_
#define TUNED_COMPILER_SCHEDULE_NESTING_CHECKS_H_

/// \file
/// Checks shared by primitives that change how a reduction's loops nest with what is placed
/// around them (private to compiler/schedule).

#include "common/status.h"
#include "compiler/schedule/schedule_state.h"

namespace tuned::schedule {

/// Whether `stage` with leaf order `leaves` keeps a valid reduction nesting: its init nest is
/// outside every reduction loop, and every block computed at one of its loops by
/// reverse_compute_at sits outside all reduction loops and inside the init nest.
Status CheckReductionNesting(const ScheduleState& state, int stage, const std::vector<int>& leaves);

}  // namespace tuned::schedule

#endif  // TUNED_COMPILER_SCHEDULE_NESTING_CHECKS_H_
