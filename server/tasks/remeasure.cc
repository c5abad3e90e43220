#include "server/tasks/remeasure.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace tuned::tasks {

v1::RemeasureOptions DefaultRemeasureOptions() {
  v1::RemeasureOptions options;
  options.set_noise_cv_threshold(0.05);
  options.set_noise_repeat_factor(3);
  options.set_top_k(5);
  options.set_top_k_rounds(4);
  return options;
}

v1::RemeasureOptions WithRemeasureDefaults(const v1::RemeasureOptions& requested,
                                           const v1::RemeasureOptions& defaults) {
  v1::RemeasureOptions options = defaults;
  options.MergeFrom(requested);  // every field has presence: only the present ones are copied
  return options;
}

Status ValidateRemeasure(const v1::RemeasureOptions& options) {
  const double threshold = options.noise_cv_threshold();
  if (!std::isfinite(threshold) || threshold < 0) {
    return InvalidArgumentError("remeasure.noise_cv_threshold must be a finite number >= 0");
  }
  if (options.noise_repeat_factor() == 0 || options.noise_repeat_factor() > 100) {
    return InvalidArgumentError("remeasure.noise_repeat_factor must be within [1, 100]");
  }
  if (options.top_k() > 100) return InvalidArgumentError("remeasure.top_k must be at most 100");
  if (options.top_k_rounds() == 0 || options.top_k_rounds() > 100) {
    return InvalidArgumentError("remeasure.top_k_rounds must be within [1, 100]");
  }
  return Status::Ok();
}

double MedianOf(std::vector<double> seconds) {
  if (seconds.empty()) return 0;
  std::sort(seconds.begin(), seconds.end());
  const size_t mid = seconds.size() / 2;
  return seconds.size() % 2 ? seconds[mid] : (seconds[mid - 1] + seconds[mid]) / 2;
}

double CoefficientOfVariation(const std::vector<double>& seconds) {
  if (seconds.size() < 2) return 0;
  double mean = 0;
  for (double s : seconds) mean += s;
  mean /= double(seconds.size());
  if (mean <= 0) return 0;
  double squares = 0;
  for (double s : seconds) squares += (s - mean) * (s - mean);
  return std::sqrt(squares / double(seconds.size() - 1)) / mean;
}

v1::MeasureResult CombineRounds(const std::vector<v1::MeasureResult>& rounds) {
  if (rounds.empty()) return {};
  for (const v1::MeasureResult& round : rounds) {
    if (round.status() != v1::MEASURE_STATUS_OK) return round;
  }
  v1::MeasureResult combined = rounds.back();
  combined.clear_repeat_seconds();
  std::vector<double> all;
  double build_seconds = 0, run_seconds = 0;
  for (const v1::MeasureResult& round : rounds) {
    all.insert(all.end(), round.repeat_seconds().begin(), round.repeat_seconds().end());
    build_seconds += round.build_seconds();
    run_seconds += round.run_seconds();
  }
  for (double s : all) combined.add_repeat_seconds(s);
  combined.set_median_seconds(MedianOf(all));
  combined.set_repeat_cv(CoefficientOfVariation(all));
  combined.set_build_seconds(build_seconds);
  combined.set_run_seconds(run_seconds);
  return combined;
}

}  // namespace tuned::tasks
