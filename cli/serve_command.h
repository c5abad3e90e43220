#ifndef TUNED_CLI_SERVE_COMMAND_H_
#define TUNED_CLI_SERVE_COMMAND_H_

/// \file
/// `tuned serve`: the tuning server. Also the composition root of the server stack (database,
/// dispatcher, task manager with its search factory, gRPC services), which the embedded
/// `tuned tune` starts in-process.

#include <memory>
#include <string>

#include "cli/cli_support.h"
#include "common/status.h"
#include "server/dispatch/dispatcher.h"
#include "server/search/model_registry.h"
#include "server/service/server.h"
#include "server/tasks/task_manager.h"
#include "tuning_db/database.h"

namespace tuned::cli {

struct ServeConfig {
  std::string listen;  // empty: in-process channel only
  std::string db_path;
  std::string token;
  std::string tls_cert_pem;
  std::string tls_key_pem;
  int max_message_bytes = server::kDefaultMaxMessageBytes;
  dispatch::DispatcherOptions dispatcher;
  /// Restart the database's unfinished tasks (`tuned serve`); the embedded `tuned tune` runs
  /// only its own task.
  bool resume_tasks = true;
};

/// Database, dispatcher, task manager and gRPC server, started in dependency order (unfinished
/// tasks of the database are resumed) and stopped in reverse order.
class ServerStack {
 public:
  static StatusOr<std::unique_ptr<ServerStack>> Start(const ServeConfig& config);
  /// Stops the server, then the task threads (their stored state is kept for a restart), then
  /// the dispatcher.
  ~ServerStack();

  server::TunedServer& server() { return *server_; }
  dispatch::Dispatcher& dispatcher() { return *dispatcher_; }
  int resumed_tasks() const { return resumed_; }

 private:
  ServerStack() = default;

  std::unique_ptr<db::Database> database_;
  std::unique_ptr<search::ModelRegistry> models_;  // outlives the tasks that search with it
  std::unique_ptr<dispatch::Dispatcher> dispatcher_;
  std::unique_ptr<tasks::TaskManager> tasks_;
  std::unique_ptr<server::TunedServer> server_;
  int resumed_ = 0;
};

/// The default database path: $TUNED_DB, else ./tuned.db.
std::string DefaultDbPath();

void RegisterServeCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_SERVE_COMMAND_H_
