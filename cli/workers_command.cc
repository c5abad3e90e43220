#include "cli/workers_command.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/time.h"
#include "rpc/credentials.h"
#include "rpc/worker_service_client.h"

namespace tuned::cli {
namespace {

struct WorkersFlags {
  std::string server;
  ClientSecurityFlags security;
  bool json = false;
};

Status RunWorkers(const WorkersFlags& flags) {
  TUNED_ASSIGN_OR_RETURN(rpc::ClientConfig client,
                         rpc::LoadClientConfig(flags.server, flags.security.token_file,
                                               flags.security.tls, flags.security.tls_ca));
  rpc::WorkerServiceClient workers(rpc::Connect(client));
  TUNED_ASSIGN_OR_RETURN(v1::ListWorkersResponse response, workers.ListWorkers());

  const int64_t now = UnixMs();
  if (flags.json) {
    nlohmann::json out = {{"queued_jobs", response.queued_jobs()},
                          {"leased_jobs", response.leased_jobs()},
                          {"workers", nlohmann::json::array()}};
    for (const v1::WorkerStatus& w : response.workers()) {
      out["workers"].push_back({{"worker_id", w.hello().worker_id()},
                                {"target", w.hello().target().target()},
                                {"device", w.hello().device().model()},
                                {"version", w.hello().version()},
                                {"slots", w.hello().slots()},
                                {"peer", w.peer()},
                                {"running_jobs", w.running_job_ids_size()},
                                {"jobs_assigned", w.jobs_assigned()},
                                {"results", w.results()},
                                {"leases_lost", w.leases_lost()},
                                {"draining", w.draining()},
                                {"calibration_baseline_seconds", w.calibration_baseline_seconds()},
                                {"calibration_last_seconds", w.calibration_last_seconds()},
                                {"drift_events", w.drift_events()},
                                {"last_drift", w.last_drift()},
                                {"calibration_jitter", w.calibration_jitter()},
                                {"connected_unix_ms", w.connected_unix_ms()},
                                {"last_seen_unix_ms", w.last_seen_unix_ms()}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return Status::Ok();
  }
  std::printf("%d worker(s), %llu job(s) queued, %llu leased\n", response.workers_size(),
              static_cast<unsigned long long>(response.queued_jobs()),
              static_cast<unsigned long long>(response.leased_jobs()));
  if (response.workers_size() == 0) return Status::Ok();
  std::printf("%-28s %-6s %-8s %-8s %-8s %-6s %-9s %s\n", "WORKER", "SLOTS", "RUNNING", "DONE",
              "LOST", "SEEN", "UP", "TARGET / DEVICE");
  for (const v1::WorkerStatus& w : response.workers()) {
    // A draining worker is marked after its id: it finishes its jobs and gets no more.
    const std::string name = w.hello().worker_id() + (w.draining() ? " (draining)" : "");
    std::printf("%-28s %-6u %-8d %-8llu %-8llu %-6s %-9s %s / %s\n", name.c_str(),
                w.hello().slots(), w.running_job_ids_size(),
                static_cast<unsigned long long>(w.results()),
                static_cast<unsigned long long>(w.leases_lost()),
                (std::to_string((now - w.last_seen_unix_ms()) / 1000) + "s").c_str(),
                (std::to_string((now - w.connected_unix_ms()) / 1000) + "s").c_str(),
                w.hello().target().target().c_str(), w.hello().device().model().c_str());
    // Drift detection: the calibration kernel's time now and its baseline, and the last drift.
    if (w.calibration_baseline_seconds() > 0) {
      std::printf("  calibration %s (baseline %s, jitter %.1f%%), %llu drift(s)%s%s\n",
                  FormatSeconds(w.calibration_last_seconds()).c_str(),
                  FormatSeconds(w.calibration_baseline_seconds()).c_str(),
                  w.calibration_jitter() * 100,
                  static_cast<unsigned long long>(w.drift_events()),
                  w.last_drift().empty() ? "" : ", last: ", w.last_drift().c_str());
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterWorkersCommand(Program& program) {
  auto flags = std::make_shared<WorkersFlags>();
  CLI::App* cmd = program.AddCommand("workers", "List the workers connected to a server",
                                     [flags] { return RunWorkers(*flags); });
  cmd->add_option("--server", flags->server, "Server address, host:port")->required();
  AddClientSecurityFlags(*cmd, flags->security);
  cmd->add_flag("--json", flags->json, "Print JSON");
}

}  // namespace tuned::cli
