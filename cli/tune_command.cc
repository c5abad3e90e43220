#include "cli/tune_command.h"


#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/tune_progress.h"
#include "cli/workload_flags.h"
#include "common/logging.h"
#include "common/time.h"
#include "proto/task_state.h"
#include "rpc/channel.h"
#include "rpc/credentials.h"
#include "rpc/tuning_client.h"
#include "server/stack/embedded_stack.h"
#include "worker/measurement_engine.h"

namespace tuned::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct TuneFlags {
  WorkloadFlags workload;
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
  uint32_t build_timeout_ms = 0;
  bool no_verify = false;
  double noise_cv = -1;  // re-measure flags: negative means "the server's default"
  int top_k = -1;
  int top_k_rounds = -1;
  uint32_t slots = 1;
  int wait_s = 60;
};

std::string StateName(v1::TaskState state) {
  std::string name = v1::TaskState_Name(state);
  return name.substr(std::string("TASK_STATE_").size());
}

double Gflops(const v1::TuningRecord& best) {
  double t = best.result().median_seconds();
  return t > 0 ? best.workload().flops() / t / 1e9 : 0;
}

// Follows the task until it reaches a final state; survives a server restart for `wait_s`.
StatusOr<v1::TaskStatus> FollowTask(rpc::TuningClient& client, v1::TaskStatus status, int wait_s,
                                    TuneProgress& progress) {
  auto last_contact = Clock::now();
  int backoff_ms = 100;
  while (!v1::IsFinal(status.state())) {
    Status finished = client.Watch(status.task_id(), [&](const v1::TaskStatus& update) {
      last_contact = Clock::now();
      backoff_ms = 100;
      if (update.trials_done() >= status.trials_done() || v1::IsFinal(update.state())) {
        if (!update.waiting_for().empty() && update.waiting_for() != status.waiting_for()) {
          Logger("cli")->warn("task {} is waiting: {}", update.task_id(), update.waiting_for());
        }
        status = update;
        progress.Show(status);
      }
    });
    if (v1::IsFinal(status.state())) break;
    if (!finished.ok() && finished.code() != StatusCode::kUnavailable &&
        finished.code() != StatusCode::kCancelled) {
      return finished;
    }
    if (Clock::now() - last_contact > std::chrono::seconds(wait_s)) {
      return UnavailableError("lost the server for more than " + std::to_string(wait_s) +
                              " s: " + finished.message());
    }
    Logger("cli")->warn("{}; retrying in {} ms", finished.message(), backoff_ms);
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

StatusOr<v1::TaskStatus> SubmitAndFollow(rpc::Connection connection, const v1::TaskSpec& spec,
                                         const TuneFlags& flags) {
  rpc::TuningClient client(std::move(connection));
  StatusOr<v1::TaskStatus> submitted = client.Submit(spec, flags.wait_s * 1000);
  if (submitted.status().code() == StatusCode::kDeadlineExceeded) {
    return UnavailableError("submitting the task: no answer from the server within " +
                            std::to_string(flags.wait_s) + " s (--wait-s)");
  }
  if (!submitted.ok()) return submitted.status();
  Logger("cli")->info("task submitted task={}", submitted->task_id());
  TuneProgress progress(ChooseProgressMode(flags.json, stderr), stderr);
  progress.Show(*submitted);
  auto status = FollowTask(client, *submitted, flags.wait_s, progress);
  progress.End();
  return status;
}

Status RunTune(const TuneFlags& flags) {
  // Bad input is reported before anything starts.
  auto workload = ResolveWorkload(flags.workload);
  if (!workload.ok()) {
    return InvalidArgumentError(workload.status().message());  // It names the spec.
  }
  if (flags.trials == 0) return InvalidArgumentError("--trials must be at least 1");
  v1::TaskSpec spec;
  // A spec travels as written; a definition file as its key, which rebuilds it anywhere.
  spec.set_workload_spec(flags.workload.file.empty() ? flags.workload.spec : workload->key());
  spec.set_trial_budget(flags.trials);
  spec.mutable_search()->set_seed(flags.seed);
  spec.mutable_search()->set_batch_size(flags.batch_size);
  spec.mutable_search()->set_strategy(flags.search);
  // Only what the user asked for: the server completes the rest field by field.
  if (flags.repeat > 0) spec.mutable_measure()->set_repeat(flags.repeat);
  if (flags.min_repeat_ms >= 0) spec.mutable_measure()->set_min_repeat_ms(flags.min_repeat_ms);
  if (flags.build_timeout_ms > 0) spec.mutable_measure()->set_build_timeout_ms(flags.build_timeout_ms);
  if (flags.no_verify) spec.mutable_measure()->set_verify(false);
  if (flags.noise_cv >= 0) spec.mutable_remeasure()->set_noise_cv_threshold(flags.noise_cv);
  if (flags.top_k >= 0) spec.mutable_remeasure()->set_top_k(uint32_t(flags.top_k));
  if (flags.top_k_rounds >= 0) spec.mutable_remeasure()->set_top_k_rounds(uint32_t(flags.top_k_rounds));
  if (!flags.target.empty()) spec.mutable_target()->set_target(flags.target);

  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  if (!flags.server.empty()) {
    TUNED_ASSIGN_OR_RETURN(rpc::ClientConfig client,
                           rpc::LoadClientConfig(flags.server, flags.security.token_file,
                                                 flags.security.tls, flags.security.tls_ca));
    TUNED_ASSIGN_OR_RETURN(v1::TaskStatus status,
                           SubmitAndFollow(rpc::Connect(client), spec, flags));
    return PrintSummary(status, elapsed(), "server " + flags.server, flags.json);
  }

  // Embedded: the same server, one local worker and the database, in this process, talking
  // over an in-process channel (no socket is opened).
  server::EmbeddedStackOptions embedded;
  embedded.db_path = DbPathOrDefault(flags.db_path);
  embedded.engine.target = flags.target;
  embedded.engine.build_slots = int(flags.slots);
  embedded.engine.worker_id = "embedded";
  embedded.slots = flags.slots;
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<server::EmbeddedStack> stack,
                         server::EmbeddedStack::Start(embedded));
  spec.mutable_target()->set_target(stack->target().target());
  StatusOr<v1::TaskStatus> status = SubmitAndFollow(stack->connection(), spec, flags);
  Status stopped = stack->Stop();
  if (!status.ok()) return status.status();
  TUNED_RETURN_IF_ERROR(stopped);
  return PrintSummary(*status, elapsed(), embedded.db_path, flags.json);
}

}  // namespace

void RegisterTuneCommand(Program& program) {
  auto flags = std::make_shared<TuneFlags>();
  CLI::App* cmd = program.AddCommand(
      "tune", "Tune a workload: on a server (--server), or embedded in this process",
      [flags] { return RunTune(*flags); });
  AddWorkloadFlags(*cmd, flags->workload, "--workload",
                   "Workload spec, e.g. 'matmul(M=256,N=256,K=256)', or a stored key");
  cmd->add_option("--target", flags->target,
                  "Target string (default: embedded: this machine; --server: the workers' target)");
  cmd->add_option("--trials", flags->trials, "Candidates to measure")->capture_default_str();
  cmd->add_option("--db", flags->db_path,
                  std::string("Embedded: tuning database ") + kDbPathHelp);
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
  cmd->add_option("--build-timeout-ms", flags->build_timeout_ms,
                  "Limit for building one candidate, ms (default: protocol's)");
  cmd->add_flag("--no-verify", flags->no_verify,
                "Do not check outputs against the reference (records are marked unverified and "
                "never become a best record unless a lookup allows it)");
  cmd->add_option("--noise-cv", flags->noise_cv,
                  "Re-measure, with 3x the repeats, a record whose repeat CV is above this before "
                  "it may rank (default 0.05; 0: never)");
  cmd->add_option("--top-k", flags->top_k,
                  "At the end, re-measure the best K traces interleaved and pick the winner on "
                  "those figures (default 5; 0: off)");
  cmd->add_option("--top-k-rounds", flags->top_k_rounds,
                  "Rounds of the final re-measure, one job per trace each (default 4)");
  cmd->add_option("--slots", flags->slots, "Embedded: jobs the local worker builds at once")
      ->capture_default_str();
  cmd->add_option("--wait-s", flags->wait_s,
                  "How long to wait for an unreachable server before giving up, s")
      ->capture_default_str();
}

}  // namespace tuned::cli
