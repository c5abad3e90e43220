#ifndef TUNED_OBSERVABILITY_METRICS_ROUTE_H_
#define TUNED_OBSERVABILITY_METRICS_ROUTE_H_

/// \file
/// Prometheus exposition (prometheus-cpp): the `/metrics` route over any number of sources, and
/// the helpers the sources use to report values read at scrape time (queue depths, workers,
/// tasks) next to the counters and histograms they keep in a prometheus::Registry.

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "observability/http_endpoint.h"

namespace tuned::observability {

/// GET /metrics: every family of `sources`, in the Prometheus text format 0.0.4.
HttpRoute MetricsRoute(std::vector<std::shared_ptr<prometheus::Collectable>> sources);

/// An empty family of `type` ("_total" belongs in a counter's name; seconds, bytes: base units).
prometheus::MetricFamily Family(const std::string& name, const std::string& help,
                                prometheus::MetricType type);
/// Adds one sample with `labels` to a gauge or counter family.
void AddSample(prometheus::MetricFamily& family, const std::map<std::string, std::string>& labels,
               double value);

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_METRICS_ROUTE_H_
