// Build processes paused by the timing gate: a real forked child stopped while timing holds
// the gate, continued after, and not charged for the time it was stopped.

#include <gtest/gtest.h>

#include <time.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/exclusive_gate.h"
#include "worker/child_pause.h"
#include "worker/sandbox.h"

namespace tuned::worker {
namespace {

using namespace std::chrono_literals;

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

TEST(ChildPause, TimingStopsTheChildAndItsStoppedTimeIsNotCharged) {
  SharedMemory counter;
  ASSERT_TRUE(counter.Reserve(sizeof(uint64_t)).ok());
  auto* count = static_cast<volatile uint64_t*>(counter.data());
  *count = 0;

  ExclusiveGate gate;
  ChildPause pause;
  StatusOr<ChildOutcome> outcome = InternalError("not run");
  std::thread build([&] {
    ExclusiveGate::PausableHold hold(gate, pause);
    SandboxLimits limits;
    // 0.3 s of CPU, with room for a loaded machine to give it a core at a third of the time
    // (CI runs beside builds); the 1.5 s stop below is past the timeout on its own.
    limits.timeout_seconds = 1.2;
    outcome = RunInChild(
        [&] {
          const double start = CpuSeconds();
          while (CpuSeconds() - start < 0.3) *count = *count + 1;
          return 0;
        },
        limits, &pause);
  });

  std::this_thread::sleep_for(100ms);
  uint64_t at_entry = 0, at_exit = 0;
  {
    ExclusiveGate::Exclusive timing(gate);  // does not wait for the build: stops it
    at_entry = *count;
    std::this_thread::sleep_for(1500ms);
    at_exit = *count;
  }
  build.join();

  EXPECT_GT(at_entry, 0u) << "the child ran before timing entered";
  EXPECT_EQ(at_exit, at_entry) << "the child ran while a kernel was timed";
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  // 0.1 s + 1.5 s stopped + the rest of its 0.3 s of CPU is past the 1.2 s timeout in wall
  // time; only the time it ran counts.
  EXPECT_EQ(outcome->kind, ChildOutcome::Kind::kExited);
  EXPECT_EQ(outcome->exit_code, 0);
  EXPECT_GT(*count, at_exit) << "the child went on after timing left";
  EXPECT_EQ(pause.pauses(), 1);
  EXPECT_GE(pause.stopped_seconds(), 1.45);
  EXPECT_LT(outcome->wall_seconds, 1.45) << "the stopped time was charged";
  EXPECT_GE(outcome->wall_seconds, 0.27);
}

TEST(ChildPause, AChildStoppedPastItsTimeoutStillTimesOutOnItsOwnTime) {
  ExclusiveGate gate;
  ChildPause pause;
  StatusOr<ChildOutcome> outcome = InternalError("not run");
  const auto start = std::chrono::steady_clock::now();
  std::thread build([&] {
    ExclusiveGate::PausableHold hold(gate, pause);
    SandboxLimits limits;
    limits.timeout_seconds = 0.4;
    outcome = RunInChild(
        [] {
          while (true) {
          }
          return 0;
        },
        limits, &pause);
  });
  std::this_thread::sleep_for(100ms);
  {
    ExclusiveGate::Exclusive timing(gate);
    std::this_thread::sleep_for(500ms);
  }
  build.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->kind, ChildOutcome::Kind::kTimedOut);
  EXPECT_GE(seconds, 0.4 + 0.5 - 0.05);  // its 0.4 s of running, plus the 0.5 s it was stopped
  EXPECT_LT(seconds, 0.4 + 0.5 + 1.0);
}

// The gate's side with recorded work: timing does not wait for pausable work, pauses it for
// exactly as long as it is inside, and work that leaves while paused is left resumable.
TEST(ExclusiveGate, TimingPausesPausableWorkInsteadOfWaitingForIt) {
  struct Recorded : ExclusiveGate::Pausable {
    std::vector<char> events;
    void Pause() override { events.push_back('P'); }
    void Resume() override { events.push_back('R'); }
  };
  ExclusiveGate gate;
  Recorded work, other;
  gate.EnterPausable(work);
  gate.EnterExclusive();  // would deadlock if it waited for `work`
  gate.LeaveExclusive();
  gate.EnterPausable(other);
  gate.EnterExclusive();
  gate.LeavePausable(work);  // leaves while paused: resumed on the way out
  gate.LeaveExclusive();
  gate.EnterExclusive();
  gate.LeaveExclusive();
  gate.LeavePausable(other);
  EXPECT_EQ(std::string(work.events.begin(), work.events.end()), "PRPR");
  EXPECT_EQ(std::string(other.events.begin(), other.events.end()), "PRPR");
}

}  // namespace
}  // namespace tuned::worker
