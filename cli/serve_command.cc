#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include "cli/serve_metrics.h"
#include "common/logging.h"
#include "rpc/credentials.h"
#include "server/stack/server_stack.h"

namespace tuned::cli {
namespace {

struct ServeFlags {
  std::string listen = "127.0.0.1:7411";
  std::string db_path;
  int db_pool_size = 4;
  std::string token_file;
  std::string worker_token_file;
  std::string client_token_file;
  std::string admin_token_file;
  bool insecure = false;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_worker_ca;
  std::string port_file;
  int heartbeat_ms = 2000;
  int lease_timeout_ms = 10000;
  int max_attempts = 2;
  int task_check_ms = 2000;
  int queue_timeout_s = 180;
  double drift_threshold = 0.10;
  int max_message_bytes = server::kDefaultMaxMessageBytes;
  std::string metrics_listen;
};

bool IsLoopback(const std::string& listen) {
  return listen.starts_with("127.") || listen.starts_with("localhost:") ||
         listen.starts_with("[::1]");
}

// Writes "PORT\n" atomically (temporary file + rename) so a reader never sees half a number.
Status WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out) return InvalidArgumentError("cannot write port file '" + path + "'");
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error)
    return InvalidArgumentError("cannot write port file '" + path + "': " + error.message());
  return Status::Ok();
}

// Each credential file given is read (and refused when every user can read it).
Status ReadAccessPolicy(const ServeFlags& flags, server::AccessPolicy& access) {
  const std::pair<const std::string*, std::string*> files[] = {
      {&flags.token_file, &access.shared},
      {&flags.worker_token_file, &access.worker},
      {&flags.client_token_file, &access.client},
      {&flags.admin_token_file, &access.admin}};
  for (const auto& [path, token] : files) {
    if (!path->empty()) {
      TUNED_ASSIGN_OR_RETURN(*token, rpc::ReadTokenFile(*path));
    }
  }
  return server::ValidateAccessPolicy(access);
}

Status RunServe(const ServeFlags& flags) {
  server::ServerStackConfig config;
  config.listen = flags.listen;
  config.db_path = DbPathOrDefault(flags.db_path);
  if (flags.db_pool_size < 1) {
    return InvalidArgumentError("--db-pool-size must be at least 1, not " +
                                std::to_string(flags.db_pool_size));
  }
  config.db_pool_size = flags.db_pool_size;
  TUNED_RETURN_IF_ERROR(ReadAccessPolicy(flags, config.access));
  if (config.access.empty() && !IsLoopback(flags.listen)) {
    if (!flags.insecure) {
      return InvalidArgumentError("listening on '" + flags.listen +
                                  "' without a credential (--token-file, --worker-token-file, "
                                  "--client-token-file): give one, or --insecure to allow it");
    }
    Logger("server")->warn(
        "listening on '{}' without credentials (--insecure): anyone who can reach it "
        "can submit tasks and join as a worker",
        flags.listen);
  }
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!flags.tls_cert.empty()) {
    TUNED_ASSIGN_OR_RETURN(config.tls_cert_pem, rpc::ReadPemFile(flags.tls_cert));
    TUNED_ASSIGN_OR_RETURN(config.tls_key_pem, rpc::ReadPemFile(flags.tls_key));
  }
  if (!flags.tls_worker_ca.empty()) {
    if (flags.tls_cert.empty()) {
      return InvalidArgumentError("--tls-worker-ca needs --tls-cert and --tls-key");
    }
    TUNED_ASSIGN_OR_RETURN(config.tls_worker_ca_pem, rpc::ReadPemFile(flags.tls_worker_ca));
  }
  if (flags.heartbeat_ms <= 0 || flags.lease_timeout_ms <= flags.heartbeat_ms) {
    return InvalidArgumentError("--lease-timeout-ms must exceed --heartbeat-ms (both positive)");
  }
  if (flags.max_attempts < 1) return InvalidArgumentError("--max-attempts must be at least 1");
  if (flags.task_check_ms < 1) {
    return InvalidArgumentError("--task-check-ms must be positive, not " +
                                std::to_string(flags.task_check_ms));
  }
  config.ownership_check_ms = flags.task_check_ms;
  config.max_message_bytes = flags.max_message_bytes;
  config.dispatcher.heartbeat_interval_ms = flags.heartbeat_ms;
  config.dispatcher.lease_timeout_ms = flags.lease_timeout_ms;
  config.dispatcher.max_attempts = flags.max_attempts;
  if (flags.queue_timeout_s < 0) return InvalidArgumentError("--queue-timeout must not be negative");
  config.dispatcher.queue_timeout_ms = flags.queue_timeout_s * 1000;
  if (!(flags.drift_threshold >= 0)) {
    return InvalidArgumentError("--drift-threshold must be a number >= 0");
  }
  config.dispatcher.drift_threshold = flags.drift_threshold;

  std::unique_ptr<ServeMetrics> metrics;
  if (!flags.metrics_listen.empty()) {
    if (config.access.empty() && !IsLoopback(flags.metrics_listen) && !flags.insecure) {
      return InvalidArgumentError("--metrics-listen '" + flags.metrics_listen +
                                  "' is off loopback without a credential: give one "
                                  "(--token-file, --client-token-file), or --insecure");
    }
    TUNED_ASSIGN_OR_RETURN(metrics, ServeMetrics::Create(flags.metrics_listen));
    config.task_observer = metrics->observer();
  }

  // Block the stop signals before any thread starts, so only sigwait below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<server::ServerStack> stack,
                         server::ServerStack::Start(config));
  const int port = stack->server().port();
  if (!flags.port_file.empty()) TUNED_RETURN_IF_ERROR(WritePortFile(flags.port_file, port));
  std::string host = flags.listen.substr(0, flags.listen.rfind(':'));
  std::printf("tuned serve: listening on %s:%d, database %s, %d task(s) resumed\n", host.c_str(),
              port, stack->database().path().c_str(), stack->resumed_tasks());
  if (metrics) {
    TUNED_ASSIGN_OR_RETURN(const int metrics_port, metrics->Start(*stack, config.access));
    const std::string metrics_host =
        flags.metrics_listen.substr(0, flags.metrics_listen.rfind(':'));
    std::printf("tuned serve: metrics on http://%s:%d/metrics, status page on http://%s:%d/\n",
                metrics_host.c_str(), metrics_port, metrics_host.c_str(), metrics_port);
  }
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  Logger("server")->info("shutting down on signal {}", signal_number);
  if (metrics) metrics->Stop();
  stack.reset();
  return Status::Ok();
}

}  // namespace

void RegisterServeCommand(Program& program) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd = program.AddCommand(
      "serve", "Run the tuning server: tasks, dispatcher, workers' endpoint, database",
      [flags] { return RunServe(*flags); });
  cmd->add_option("--listen", flags->listen, "Address to listen on, host:port (port 0: any)")
      ->capture_default_str();
  cmd->add_option("--db", flags->db_path, std::string("Tuning database ") + kDbPathHelp);
  cmd->add_option("--db-pool-size", flags->db_pool_size,
                  "Connections to a PostgreSQL database at most (SQLite: ignored)")
      ->capture_default_str();
  cmd->add_option("--token-file", flags->token_file,
                  "File holding the shared token clients and workers must present (every role)");
  cmd->add_option("--worker-token-file", flags->worker_token_file,
                  "File holding the token of workers: it may only serve jobs");
  cmd->add_option("--client-token-file", flags->client_token_file,
                  "File holding the token of clients: submit and read, never serve as a worker");
  cmd->add_option("--admin-token-file", flags->admin_token_file,
                  "File holding the admin token: a client's rights and cancelling tasks (without "
                  "it, clients may cancel)");
  cmd->add_flag("--insecure", flags->insecure,
                "Allow listening off loopback without any credential");
  cmd->add_option("--tls-cert", flags->tls_cert, "PEM certificate chain (enables TLS)");
  cmd->add_option("--tls-key", flags->tls_key, "PEM private key of --tls-cert");
  cmd->add_option("--tls-worker-ca", flags->tls_worker_ca,
                  "PEM CA that signs workers' certificates: workers must present one (mutual TLS)");
  cmd->add_option("--port-file", flags->port_file, "Write the bound port to this file");
  cmd->add_option("--heartbeat-ms", flags->heartbeat_ms, "Worker heartbeat interval, ms")
      ->capture_default_str();
  cmd->add_option("--lease-timeout-ms", flags->lease_timeout_ms,
                  "A job's lease and a worker's liveness without a heartbeat, ms")
      ->capture_default_str();
  cmd->add_option("--max-attempts", flags->max_attempts,
                  "Leases per job before it is recorded as WORKER_LOST")
      ->capture_default_str();
  cmd->add_option("--task-check-ms", flags->task_check_ms,
                  "Shared (PostgreSQL) database: how often to check this server's task ownership "
                  "and take over tasks whose server died, ms (SQLite: ignored)")
      ->capture_default_str();
  cmd->add_option("--queue-timeout", flags->queue_timeout_s,
                  "Fail a task whose jobs wait this long with no worker of its target, s (0: never)")
      ->capture_default_str();
  cmd->add_option("--metrics-listen", flags->metrics_listen,
                  "Serve Prometheus metrics (/metrics) and the live status page (/) over HTTP "
                  "on host:port (port 0: any); behind the client/admin/shared token when set");
  cmd->add_option("--drift-threshold", flags->drift_threshold,
                  "Re-measure a worker's batch when its calibration kernel's time moves more than "
                  "this fraction from its first figure (0: off)")
      ->capture_default_str();
  cmd->add_option("--max-message-bytes", flags->max_message_bytes,
                  "Largest gRPC message accepted or sent, bytes")
      ->capture_default_str();
}

}  // namespace tuned::cli
