// Interleaved timing: children that take turns (sandbox.h, TurnTakingChild) and the runner's
// groups of candidates timed repeat by repeat (runner.h, Runner::RunInterleaved). The kernels
// here are plain functions that note each run in a log shared with the children, so the tests
// read the order in which the children really ran.

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "compiler/ir/ir.h"
#include "worker/runner.h"
#include "worker/sandbox.h"
#include "worker/timing_protocol.h"

namespace tuned::worker {
namespace {

// A log in memory shared with the children forked after it was made.
struct SharedLog {
  std::atomic<int> length;
  char text[4096];
};

SharedLog* g_log = nullptr;

void Note(char c) { g_log->text[g_log->length.fetch_add(1)] = c; }

std::string LogText() { return std::string(g_log->text, size_t(g_log->length.load())); }

class InterleavedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(memory_.Reserve(sizeof(SharedLog)).ok());
    g_log = new (memory_.data()) SharedLog();
    g_log->length = 0;
  }

  SharedMemory memory_;
};

// Runs every child's turns round robin, as the runner does, until all have ended.
std::vector<ChildOutcome> RunRoundRobin(std::vector<std::unique_ptr<TurnTakingChild>>& children) {
  std::vector<ChildOutcome> outcomes(children.size());
  for (bool any = true; any;) {
    any = false;
    for (size_t i = 0; i < children.size(); ++i) {
      if (children[i] == nullptr) continue;
      if (children[i]->RunTurn() == TurnTakingChild::TurnEnd::kYielded) {
        any = true;
        continue;
      }
      outcomes[i] = children[i]->Reap();
      children[i].reset();
    }
  }
  return outcomes;
}

std::unique_ptr<TurnTakingChild> StartChild(const std::function<int()>& body, double timeout_seconds) {
  StatusOr<std::unique_ptr<TurnTakingChild>> child =
      TurnTakingChild::Start(body, SandboxLimits{timeout_seconds, 0});
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  return child.ok() ? std::move(child).value() : nullptr;
}

TEST_F(InterleavedTest, ChildrenRunOneTurnAtATimeInTurn) {
  std::vector<std::unique_ptr<TurnTakingChild>> children;
  for (char letter : {'A', 'B', 'C'}) {
    children.push_back(StartChild(
        [letter] {
          for (int turn = 0; turn < 3; ++turn) {
            Note(letter);
            usleep(2000);  // a child running beside another would interleave its notes
            Note(letter);
            EndTurn();
          }
          return 7;
        },
        10));
  }
  usleep(20000);
  EXPECT_EQ(LogText(), "") << "a child ran before its first turn";
  std::vector<ChildOutcome> outcomes = RunRoundRobin(children);
  EXPECT_EQ(LogText(), "AABBCCAABBCCAABBCC");
  for (const ChildOutcome& outcome : outcomes) {
    EXPECT_EQ(outcome.kind, ChildOutcome::Kind::kExited);
    EXPECT_EQ(outcome.exit_code, 7);
  }
}

TEST_F(InterleavedTest, TheTimeLimitCountsAChildsOwnTurnsOnly) {
  std::vector<std::unique_ptr<TurnTakingChild>> children;
  // 0.1 s a turn for three turns against a 0.5 s limit, beside a partner that takes 0.3 s a turn:
  // 1.2 s of wall time, 0.3 s of its own.
  auto three_turns_of = [](useconds_t each) {
    return [each] {
      for (int turn = 0; turn < 3; ++turn) {
        usleep(each);
        EndTurn();
      }
      return 0;
    };
  };
  children.push_back(StartChild(three_turns_of(100'000), 0.5));
  children.push_back(StartChild(three_turns_of(300'000), 10));
  std::vector<ChildOutcome> outcomes = RunRoundRobin(children);
  ASSERT_EQ(outcomes[0].kind, ChildOutcome::Kind::kExited);
  EXPECT_GE(outcomes[0].wall_seconds, 0.3);
  EXPECT_LT(outcomes[0].wall_seconds, 0.5);
}

TEST_F(InterleavedTest, AHangOrACrashEndsItsOwnChildAndTheOthersGoOn) {
  std::vector<std::unique_ptr<TurnTakingChild>> children;
  children.push_back(StartChild(
      [] {
        Note('H');
        EndTurn();
        while (true) usleep(1000);
        return 0;
      },
      0.3));
  children.push_back(StartChild(
      [] {
        Note('S');
        EndTurn();
        volatile int* null = nullptr;
        *null = 1;
        return 0;
      },
      10));
  children.push_back(StartChild(
      [] {
        for (int turn = 0; turn < 4; ++turn) {
          Note('K');
          EndTurn();
        }
        return 0;
      },
      10));
  const auto start = std::chrono::steady_clock::now();
  std::vector<ChildOutcome> outcomes = RunRoundRobin(children);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(outcomes[0].kind, ChildOutcome::Kind::kTimedOut);
  EXPECT_EQ(outcomes[1].kind, ChildOutcome::Kind::kSignaled);
  EXPECT_EQ(outcomes[1].signal, SIGSEGV);
  EXPECT_EQ(outcomes[2].kind, ChildOutcome::Kind::kExited);
  EXPECT_EQ(outcomes[2].exit_code, 0);
  EXPECT_EQ(LogText(), "HSKKKK");
  EXPECT_LT(seconds, 3.0);
}

TEST_F(InterleavedTest, NoThreadOfAChildRunsBetweenItsTurns) {
  // An OpenMP pool's threads spin for milliseconds after a parallel region: a child that ends
  // its turn must not keep a thread running beside the next child's kernel.
  std::unique_ptr<TurnTakingChild> child = StartChild(
      [] {
        std::thread spinner([] {
          while (true) g_log->length.fetch_add(1);
        });
        spinner.detach();
        usleep(10000);
        EndTurn();
        return 0;
      },
      10);
  ASSERT_EQ(child->RunTurn(), TurnTakingChild::TurnEnd::kYielded);
  const int before = g_log->length.load();
  usleep(20000);
  EXPECT_EQ(g_log->length.load(), before) << "a thread of the child ran between its turns";
  EXPECT_EQ(child->RunTurn(), TurnTakingChild::TurnEnd::kEnded);
  EXPECT_GT(g_log->length.load(), 0);
  EXPECT_EQ(child->Reap().kind, ChildOutcome::Kind::kExited);
}

// Kernels of the runner tests: each notes its run and writes its output.
void KernelA(void* const* args) {
  Note('A');
  static_cast<float*>(args[0])[0] = 1.0f;
}
void KernelB(void* const* args) {
  Note('B');
  static_cast<float*>(args[0])[0] = 2.0f;
}

RunRequest Request(KernelEntry entry, bool cold) {
  RunRequest request;
  request.entry = entry;
  request.output = ir::MakeBuffer("out", ir::DataType::Float32(), {1});
  request.config.set_protocol_version(kProtocolVersion);
  request.config.set_warmup(0);
  request.config.set_number(1);
  request.config.set_repeat(3);
  request.config.set_min_repeat_ms(0);
  request.config.set_flush_cache(cold);
  request.timeout_seconds = 10;
  return request;
}

TEST_F(InterleavedTest, TheRunnerTimesAGroupOneRepeatATurnWarmRepeatsAfterAnUntimedRun) {
  Runner runner(0, 1 << 20);
  // A runs cold (a flush before each repeat, nothing else), B warm: after its first turn each
  // of B's turns runs it once untimed, to bring back the caches A's turn used, then its repeat.
  std::vector<StatusOr<RunOutcome>> outcomes =
      runner.RunInterleaved({Request(KernelA, true), Request(KernelB, false)});
  ASSERT_EQ(outcomes.size(), 2u);
  // First turns: the verification run and repeat 1; then one repeat a turn.
  EXPECT_EQ(LogText(), "AABBABBABB");
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(outcomes[i].ok()) << outcomes[i].status().ToString();
    EXPECT_EQ(outcomes[i]->status, v1::MEASURE_STATUS_OK) << outcomes[i]->error;
    EXPECT_EQ(outcomes[i]->timing.repeat_seconds.size(), 3u);
    ASSERT_EQ(outcomes[i]->output.size(), 1u);
    EXPECT_EQ(outcomes[i]->output[0], double(i + 1));
  }
  EXPECT_TRUE(outcomes[0]->cold);
  EXPECT_FALSE(outcomes[1]->cold);
}

TEST_F(InterleavedTest, ACandidateTimedAloneRunsItsRepeatsBackToBack) {
  Runner runner(0, 1 << 20);
  StatusOr<RunOutcome> outcome = runner.Run(Request(KernelB, false));
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->status, v1::MEASURE_STATUS_OK) << outcome->error;
  EXPECT_EQ(LogText(), "BBBB");  // the verification run and three repeats, no extra runs
}

}  // namespace
}  // namespace tuned::worker
