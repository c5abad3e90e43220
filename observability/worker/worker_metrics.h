#ifndef TUNED_OBSERVABILITY_WORKER_WORKER_METRICS_H_
#define TUNED_OBSERVABILITY_WORKER_WORKER_METRICS_H_

/// \file
/// A measurement worker's Prometheus metrics (`tuned-worker --metrics-listen`), read at scrape
/// time from its client (sessions, jobs held, results, calibration figures and their drift)
/// and its engine (builds in flight, time spent building and running, runner restarts). Every
/// sample carries the worker's id and target.

#include <prometheus/collectable.h>

#include <string>
#include <vector>

#include "worker/client/worker_client.h"
#include "worker/measurement_engine.h"

namespace tuned::observability {

class WorkerMetrics final : public prometheus::Collectable {
 public:
  /// `client` and `engine` must outlive every scrape.
  WorkerMetrics(const worker::WorkerClient& client, const worker::MeasurementEngine& engine,
                uint32_t slots);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const worker::WorkerClient& client_;
  const worker::MeasurementEngine& engine_;
  const uint32_t slots_;
};

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_WORKER_WORKER_METRICS_H_
