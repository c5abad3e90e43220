#ifndef TUNED_WORKER_RUNNER_H_
#define TUNED_WORKER_RUNNER_H_

/// \file
/// Runs one built candidate in a child process (sandbox.h) and brings back its output and its
/// times. In the child: the output buffer is filled with 0xff bytes (NaN for floats, so an
/// element the kernel never writes fails verification), the kernel runs once and that output
/// is copied to shared memory for the parent to verify, then the timing protocol
/// (timing_protocol.h) runs. The parent turns how the child ended into a status: a signal is
/// RUNTIME_ERROR naming it, a memory-limit breach RUNTIME_ERROR saying so, the run timeout
/// TIMEOUT (the child is killed).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/ir.h"
#include "tuned/v1/measure.pb.h"
#include "worker/sandbox.h"
#include "worker/timing_protocol.h"

namespace tuned::worker {

struct RunRequest {
  KernelEntry entry = nullptr;
  /// Run once before the first run, untimed, when the kernel has packed buffers
  /// (BuiltKernel::prepack, packed_bytes): what a caller does once per constant input.
  KernelEntry prepack = nullptr;
  std::vector<uint64_t> packed_bytes;
  /// Input buffers in argument order (typed, 64-byte aligned); the child may not change them.
  std::vector<const void*> inputs;
  /// Their bytes together: with the output and the packed buffers, the working set that decides
  /// cold runs (RunsCold).
  uint64_t input_bytes = 0;
  ir::Buffer output;
  /// A resolved protocol (ResolveMeasureConfig).
  v1::MeasureConfig config;
  /// False: only the first run, for its output (reference computation).
  bool time_kernel = true;
  double timeout_seconds = 10;
};

struct RunOutcome {
  /// MEASURE_STATUS_OK, _RUNTIME_ERROR or _TIMEOUT.
  v1::MeasureStatus status = v1::MEASURE_STATUS_UNSPECIFIED;
  std::string error;           // one line, when not OK
  std::vector<double> output;  // the first run's output, when OK
  KernelTiming timing;         // kernel_seconds includes the first run
  bool cold = false;           // timed with the caches flushed before every run (RunsCold)
  double child_seconds = 0;    // fork to reap
};

class Runner {
 public:
  /// `memory_limit_bytes`: address space a candidate may add (0: unlimited); `llc_bytes`: the
  /// machine's last-level cache (0: unknown), which decides cold runs and the flush's size.
  Runner(uint64_t memory_limit_bytes, uint64_t llc_bytes);

  /// Runs `request` in a child. Not thread-safe: one run at a time, with nothing else of the
  /// worker running (the engine holds its ExclusiveGate exclusively). Errors only when no
  /// child could be started.
  StatusOr<RunOutcome> Run(const RunRequest& request);

  /// Runs each request in a child of its own, their timings interleaved: the children take
  /// turns (TurnTakingChild), one repeat a turn after a first turn of setup, verification run,
  /// warm-up, calibration and first repeat. This host's speed changes over seconds (a
  /// neighbour on the core, the memory's bandwidth): timed one after the other, a candidate's
  /// figure depends on when it ran; interleaved, every candidate of the group meets the same
  /// episodes. Each outcome as Run's, in the order of `requests`; a crash, hang or memory
  /// breach ends its own child only. Same threading contract as Run.
  std::vector<StatusOr<RunOutcome>> RunInterleaved(const std::vector<RunRequest>& requests);

 private:
  // How the child of `request` ended, as a status, with what it reported in `results`.
  RunOutcome Outcome(const RunRequest& request, const ChildOutcome& child,
                     const SharedMemory& results, bool cold) const;

  uint64_t memory_limit_bytes_;
  uint64_t llc_bytes_;
  std::vector<std::unique_ptr<SharedMemory>> results_;  // per child: RunHeader, then the output
  SharedMemory flush_;  // created on first use, shared so children never copy it
};

}  // namespace tuned::worker

#endif  // TUNED_WORKER_RUNNER_H_
