#ifndef TUNED_SERVER_STACK_SERVER_STACK_H_
#define TUNED_SERVER_STACK_SERVER_STACK_H_

/// \file
/// The composition root of the tuning server: the database, the per-target cost models, the
/// dispatcher, the task manager with its search factory and the gRPC services, started in
/// dependency order and stopped in reverse. `tuned serve` listens with it, the embedded
/// `tuned tune` runs it in-process, and tests and benchmarks build the real thing with it.

#include <atomic>
#include <memory>
#include <string>

#include "common/status.h"
#include "server/dispatch/dispatcher.h"
#include "server/search/model_registry.h"
#include "server/service/server.h"
#include "server/tasks/task_manager.h"
#include "tuning_db/database.h"

namespace tuned::server {

struct ServerStackConfig {
  std::string listen;  // empty: in-process channel only
  std::string db_path;  // An SQLite file or a postgresql:// URL (db::OpenDatabase).
  int db_pool_size = 4;  // PostgreSQL: most connections the server holds to the database.
  AccessPolicy access;  // credentials by role; none: no authentication
  std::string tls_cert_pem;
  std::string tls_key_pem;
  std::string tls_worker_ca_pem;  // mutual TLS for workers (ServerOptions)
  int max_message_bytes = kDefaultMaxMessageBytes;
  dispatch::DispatcherOptions dispatcher;
  /// Restart the database's unfinished tasks (`tuned serve`) and, on a database shared with
  /// other servers, take over those whose owner died; the embedded `tuned tune` runs only its
  /// own task.
  bool resume_tasks = true;
  /// On a shared database: how often the server checks its tasks' ownership and looks for
  /// tasks without a live owner (TaskManagerOptions::ownership_check_ms).
  int ownership_check_ms = 2000;
  /// Told of every task's search batches and stored results (metrics); null for none. Must
  /// outlive the stack.
  tasks::TaskObserver* task_observer = nullptr;
  /// The timing gate of an engine measuring in this process (TaskManagerOptions::search_gate);
  /// null for none. Must outlive the stack.
  ExclusiveGate* search_gate = nullptr;
};

/// Database, dispatcher, task manager and gRPC server, started in dependency order (unfinished
/// tasks of the database are resumed) and stopped in reverse order.
class ServerStack {
 public:
  static StatusOr<std::unique_ptr<ServerStack>> Start(const ServerStackConfig& config);
  /// Stops the server, then the task threads (their stored state is kept for a restart), then
  /// the dispatcher.
  ~ServerStack();

  TunedServer& server() { return *server_; }
  dispatch::Dispatcher& dispatcher() { return *dispatcher_; }
  tasks::TaskManager& tasks() { return *tasks_; }
  db::Database& database() { return *database_; }
  int resumed_tasks() const { return resumed_; }

 private:
  ServerStack() = default;

  std::unique_ptr<db::Database> database_;
  std::unique_ptr<search::ModelRegistry> models_;  // outlives the tasks that search with it
  std::unique_ptr<dispatch::Dispatcher> dispatcher_;
  std::unique_ptr<tasks::TaskManager> tasks_;
  std::unique_ptr<TunedServer> server_;
  // The task manager as the dispatcher's drift handler sees it (made after the dispatcher).
  std::shared_ptr<std::atomic<tasks::TaskManager*>> drift_sink_ =
      std::make_shared<std::atomic<tasks::TaskManager*>>(nullptr);
  int resumed_ = 0;
};

}  // namespace tuned::server

#endif  // TUNED_SERVER_STACK_SERVER_STACK_H_
