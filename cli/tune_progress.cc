#include "cli/tune_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace tuned::cli {
namespace {

std::string Printf(const char* format, auto... args) {
  char text[256];
  std::snprintf(text, sizeof(text), format, args...);
  return text;
}

double Gflops(const v1::TuningRecord& record) {
  const double seconds = record.result().median_seconds();
  return seconds > 0 ? record.workload().flops() / seconds / 1e9 : 0;
}

std::string Duration(double seconds) {
  const int64_t s = int64_t(std::llround(seconds));
  if (s < 60) return Printf("%lld s", static_cast<long long>(s));
  if (s < 3600) return Printf("%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return Printf("%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
}

std::string StateName(v1::TaskState state) {
  return v1::TaskState_Name(state).substr(std::string("TASK_STATE_").size());
}

}  // namespace

ProgressMode ChooseProgressMode(bool json, std::FILE* stream) {
  if (json) return ProgressMode::kNone;
  return isatty(fileno(stream)) ? ProgressMode::kTerminal : ProgressMode::kLines;
}

TuneProgress::TuneProgress(ProgressMode mode, std::FILE* stream) : mode_(mode), stream_(stream) {}

std::string TuneProgress::Facts(const v1::TaskStatus& status, double trials_per_second) {
  const uint32_t done = status.trials_done(), budget = status.spec().trial_budget();
  std::string text = Printf("%u/%u trials", done, budget);
  if (status.best().record_id() != 0) {
    text += Printf("  best %.2f GFLOP/s", Gflops(status.best()));
    if (status.default_median_seconds() > 0 && status.best().result().median_seconds() > 0) {
      text += Printf("  %.2fx over default",
                     status.default_median_seconds() / status.best().result().median_seconds());
    }
  } else {
    text += "  best -";
  }
  if (trials_per_second > 0) {
    text += Printf("  %.2f trials/s", trials_per_second);
    text += "  ETA " + Duration(double(budget > done ? budget - done : 0) / trials_per_second);
  } else {
    text += "  ETA -";
  }
  return text;
}

int TuneProgress::TerminalColumns() const {
  winsize size = {};
  if (ioctl(fileno(stream_), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 100;
}

void TuneProgress::Show(const v1::TaskStatus& status) {
  if (mode_ == ProgressMode::kNone) return;
  const auto now = std::chrono::steady_clock::now();
  const int64_t trials = status.trials_done();
  if (first_trials_ < 0) {
    first_trials_ = trials;
    first_seen_ = now;
  }
  const double elapsed = std::chrono::duration<double>(now - first_seen_).count();
  const double rate = elapsed > 0.2 && trials > first_trials_ ? (trials - first_trials_) / elapsed : 0;
  const std::string facts = Facts(status, rate);
  const std::string waiting = status.waiting_for().empty() ? "" : "  waiting: " + status.waiting_for();
  if (mode_ == ProgressMode::kLines) {
    // One line per new trial count or state: a log gets every step, not every heartbeat.
    if (trials == last_trials_ && int(status.state()) == last_state_ && waiting.empty()) return;
    std::fprintf(stream_, "task %s  %s  %s%s\n", status.task_id().c_str(),
                 StateName(status.state()).c_str(), facts.c_str(), waiting.c_str());
  } else {
    const int width = std::clamp(TerminalColumns() - int(facts.size()) - 6, 10, 40);
    const double fraction =
        status.spec().trial_budget() > 0
            ? std::min(1.0, double(trials) / double(status.spec().trial_budget()))
            : 0;
    const int filled = int(std::lround(fraction * width));
    std::string bar = "[" + std::string(size_t(filled), '#') + std::string(size_t(width - filled), '-') + "]";
    std::string line = bar + " " + facts + waiting;
    const size_t columns = size_t(std::max(TerminalColumns() - 1, 20));
    if (line.size() > columns) line.resize(columns);
    std::fprintf(stream_, "\r\033[K%s", line.c_str());
  }
  std::fflush(stream_);
  last_trials_ = trials;
  last_state_ = int(status.state());
  shown_ = true;
}

void TuneProgress::End() {
  if (mode_ == ProgressMode::kTerminal && shown_) {
    std::fprintf(stream_, "\n");
    std::fflush(stream_);
  }
}

}  // namespace tuned::cli
