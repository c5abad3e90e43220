#include "cli/measure_command.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "cli/workload_flags.h"
#include "compiler/schedule/trace.h"
#include "worker/measurement_engine.h"
#include "worker/workload_message.h"

namespace tuned::cli {
namespace {

struct MeasureOptions {
  WorkloadFlags workload;
  std::vector<std::string> trace_files;  // several: timed together, interleaved
  std::string target;
  bool json = false;
  uint32_t repeat = 0;
  double min_repeat_ms = -1;
  uint32_t run_timeout_ms = 0;
  bool flush_cache = false;     // every timed run cold
  bool no_flush_cache = false;  // none, whatever the buffers' size
  uint64_t seed = 0;
  bool seed_set = false;
};

StatusOr<nlohmann::json> ToJson(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(message, &text, options).ok()) {
    return InternalError("cannot print " + message.GetTypeName() + " as JSON");
  }
  return nlohmann::json::parse(text);
}

std::string Microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", seconds * 1e6);
  return text;
}

void PrintText(const v1::MeasureJob& job, const v1::MeasureResult& result,
               const v1::Target& target) {
  const v1::DeviceInfo& device = result.device();
  const v1::MeasureConfig& c = job.config();
  std::printf("workload  %s\n", job.workload().key().c_str());
  std::printf("target    %s\n", target.target().c_str());
  std::printf("device    %s, %u cores, L1d %llu KiB, L2 %llu KiB, L3 %llu KiB, %s\n",
              device.model().c_str(), device.num_cores(),
              static_cast<unsigned long long>(device.l1d_cache_bytes() >> 10),
              static_cast<unsigned long long>(device.l2_cache_bytes() >> 10),
              static_cast<unsigned long long>(device.l3_cache_bytes() >> 10),
              device.toolkit_version().c_str());
  std::printf("protocol  v%u warmup=%u number=%u repeat=%u min_repeat_ms=%g flush_cache=%s "
              "build_timeout_ms=%u run_timeout_ms=%u verify=%s seed=%llu\n",
              c.protocol_version(), c.warmup(), c.number(), c.repeat(), c.min_repeat_ms(),
              !c.has_flush_cache() ? "auto" : c.flush_cache() ? "true" : "false", c.build_timeout_ms(), c.run_timeout_ms(),
              c.verify() ? "true" : "false", static_cast<unsigned long long>(c.seed()));
  std::string status = v1::MeasureStatus_Name(result.status());
  status = status.substr(std::string("MEASURE_STATUS_").size());
  std::printf("status    %s\n", status.c_str());
  if (!result.error().empty()) std::printf("error     %s\n", result.error().c_str());
  std::printf("build     %.1f ms\n", result.build_seconds() * 1e3);
  if (result.status() == v1::MEASURE_STATUS_OK) {
    std::printf("median    %s us  (%d repeats of %u runs%s)\n",
                Microseconds(result.median_seconds()).c_str(), result.repeat_seconds_size(),
                result.number(), result.cold() ? ", each after a cache flush" : "");
    std::string repeats;
    for (double seconds : result.repeat_seconds()) repeats += " " + Microseconds(seconds);
    std::printf("repeats  %s us\n", repeats.c_str());
    if (job.workload().flops() > 0 && result.median_seconds() > 0) {
      std::printf("rate      %.2f GFLOP/s\n",
                  job.workload().flops() / result.median_seconds() / 1e9);
    }
  }
  if (c.verify() && (result.status() == v1::MEASURE_STATUS_OK ||
                     result.status() == v1::MEASURE_STATUS_WRONG_RESULT)) {
    std::printf("max error %.3g\n", result.max_error());
  }
}

// Several traces: each median against the fastest's (the group was timed interleaved).
void PrintComparison(const std::vector<std::string>& traces,
                     const std::vector<StatusOr<v1::MeasureResult>>& results) {
  double fastest = 0;
  for (const auto& result : results) {
    if (result.ok() && result->status() == v1::MEASURE_STATUS_OK &&
        (fastest == 0 || result->median_seconds() < fastest)) {
      fastest = result->median_seconds();
    }
  }
  if (fastest == 0) return;
  std::printf("\ninterleaved: each trace's median / the fastest's\n");
  for (size_t i = 0; i < traces.size(); ++i) {
    if (!results[i].ok() || results[i]->status() != v1::MEASURE_STATUS_OK) continue;
    std::printf("  %6.3f  %s us  %s\n", results[i]->median_seconds() / fastest,
                Microseconds(results[i]->median_seconds()).c_str(), traces[i].c_str());
  }
}

Status RunMeasure(const MeasureOptions& options) {
  TUNED_ASSIGN_OR_RETURN(ir::Workload workload, ResolveWorkload(options.workload));
  v1::MeasureConfig config = worker::DefaultMeasureConfig();
  if (options.repeat > 0) config.set_repeat(options.repeat);
  if (options.min_repeat_ms >= 0) config.set_min_repeat_ms(options.min_repeat_ms);
  if (options.run_timeout_ms > 0) config.set_run_timeout_ms(options.run_timeout_ms);
  if (options.flush_cache && options.no_flush_cache) {
    return InvalidArgumentError("--flush-cache and --no-flush-cache exclude each other");
  }
  if (options.flush_cache || options.no_flush_cache) config.set_flush_cache(options.flush_cache);
  if (options.seed_set) config.set_seed(options.seed);

  // One job per trace (none: the unscheduled program).
  const std::vector<std::string> traces =
      options.trace_files.empty() ? std::vector<std::string>{""} : options.trace_files;
  std::vector<v1::MeasureJob> jobs;
  for (const std::string& trace_file : traces) {
    v1::MeasureJob& job = jobs.emplace_back();
    job.set_job_id("cli-" + std::to_string(jobs.size()));
    *job.mutable_workload() = worker::WorkloadMessage(workload);
    if (!trace_file.empty()) {
      TUNED_ASSIGN_OR_RETURN(std::string text, ReadTextFile(trace_file, "trace file"));
      StatusOr<schedule::Trace> trace = schedule::TraceFromJson(text);
      if (!trace.ok()) return trace.status().WithContext(trace_file);
      schedule::TraceToProto(*trace, job.mutable_trace());
    }
    *job.mutable_config() = config;
  }

  worker::EngineOptions engine_options;
  engine_options.target = options.target;
  engine_options.worker_id = "tuned-measure";
  // Several traces are timed as one group, their repeats taking turns, so that the machine's
  // slower episodes fall on every one of them alike.
  engine_options.interleave = int(jobs.size());
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<worker::MeasurementEngine> engine,
                         worker::CreateMeasurementEngine(engine_options));
  std::vector<StatusOr<v1::MeasureResult>> results(jobs.size(), InternalError("not measured"));
  for (size_t i = 0; i < jobs.size(); ++i) {
    *jobs[i].mutable_target() = engine->target();
    engine->Submit(jobs[i], [&results, i](StatusOr<v1::MeasureResult> result) {
      results[i] = std::move(result);
    });
  }
  engine->Drain();

  nlohmann::json json_results = nlohmann::json::array();
  std::string failure;
  for (size_t i = 0; i < jobs.size(); ++i) {
    TUNED_ASSIGN_OR_RETURN(v1::MeasureResult result, results[i]);
    const std::string& name = traces[i].empty() ? "(default schedule)" : traces[i];
    if (options.json) {
      TUNED_ASSIGN_OR_RETURN(nlohmann::json result_json, ToJson(result));
      json_results.push_back({{"trace", traces[i]}, {"result", result_json}});
    } else {
      if (i > 0) std::printf("\n");
      if (jobs.size() > 1) std::printf("trace     %s\n", name.c_str());
      PrintText(jobs[i], result, engine->target());
    }
    if (result.status() != v1::MEASURE_STATUS_OK && failure.empty()) {
      failure = "measurement of " + (jobs.size() > 1 ? name + " for " : std::string()) +
                jobs[i].workload().key() + " failed: " + v1::MeasureStatus_Name(result.status()) +
                ": " + result.error();
    }
  }
  if (options.json) {
    TUNED_ASSIGN_OR_RETURN(nlohmann::json config_json, ToJson(config));
    nlohmann::json out = {{"workload", jobs[0].workload().key()},
                          {"target", engine->target().target()},
                          {"config", config_json}};
    // One trace: its result; several: each with its trace file, in the order given.
    if (jobs.size() == 1) {
      out["result"] = json_results[0]["result"];
    } else {
      out["results"] = json_results;
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else if (jobs.size() > 1) {
    PrintComparison(traces, results);
  }
  std::fflush(stdout);
  if (!failure.empty()) return AbortedError(failure);
  return Status::Ok();
}

}  // namespace

void RegisterMeasureCommand(Program& program) {
  auto options = std::make_shared<MeasureOptions>();
  CLI::App* cmd = program.AddCommand(
      "measure", "Build, verify and time a candidate (or several, interleaved) on this machine",
      [options] { return RunMeasure(*options); });
  AddWorkloadFlags(*cmd, options->workload, "--workload,-w",
                   "Workload spec, e.g. 'matmul(M=256,N=256,K=256,dtype=float32)', or a stored key");
  cmd->add_option("--trace", options->trace_files,
                  "Trace (JSON, as `tuned lower` takes it); default: none (the unscheduled program). "
                  "Repeat it to compare schedules: they are timed together, one repeat each in turn");
  cmd->add_option("--target", options->target, "Target string; default: this host");
  cmd->add_flag("--json", options->json, "Print the result as JSON");
  cmd->add_option("--repeat", options->repeat, "Timed repeats (default 5)");
  cmd->add_option("--min-repeat-ms", options->min_repeat_ms,
                  "Minimum duration of one repeat, ms (default 10)");
  cmd->add_option("--run-timeout-ms", options->run_timeout_ms,
                  "Limit for running the candidate, ms (default 10000)");
  cmd->add_flag("--flush-cache", options->flush_cache,
                "Time every run cold, after a cache flush (default: when the kernel's buffers "
                "exceed the last-level cache)");
  cmd->add_flag("--no-flush-cache", options->no_flush_cache, "Never flush the caches");
  cmd->add_option_function<uint64_t>(
      "--seed",
      [options](const uint64_t& seed) {
        options->seed = seed;
        options->seed_set = true;
      },
      "Seed of the random inputs (default 1)");
}

}  // namespace tuned::cli
