#include "cli/tune_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/task_follow.h"
#include "cli/task_time.h"
#include "common/time.h"
#include "model/task_scheduler.h"
#include "rpc/database_client.h"

namespace tuned::cli {
namespace {

using model::TaskScheduler;

std::string Latency(double seconds) { return std::isfinite(seconds) ? FormatSeconds(seconds) : "-"; }

// Starts tasks the log has records of (on this target) from their best and the trials spent on
// them (a server too old to count them: one round's worth).
void ResumeFromLog(const std::function<rpc::Connection()>& connect, const model::ModelTasks& tasks,
                   const std::string& target, uint32_t round_trials, TaskScheduler& scheduler) {
  if (target.empty()) return;  // the server picks the target: nothing to look up yet
  rpc::DatabaseClient db(connect());
  for (size_t i = 0; i < tasks.tasks.size(); ++i) {
    StatusOr<v1::BestRecordsResponse> best = db.BestRecords(tasks.tasks[i].workload->key(), target, 1);
    if (best.ok() && best->records_size() > 0) {
      int trials = best->trials() > 0 ? int(best->trials()) : int(round_trials);
      scheduler.Resume(int(i), trials, best->records(0).result().median_seconds());
    }
  }
}

void PrintJson(const model::ModelTasks& tasks, const TaskScheduler& s, uint32_t trials_spent, int rounds,
               double elapsed_s, const v1::TaskTime& time, const std::string& where) {
  double estimate = s.EstimatedLatency();
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < tasks.tasks.size(); ++i) {
    const model::Task& t = tasks.tasks[i];
    double best = s.best(int(i));
    nlohmann::json row = {{"key", t.workload->key()}, {"ops", t.ops}, {"shape", t.shape},
                          {"weight", t.weight}, {"trials", s.trials(int(i))}, {"flops", t.workload->flops()}};
    row["best_seconds"] = std::isfinite(best) ? nlohmann::json(best) : nlohmann::json(nullptr);
    if (std::isfinite(best) && std::isfinite(estimate)) row["share"] = t.weight * best / estimate;
    rows.push_back(std::move(row));
  }
  nlohmann::json out = {{"tasks", rows}, {"trials", trials_spent}, {"rounds", rounds},
                        {"elapsed_seconds", elapsed_s}, {"time", TaskTimeJson(time)}, {"where", where}};
  out["estimated_latency_seconds"] = std::isfinite(estimate) ? nlohmann::json(estimate) : nlohmann::json(nullptr);
  std::printf("%s\n", out.dump(2).c_str());
}

// The task table: each task's weight, trials (the scheduler's split), best, share of the
// estimate; then the estimate. Returns the number of lines written.
int PrintTable(std::FILE* out, const model::ModelTasks& tasks, const TaskScheduler& s, const char* line_end) {
  double estimate = s.EstimatedLatency();
  std::fprintf(out, "%4s %6s %6s %10s %9s %7s  %-40s %s%s", "task", "weight", "trials", "best", "GFLOP/s", "share",
               "ops", "output", line_end);
  for (size_t i = 0; i < tasks.tasks.size(); ++i) {
    const model::Task& t = tasks.tasks[i];
    double best = s.best(int(i));
    double gflops = std::isfinite(best) && best > 0 ? t.workload->flops() / best / 1e9 : 0;
    double share = std::isfinite(best) && std::isfinite(estimate) ? 100 * t.weight * best / estimate : 0;
    std::fprintf(out, "%4zu %6d %6d %10s %9.1f %6.1f%%  %-40s %s%s", i + 1, t.weight, s.trials(int(i)),
                 Latency(best).c_str(), gflops, share, t.ops.c_str(), t.shape.c_str(), line_end);
  }
  std::fprintf(out, "model     %s estimated (Σ weight × best over %zu tasks)%s", Latency(estimate).c_str(),
               tasks.tasks.size(), line_end);
  return int(tasks.tasks.size()) + 2;
}

}  // namespace

Status TuneModel(const std::function<rpc::Connection()>& connect, const v1::TaskSpec& base,
                 const ModelTuneOptions& options, const std::string& where) {
  if (options.round_trials == 0) return InvalidArgumentError("--round-trials must be at least 1");
  TUNED_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(options.model));
  const model::ModelTasks& tasks = loaded.tasks;
  if (tasks.tasks.empty()) {
    return InvalidArgumentError("model '" + options.model.path + "' has no node tuned computes; nothing to tune");
  }
  std::vector<model::ScheduledTask> scheduled;
  for (const model::Task& t : tasks.tasks) scheduled.push_back({double(t.weight), t.workload->flops(), t.ops});
  TaskScheduler scheduler(std::move(scheduled), options.scheduler == "round-robin"
                                                    ? model::SchedulePolicy::kRoundRobin
                                                    : model::SchedulePolicy::kGradient);
  ResumeFromLog(connect, tasks, base.target().target(), options.round_trials, scheduler);

  const auto start = std::chrono::steady_clock::now();
  uint32_t spent = 0;
  int rounds = 0;
  v1::TaskTime time;  // the rounds' search, build and run time, summed
  // On a terminal the task table is redrawn after every round; elsewhere a line per round.
  const bool live = !options.json && ChooseProgressMode(false, stderr) == ProgressMode::kTerminal;
  int table_lines = 0;
  while (spent < options.trials) {
    int i = scheduler.Next();
    if (i < 0) break;  // every task dead: nothing left to tune
    const model::Task& task = tasks.tasks[i];
    v1::TaskSpec spec = base;
    spec.set_workload_spec(task.workload->key());
    uint32_t budget = std::min(options.round_trials, options.trials - spent);
    spec.set_trial_budget(budget);
    TUNED_ASSIGN_OR_RETURN(v1::TaskStatus status,
                           SubmitAndFollow(connect(), spec, options.wait_s, ProgressMode::kNone));
    AddTaskTime(time, status.time());
    double best = scheduler.best(i);
    if (status.best().record_id() != 0) best = std::min(best, status.best().result().median_seconds());
    bool exhausted = status.trials_done() < budget;
    scheduler.Report(i, int(status.trials_done()), best, exhausted);
    spent += std::max<uint32_t>(status.trials_done(), 1);
    ++rounds;
    if (live) {
      // The table again in place: up over the last one, each line cleared.
      if (table_lines > 0) std::fprintf(stderr, "\033[%dA", table_lines + 1);
      std::fprintf(stderr, "\033[Kround %d: task %zu, %u/%u trials\n", rounds, size_t(i) + 1, spent, options.trials);
      table_lines = PrintTable(stderr, tasks, scheduler, "\033[K\n");
    } else if (!options.json) {
      std::fprintf(stderr, "round %3d  task %zu (%s %s, weight %d): best %s after %d trials%s; model %s; %u/%u trials\n",
                   rounds, size_t(i) + 1, task.ops.c_str(), task.shape.c_str(), task.weight, Latency(best).c_str(),
                   scheduler.trials(i), status.error().empty() ? "" : (" (" + status.error() + ")").c_str(),
                   Latency(scheduler.EstimatedLatency()).c_str(), spent, options.trials);
    }
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.json) {
    PrintJson(tasks, scheduler, spent, rounds, elapsed, time, where);
    return Status::Ok();
  }
  PrintTable(stdout, tasks, scheduler, "\n");
  std::printf("trials    %u in %d rounds, %.1f s\n", spent, rounds, elapsed);
  if (std::string line = TaskTimeLine(time, "its rounds"); !line.empty()) std::printf("%s\n", line.c_str());
  std::printf("log       %s\n", where.c_str());
  return Status::Ok();
}

}  // namespace tuned::cli
