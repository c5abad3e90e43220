#include "observability/metrics_route.h"

#include <prometheus/text_serializer.h>

#include <sstream>

namespace tuned::observability {

HttpRoute MetricsRoute(std::vector<std::shared_ptr<prometheus::Collectable>> sources) {
  HttpRoute route;
  route.path = "/metrics";
  route.handler = [sources = std::move(sources)](const HttpRequest&) {
    std::vector<prometheus::MetricFamily> families;
    for (const auto& source : sources) {
      std::vector<prometheus::MetricFamily> more = source->Collect();
      families.insert(families.end(), std::make_move_iterator(more.begin()),
                      std::make_move_iterator(more.end()));
    }
    std::ostringstream text;
    prometheus::TextSerializer().Serialize(text, families);
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", text.str()};
  };
  return route;
}

prometheus::MetricFamily Family(const std::string& name, const std::string& help,
                                prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  return family;
}

void AddSample(prometheus::MetricFamily& family, const std::map<std::string, std::string>& labels,
               double value) {
  prometheus::ClientMetric metric;
  for (const auto& [name, label_value] : labels) metric.label.push_back({name, label_value});
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

}  // namespace tuned::observability
