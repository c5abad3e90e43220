#ifndef TUNED_MODEL_TASK_SCHEDULER_H_
#define TUNED_MODEL_TASK_SCHEDULER_H_

/// \file
/// Which task of a model gets the next round of trials. The objective is the model's estimated
/// latency, Σ weight × best latency over its tasks.
///
///   - round robin: every live task in turn;
///   - gradient (the default; Ansor, OSDI'20 §6, with its parameters α = 0.2, β = 2 and a
///     backward window of 3 rounds): after one round of every task, the task whose next round is
///     expected to cut the objective most: weight × (α · the recent improvement rate + (1 − α) ·
///     the better of the optimistic 1/t law and the throughput a similar task (same operators)
///     already reaches, β-discounted; that promise lapses after a backward window without
///     improvement).
///
/// A task is dead when it has no valid result after its first round or its design space is
/// exhausted; dead tasks get no more trials. Pure logic: whoever runs the rounds reports them.

#include <limits>
#include <string>
#include <vector>

namespace tuned::model {

struct ScheduledTask {
  double weight = 1;
  double flops = 0;
  std::string group;  // tasks of one group compute the same operators (similar tasks)
};

enum class SchedulePolicy { kGradient, kRoundRobin };

class TaskScheduler {
 public:
  static constexpr double kNoResult = std::numeric_limits<double>::infinity();

  TaskScheduler(std::vector<ScheduledTask> tasks, SchedulePolicy policy);

  /// Starts a task from what an earlier run left in the log: its trials and best latency
  /// (kNoResult when none). Such a task skips the first round-robin pass.
  void Resume(int task, int trials, double best_seconds);
  /// The task for the next round, or -1 when every task is dead.
  int Next();
  /// A finished round: trials measured and the task's best latency since it started (seconds;
  /// kNoResult when none is valid). `exhausted`: the design space gave fewer trials than asked.
  void Report(int task, int trials, double best_seconds, bool exhausted);

  /// Σ weight × best over tasks with a result; kNoResult while any live task has none.
  double EstimatedLatency() const;
  int trials(int task) const { return state_[task].trials; }
  double best(int task) const { return state_[task].history.empty() ? kNoResult : state_[task].history.back(); }
  bool dead(int task) const { return state_[task].dead; }

 private:
  struct State {
    int trials = 0;
    int rounds = 0;
    std::vector<double> history;  // best latency after each round
    bool dead = false;
  };
  double Gradient(int task) const;

  std::vector<ScheduledTask> tasks_;
  std::vector<State> state_;
  SchedulePolicy policy_;
  int next_round_robin_ = 0;
};

}  // namespace tuned::model

#endif  // TUNED_MODEL_TASK_SCHEDULER_H_
