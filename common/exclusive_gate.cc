#include "common/exclusive_gate.h"

namespace tuned {

void ExclusiveGate::EnterShared() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !exclusive_ && exclusive_waiting_ == 0; });
  ++shared_;
}

void ExclusiveGate::LeaveShared() {
  std::lock_guard lock(mu_);
  if (--shared_ == 0) cv_.notify_all();
}

void ExclusiveGate::EnterExclusive() {
  std::unique_lock lock(mu_);
  ++exclusive_waiting_;
  cv_.wait(lock, [&] { return !exclusive_ && shared_ == 0; });
  --exclusive_waiting_;
  exclusive_ = true;
  for (Pausable* work : pausable_) work->Pause();
}

void ExclusiveGate::LeaveExclusive() {
  std::lock_guard lock(mu_);
  for (Pausable* work : pausable_) work->Resume();
  exclusive_ = false;
  cv_.notify_all();
}

void ExclusiveGate::EnterPausable(Pausable& work) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !exclusive_ && exclusive_waiting_ == 0; });
  pausable_.push_back(&work);
}

void ExclusiveGate::LeavePausable(Pausable& work) {
  std::lock_guard lock(mu_);
  if (exclusive_) work.Resume();  // leaves no paused state behind for its next use
  std::erase(pausable_, &work);
}

}  // namespace tuned
