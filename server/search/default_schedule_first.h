#ifndef TUNED_SERVER_SEARCH_DEFAULT_SCHEDULE_FIRST_H_
#define TUNED_SERVER_SEARCH_DEFAULT_SCHEDULE_FIRST_H_

/// \file
/// Every task measures the workload's default schedule first (compiler/lower/pipeline.h: the
/// program `tuned compile` builds without a record), unless it was measured already, so that
/// the task's speed-up over it is the speed-up tuning really buys.

#include <memory>

#include "server/search/search_strategy.h"

namespace tuned::search {

/// The default schedule of `workload` as a candidate (DefaultScheduleTrace and its hash).
StatusOr<Candidate> DefaultScheduleCandidate(const std::shared_ptr<const ir::Workload>& workload);

/// `inner` with the default schedule as the first candidate of its first batch (when fresh);
/// `inner` itself on a GPU target, where the default schedule (a CPU program) cannot run.
StatusOr<std::unique_ptr<SearchStrategy>> MakeDefaultScheduleFirst(std::unique_ptr<SearchStrategy> inner,
                                                                   const SearchContext& context);

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_DEFAULT_SCHEDULE_FIRST_H_
