#ifndef TUNED_OBSERVABILITY_WORKER_WORKER_METRICS_H_
#define TUNED_OBSERVABILITY_WORKER_WORKER_METRICS_H_

/// \file
/// A measurement worker's Prometheus metrics (`tuned-worker --metrics-listen`), read at scrape
/// time from its client (sessions, jobs held, results) and its engine (builds in flight, time
/// spent building and running). Every sample carries the worker's id and target.

#include <prometheus/collectable.h>

#include <functional>
#include <string>
#include <vector>

#include "worker/client/worker_client.h"
#include "worker/measurement_engine.h"

namespace tuned::observability {

/// A gauge read at scrape time; for what the engine learns to report later (e.g. calibration
/// drift), without this module knowing where it comes from.
struct ExtraGauge {
  std::string name;  // tuned_worker_..., in base units
  std::string help;
  std::function<double()> value;
};

class WorkerMetrics final : public prometheus::Collectable {
 public:
  /// `client` and `engine` must outlive every scrape.
  WorkerMetrics(const worker::WorkerClient& client, const worker::MeasurementEngine& engine,
                uint32_t slots, std::vector<ExtraGauge> extra = {});
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const worker::WorkerClient& client_;
  const worker::MeasurementEngine& engine_;
  const uint32_t slots_;
  const std::vector<ExtraGauge> extra_;
};

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_WORKER_WORKER_METRICS_H_
