#ifndef TUNED_WORKER_CHILD_PAUSE_H_
#define TUNED_WORKER_CHILD_PAUSE_H_

/// \file
/// A build process as work the timing gate pauses (common/exclusive_gate.h): SIGSTOP when a
/// kernel's timing starts, SIGCONT when it ends. A stopped process uses no CPU and touches no
/// memory, so the next candidates build between timing runs instead of waiting for them, and
/// no timing runs beside a build. RunInChild (sandbox.h) tells it when its child is forked and
/// when it has exited; the time the child spent stopped counts neither towards its timeout
/// nor towards its build seconds.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/exclusive_gate.h"

namespace tuned::worker {

class ChildPause final : public ExclusiveGate::Pausable {
 public:
  /// Stops the child, if one runs, and returns once it is stopped; a child not yet forked
  /// waits for Resume() before it is.
  void Pause() override;
  void Resume() override;

  /// RunInChild's side. Forking() waits while paused and holds Pause() off until Forked(), so
  /// that no fork runs beside a timed kernel; Forked(pid) (pid < 0: the fork failed) starts a
  /// new child's stopped time at zero. Exited() comes after the child has exited and before
  /// it is reaped, so that its pid is never signalled once it may name another process.
  void Forking();
  void Forked(pid_t pid);
  void Exited();

  /// How long the current (or last) child has been stopped, a stop in progress included.
  double stopped_seconds() const;

  /// How many times a running child was stopped.
  int64_t pauses() const;

 private:
  using Clock = std::chrono::steady_clock;

  mutable std::mutex mu_;
  std::condition_variable resumed_;
  std::unique_lock<std::mutex> forking_;  // held from Forking() to Forked()
  pid_t pid_ = 0;                         // the running child; 0: none
  bool paused_ = false;
  Clock::time_point stopped_since_;
  Clock::duration stopped_{};
  int64_t pauses_ = 0;
};

}  // namespace tuned::worker

#endif  // TUNED_WORKER_CHILD_PAUSE_H_
