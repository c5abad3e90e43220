#ifndef TUNED_CLI_TUNE_PROGRESS_H_
#define TUNED_CLI_TUNE_PROGRESS_H_

/// \file
/// What `tuned tune` shows while its task runs: on a terminal, one redrawn line with a progress
/// bar, trials done, best so far, speed-up over the default schedule, trials per second and an
/// ETA; elsewhere (a pipe, a log) the same facts as one line per new trial count or state; with
/// --json nothing (only the summary is printed, on stdout).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "tuned/v1/task.pb.h"

namespace tuned::cli {

enum class ProgressMode { kNone, kTerminal, kLines };

/// kNone with --json, kTerminal when `stream` is a terminal, kLines otherwise.
ProgressMode ChooseProgressMode(bool json, std::FILE* stream);

class TuneProgress {
 public:
  TuneProgress(ProgressMode mode, std::FILE* stream);
  void Show(const v1::TaskStatus& status);
  /// Ends the redrawn line so the summary starts on a fresh one.
  void End();

  /// The facts of one update (no bar), e.g. "37/64 trials  best 12.3 GFLOP/s  1.9x over
  /// default  2.1 trials/s  ETA 13 s"; exposed for the tests.
  static std::string Facts(const v1::TaskStatus& status, double trials_per_second);

 private:
  int TerminalColumns() const;

  const ProgressMode mode_;
  std::FILE* const stream_;
  bool shown_ = false;
  // The rate counts only what this run saw measured (a resumed task's old trials do not).
  std::chrono::steady_clock::time_point first_seen_;
  int64_t first_trials_ = -1;
  int64_t last_trials_ = -1;
  int last_state_ = -1;
};

}  // namespace tuned::cli

#endif  // TUNED_CLI_TUNE_PROGRESS_H_
