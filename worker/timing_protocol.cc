#include "worker/timing_protocol.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "proto/measure_config.h"
#include "common/cache_flush.h"
#include "worker/measurement_engine.h"

namespace tuned::worker {
namespace {

using Clock = std::chrono::steady_clock;

double TimeRuns(KernelEntry entry, void* const* args, uint32_t number) {
  const Clock::time_point start = Clock::now();
  for (uint32_t i = 0; i < number; ++i) entry(args);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

v1::MeasureConfig DefaultMeasureConfig() {
  // The figures behind each default are in docs/worker.md.
  v1::MeasureConfig config;
  config.set_protocol_version(kProtocolVersion);
  config.set_warmup(1);
  config.set_number(1);
  config.set_repeat(5);
  config.set_min_repeat_ms(10);
  // flush_cache stays absent: cold exactly when the buffers exceed the last-level cache.
  config.set_build_timeout_ms(10'000);
  config.set_run_timeout_ms(10'000);
  config.set_verify(true);
  config.set_seed(1);
  return config;
}

StatusOr<v1::MeasureConfig> ResolveMeasureConfig(const v1::MeasureConfig& partial) {
  // Version 0 is how a config without a version was written before fields had presence.
  if (partial.has_protocol_version() && partial.protocol_version() == 0) {
    return DefaultMeasureConfig();
  }
  const v1::MeasureConfig requested = v1::WithMeasureDefaults(partial, DefaultMeasureConfig());
  if (requested.protocol_version() < kOldestProtocolVersion ||
      requested.protocol_version() > kProtocolVersion) {
    return InvalidArgumentError("measure config: protocol version " +
                                std::to_string(requested.protocol_version()) +
                                " is not supported by this worker (versions " +
                                std::to_string(kOldestProtocolVersion) + " to " +
                                std::to_string(kProtocolVersion) + ")");
  }
  if (requested.repeat() < 1 || requested.repeat() > kMaxRepeat) {
    return InvalidArgumentError("measure config: repeat must be in [1, " +
                                std::to_string(kMaxRepeat) + "], got " +
                                std::to_string(requested.repeat()));
  }
  if (requested.number() > kMaxNumber) {
    return InvalidArgumentError("measure config: number must be at most " +
                                std::to_string(kMaxNumber));
  }
  if (!std::isfinite(requested.min_repeat_ms()) || requested.min_repeat_ms() < 0) {
    return InvalidArgumentError("measure config: min_repeat_ms must be a non-negative number");
  }
  if (requested.build_timeout_ms() == 0 || requested.run_timeout_ms() == 0) {
    return InvalidArgumentError("measure config: build_timeout_ms and run_timeout_ms must be > 0");
  }
  v1::MeasureConfig config = requested;
  if (config.number() == 0) config.set_number(1);
  return config;
}

bool RunsCold(const v1::MeasureConfig& config, uint64_t buffer_bytes, uint64_t llc_bytes) {
  if (config.has_flush_cache()) return config.flush_cache();
  return config.protocol_version() >= 2 && llc_bytes > 0 && buffer_bytes > llc_bytes;
}

KernelTiming TimeKernel(KernelEntry entry, void* const* args, const v1::MeasureConfig& config,
                        const uint8_t* flush, size_t flush_bytes,
                        const std::function<void()>& between_repeats) {
  KernelTiming timing;
  const Clock::time_point start = Clock::now();
  for (uint32_t i = 0; i < config.warmup(); ++i) entry(args);

  const bool cold = flush != nullptr;
  uint32_t number = cold ? 1 : std::max<uint32_t>(config.number(), 1);
  const double min_seconds = config.min_repeat_ms() / 1000.0;
  double away_seconds = 0;  // flushing and waiting between repeats (others' turns): not the kernel's
  if (min_seconds > 0 && !cold) {
    while (number < kMaxNumber) {
      const double t = TimeRuns(entry, args, number);
      if (t >= min_seconds) break;
      // Aim 20% past the target so timer noise rarely needs another round; grow at least 2x
      // and at most 100x per round so a first, unrepresentative run cannot overshoot wildly.
      const double growth = t > 0 ? std::clamp(1.2 * min_seconds / t, 2.0, 100.0) : 100.0;
      number = static_cast<uint32_t>(
          std::min<double>(std::ceil(number * growth), static_cast<double>(kMaxNumber)));
    }
  }
  timing.number = number;

  timing.repeat_seconds.reserve(config.repeat());
  for (uint32_t r = 0; r < config.repeat(); ++r) {
    if (r > 0 && between_repeats) {
      const Clock::time_point away = Clock::now();
      between_repeats();
      away_seconds += std::chrono::duration<double>(Clock::now() - away).count();
      if (!cold) entry(args);
    }
    if (cold) {
      const Clock::time_point flush_start = Clock::now();
      FlushCaches(flush, flush_bytes);
      away_seconds += std::chrono::duration<double>(Clock::now() - flush_start).count();
    }
    timing.repeat_seconds.push_back(TimeRuns(entry, args, number) / number);
  }
  timing.kernel_seconds =
      std::chrono::duration<double>(Clock::now() - start).count() - away_seconds;
  return timing;
}

double CoefficientOfVariation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  if (mean == 0) return 0;
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1)) / mean;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace tuned::worker
