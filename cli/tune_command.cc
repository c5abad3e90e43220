#include "cli/tune_command.h"


#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/task_follow.h"
#include "cli/task_time.h"
#include "cli/tune_model.h"
#include "cli/tune_progress.h"
#include "cli/workload_flags.h"
#include "common/time.h"
#include "rpc/channel.h"
#include "rpc/credentials.h"
#include "server/stack/embedded_stack.h"
#include "worker/measurement_engine.h"

namespace tuned::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct TuneFlags {
  WorkloadFlags workload;
  ModelTuneOptions model;  // --model and its round settings
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
  uint32_t slots = 0;  // 0: worker::DefaultSlots()
  int interleave = worker::EngineOptions{}.interleave;
  size_t object_cache_mb = worker::EngineOptions{}.object_cache_bytes >> 20;
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
    out["time"] = TaskTimeJson(status.time());
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
    if (std::string line = TaskTimeLine(status.time(), "the task"); !line.empty()) std::printf("%s\n", line.c_str());
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

// Every setting of the task but its workload and budget: only what the user asked for (the
// server completes the rest field by field).
v1::TaskSpec BaseSpec(const TuneFlags& flags) {
  v1::TaskSpec spec;
  spec.mutable_search()->set_seed(flags.seed);
  spec.mutable_search()->set_batch_size(flags.batch_size);
  spec.mutable_search()->set_strategy(flags.search);
  if (flags.repeat > 0) spec.mutable_measure()->set_repeat(flags.repeat);
  if (flags.min_repeat_ms >= 0) spec.mutable_measure()->set_min_repeat_ms(flags.min_repeat_ms);
  if (flags.build_timeout_ms > 0) spec.mutable_measure()->set_build_timeout_ms(flags.build_timeout_ms);
  if (flags.no_verify) spec.mutable_measure()->set_verify(false);
  if (flags.noise_cv >= 0) spec.mutable_remeasure()->set_noise_cv_threshold(flags.noise_cv);
  if (flags.top_k >= 0) spec.mutable_remeasure()->set_top_k(uint32_t(flags.top_k));
  if (flags.top_k_rounds >= 0) spec.mutable_remeasure()->set_top_k_rounds(uint32_t(flags.top_k_rounds));
  if (!flags.target.empty()) spec.mutable_target()->set_target(flags.target);
  return spec;
}

// The model's rounds: a round is too short for the final top-k re-measure to pay (it would
// re-time the same few traces every round), so it is off unless asked for.
Status RunTuneModel(const std::function<rpc::Connection()>& connect, v1::TaskSpec base, const TuneFlags& flags,
                    const std::string& where) {
  if (flags.top_k < 0) base.mutable_remeasure()->set_top_k(0);
  ModelTuneOptions options = flags.model;
  options.trials = flags.trials;
  options.json = flags.json;
  options.wait_s = flags.wait_s;
  return TuneModel(connect, base, options, where);
}

Status RunTune(const TuneFlags& flags) {
  // Bad input is reported before anything starts.
  const bool whole_model = !flags.model.model.path.empty();
  if (whole_model && (!flags.workload.spec.empty() || !flags.workload.file.empty())) {
    return InvalidArgumentError("--model and --workload name two things to tune; expected one");
  }
  StatusOr<ir::Workload> workload = InvalidArgumentError("no workload");
  if (!whole_model) {
    workload = ResolveWorkload(flags.workload);
    if (!workload.ok()) return InvalidArgumentError(workload.status().message());  // It names the spec.
  }
  if (flags.trials == 0) return InvalidArgumentError("--trials must be at least 1");
  v1::TaskSpec spec = BaseSpec(flags);
  if (!whole_model) {
    // A spec travels as written; a definition file as its key, which rebuilds it anywhere.
    spec.set_workload_spec(flags.workload.file.empty() ? flags.workload.spec : workload->key());
    spec.set_trial_budget(flags.trials);
  }

  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  if (!flags.server.empty()) {
    TUNED_ASSIGN_OR_RETURN(rpc::ClientConfig client,
                           rpc::LoadClientConfig(flags.server, flags.security.token_file,
                                                 flags.security.tls, flags.security.tls_ca));
    if (whole_model) return RunTuneModel([&] { return rpc::Connect(client); }, spec, flags, "server " + flags.server);
    TUNED_ASSIGN_OR_RETURN(v1::TaskStatus status,
                           SubmitAndFollow(rpc::Connect(client), spec, flags.wait_s, ChooseProgressMode(flags.json, stderr)));
    return PrintSummary(status, elapsed(), "server " + flags.server, flags.json);
  }

  // Embedded: the same server, one local worker and the database, in this process, talking
  // over an in-process channel (no socket is opened).
  server::EmbeddedStackOptions embedded;
  embedded.db_path = DbPathOrDefault(flags.db_path);
  embedded.engine.target = flags.target;
  const uint32_t slots = flags.slots == 0 ? worker::DefaultSlots() : flags.slots;
  embedded.engine.build_slots = int(slots);
  embedded.engine.interleave = flags.interleave;
  embedded.engine.object_cache_bytes = flags.object_cache_mb << 20;
  embedded.engine.worker_id = "embedded";
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<server::EmbeddedStack> stack,
                         server::EmbeddedStack::Start(embedded));
  spec.mutable_target()->set_target(stack->target().target());
  if (whole_model) {
    Status tuned = RunTuneModel([&] { return stack->connection(); }, spec, flags, embedded.db_path);
    Status stopped = stack->Stop();
    TUNED_RETURN_IF_ERROR(tuned);
    return stopped;
  }
  StatusOr<v1::TaskStatus> status = SubmitAndFollow(stack->connection(), spec, flags.wait_s, ChooseProgressMode(flags.json, stderr));
  Status stopped = stack->Stop();
  if (!status.ok()) return status.status();
  TUNED_RETURN_IF_ERROR(stopped);
  return PrintSummary(*status, elapsed(), embedded.db_path, flags.json);
}

}  // namespace

void RegisterTuneCommand(Program& program) {
  auto flags = std::make_shared<TuneFlags>();
  CLI::App* cmd = program.AddCommand(
      "tune", "Tune a workload or every task of a model: on a server (--server), or embedded in this process",
      [flags] { return RunTune(*flags); });
  AddWorkloadFlags(*cmd, flags->workload, "--workload",
                   "Workload spec, e.g. 'matmul(M=256,N=256,K=256)', or a stored key");
  AddModelFlags(*cmd, flags->model.model, /*required=*/false);
  cmd->add_option("--round-trials", flags->model.round_trials,
                  "--model: trials of one task per round")->capture_default_str();
  cmd->add_option("--scheduler", flags->model.scheduler,
                  "--model: which task gets the next round: gradient (the expected gain in the model's "
                  "latency) or round-robin")
      ->check(CLI::IsMember({"gradient", "round-robin"}))
      ->capture_default_str();
  cmd->add_option("--target", flags->target,
                  "Target string (default: embedded: this machine; --server: the workers' target)");
  cmd->add_option("--trials", flags->trials, "Candidates to measure (with --model: for the whole model)")->capture_default_str();
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
  cmd->add_option("--slots", flags->slots,
                  "Embedded: jobs the local worker builds at once (default: this machine's "
                  "cores, at most 4; builds run between timing runs, or beside a GPU's runs)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--interleave", flags->interleave,
                  "Embedded, CPU targets: jobs timed together, one repeat each in turn, so that the "
                  "machine's slower episodes fall on all of them alike (1: one job at a time)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--object-cache-mb", flags->object_cache_mb,
                  "Embedded: MiB of built objects the local worker keeps, so that re-measures of a "
                  "trace link it again instead of building it (0: build every job)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--wait-s", flags->wait_s,
                  "How long to wait for an unreachable server before giving up, s")
      ->capture_default_str();
}

}  // namespace tuned::cli
