#ifndef TUNED_CLI_SERVE_METRICS_H_
#define TUNED_CLI_SERVE_METRICS_H_

/// \file
/// `tuned serve --metrics-listen`: the server's metrics and status page on their own HTTP
/// listener. Created before the server stack (the tasks report to its observer from their first
/// trial), started once the stack runs, stopped before the stack goes.

#include <memory>
#include <string>

#include "common/status.h"
#include "server/stack/server_stack.h"

namespace tuned::cli {

class ServeMetrics {
 public:
  /// FailedPrecondition, naming what to install, in a build without prometheus-cpp/civetweb;
  /// InvalidArgument for an address that is not host:port.
  static StatusOr<std::unique_ptr<ServeMetrics>> Create(const std::string& listen);
  virtual ~ServeMetrics() = default;
  /// What ServerStackConfig::task_observer should point to.
  virtual tasks::TaskObserver* observer() = 0;
  /// Serves /metrics, the status page and its JSON for `stack`, behind the tokens that may read
  /// tasks (shared, client, admin) when any is configured. Returns the bound port.
  virtual StatusOr<int> Start(server::ServerStack& stack, const server::AccessPolicy& access) = 0;
  /// Stops the listener and lets go of the stack (call before the stack is destroyed).
  virtual void Stop() = 0;
};

}  // namespace tuned::cli

#endif  // TUNED_CLI_SERVE_METRICS_H_
