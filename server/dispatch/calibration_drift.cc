#include "server/dispatch/calibration_drift.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tuned::dispatch {

double CalibrationDrift::jitter() const {
  if (changes_.size() < kMinJitterChanges) return 0;
  std::vector<double> sorted(changes_.begin(), changes_.end());
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

CalibrationDrift::Verdict CalibrationDrift::Add(double seconds) {
  Verdict verdict;
  if (baseline_ == 0) {
    baseline_ = last_ = seconds;
    verdict.baseline_seconds = seconds;
    verdict.first = true;
    return verdict;
  }
  // The band comes from the history before this figure: a jump must not widen its own band.
  verdict.band = std::max(threshold_, kJitterMultiple * jitter());
  verdict.baseline_seconds = baseline_;
  verdict.drift = (seconds - baseline_) / baseline_;
  verdict.drifted = threshold_ > 0 && std::abs(verdict.drift) > verdict.band;
  if (verdict.drifted) baseline_ = seconds;  // the machine's new level
  changes_.push_back(std::abs(seconds - last_) / last_);
  if (changes_.size() > kJitterWindow) changes_.pop_front();
  last_ = seconds;
  return verdict;
}

}  // namespace tuned::dispatch
