#include "model/task_scheduler.h"

#include <algorithm>
#include <cmath>

namespace tuned::model {
namespace {

constexpr double kAlpha = 0.2;   // weight of the backward (observed) rate against the forward guess
constexpr double kBeta = 2.0;    // how far below a similar task's throughput a task may stay
constexpr int kBackwardWindow = 3;

}  // namespace

TaskScheduler::TaskScheduler(std::vector<ScheduledTask> tasks, SchedulePolicy policy)
    : tasks_(std::move(tasks)), state_(tasks_.size()), policy_(policy) {}

void TaskScheduler::Resume(int task, int trials, double best_seconds) {
  State& s = state_[task];
  s.trials = trials;
  s.rounds = trials > 0 ? 1 : 0;
  if (trials > 0) {
    s.history.push_back(best_seconds);
    s.dead = !std::isfinite(best_seconds);
  }
}

void TaskScheduler::Report(int task, int trials, double best_seconds, bool exhausted) {
  State& s = state_[task];
  s.trials += trials;
  ++s.rounds;
  s.history.push_back(best_seconds);
  s.dead = exhausted || !std::isfinite(best_seconds);
}

double TaskScheduler::EstimatedLatency() const {
  double total = 0;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    double b = best(int(i));
    if (!std::isfinite(b)) return kNoResult;
    total += tasks_[i].weight * b;
  }
  return total;
}

// ∂(Σ w·g)/∂t for one more round of `task`: negative, the more negative the better.
double TaskScheduler::Gradient(int task) const {
  const State& s = state_[task];
  const std::vector<double>& g = s.history;
  double now = g.back();
  const bool window_full = g.size() > size_t(kBackwardWindow);
  const double window_start = window_full ? g[g.size() - 1 - kBackwardWindow] : now;
  const double backward = (now - window_start) / kBackwardWindow;
  // Forward: the 1/t law, or the throughput the best similar task reaches (if that is better).
  // The similar task's throughput is a promise, and a full window without improvement breaks
  // it: otherwise a task the schedule space cannot speed up keeps its promise, and the rounds,
  // for ever (ResNet-18 spent 37 rounds in a row on one flat 3×3 convolution).
  double next = now - now / std::max(1, s.rounds);
  const bool improving = !window_full || now < window_start;
  double fastest = 0;  // FLOP/s
  for (size_t j = 0; improving && j < tasks_.size(); ++j) {
    double b = best(int(j));
    if (tasks_[j].group == tasks_[task].group && std::isfinite(b) && b > 0) fastest = std::max(fastest, tasks_[j].flops / b);
  }
  if (fastest > 0) next = std::min(next, kBeta * tasks_[task].flops / fastest);
  double forward = next - now;
  return tasks_[task].weight * (kAlpha * backward + (1 - kAlpha) * forward);
}

int TaskScheduler::Next() {
  const int n = int(tasks_.size());
  // Every task's first round comes first, in order; then round robin or the gradient.
  for (int i = 0; i < n; ++i) {
    if (state_[i].rounds == 0) return i;
  }
  if (policy_ == SchedulePolicy::kRoundRobin) {
    for (int k = 0; k < n; ++k) {
      int i = (next_round_robin_ + k) % n;
      if (!state_[i].dead) {
        next_round_robin_ = (i + 1) % n;
        return i;
      }
    }
    return -1;
  }
  int chosen = -1;
  double steepest = 0;
  for (int i = 0; i < n; ++i) {
    if (state_[i].dead) continue;
    double grad = Gradient(i);
    if (chosen < 0 || grad < steepest) chosen = i, steepest = grad;
  }
  return chosen;
}

}  // namespace tuned::model
