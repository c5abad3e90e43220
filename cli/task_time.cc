#include "cli/task_time.h"

#include <cstdio>

namespace tuned::cli {

void AddTaskTime(v1::TaskTime& sum, const v1::TaskTime& more) {
  sum.set_wall_seconds(sum.wall_seconds() + more.wall_seconds());
  sum.set_search_seconds(sum.search_seconds() + more.search_seconds());
  sum.set_build_seconds(sum.build_seconds() + more.build_seconds());
  sum.set_run_seconds(sum.run_seconds() + more.run_seconds());
  sum.set_trials(sum.trials() + more.trials());
}

std::string TaskTimeLine(const v1::TaskTime& time, const std::string& of) {
  if (time.wall_seconds() <= 0) return "";
  auto share = [&](double seconds) { return 100.0 * seconds / time.wall_seconds(); };
  char line[300];
  std::snprintf(line, sizeof line,
                "time      %.1f s of %s: search %.0f%%, builds %.0f%%, runs %.0f%% (%.2f s per trial)",
                time.wall_seconds(), of.c_str(), share(time.search_seconds()), share(time.build_seconds()),
                share(time.run_seconds()), time.trials() ? time.wall_seconds() / time.trials() : 0.0);
  return line;
}

nlohmann::json TaskTimeJson(const v1::TaskTime& time) {
  return {{"wall_seconds", time.wall_seconds()},
          {"search_seconds", time.search_seconds()},
          {"build_seconds", time.build_seconds()},
          {"run_seconds", time.run_seconds()},
          {"trials", time.trials()}};
}

}  // namespace tuned::cli
