#include "cli/serve_metrics.h"

#if TUNED_WITH_METRICS
#include "observability/http_endpoint.h"
#include "observability/metrics_route.h"
#include "observability/server/server_metrics.h"
#include "observability/server/status_api.h"
#endif

namespace tuned::cli {

#if TUNED_WITH_METRICS
namespace {

class ServeMetricsImpl final : public ServeMetrics {
 public:
  explicit ServeMetricsImpl(std::string listen) : listen_(std::move(listen)) {}
  ~ServeMetricsImpl() override { Stop(); }

  tasks::TaskObserver* observer() override { return metrics_.get(); }

  StatusOr<int> Start(server::ServerStack& stack, const server::AccessPolicy& access) override {
    metrics_->Attach(&stack.dispatcher(), &stack.tasks());
    observability::HttpEndpointOptions options;
    options.listen = listen_;
    for (const std::string* token : {&access.shared, &access.client, &access.admin}) {
      if (!token->empty()) options.tokens.push_back(*token);
    }
    options.routes = observability::StatusRoutes(stack.dispatcher(), stack.tasks(), stack.database());
    options.routes.push_back(observability::MetricsRoute({metrics_}));
    TUNED_ASSIGN_OR_RETURN(endpoint_, observability::HttpEndpoint::Start(std::move(options)));
    return endpoint_->port();
  }

  void Stop() override {
    endpoint_.reset();
    metrics_->Detach();
  }

 private:
  const std::string listen_;
  std::shared_ptr<observability::ServerMetrics> metrics_ =
      std::make_shared<observability::ServerMetrics>();
  std::unique_ptr<observability::HttpEndpoint> endpoint_;
};

}  // namespace

StatusOr<std::unique_ptr<ServeMetrics>> ServeMetrics::Create(const std::string& listen) {
  TUNED_RETURN_IF_ERROR(observability::CheckListenAddress(listen, "--metrics-listen"));
  return std::unique_ptr<ServeMetrics>(new ServeMetricsImpl(listen));
}
#else
StatusOr<std::unique_ptr<ServeMetrics>> ServeMetrics::Create(const std::string&) {
  return FailedPreconditionError(
      "--metrics-listen: this tuned was built without metrics (install prometheus-cpp-dev "
      "and libcivetweb-dev, then rebuild)");
}
#endif

}  // namespace tuned::cli
