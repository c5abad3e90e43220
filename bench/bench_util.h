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

#include <random>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/runtime/aligned_buffer.h"

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

/// The `p`-quantile (0.5: the median) of `values`, the nearest sample at or above it.
inline double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, size_t(double(values.size()) * p))];
}

/// GFLOP/s of `flops` floating-point operations done in `ms` milliseconds.
inline double Gflops(double flops, double ms) { return flops / (ms * 1e6); }

/// "a,b,,c" -> {"a", "b", "c"}: comma-separated command-line lists.
inline std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

/// 64-byte aligned float32 buffers for every argument of a workload, inputs filled with seeded
/// random values in [-1, 1]; `args` is what a kernel's Run takes.
struct KernelArguments {
  std::vector<runtime::AlignedBuffer> buffers;
  std::vector<void*> args;
};

inline KernelArguments RandomArguments(const ir::Workload& workload, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  KernelArguments out;
  for (const ir::Buffer& b : workload.arguments()) {
    out.buffers.emplace_back(size_t(b->num_elements()) * size_t(b->dtype.bytes()));
    float* data = static_cast<float*>(out.buffers.back().data());
    for (int64_t i = 0; i < b->num_elements(); ++i) data[i] = dist(rng);
    out.args.push_back(data);
  }
  return out;
}

}  // namespace tuned::bench

#endif  // TUNED_BENCH_BENCH_UTIL_H_
