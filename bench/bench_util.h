#ifndef TUNED_BENCH_BENCH_UTIL_H_
#define TUNED_BENCH_BENCH_UTIL_H_

/// \file
/// What the stand-alone benchmark programs share: a benchmark stops at the first error, and
/// kernels are timed with the measurement protocol of the worker (Measure).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "common/status.h"

namespace tuned::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

/// The value, or the error printed with `what` and the program ended.
template <typename T>
T Unwrap(StatusOr<T> value, const char* what) {
  if (!value.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, value.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(value).value();
}

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

/// The measurement protocol of the worker: warm up, then `repeats` repeats of `number` runs each,
/// `number` grown until one repeat lasts at least `min_repeat_ms`; per-run times of each repeat.
inline Timing Measure(const std::function<void()>& run, double min_repeat_ms, int repeats) {
  run();
  int number = 1;
  for (;;) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < number; ++i) run();
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (ms >= min_repeat_ms || number >= (1 << 20)) break;
    number *= 2;
  }
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < number; ++i) run();
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    times.push_back(ms / number);
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front(), times.back()};
}

/// GFLOP/s of `flops` floating-point operations done in `ms` milliseconds.
inline double Gflops(double flops, double ms) { return flops / (ms * 1e6); }

}  // namespace tuned::bench

#endif  // TUNED_BENCH_BENCH_UTIL_H_
