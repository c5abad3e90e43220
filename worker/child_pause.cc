#include "worker/child_pause.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace tuned::worker {
namespace {

// Whether /proc says `pid` is stopped (T), or gone past the point of running (Z, X, or no
// entry left to read).
bool NotRunning(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t name_end = line.rfind(')');  // the command name may hold spaces and parens
  if (name_end == std::string::npos || name_end + 2 >= line.size()) return true;
  const char state = line[name_end + 2];
  return state == 'T' || state == 't' || state == 'Z' || state == 'X';
}

// SIGSTOP is delivered asynchronously: the child may run on for a moment on another core.
// Wait (at most 100 ms, in which a signal is always delivered) until it is stopped.
void StopAndWait(pid_t pid) {
  if (kill(pid, SIGSTOP) != 0) return;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (!NotRunning(pid) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

void ChildPause::Pause() {
  std::lock_guard lock(mu_);
  paused_ = true;
  if (pid_ > 0) {
    StopAndWait(pid_);
    stopped_since_ = Clock::now();
    ++pauses_;
  }
}

void ChildPause::Resume() {
  std::lock_guard lock(mu_);
  if (paused_ && pid_ > 0) {
    kill(pid_, SIGCONT);
    stopped_ += Clock::now() - stopped_since_;
  }
  paused_ = false;
  resumed_.notify_all();
}

void ChildPause::Forking() {
  std::unique_lock lock(mu_);
  resumed_.wait(lock, [&] { return !paused_; });
  forking_ = std::move(lock);
}

void ChildPause::Forked(pid_t pid) {
  pid_ = pid > 0 ? pid : 0;
  stopped_ = Clock::duration::zero();
  forking_.unlock();
}

void ChildPause::Exited() {
  std::lock_guard lock(mu_);
  if (paused_ && pid_ > 0) stopped_ += Clock::now() - stopped_since_;
  pid_ = 0;
}

double ChildPause::stopped_seconds() const {
  std::lock_guard lock(mu_);
  Clock::duration stopped = stopped_;
  if (paused_ && pid_ > 0) stopped += Clock::now() - stopped_since_;
  return std::chrono::duration<double>(stopped).count();
}

int64_t ChildPause::pauses() const {
  std::lock_guard lock(mu_);
  return pauses_;
}

}  // namespace tuned::worker
