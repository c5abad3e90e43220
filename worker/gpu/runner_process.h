#ifndef TUNED_WORKER_GPU_RUNNER_PROCESS_H_
#define TUNED_WORKER_GPU_RUNNER_PROCESS_H_

/// \file
/// The worker's end of a GPU runner: a long-lived child process started by exec (never a fork
/// that keeps running the worker's code: the device context must not be shared with, or
/// inherited from, a process that holds one), owning the device, spoken to over a socket pair
/// (worker/gpu_runner/pipe_messages.h). A call either gets a reply, or finds the runner dead (a
/// crash: its signal is named) or still silent at the timeout (it is killed). Either way the
/// runner is gone and the next call starts a fresh one.

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "tuned/v1/gpu_runner.pb.h"
#include "tuned/v1/target.pb.h"

namespace tuned::worker::gpu {

struct RunnerCall {
  enum class Kind { kReplied, kCrashed, kTimedOut };
  Kind kind = Kind::kReplied;
  v1::GpuRunnerReply reply;  // kReplied
  std::string error;         // kCrashed: how the runner ended
};

class RunnerProcess {
 public:
  /// `argv`: the runner executable and its arguments.
  explicit RunnerProcess(std::vector<std::string> argv, double start_timeout_seconds = 60);
  ~RunnerProcess();
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  /// Starts the runner unless one is running; the device its hello describes. An error when
  /// it cannot start or its device cannot be opened (the hello's reason).
  StatusOr<v1::DeviceInfo> Start();
  /// Sends `request` (starting a runner first if none runs) and waits up to `timeout_seconds`.
  StatusOr<RunnerCall> Call(const v1::GpuRunnerRequest& request, double timeout_seconds);
  /// Kills and reaps the runner, if one runs.
  void Stop();

  bool running() const { return pid_ > 0; }
  /// Runners started so far (the first, and each one after a crash, hang or sticky error).
  int starts() const { return starts_; }
  /// What the running runner holds (the engine's key of its inputs); cleared on Stop.
  std::string inputs_key;

 private:
  // Reaps the runner (already killed or exiting) and says how it ended.
  std::string Reap();

  const std::vector<std::string> argv_;
  const double start_timeout_seconds_;
  pid_t pid_ = -1;
  int to_runner_ = -1;
  int from_runner_ = -1;
  int starts_ = 0;
  v1::DeviceInfo device_;
};

}  // namespace tuned::worker::gpu

#endif  // TUNED_WORKER_GPU_RUNNER_PROCESS_H_
