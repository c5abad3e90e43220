#ifndef TUNED_CLI_TASK_TIME_H_
#define TUNED_CLI_TASK_TIME_H_

/// \file
/// Where a tuning task's wall time went (the search, the builds, the runs), as `tuned tune`
/// prints it for one task and, summed over its rounds, for a whole model.

#include <string>

#include <nlohmann/json.hpp>

#include "tuned/v1/task.pb.h"

namespace tuned::cli {

/// Adds `more` (another task's or round's time) to `sum`.
void AddTaskTime(v1::TaskTime& sum, const v1::TaskTime& more);

/// "time      W s of <of>: search S%, builds B%, runs R% (T s per trial)", or "" when no time
/// was recorded. Builds overlap each other and the runs, so the shares may add past 100%.
std::string TaskTimeLine(const v1::TaskTime& time, const std::string& of);

/// The same figures for --json: wall, search, build and run seconds, and trials.
nlohmann::json TaskTimeJson(const v1::TaskTime& time);

}  // namespace tuned::cli

#endif  // TUNED_CLI_TASK_TIME_H_
