#ifndef TUNED_TESTS_INTEGRATION_CLUSTER_H_
#define TUNED_TESTS_INTEGRATION_CLUSTER_H_

/// \file
/// A tuned cluster on loopback for integration tests: real `tuned serve` and `tuned-worker`
/// processes (started with short heartbeats and leases), a token file, a database in a fresh
/// temporary folder, gRPC stubs to talk to the server directly, and bounded waits. Every
/// process still running when the cluster is destroyed is killed.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuning_db/database.h"
#include "tuned/v1/database_service.grpc.pb.h"
#include "tuned/v1/record.pb.h"
#include "tuned/v1/tuning_service.grpc.pb.h"
#include "tuned/v1/worker_service.grpc.pb.h"

namespace tuned::testing {

/// A child process with stdout and stderr in a log file.
class ChildProcess {
 public:
  ChildProcess(std::vector<std::string> argv, std::string log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void Signal(int signal_number);
  /// Waits up to `timeout` for the exit; the exit code (128+signal if killed), or nullopt.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  /// SIGKILL and reap.
  void KillNow();
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string log_path_;
};

class Cluster {
 public:
  /// Heartbeat 100 ms, lease 1500 ms, 3 attempts, task ownership checked every 200 ms; token
  /// "secret-token".
  Cluster();
  ~Cluster();

  const std::string& dir() const { return dir_; }
  /// The server's --db: a file in dir() unless set (e.g. to a PostgreSQL URL) before StartServer.
  const std::string& db_path() const { return db_path_; }
  void set_db_path(std::string location) { db_path_ = std::move(location); }
  const std::string& token_file() const { return token_file_; }
  /// Writes `content` to dir()/name, readable by its owner only (as credential files must be).
  std::string WriteSecret(const std::string& name, const std::string& content) const;
  const std::string& token() const { return token_; }
  std::string address() const { return connect_host_ + ":" + std::to_string(port_); }
  int port() const { return port_; }

  /// Starts `tuned serve` (on the previous port after a restart) and waits for its port file.
  /// Returns false (with the log in `error`) if it did not come up.
  bool StartServer(std::string* error);
  ChildProcess& server() { return *server_; }
  /// Extra `tuned serve` arguments for the next StartServer (e.g. TLS files).
  void set_server_args(std::vector<std::string> args) { server_args_ = std::move(args); }
  /// Where the server listens and where this process reaches it (both 127.0.0.1 unless set),
  /// and a command the server runs under (e.g. `ip netns exec NS`).
  void set_network(std::string listen_host, std::string connect_host,
                   std::vector<std::string> server_wrapper = {}) {
    listen_host_ = std::move(listen_host);
    connect_host_ = std::move(connect_host);
    server_wrapper_ = std::move(server_wrapper);
  }
  /// Starts a `tuned-worker` with `--id id`.
  ChildProcess& StartWorker(const std::string& id, std::vector<std::string> extra = {});
  /// Runs `tuned` with `args` to completion (bounded); returns its exit code, output in `out`.
  int RunTuned(std::vector<std::string> args, std::string* out,
               std::chrono::seconds timeout = std::chrono::seconds(120));

  /// Fresh stubs for the current server.
  std::shared_ptr<grpc::Channel> Channel();
  std::unique_ptr<v1::TuningService::Stub> Tuning();
  std::unique_ptr<v1::WorkerService::Stub> Workers();
  std::unique_ptr<v1::DatabaseService::Stub> Database();
  /// A client context with the token (or `token` when given) and a 10 s deadline.
  std::unique_ptr<grpc::ClientContext> Context(std::optional<std::string> token = std::nullopt);

  /// A small matmul task with a short measurement protocol.
  static v1::TaskSpec SmallTask(uint32_t trials);
  /// Polls GetTask until `done` holds (true) or `timeout` passes (false; last status in
  /// `status` either way). Connection errors are retried.
  bool WaitTask(const std::string& task_id, const std::function<bool(const v1::TaskStatus&)>& done,
                std::chrono::seconds timeout, v1::TaskStatus* status);
  /// Polls ListWorkers until `count` workers are connected.
  bool WaitWorkers(int count, std::chrono::seconds timeout);

 private:
  std::string dir_;
  std::string db_path_;
  std::string token_file_;
  std::string token_ = "secret-token";
  std::string port_file_;
  std::string listen_host_ = "127.0.0.1";
  std::string connect_host_ = "127.0.0.1";
  std::vector<std::string> server_wrapper_;
  int port_ = 0;
  int server_starts_ = 0;
  std::vector<std::string> server_args_;
  std::unique_ptr<ChildProcess> server_;
  std::vector<std::unique_ptr<ChildProcess>> workers_;
};

/// Opens the cluster's log in this process (readers never block the server); null, with a
/// failed expectation, when it cannot.
std::unique_ptr<db::Database> OpenDb(const Cluster& cluster);

/// Submits `spec` to the cluster's server (an expectation checks the call); its task id.
std::string SubmitTask(Cluster& cluster, const v1::TaskSpec& spec);

/// Every record of the task in the cluster's log; its search records are checked (gtest
/// expectations) to be one per trial: `trials` records, distinct traces, distinct jobs.
std::vector<v1::TuningRecord> ExpectEachTrialOnce(const Cluster& cluster,
                                                  const std::string& task_id, size_t trials);

}  // namespace tuned::testing

#endif  // TUNED_TESTS_INTEGRATION_CLUSTER_H_
