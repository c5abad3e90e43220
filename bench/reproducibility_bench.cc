// Can a user trust the winner? Tunes the same workload twice from empty databases (the embedded
// stack: the real server, one local worker), then measures both winners again, interleaved,
// `--remeasures` times each, and prints how far apart the two winners' re-measured medians are
// (goal: within 3%) and the CV of each winner's median over those re-measurements (goal: at
// most 2% for kernels over 1 ms), plus what the final top-k re-measure cost per task.
//
//   build/bench/tuned_reproducibility_bench [--workload SPEC] [--trials N] [--top-k K]
//                                           [--remeasures R] [--interleave N]
//
// Defaults: matmul 512x512x512 float32, 200 trials, top-k 5, 10 re-measurements (long: tens of
// minutes on two cores). A plain program: its results are statistics over whole tuning runs.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "proto/task_state.h"
#include "rpc/tuning_client.h"
#include "server/stack/embedded_stack.h"
#include "tuning_db/database.h"
#include "worker/measurement_engine.h"

namespace tuned {
namespace {

struct Flags {
  std::string workload = "matmul(M=512,N=512,K=512,dtype=float32)";
  uint32_t trials = 200;
  uint32_t top_k = 5;
  int remeasures = 10;
  int interleave = worker::EngineOptions{}.interleave;  // jobs the worker times together
};

struct Run {
  v1::TuningRecord winner;
  double task_seconds = 0;
  double final_seconds = 0;  // from the last search record to the last final record
  size_t final_records = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Cv(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / double(v.size() - 1)) / mean;
}

StatusOr<Run> TuneOnce(const Flags& flags, const std::string& db_path) {
  server::EmbeddedStackOptions options;
  options.db_path = db_path;
  options.engine.worker_id = "bench";
  options.engine.interleave = flags.interleave;
  TUNED_ASSIGN_OR_RETURN(auto stack, server::EmbeddedStack::Start(options));
  rpc::TuningClient client(stack->connection());
  v1::TaskSpec spec;
  spec.set_workload_spec(flags.workload);
  *spec.mutable_target() = stack->target();
  spec.set_trial_budget(flags.trials);
  spec.mutable_remeasure()->set_top_k(flags.top_k);
  const auto start = std::chrono::steady_clock::now();
  TUNED_ASSIGN_OR_RETURN(v1::TaskStatus status, client.Submit(spec, 10000));
  while (!v1::IsFinal(status.state())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    TUNED_ASSIGN_OR_RETURN(status, client.Get(status.task_id()));
  }
  Run run;
  run.task_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  TUNED_RETURN_IF_ERROR(stack->Stop());
  if (status.state() != v1::TASK_STATE_SUCCEEDED) {
    return InternalError("task ended " + v1::TaskState_Name(status.state()) + ": " +
                         status.error());
  }
  run.winner = status.best();
  TUNED_ASSIGN_OR_RETURN(auto db, db::OpenDatabase(db_path));
  TUNED_ASSIGN_OR_RETURN(auto records, db->TaskRecords(status.task_id()));
  int64_t last_search = 0;
  int64_t last_final = 0;
  for (const v1::TuningRecord& record : records) {
    if (record.kind() == v1::RECORD_KIND_SEARCH) last_search = record.created_unix_ms();
    if (record.kind() == v1::RECORD_KIND_FINAL) {
      last_final = record.created_unix_ms();
      ++run.final_records;
    }
  }
  if (last_final > last_search) run.final_seconds = double(last_final - last_search) / 1000;
  return run;
}

int Main(const Flags& flags) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tuned-repro-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<Run> runs;
  for (int i = 0; i < 2; ++i) {
    StatusOr<Run> run = TuneOnce(flags, (dir / ("run" + std::to_string(i) + ".db")).string());
    if (!run.ok()) {
      std::fprintf(stderr, "tuning run %d: %s\n", i + 1, run.status().ToString().c_str());
      return 1;
    }
    std::printf("run %d: winner median %.4f ms (%s record, CV %.2f%%), task %.1f s, final "
                "re-measure %.1f s (%zu records)\n",
                i + 1, run->winner.result().median_seconds() * 1e3,
                run->winner.kind() == v1::RECORD_KIND_FINAL ? "final" : "search",
                run->winner.result().repeat_cv() * 100, run->task_seconds, run->final_seconds,
                run->final_records);
    runs.push_back(std::move(*run));
  }

  // Both winners measured again, A B A B ..., with the task's protocol (the worker's defaults).
  worker::EngineOptions engine_options;
  engine_options.worker_id = "bench-remeasure";
  auto engine = worker::CreateMeasurementEngine(engine_options);
  if (!engine.ok()) {
    std::fprintf(stderr, "engine: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  std::vector<std::vector<double>> medians(2);
  for (int r = 0; r < flags.remeasures; ++r) {
    for (int i = 0; i < 2; ++i) {
      v1::MeasureJob job;
      job.set_job_id("remeasure");
      job.set_task_id("bench");
      *job.mutable_workload() = runs[i].winner.workload();
      *job.mutable_target() = runs[i].winner.target();
      *job.mutable_trace() = runs[i].winner.trace();
      *job.mutable_config() = worker::DefaultMeasureConfig();
      auto result = (*engine)->Measure(job);
      if (!result.ok() || result->status() != v1::MEASURE_STATUS_OK) {
        std::fprintf(stderr, "re-measuring winner %d failed\n", i + 1);
        return 1;
      }
      medians[i].push_back(result->median_seconds());
    }
  }
  const double m1 = Median(medians[0]);
  const double m2 = Median(medians[1]);
  std::printf("re-measured %d times: winner 1 %.4f ms (CV of its median %.2f%%), winner 2 "
              "%.4f ms (CV %.2f%%)\n",
              flags.remeasures, m1 * 1e3, Cv(medians[0]) * 100, m2 * 1e3, Cv(medians[1]) * 100);
  std::printf("winners apart by %.2f%% (goal: within 3%%); same trace: %s\n",
              std::abs(m1 - m2) / std::min(m1, m2) * 100,
              runs[0].winner.trace_hash() == runs[1].winner.trace_hash() ? "yes" : "no");
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tuned

int main(int argc, char** argv) {
  tuned::Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--workload" && has_value) {
      flags.workload = argv[++i];
    } else if (arg == "--trials" && has_value) {
      flags.trials = uint32_t(std::atoi(argv[++i]));
    } else if (arg == "--top-k" && has_value) {
      flags.top_k = uint32_t(std::atoi(argv[++i]));
    } else if (arg == "--remeasures" && has_value) {
      flags.remeasures = std::atoi(argv[++i]);
    } else if (arg == "--interleave" && has_value) {
      flags.interleave = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--workload SPEC] [--trials N] [--top-k K] [--remeasures R] "
                   "[--interleave N]\n",
                   argv[0]);
      return 2;
    }
  }
  if (flags.trials == 0 || flags.remeasures < 2 || flags.interleave < 1) {
    std::fprintf(stderr, "--trials and --interleave must be at least 1 and --remeasures at least 2\n");
    return 2;
  }
  return tuned::Main(flags);
}
