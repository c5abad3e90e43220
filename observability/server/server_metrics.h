#ifndef TUNED_OBSERVABILITY_SERVER_SERVER_METRICS_H_
#define TUNED_OBSERVABILITY_SERVER_SERVER_METRICS_H_

/// \file
/// The tuning server's Prometheus metrics. Two kinds of source:
///   - per trial, pushed by the tasks through tasks::TaskObserver: trials by status and target,
///     build, run and search time per trial, database write latency (counters and histograms
///     kept in a prometheus::Registry);
///   - read at scrape time from the dispatcher and the task manager: tasks by state, queue
///     depth, leased jobs and lease expiries per target, workers and busy slots per target,
///     best throughput per running task.
/// Every name is listed, with its unit and labels, in observability/README.md.

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <atomic>
#include <memory>

#include "server/dispatch/dispatcher.h"
#include "server/tasks/task_manager.h"
#include "server/tasks/task_observer.h"

namespace tuned::observability {

class ServerMetrics final : public tasks::TaskObserver, public prometheus::Collectable {
 public:
  ServerMetrics();

  /// The scrape-time sources; until attached, only the per-trial metrics are reported. Both
  /// must outlive every scrape (detach before they go).
  void Attach(dispatch::Dispatcher* dispatcher, tasks::TaskManager* tasks);
  void Detach() { Attach(nullptr, nullptr); }

  void OnBatchProposed(const v1::TaskSpec& spec, int candidates, double seconds) override;
  void OnResultStored(const v1::TaskSpec& spec, const v1::MeasureResult& result,
                      double write_seconds) override;

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  void CollectDispatcher(std::vector<prometheus::MetricFamily>& out) const;
  void CollectTasks(std::vector<prometheus::MetricFamily>& out) const;

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& trials_;
  prometheus::Family<prometheus::Histogram>& build_seconds_;
  prometheus::Family<prometheus::Histogram>& run_seconds_;
  prometheus::Family<prometheus::Histogram>& search_seconds_;
  prometheus::Histogram& db_write_seconds_;

  mutable std::mutex sources_mu_;  // held while a scrape reads the sources
  dispatch::Dispatcher* dispatcher_ = nullptr;
  tasks::TaskManager* tasks_ = nullptr;
};

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_SERVER_SERVER_METRICS_H_
