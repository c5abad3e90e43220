#include "observability/server/server_metrics.h"

#include <map>

#include "observability/curve/tuning_curve.h"
#include "observability/metrics_route.h"

namespace tuned::observability {
namespace {

using prometheus::Histogram;
using prometheus::MetricType;

// Bucket bounds, seconds: from a fast candidate's run to a slow build.
Histogram::BucketBoundaries Exponential(double start, double factor, int count) {
  Histogram::BucketBoundaries bounds;
  for (double bound = start; int(bounds.size()) < count; bound *= factor) bounds.push_back(bound);
  return bounds;
}

std::string Lower(std::string text) {
  for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string TaskStateLabel(v1::TaskState state) {
  return Lower(v1::TaskState_Name(state).substr(std::string("TASK_STATE_").size()));
}

}  // namespace

ServerMetrics::ServerMetrics()
    : trials_(prometheus::BuildCounter()
                  .Name("tuned_trials_total")
                  .Help("Trials measured and stored, by measurement status and target")
                  .Register(*registry_)),
      build_seconds_(prometheus::BuildHistogram()
                         .Name("tuned_trial_build_seconds")
                         .Help("Time a worker took to build one candidate, by target")
                         .Register(*registry_)),
      run_seconds_(prometheus::BuildHistogram()
                       .Name("tuned_trial_run_seconds")
                       .Help("Time the timed repeats of one candidate ran (runs per repeat x "
                             "repeats x median), by target")
                       .Register(*registry_)),
      search_seconds_(prometheus::BuildHistogram()
                          .Name("tuned_trial_search_seconds")
                          .Help("Search time per proposed candidate (one batch's time over its "
                                "size), by target")
                          .Register(*registry_)),
      db_write_seconds_(prometheus::BuildHistogram()
                            .Name("tuned_db_write_seconds")
                            .Help("Latency of storing one trial's record in the tuning database")
                            .Register(*registry_)
                            .Add({}, Exponential(1e-4, 2, 16))) {}

void ServerMetrics::Attach(dispatch::Dispatcher* dispatcher, tasks::TaskManager* tasks) {
  std::lock_guard<std::mutex> lock(sources_mu_);
  dispatcher_ = dispatcher;
  tasks_ = tasks;
}

void ServerMetrics::OnBatchProposed(const v1::TaskSpec& spec, int candidates, double seconds) {
  if (candidates <= 0) return;
  Histogram& per_trial = search_seconds_.Add({{"target", spec.target().target()}},
                                             Exponential(1e-5, 4, 12));
  for (int i = 0; i < candidates; ++i) per_trial.Observe(seconds / candidates);
}

void ServerMetrics::OnResultStored(const v1::TaskSpec& spec, const v1::MeasureResult& result,
                                   double write_seconds) {
  const std::string& target = spec.target().target();
  trials_.Add({{"target", target}, {"status", Lower(StatusLabel(result.status()))}}).Increment();
  db_write_seconds_.Observe(write_seconds);
  if (result.build_seconds() > 0) {
    build_seconds_.Add({{"target", target}}, Exponential(0.01, 2, 14)).Observe(result.build_seconds());
  }
  if (result.status() == v1::MEASURE_STATUS_OK) {
    const double run = double(std::max<uint32_t>(result.number(), 1)) *
                       double(result.repeat_seconds_size()) * result.median_seconds();
    run_seconds_.Add({{"target", target}}, Exponential(1e-4, 4, 12)).Observe(run);
  }
}

std::vector<prometheus::MetricFamily> ServerMetrics::Collect() const {
  std::vector<prometheus::MetricFamily> out = registry_->Collect();
  std::lock_guard<std::mutex> lock(sources_mu_);
  CollectDispatcher(out);
  CollectTasks(out);
  return out;
}

void ServerMetrics::CollectDispatcher(std::vector<prometheus::MetricFamily>& out) const {
  if (dispatcher_ == nullptr) return;
  auto queued = Family("tuned_queue_jobs", "Jobs waiting for a worker, by target", MetricType::Gauge);
  auto leased = Family("tuned_leased_jobs", "Jobs held by a worker, by target", MetricType::Gauge);
  auto expired = Family("tuned_lease_expiries_total",
                        "Leases revoked because no heartbeat renewed them, by target",
                        MetricType::Counter);
  auto revoked = Family("tuned_leases_revoked_total",
                        "Leases revoked for any reason (expired, worker gone), by target",
                        MetricType::Counter);
  for (const dispatch::TargetQueueSnapshot& queue : dispatcher_->QueueSnapshots()) {
    AddSample(queued, {{"target", queue.target}}, double(queue.queued));
    AddSample(leased, {{"target", queue.target}}, double(queue.leased));
    AddSample(expired, {{"target", queue.target}}, double(queue.leases_expired));
    AddSample(revoked, {{"target", queue.target}}, double(queue.leases_revoked));
  }
  struct PerTarget {
    int serving = 0, draining = 0;
    int64_t slots = 0, busy = 0;
  };
  std::map<std::string, PerTarget> targets;
  for (const dispatch::WorkerSnapshot& worker : dispatcher_->ListWorkers()) {
    PerTarget& target = targets[worker.hello.target().target()];
    (worker.draining ? target.draining : target.serving)++;
    target.slots += worker.hello.slots();
    target.busy += int64_t(worker.running_job_ids.size());
  }
  auto workers = Family("tuned_workers", "Connected workers, by target and state (serving, draining)",
                        MetricType::Gauge);
  auto slots = Family("tuned_worker_slots", "Job slots of the connected workers, by target",
                      MetricType::Gauge);
  auto busy = Family("tuned_worker_busy_slots", "Job slots holding a leased job, by target",
                     MetricType::Gauge);
  for (const auto& [target, counts] : targets) {
    AddSample(workers, {{"target", target}, {"state", "serving"}}, counts.serving);
    AddSample(workers, {{"target", target}, {"state", "draining"}}, counts.draining);
    AddSample(slots, {{"target", target}}, double(counts.slots));
    AddSample(busy, {{"target", target}}, double(counts.busy));
  }
  const dispatch::DispatcherStats stats = dispatcher_->Stats();
  auto submitted = Family("tuned_jobs_submitted_total", "Measurement jobs submitted since start",
                          MetricType::Counter);
  AddSample(submitted, {}, double(stats.submitted));
  auto requeued = Family("tuned_jobs_requeued_total",
                         "Jobs put back in their queue after a lost lease", MetricType::Counter);
  AddSample(requeued, {}, double(stats.requeued));
  auto duplicates = Family("tuned_results_ignored_total",
                           "Results ignored (duplicates, or from a worker without the lease)",
                           MetricType::Counter);
  AddSample(duplicates, {}, double(stats.duplicates));
  for (auto* family : {&queued, &leased, &expired, &revoked, &workers, &slots, &busy, &submitted,
                       &requeued, &duplicates}) {
    out.push_back(std::move(*family));
  }
}

void ServerMetrics::CollectTasks(std::vector<prometheus::MetricFamily>& out) const {
  if (tasks_ == nullptr) return;
  StatusOr<std::vector<v1::TaskStatus>> listed = tasks_->List(std::nullopt);
  if (!listed.ok()) return;  // the database is away: the scrape shows the rest
  std::map<std::string, int> by_state;
  for (v1::TaskState state : {v1::TASK_STATE_PENDING, v1::TASK_STATE_RUNNING,
                              v1::TASK_STATE_SUCCEEDED, v1::TASK_STATE_FAILED,
                              v1::TASK_STATE_CANCELLED}) {
    by_state[TaskStateLabel(state)] = 0;
  }
  auto best = Family("tuned_task_best_flops_per_second",
                     "Best throughput of a running task so far, FLOP/s (GFLOP/s x 1e9)",
                     MetricType::Gauge);
  auto done = Family("tuned_task_trials", "Trials a running task has measured", MetricType::Gauge);
  auto budget = Family("tuned_task_trial_budget", "Trials a running task will measure in all",
                       MetricType::Gauge);
  for (const v1::TaskStatus& task : *listed) {
    ++by_state[TaskStateLabel(task.state())];
    if (task.state() != v1::TASK_STATE_RUNNING) continue;
    const std::map<std::string, std::string> labels = {
        {"task_id", task.task_id()},
        {"workload", task.spec().workload_spec()},
        {"target", task.spec().target().target()}};
    AddSample(best, labels, RecordGflops(task.best()) * 1e9);
    AddSample(done, labels, task.trials_done());
    AddSample(budget, labels, task.spec().trial_budget());
  }
  auto states = Family("tuned_tasks", "Tasks in the database, by state", MetricType::Gauge);
  for (const auto& [state, count] : by_state) AddSample(states, {{"state", state}}, count);
  for (auto* family : {&states, &best, &done, &budget}) out.push_back(std::move(*family));
}

}  // namespace tuned::observability
