#include "model/task_scheduler.h"

#include <gtest/gtest.h>

namespace tuned::model {
namespace {

constexpr double kMs = 1e-3;

TEST(TaskScheduler, EveryTaskGetsItsFirstRoundInOrder) {
  TaskScheduler s({{1, 1e6, "a"}, {1, 1e6, "b"}, {1, 1e6, "c"}}, SchedulePolicy::kGradient);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(s.Next(), i);
    EXPECT_EQ(s.EstimatedLatency(), TaskScheduler::kNoResult);
    s.Report(i, 8, 1 * kMs, false);
  }
  EXPECT_DOUBLE_EQ(s.EstimatedLatency(), 3 * kMs);
}

TEST(TaskScheduler, GradientPrefersTheTaskThatWeighsMost) {
  TaskScheduler s({{1, 1e6, "a"}, {5, 1e6, "b"}}, SchedulePolicy::kGradient);
  s.Report(0, 8, 2 * kMs, false);
  s.Report(1, 8, 2 * kMs, false);
  EXPECT_EQ(s.Next(), 1);
  EXPECT_DOUBLE_EQ(s.EstimatedLatency(), 12 * kMs);
}

TEST(TaskScheduler, ASimilarTaskShowsWhatALaggingTaskCanReach) {
  // Same operators, same FLOPs: task 1 runs 4x slower than task 0 reaches, so it is chosen even
  // after more rounds of its own than task 0.
  TaskScheduler s({{1, 1e9, "conv"}, {1, 1e9, "conv"}}, SchedulePolicy::kGradient);
  s.Report(0, 8, 1 * kMs, false);
  for (int r = 0; r < 3; ++r) s.Report(1, 8, 4 * kMs, false);
  EXPECT_EQ(s.Next(), 1);
  // Without the similar task (another group), the flat history and more rounds lose.
  TaskScheduler other({{1, 1e9, "conv"}, {1, 1e9, "matmul"}}, SchedulePolicy::kGradient);
  other.Report(0, 8, 1 * kMs, false);
  for (int r = 0; r < 8; ++r) other.Report(1, 8, 1 * kMs, false);
  EXPECT_EQ(other.Next(), 0);
}

TEST(TaskScheduler, ASimilarTasksPromiseLapsesAfterAWindowWithoutImprovement) {
  // Task 1 lags task 0 (same operators) 4x; task 2 is a flat matmul with fewer rounds.
  auto schedule = [](std::vector<double> lagging_history) {
    TaskScheduler s({{1, 1e9, "conv"}, {1, 1e9, "conv"}, {1, 1e9, "matmul"}}, SchedulePolicy::kGradient);
    for (int r = 0; r < 8; ++r) s.Report(0, 8, 1 * kMs, false);
    for (double best : lagging_history) s.Report(1, 8, best * kMs, false);
    for (int r = 0; r < 2; ++r) s.Report(2, 8, 2 * kMs, false);
    return s.Next();
  };
  EXPECT_EQ(schedule({5, 5, 5, 5, 5, 4}), 1);  // improved within the window: the promise holds
  EXPECT_EQ(schedule({4, 4, 4, 4, 4, 4}), 2);  // flat for a window: only the 1/t law is left
}

TEST(TaskScheduler, AtEqualLatencyTheImprovingTaskWins) {
  TaskScheduler s({{1, 1e6, "a"}, {1, 1e6, "b"}}, SchedulePolicy::kGradient);
  for (double best : {1.0, 1.0, 1.0, 1.0}) s.Report(0, 8, best * kMs, false);  // flat
  for (double best : {1.6, 1.4, 1.2, 1.0}) s.Report(1, 8, best * kMs, false);  // still falling
  EXPECT_EQ(s.Next(), 1);
}

TEST(TaskScheduler, DeadTasksGetNoTrials) {
  TaskScheduler s({{1, 1e6, "a"}, {1, 1e6, "b"}}, SchedulePolicy::kRoundRobin);
  s.Report(0, 8, TaskScheduler::kNoResult, false);  // no valid schedule
  s.Report(1, 8, 1 * kMs, false);
  EXPECT_TRUE(s.dead(0));
  EXPECT_EQ(s.Next(), 1);
  EXPECT_EQ(s.Next(), 1);
  s.Report(1, 3, 1 * kMs, /*exhausted=*/true);
  EXPECT_EQ(s.Next(), -1);
  EXPECT_EQ(s.trials(1), 11);
}

TEST(TaskScheduler, RoundRobinCyclesAndResumedTasksSkipTheirFirstRound) {
  TaskScheduler s({{1, 1e6, "a"}, {1, 1e6, "b"}, {1, 1e6, "c"}}, SchedulePolicy::kRoundRobin);
  s.Resume(0, 40, 1 * kMs);
  s.Resume(2, 16, 2 * kMs);
  EXPECT_EQ(s.Next(), 1);  // the only task without a round yet
  s.Report(1, 8, 3 * kMs, false);
  EXPECT_DOUBLE_EQ(s.EstimatedLatency(), 6 * kMs);
  std::vector<int> order;
  for (int r = 0; r < 4; ++r) order.push_back(s.Next());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0}));
  EXPECT_EQ(s.trials(0), 40);
}

}  // namespace
}  // namespace tuned::model
