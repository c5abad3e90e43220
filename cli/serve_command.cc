#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/logging.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "worker/client/channel.h"
#include "worker/measurement_engine.h"

namespace tuned::cli {
namespace {

// Targets come parsed by the task manager (target::ParseTarget); LLVM CPU targets get LLVM's
// checks on top. CUDA targets have only their attributes to check so far.
StatusOr<std::string> CanonicalTarget(const std::string& text) {
  TUNED_ASSIGN_OR_RETURN(target::Target parsed, target::ParseTarget(text));
  if (parsed.kind != target::TargetKind::kLlvmCpu) return parsed.ToString();
  TUNED_ASSIGN_OR_RETURN(target::Target checked, codegen::ValidateLlvmCpuTarget(parsed));
  return checked.ToString();
}

struct ServeFlags {
  std::string listen = "127.0.0.1:7411";
  std::string db_path;
  std::string token_file;
  std::string tls_cert;
  std::string tls_key;
  std::string port_file;
  int heartbeat_ms = 2000;
  int lease_timeout_ms = 10000;
  int max_attempts = 3;
  int max_message_bytes = server::kDefaultMaxMessageBytes;
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

Status RunServe(const ServeFlags& flags) {
  ServeConfig config;
  config.listen = flags.listen;
  config.db_path = flags.db_path.empty() ? DefaultDbPath() : flags.db_path;
  if (!flags.token_file.empty()) {
    TUNED_ASSIGN_OR_RETURN(config.token, worker::ReadTokenFile(flags.token_file));
  } else if (!IsLoopback(flags.listen)) {
    Logger("server")->warn(
        "listening on '{}' without --token-file: anyone who can reach it "
        "can submit tasks and join as a worker",
        flags.listen);
  }
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!flags.tls_cert.empty()) {
    TUNED_ASSIGN_OR_RETURN(config.tls_cert_pem, worker::ReadPemFile(flags.tls_cert));
    TUNED_ASSIGN_OR_RETURN(config.tls_key_pem, worker::ReadPemFile(flags.tls_key));
  }
  if (flags.heartbeat_ms <= 0 || flags.lease_timeout_ms <= flags.heartbeat_ms) {
    return InvalidArgumentError("--lease-timeout-ms must exceed --heartbeat-ms (both positive)");
  }
  if (flags.max_attempts < 1) return InvalidArgumentError("--max-attempts must be at least 1");
  config.max_message_bytes = flags.max_message_bytes;
  config.dispatcher.heartbeat_interval_ms = flags.heartbeat_ms;
  config.dispatcher.lease_timeout_ms = flags.lease_timeout_ms;
  config.dispatcher.max_attempts = flags.max_attempts;

  // Block the stop signals before any thread starts, so only sigwait below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<ServerStack> stack, ServerStack::Start(config));
  const int port = stack->server().port();
  if (!flags.port_file.empty()) TUNED_RETURN_IF_ERROR(WritePortFile(flags.port_file, port));
  std::string host = flags.listen.substr(0, flags.listen.rfind(':'));
  std::printf("tuned serve: listening on %s:%d, database %s, %d task(s) resumed\n", host.c_str(),
              port, config.db_path.c_str(), stack->resumed_tasks());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  Logger("server")->info("shutting down on signal {}", signal_number);
  stack.reset();
  return Status::Ok();
}

}  // namespace

std::string DefaultDbPath() {
  const char* env = std::getenv("TUNED_DB");
  return env != nullptr && *env != '\0' ? env : "./tuned.db";
}

StatusOr<std::unique_ptr<ServerStack>> ServerStack::Start(const ServeConfig& config) {
  std::unique_ptr<ServerStack> stack(new ServerStack());
  TUNED_ASSIGN_OR_RETURN(stack->database_, db::OpenSqliteDatabase(config.db_path));
  stack->dispatcher_ = std::make_unique<dispatch::Dispatcher>(config.dispatcher);
  stack->dispatcher_->StartLeaseChecker();

  tasks::TaskManagerOptions options;
  // The search of every task: evolutionary with the target's shared, persisted cost model
  // (or random sampling when a task asks for it).
  stack->models_ = std::make_unique<search::ModelRegistry>(stack->database_.get());
  options.strategy_factory = [models = stack->models_.get()](const search::SearchContext& context,
                                                             const v1::SearchOptions& search_options) {
    return search::MakeTaskSearch(context, search_options, *models);
  };
  options.default_measure = worker::DefaultMeasureConfig();
  options.canonicalize_target = CanonicalTarget;
  if (auto host = codegen::HostCpuTarget(); host.ok()) options.default_target = host->ToString();
  stack->tasks_ = std::make_unique<tasks::TaskManager>(*stack->database_, *stack->dispatcher_,
                                                       std::move(options));
  if (config.resume_tasks) {
    TUNED_ASSIGN_OR_RETURN(stack->resumed_, stack->tasks_->ResumeUnfinished());
  }

  server::ServerOptions server_options;
  server_options.listen = config.listen;
  server_options.token = config.token;
  server_options.tls_cert_pem = config.tls_cert_pem;
  server_options.tls_key_pem = config.tls_key_pem;
  server_options.max_message_bytes = config.max_message_bytes;
  server::ServerComponents components{stack->tasks_.get(), stack->dispatcher_.get(),
                                      stack->database_.get()};
  TUNED_ASSIGN_OR_RETURN(stack->server_, server::TunedServer::Start(server_options, components));
  return stack;
}

ServerStack::~ServerStack() {
  if (server_) server_->Shutdown();
  if (tasks_) tasks_->Stop();
  if (dispatcher_) dispatcher_->Stop();
}

void RegisterServeCommand(Program& program) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd = program.AddCommand(
      "serve", "Run the tuning server: tasks, dispatcher, workers' endpoint, database",
      [flags] { return RunServe(*flags); });
  cmd->add_option("--listen", flags->listen, "Address to listen on, host:port (port 0: any)")
      ->capture_default_str();
  cmd->add_option("--db", flags->db_path, "Tuning database (default: $TUNED_DB or ./tuned.db)");
  cmd->add_option("--token-file", flags->token_file,
                  "File holding the shared token clients and workers must present");
  cmd->add_option("--tls-cert", flags->tls_cert, "PEM certificate chain (enables TLS)");
  cmd->add_option("--tls-key", flags->tls_key, "PEM private key of --tls-cert");
  cmd->add_option("--port-file", flags->port_file, "Write the bound port to this file");
  cmd->add_option("--heartbeat-ms", flags->heartbeat_ms, "Worker heartbeat interval, ms")
      ->capture_default_str();
  cmd->add_option("--lease-timeout-ms", flags->lease_timeout_ms,
                  "A job's lease and a worker's liveness without a heartbeat, ms")
      ->capture_default_str();
  cmd->add_option("--max-attempts", flags->max_attempts,
                  "Leases per job before it is recorded as WORKER_LOST")
      ->capture_default_str();
  cmd->add_option("--max-message-bytes", flags->max_message_bytes,
                  "Largest gRPC message accepted or sent, bytes")
      ->capture_default_str();
}

}  // namespace tuned::cli
