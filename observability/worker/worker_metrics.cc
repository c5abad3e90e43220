#include "observability/worker/worker_metrics.h"

#include <map>

#include "observability/metrics_route.h"

namespace tuned::observability {

using prometheus::MetricType;

WorkerMetrics::WorkerMetrics(const worker::WorkerClient& client,
                             const worker::MeasurementEngine& engine, uint32_t slots)
    : client_(client), engine_(engine), slots_(slots) {}

std::vector<prometheus::MetricFamily> WorkerMetrics::Collect() const {
  const std::map<std::string, std::string> labels = {{"worker_id", client_.worker_id()},
                                                     {"target", engine_.target().target()}};
  const worker::WorkerClientStats client = client_.stats();
  const worker::EngineStats engine = engine_.stats();
  std::vector<prometheus::MetricFamily> out;
  auto add = [&](const char* name, const char* help, MetricType type, double value) {
    prometheus::MetricFamily family = Family(name, help, type);
    AddSample(family, labels, value);
    out.push_back(std::move(family));
  };
  add("tuned_worker_slots", "Jobs this worker accepts at once", MetricType::Gauge, slots_);
  add("tuned_worker_jobs_held", "Jobs received and not yet reported or dropped",
      MetricType::Gauge, double(client.jobs - client.results - client.dropped));
  add("tuned_worker_builds_in_flight", "Candidates being built now", MetricType::Gauge,
      engine.builds_in_flight);
  add("tuned_worker_sessions_total", "Streams the server accepted (reconnects add one)",
      MetricType::Counter, double(client.sessions));
  add("tuned_worker_jobs_total", "Jobs received from the server", MetricType::Counter,
      double(client.jobs));
  add("tuned_worker_results_total", "Results reported to the server", MetricType::Counter,
      double(client.results));
  add("tuned_worker_results_dropped_total",
      "Results dropped (job cancelled, or its stream had ended)", MetricType::Counter,
      double(client.dropped));
  add("tuned_worker_build_seconds_total", "Time spent building candidates", MetricType::Counter,
      engine.build_seconds);
  add("tuned_worker_kernel_seconds_total",
      "Time candidates' kernels ran (first run, warm-up, calibration, repeats)",
      MetricType::Counter, engine.kernel_seconds);
  add("tuned_worker_reference_computations_total", "Workload references computed",
      MetricType::Counter, engine.reference_computations);
  add("tuned_worker_runner_restarts_total",
      "Measurement processes lost to a crash or a hang and replaced (a CPU candidate's child, "
      "the GPU runner)",
      MetricType::Counter, double(engine.runner_restarts));
  add("tuned_worker_jobs_timed_interleaved_total",
      "CPU targets: jobs timed in a group of two or more, their repeats taking turns",
      MetricType::Counter, double(engine.jobs_timed_interleaved));
  add("tuned_worker_builds_overlapping_runs_total",
      "GPU targets: builds in progress while a candidate ran on the device (compiles the device "
      "did not wait for)",
      MetricType::Counter, double(engine.builds_overlapping_runs));
  add("tuned_worker_calibrations_total", "Calibration kernel figures sent to the server",
      MetricType::Counter, double(client.calibrations));
  add("tuned_worker_calibration_seconds", "The calibration kernel's latest median",
      MetricType::Gauge, client.calibration_seconds);
  add("tuned_worker_calibration_drift_ratio",
      "(latest - first) / first calibration median of this process; 0 before the first",
      MetricType::Gauge, client.calibration_drift());
  return out;
}

}  // namespace tuned::observability
