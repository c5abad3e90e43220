#ifndef TUNED_WORKER_TIMING_PROTOCOL_H_
#define TUNED_WORKER_TIMING_PROTOCOL_H_

/// \file
/// The measurement protocol (DESIGN.md, "Measurement protocol"; docs/worker.md), version kProtocolVersion, as it runs inside the measurement child:
///
///   1. `warmup` untimed runs;
///   2. calibration: `number` (starting at config.number) grows until `number` back-to-back runs
///      last at least `min_repeat_ms`; calibration runs are not recorded;
///   3. `repeat` timed repeats of `number` runs each; repeat i records the mean time of one run;
///   4. the median of the repeats is what ranks candidates.
/// Cold runs (RunsCold): each repeat is one run after the caches are flushed (untimed), with no
/// calibration, so that every timed run starts cold. Version 2 runs cold when `flush_cache` is
/// true, or is absent and the kernel's buffers together exceed the last-level cache; version 1
/// only when `flush_cache` is true. The version travels with every record (part of its key), so
/// a log never ranks cold and warm times of a large kernel together.
/// The verification run that produces the checked output precedes all of this (runner.cc).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "proto/measure_config.h"
#include "tuned/v1/measure.pb.h"

namespace tuned::worker {

/// Version of the protocol above; stored in every MeasureConfig this worker reports. The worker
/// also runs jobs that ask for an older version, down to kOldestProtocolVersion.
inline constexpr uint32_t kProtocolVersion = v1::kMeasureProtocolVersion;
inline constexpr uint32_t kOldestProtocolVersion = 1;
/// Most repeats one job may ask for (they travel back through a fixed-size shared header).
inline constexpr uint32_t kMaxRepeat = 1000;
/// Most runs per repeat calibration may reach.
inline constexpr uint32_t kMaxNumber = 100'000'000;

/// The job's protocol with the defaults filled in field by field (v1::WithMeasureDefaults with
/// DefaultMeasureConfig()): a present field is kept, an absent one takes the default. A
/// protocol_version present as 0 (what a config of "the worker's defaults" was before fields had
/// presence) is DefaultMeasureConfig() whole; any other version must be within
/// [kOldestProtocolVersion, kProtocolVersion].
/// Errors (InvalidArgument) name the bad field.
StatusOr<v1::MeasureConfig> ResolveMeasureConfig(const v1::MeasureConfig& requested);

/// What the protocol measured.
struct KernelTiming {
  uint32_t number = 0;                 // runs per repeat after calibration
  std::vector<double> repeat_seconds;  // mean seconds of one run, per repeat
  double kernel_seconds = 0;           // every kernel run of steps 1-3 together
};

using KernelEntry = void (*)(void* const* args);

/// Whether a kernel whose buffers (inputs, output and packed buffers) take `buffer_bytes` runs
/// cold under `config` (resolved) on a machine whose last-level cache is `llc_bytes` (0:
/// unknown, never cold unless asked for).
bool RunsCold(const v1::MeasureConfig& config, uint64_t buffer_bytes, uint64_t llc_bytes);

/// Runs steps 1-3 on `entry(args)`; cold runs when `flush` (pages written once before) is not
/// null: its `flush_bytes` are read through (common/cache_flush.h) before every single-run repeat.
/// With `between_repeats` (interleaved timing: other candidates run their repeats in between),
/// it is called before every repeat after the first, and a warm repeat then follows one untimed
/// run, which brings the kernel's data back into the caches the others used; the time spent in
/// `between_repeats` is not the kernel's.
KernelTiming TimeKernel(KernelEntry entry, void* const* args, const v1::MeasureConfig& config,
                        const uint8_t* flush, size_t flush_bytes,
                        const std::function<void()>& between_repeats = nullptr);

/// Median of `values` (mean of the middle two for an even count); 0 for none.
double Median(std::vector<double> values);

/// Sample standard deviation over mean; 0 for fewer than two values or a zero mean.
double CoefficientOfVariation(const std::vector<double>& values);

}  // namespace tuned::worker

#endif  // TUNED_WORKER_TIMING_PROTOCOL_H_
