// `tuned-worker`: a measurement worker. Connects out to a `tuned serve`, announces its target
// and device, measures the jobs it is given with the measurement engine, and reconnects when
// the server goes away. SIGINT/SIGTERM drain it: no more jobs, the held ones reported, then exit.

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "cli/cli_support.h"
#include "common/logging.h"
#include "rpc/channel.h"
#include "rpc/credentials.h"
#include "worker/client/worker_client.h"
#include "worker/measurement_engine.h"

#if TUNED_WITH_METRICS
#include "observability/http_endpoint.h"
#include "observability/metrics_route.h"
#include "observability/worker/worker_metrics.h"
#endif

namespace tuned::cli {
namespace {

struct WorkerFlags {
  std::string server;
  ClientSecurityFlags security;
  std::string target;
  uint32_t slots = 0;  // 0: worker::DefaultSlots()
  int interleave = worker::EngineOptions{}.interleave;
  size_t object_cache_mb = worker::EngineOptions{}.object_cache_bytes >> 20;
  int device = 0;
  std::string id;
  std::string tls_cert;
  std::string tls_key;
  int max_reconnects = -1;
  int reconnect_max_ms = 5000;
  int drain_timeout_ms = 20000;
  std::string metrics_listen;
  bool no_calibration = false;
  int calibration_max_interval_ms = worker::WorkerClientOptions{}.calibration_max_interval_ms;
};

// `--metrics-listen`: the worker's own metrics over HTTP (no credential: they hold no task
// data; bind them to loopback or a private network). Null without the flag.
using MetricsHandle = std::shared_ptr<void>;
StatusOr<MetricsHandle> StartMetrics(const WorkerFlags& flags, const worker::WorkerClient& client,
                                     const worker::MeasurementEngine& engine) {
  if (flags.metrics_listen.empty()) return MetricsHandle();
#if TUNED_WITH_METRICS
  observability::HttpEndpointOptions options;
  options.listen = flags.metrics_listen;
  options.routes.push_back(observability::MetricsRoute(
      {std::make_shared<observability::WorkerMetrics>(client, engine, engine.job_capacity())}));
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<observability::HttpEndpoint> endpoint,
                         observability::HttpEndpoint::Start(std::move(options)));
  std::printf("tuned-worker: metrics on http://%s:%d/metrics\n",
              flags.metrics_listen.substr(0, flags.metrics_listen.rfind(':')).c_str(),
              endpoint->port());
  std::fflush(stdout);
  return MetricsHandle(std::move(endpoint));
#else
  return FailedPreconditionError(
      "--metrics-listen: this tuned-worker was built without metrics (install "
      "prometheus-cpp-dev and libcivetweb-dev, then rebuild)");
#endif
}

Status RunWorker(const WorkerFlags& given) {
  WorkerFlags flags = given;
  if (flags.drain_timeout_ms < 0) return InvalidArgumentError("--drain-timeout-ms must be >= 0");
  if (flags.slots > 1024) return InvalidArgumentError("--slots must be at most 1024");
  if (flags.slots == 0) flags.slots = worker::DefaultSlots();
  worker::WorkerClientOptions options;
  TUNED_ASSIGN_OR_RETURN(rpc::ClientConfig connection,
                         rpc::LoadClientConfig(flags.server, flags.security.token_file,
                                               flags.security.tls, flags.security.tls_ca));
  options.token = connection.token;
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!flags.tls_cert.empty()) {
    TUNED_ASSIGN_OR_RETURN(connection.channel.tls_cert_pem, rpc::ReadPemFile(flags.tls_cert));
    TUNED_ASSIGN_OR_RETURN(connection.channel.tls_key_pem, rpc::ReadPemFile(flags.tls_key));
    connection.channel.tls = true;
  }

  // Block the stop signals before any thread starts; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  worker::EngineOptions engine_options;
  engine_options.target = flags.target;
  engine_options.build_slots = int(flags.slots);
  engine_options.interleave = flags.interleave;
  engine_options.object_cache_bytes = flags.object_cache_mb << 20;
  engine_options.gpu_device = flags.device;
  options.channel = rpc::CreateClientChannel(connection.channel);
  options.max_reconnects = flags.max_reconnects;
  options.reconnect_max_ms = flags.reconnect_max_ms;
  options.calibrate = !flags.no_calibration;
  options.calibration_max_interval_ms = flags.calibration_max_interval_ms;
  options.worker_id = flags.id;
  // One id for the engine's results, the client's hello and the logs.
  if (options.worker_id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    options.worker_id = std::string(host) + ":" + std::to_string(getpid());
  }
  engine_options.worker_id = options.worker_id;
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<worker::MeasurementEngine> engine,
                         worker::CreateMeasurementEngine(engine_options));
  options.slots = engine->job_capacity();
  auto client = std::make_unique<worker::WorkerClient>(options, *engine);
  worker::WorkerClient* client_ptr = client.get();
  TUNED_ASSIGN_OR_RETURN(MetricsHandle metrics, StartMetrics(flags, *client, *engine));
  Logger("worker")->info("worker starting worker={} server={} target='{}' slots={}",
                         client->worker_id(), flags.server, engine->target().target(), options.slots);

  // A stop signal drains: the server sends no more jobs, the held ones are reported (Slurm's
  // scancel and Kubernetes send SIGTERM and wait before SIGKILL; the default timeout fits
  // inside their default 30 s grace).
  std::atomic<bool> run_ended = false;
  std::thread signal_thread([&signals, &run_ended, client_ptr, &flags] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    if (run_ended) return;
    client_ptr->Drain("signal " + std::to_string(signal_number),
                      std::chrono::milliseconds(flags.drain_timeout_ms));
  });
  Status status = client->Run();
  // Release the signal thread if Run ended by itself.
  run_ended = true;
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  engine->Drain();
  metrics.reset();
  worker::WorkerClientStats stats = client->stats();
  Logger("worker")->info("worker stopped worker={} sessions={} jobs={} results={} dropped={}",
                         client->worker_id(), stats.sessions, stats.jobs, stats.results,
                         stats.dropped);
  return status;
}

}  // namespace
}  // namespace tuned::cli

int main(int argc, char** argv) {
  tuned::cli::Program program("tuned-worker",
                              "tuned-worker: measure candidates for a tuned server");
  auto flags = std::make_shared<tuned::cli::WorkerFlags>();
  CLI::App& app = program.app();
  app.add_option("--server", flags->server, "Server address, host:port")->required();
  tuned::cli::AddClientSecurityFlags(app, flags->security);
  app.add_option("--target", flags->target, "Target to measure for (default: this machine)");
  app.add_option("--slots", flags->slots,
                 "Jobs built at once (builds run between timing runs, stopped while a kernel "
                 "is timed; beside a GPU's runs); default: this machine's cores, at most 4");
  app.add_option("--interleave", flags->interleave,
                 "CPU targets: jobs timed together, one repeat each in turn, so that the machine's "
                 "slower episodes fall on all of them alike (1: one job at a time); the worker holds "
                 "the larger of this and --slots")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--object-cache-mb", flags->object_cache_mb,
                 "MiB of built objects kept, so that re-measures of a trace link it again instead of "
                 "building it (0: build every job)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--device", flags->device, "CUDA targets: the GPU to measure on (driver ordinal; one worker per GPU)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--id", flags->id, "Worker id (default: host:pid)");
  app.add_option("--tls-cert", flags->tls_cert,
                 "PEM client certificate for mutual TLS (a server with --tls-worker-ca wants one)");
  app.add_option("--tls-key", flags->tls_key, "PEM private key of --tls-cert");
  app.add_option("--max-reconnects", flags->max_reconnects,
                 "Consecutive failed connection attempts before exiting (-1: never exit)")
      ->capture_default_str();
  app.add_option("--reconnect-max-ms", flags->reconnect_max_ms,
                 "Longest wait between reconnection attempts, ms")
      ->capture_default_str();
  app.add_flag("--no-calibration", flags->no_calibration,
               "Do not time the calibration kernel between batches (no drift detection)");
  app.add_option("--calibration-max-interval-ms", flags->calibration_max_interval_ms,
                 "A worker never idle between batches calibrates anyway once this long has passed "
                 "since its last figure, as soon as it holds no job (0: whenever it holds none), ms")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--drain-timeout-ms", flags->drain_timeout_ms,
                 "On SIGTERM/SIGINT, how long to finish the jobs held before handing them back, ms")
      ->capture_default_str();
  app.add_option("--metrics-listen", flags->metrics_listen,
                 "Serve this worker's Prometheus metrics on http://host:port/metrics (port 0: any)");
  program.SetMainAction([flags] { return tuned::cli::RunWorker(*flags); });
  return program.Run(argc, argv);
}
