#include "cli/tune_command.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "cli/serve_command.h"
#include "common/logging.h"
#include "compiler/ir/op_library.h"
#include "tuned/v1/tuning_service.grpc.pb.h"
#include "worker/client/channel.h"
#include "worker/client/worker_client.h"
#include "worker/measurement_engine.h"

namespace tuned::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct TuneFlags {
  std::string workload;
  std::string target;
  uint32_t trials = 64;
  std::string db_path;
  std::string server;
  ClientSecurityFlags security;
  bool json = false;
  uint32_t batch_size = 0;
  std::string search = "evolutionary";
  uint64_t seed = 0;
  uint32_t repeat = 0;
  double min_repeat_ms = -1;
  uint32_t slots = 1;
  int wait_s = 60;
};

// A fresh secret for the embedded server, so nothing else in this process space can use it.
std::string RandomToken() {
  std::random_device random;
  std::string token;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) token += kHex[random() & 15];
  return token;
}

bool IsFinal(v1::TaskState state) {
  return state == v1::TASK_STATE_SUCCEEDED || state == v1::TASK_STATE_FAILED ||
         state == v1::TASK_STATE_CANCELLED;
}

std::string StateName(v1::TaskState state) {
  std::string name = v1::TaskState_Name(state);
  return name.substr(std::string("TASK_STATE_").size());
}

std::string FormatSeconds(double seconds) {
  char text[64];
  if (seconds <= 0) return "-";
  if (seconds < 1e-3) {
    std::snprintf(text, sizeof(text), "%.2f us", seconds * 1e6);
  } else if (seconds < 1) {
    std::snprintf(text, sizeof(text), "%.3f ms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%.3f s", seconds);
  }
  return text;
}

double Gflops(const v1::TuningRecord& best) {
  double t = best.result().median_seconds();
  return t > 0 ? best.workload().flops() / t / 1e9 : 0;
}

class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  void Show(const v1::TaskStatus& status) {
    if (!enabled_) return;
    std::string best = "-";
    if (status.best().record_id() != 0) {
      char text[64];
      std::snprintf(text, sizeof(text), " (%.1f GFLOP/s)", Gflops(status.best()));
      best = FormatSeconds(status.best().result().median_seconds()) + text;
    }
    std::fprintf(stderr, "\r\033[Ktask %s  %s  %u/%u trials  best %s", status.task_id().c_str(),
                 StateName(status.state()).c_str(), status.trials_done(),
                 status.spec().trial_budget(), best.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void End() {
    if (shown_) std::fprintf(stderr, "\n");
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

// Follows the task until it reaches a final state; survives a server restart for `wait_s`.
StatusOr<v1::TaskStatus> FollowTask(v1::TuningService::Stub& stub, const std::string& token,
                                    v1::TaskStatus status, int wait_s, Progress& progress) {
  auto last_contact = Clock::now();
  int backoff_ms = 100;
  while (!IsFinal(status.state())) {
    grpc::ClientContext context;
    worker::AddToken(context, token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::hours(24 * 7));
    v1::WatchTaskRequest request;
    request.set_task_id(status.task_id());
    auto reader = stub.WatchTask(&context, request);
    v1::TaskStatus update;
    while (reader->Read(&update)) {
      last_contact = Clock::now();
      backoff_ms = 100;
      if (update.trials_done() >= status.trials_done() || IsFinal(update.state())) {
        status = update;
        progress.Show(status);
      }
    }
    grpc::Status finished = reader->Finish();
    if (IsFinal(status.state())) break;
    Status error = worker::FromGrpcStatus(finished, "watching task " + status.task_id());
    if (!finished.ok() && finished.error_code() != grpc::StatusCode::UNAVAILABLE &&
        finished.error_code() != grpc::StatusCode::CANCELLED) {
      return error;
    }
    if (Clock::now() - last_contact > std::chrono::seconds(wait_s)) {
      return UnavailableError("lost the server for more than " + std::to_string(wait_s) +
                              " s: " + error.message());
    }
    Logger("cli")->warn("{}; retrying in {} ms", error.message(), backoff_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, 2000);
  }
  return status;
}

Status PrintSummary(const v1::TaskStatus& status, double elapsed_s, const std::string& where,
                    bool json) {
  const v1::TuningRecord& best = status.best();
  if (json) {
    nlohmann::json out = {
        {"task_id", status.task_id()},
        {"state", StateName(status.state())},
        {"workload", status.spec().workload_spec()},
        {"target", status.spec().target().target()},
        {"trial_budget", status.spec().trial_budget()},
        {"trials_done", status.trials_done()},
        {"elapsed_seconds", elapsed_s},
        {"error", status.error()},
        {"where", where},
    };
    if (best.record_id() != 0) {
      out["best"] = {{"record_id", best.record_id()},
                     {"median_seconds", best.result().median_seconds()},
                     {"gflops", Gflops(best)},
                     {"trace_hash", best.trace_hash()},
                     {"worker_id", best.result().worker_id()}};
      if (status.default_median_seconds() > 0) {
        out["default_median_seconds"] = status.default_median_seconds();
        out["speedup_over_default"] = status.default_median_seconds() / best.result().median_seconds();
      }
    } else {
      out["best"] = nullptr;
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("task      %s  %s\n", status.task_id().c_str(), StateName(status.state()).c_str());
    std::printf("workload  %s\n", status.spec().workload_spec().c_str());
    std::printf("target    %s\n", status.spec().target().target().c_str());
    std::printf("trials    %u of %u\n", status.trials_done(), status.spec().trial_budget());
    if (best.record_id() != 0) {
      std::printf("best      %s  %.1f GFLOP/s  (record %lld, trace %s)\n",
                  FormatSeconds(best.result().median_seconds()).c_str(), Gflops(best),
                  static_cast<long long>(best.record_id()),
                  best.trace_hash().substr(0, 12).c_str());
      if (status.default_median_seconds() > 0) {
        std::printf("speed-up  %.1fx over the default schedule (%s)\n",
                    status.default_median_seconds() / best.result().median_seconds(),
                    FormatSeconds(status.default_median_seconds()).c_str());
      }
    } else {
      std::printf("best      none (no candidate measured OK)\n");
    }
    std::printf("elapsed   %.1f s\n", elapsed_s);
    std::printf("log       %s\n", where.c_str());
    if (!status.error().empty()) std::printf("error     %s\n", status.error().c_str());
  }
  switch (status.state()) {
    case v1::TASK_STATE_SUCCEEDED:
      return Status::Ok();
    case v1::TASK_STATE_CANCELLED:
      return AbortedError("task " + status.task_id() + " was cancelled");
    default:
      return InternalError("task " + status.task_id() + " failed: " + status.error());
  }
}

StatusOr<v1::TaskStatus> SubmitAndFollow(const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& token, const v1::TaskSpec& spec,
                                         const TuneFlags& flags) {
  auto stub = v1::TuningService::NewStub(channel);
  grpc::ClientContext context;
  worker::AddToken(context, token);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(flags.wait_s));
  context.set_wait_for_ready(true);
  v1::SubmitTaskRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitTaskResponse response;
  grpc::Status submitted = stub->SubmitTask(&context, request, &response);
  if (submitted.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return UnavailableError("submitting the task: no answer from the server within " +
                            std::to_string(flags.wait_s) + " s (--wait-s)");
  }
  if (!submitted.ok()) return worker::FromGrpcStatus(submitted, "submitting the task");
  Logger("cli")->info("task submitted task={}", response.status().task_id());
  Progress progress(!flags.json && isatty(fileno(stderr)));
  progress.Show(response.status());
  auto status = FollowTask(*stub, token, response.status(), flags.wait_s, progress);
  progress.End();
  return status;
}

Status RunTune(const TuneFlags& flags) {
  // Bad input is reported before anything starts.
  auto workload = ir::ParseWorkloadSpec(flags.workload);
  if (!workload.ok()) {
    return InvalidArgumentError(workload.status().message());  // It names the spec.
  }
  if (flags.trials == 0) return InvalidArgumentError("--trials must be at least 1");
  v1::TaskSpec spec;
  spec.set_workload_spec(flags.workload);
  spec.set_trial_budget(flags.trials);
  spec.mutable_search()->set_seed(flags.seed);
  spec.mutable_search()->set_batch_size(flags.batch_size);
  spec.mutable_search()->set_strategy(flags.search);
  if (flags.repeat > 0 || flags.min_repeat_ms >= 0) {
    *spec.mutable_measure() = worker::DefaultMeasureConfig();
    if (flags.repeat > 0) spec.mutable_measure()->set_repeat(flags.repeat);
    if (flags.min_repeat_ms >= 0) spec.mutable_measure()->set_min_repeat_ms(flags.min_repeat_ms);
  }
  if (!flags.target.empty()) spec.mutable_target()->set_target(flags.target);

  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  if (!flags.server.empty()) {
    TUNED_ASSIGN_OR_RETURN(worker::ClientConfig client,
                           worker::LoadClientConfig(flags.server, flags.security.token_file, flags.security.tls,
                                                    flags.security.tls_ca));
    const std::string& token = client.token;
    TUNED_ASSIGN_OR_RETURN(
        v1::TaskStatus status,
        SubmitAndFollow(worker::CreateClientChannel(client.channel), token, spec, flags));
    return PrintSummary(status, elapsed(), "server " + flags.server, flags.json);
  }

  // Embedded: the same server, one local worker and the database, in this process, talking
  // over an in-process channel (no socket is opened).
  ServeConfig config;
  config.db_path = flags.db_path.empty() ? DefaultDbPath() : flags.db_path;
  config.token = RandomToken();
  config.resume_tasks = false;
  worker::EngineOptions engine_options;
  engine_options.target = flags.target;
  engine_options.build_slots = int(flags.slots);
  engine_options.worker_id = "embedded";
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<worker::MeasurementEngine> engine,
                         worker::CreateMeasurementEngine(engine_options));
  spec.mutable_target()->set_target(engine->target().target());
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<ServerStack> stack, ServerStack::Start(config));
  std::shared_ptr<grpc::Channel> channel = stack->server().InProcessChannel();

  worker::WorkerClientOptions client_options;
  client_options.channel = channel;
  client_options.token = config.token;
  client_options.worker_id = "embedded";
  client_options.slots = flags.slots;
  worker::WorkerClient client(client_options, *engine);
  Status client_status;
  std::thread worker_thread([&] { client_status = client.Run(); });

  StatusOr<v1::TaskStatus> status = SubmitAndFollow(channel, config.token, spec, flags);
  client.Stop();
  worker_thread.join();
  stack.reset();
  engine->Drain();
  if (!status.ok()) return status.status();
  if (!client_status.ok()) return client_status;
  return PrintSummary(*status, elapsed(), config.db_path, flags.json);
}

}  // namespace

void RegisterTuneCommand(Program& program) {
  auto flags = std::make_shared<TuneFlags>();
  CLI::App* cmd = program.AddCommand(
      "tune", "Tune a workload: on a server (--server), or embedded in this process",
      [flags] { return RunTune(*flags); });
  cmd->add_option("--workload", flags->workload, "Workload spec, e.g. 'matmul(M=256,N=256,K=256)'")
      ->required();
  cmd->add_option("--target", flags->target,
                  "Target string (default: embedded: this machine; --server: the workers' target)");
  cmd->add_option("--trials", flags->trials, "Candidates to measure")->capture_default_str();
  cmd->add_option("--db", flags->db_path,
                  "Embedded: tuning database (default: $TUNED_DB or ./tuned.db)");
  cmd->add_option("--server", flags->server, "Submit to the server at host:port");
  AddClientSecurityFlags(*cmd, flags->security);
  cmd->add_flag("--json", flags->json, "Print the summary as JSON");
  cmd->add_option("--batch-size", flags->batch_size,
                  "Candidates per search round (0: server default)");
  cmd->add_option("--seed", flags->seed, "Seed of the search")->capture_default_str();
  cmd->add_option("--search", flags->search,
                  "evolutionary (cost-model guided) or random (uniform samples of the design space)")
      ->check(CLI::IsMember({"evolutionary", "random"}))
      ->capture_default_str();
  cmd->add_option("--repeat", flags->repeat, "Timed repeats per candidate (default: protocol's)");
  cmd->add_option("--min-repeat-ms", flags->min_repeat_ms,
                  "Minimum duration of one repeat, ms (default: protocol's)");
  cmd->add_option("--slots", flags->slots, "Embedded: jobs the local worker builds at once")
      ->capture_default_str();
  cmd->add_option("--wait-s", flags->wait_s,
                  "How long to wait for an unreachable server before giving up, s")
      ->capture_default_str();
}

}  // namespace tuned::cli
