#ifndef TUNED_WORKER_MEASUREMENT_ENGINE_H_
#define TUNED_WORKER_MEASUREMENT_ENGINE_H_

/// \file
/// The measurement engine: turns a MeasureJob (workload + target + trace + protocol) into a
/// MeasureResult by building the candidate (replay, lower, LLVM JIT), running it isolated from
/// the worker, checking its output against the workload's reference and timing it with the
/// protocol of docs/worker.md. Used by `tuned-worker` (over gRPC) and by the embedded
/// `tuned tune` alike; it knows nothing of the search or the server.
///
/// Candidate failures are results, not errors: COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT and
/// WRONG_RESULT come back in MeasureResult.status with a one-line reason. Builds of several
/// jobs may overlap; timing runs one candidate at a time, never alongside a build.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/exclusive_gate.h"
#include "common/status.h"
#include "tuned/v1/measure.pb.h"
#include "tuned/v1/target.pb.h"

namespace tuned::worker {

struct EngineOptions {
  /// Target to measure for; empty: the host's detected target.
  std::string target;
  /// Jobs built concurrently (timing is always exclusive).
  int build_slots = 1;
  /// CPU targets: jobs timed together, their repeats interleaved (Runner::RunInterleaved), so
  /// that the host's slower episodes fall on every candidate of a group alike. The timer takes
  /// the built jobs it holds, waiting for the builds of the others, up to this many; 1: one
  /// job at a time. The worker then holds max(build_slots, interleave) jobs.
  int interleave = 8;
  /// The most memory of their own (outputs and packed buffers; the inputs are the worker's,
  /// shared) a group's children may hold together: they all live until the group ends. A job
  /// larger than this is timed alone.
  uint64_t interleave_bytes = uint64_t{2} << 30;
  /// Identifies this worker in results.
  std::string worker_id;
  /// Address space a candidate's process may map beyond the worker's own, bytes (RLIMIT_AS in
  /// the measurement child); a kernel that needs more ends as RUNTIME_ERROR. 0: no limit.
  uint64_t memory_limit_bytes = uint64_t{4} << 30;
  /// Workloads of at most this many flops are verified against the float64 evaluator, larger
  /// ones against their compiled default schedule (worker/reference_cache.h).
  double reference_max_evaluator_flops = 2e7;
  /// Workloads (key, seed) whose inputs and reference output stay cached.
  size_t reference_cache_entries = 8;
  /// Bytes of built objects kept for re-measures of the same trace (worker/object_cache.h);
  /// 0: every job is built.
  size_t object_cache_bytes = size_t{64} << 20;
  /// Wall-clock limit of running one compiled reference, seconds.
  double reference_timeout_seconds = 300;
  /// GPU targets: the runner executable (worker/gpu/gpu_engine.h); empty: tuned-cuda-runner or
  /// tuned-opencl-runner next to the running executable.
  std::string gpu_runner;
  /// CUDA targets: the device (driver ordinal) this worker measures on; one worker per GPU.
  int gpu_device = 0;
  /// GPU targets: whether candidates build (on this CPU, `build_slots` at a time) while another
  /// runs on the device. Unset: yes, unless the device is this CPU (an OpenCL CPU device such
  /// as PoCL, whose timing a build would disturb).
  std::optional<bool> gpu_builds_overlap_runs;
};

/// Where an engine's time went, summed over the results it delivered (for benchmarks and logs).
struct EngineStats {
  uint64_t results = 0;            // results delivered (errors excluded)
  double build_seconds = 0;        // building candidates
  double kernel_seconds = 0;       // kernels running: first run, warm-up, calibration, repeats
  double child_seconds = 0;        // measurement children alive (fork to reap)
  int reference_computations = 0;  // workload references computed
  int builds_in_flight = 0;        // candidates being built now (a gauge, not a sum)
  int64_t builds_reused = 0;       // jobs linked from an object built for an earlier job
  // Builds that were in progress while a candidate ran: on a GPU, the builds the device did
  // not wait for; on the CPU, the builds stopped while a kernel was timed (which the timing
  // did not wait for either).
  int64_t builds_overlapping_runs = 0;
  // Measurement processes lost to a crash or a hang, each replaced by a fresh one: a CPU
  // candidate's child, or the GPU runner (started again for the next job).
  int64_t runner_restarts = 0;
  // Jobs timed in a group of two or more, their repeats interleaved (EngineOptions::interleave).
  int64_t jobs_timed_interleaved = 0;
};

class MeasurementEngine {
 public:
  virtual ~MeasurementEngine() = default;

  /// The target this engine measures for, and the device it runs on.
  virtual const v1::Target& target() const = 0;
  virtual const v1::DeviceInfo& device() const = 0;

  /// Builds, verifies and times one job synchronously. A job for a target this engine cannot
  /// run gets an error Status (not a result); everything the candidate does wrong is a result.
  /// The job queues behind submitted ones; called from a `done` callback it would wait for
  /// itself, so it fails there with FailedPrecondition.
  virtual StatusOr<v1::MeasureResult> Measure(const v1::MeasureJob& job) = 0;

  /// Queues a job; `done` is called (from an engine thread) with its result or error. Thread-safe.
  virtual void Submit(v1::MeasureJob job,
                      std::function<void(StatusOr<v1::MeasureResult>)> done) = 0;

  /// Waits until every submitted job has called its `done`.
  virtual void Drain() = 0;

  /// Jobs a worker should hold at once for this engine (its slots in the server's eyes).
  virtual uint32_t job_capacity() const = 0;

  /// Counters of the work done so far; engines that keep none return zeros.
  virtual EngineStats stats() const { return {}; }

  /// The gate this engine times kernels under (exclusive) and builds under (shared), for work
  /// in the same process that must not overlap a timing run either: a search running beside
  /// the engine holds it shared. Null when the engine times nothing on this process's cores.
  virtual ExclusiveGate* timing_gate() { return nullptr; }
};

/// Starts an engine (probing the device, starting its threads); for a GPU target (opencl), the
/// GPU engine of worker/gpu/gpu_engine.h.
StatusOr<std::unique_ptr<MeasurementEngine>> CreateMeasurementEngine(const EngineOptions& options);

/// Jobs a worker holds at once when none are asked for: this machine's cores, at most 4. On a
/// CPU target each build process runs while no kernel is timed (stopped while one is), so the
/// builds use every core between timing runs; on a GPU target (cuda, opencl) they stay ahead
/// of the device.
uint32_t DefaultSlots();

/// The measurement protocol's defaults (see docs/worker.md).
v1::MeasureConfig DefaultMeasureConfig();

}  // namespace tuned::worker

#endif  // TUNED_WORKER_MEASUREMENT_ENGINE_H_
