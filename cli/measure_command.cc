#include "cli/measure_command.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

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
  std::string trace_file;
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

Status RunMeasure(const MeasureOptions& options) {
  TUNED_ASSIGN_OR_RETURN(ir::Workload workload, ResolveWorkload(options.workload));
  v1::MeasureJob job;
  job.set_job_id("cli");
  *job.mutable_workload() = worker::WorkloadMessage(workload);
  if (!options.trace_file.empty()) {
    TUNED_ASSIGN_OR_RETURN(std::string text, ReadTextFile(options.trace_file, "trace file"));
    StatusOr<schedule::Trace> trace = schedule::TraceFromJson(text);
    if (!trace.ok()) return trace.status().WithContext(options.trace_file);
    schedule::TraceToProto(*trace, job.mutable_trace());
  }
  v1::MeasureConfig config = worker::DefaultMeasureConfig();
  if (options.repeat > 0) config.set_repeat(options.repeat);
  if (options.min_repeat_ms >= 0) config.set_min_repeat_ms(options.min_repeat_ms);
  if (options.run_timeout_ms > 0) config.set_run_timeout_ms(options.run_timeout_ms);
  if (options.flush_cache && options.no_flush_cache) {
    return InvalidArgumentError("--flush-cache and --no-flush-cache exclude each other");
  }
  if (options.flush_cache || options.no_flush_cache) config.set_flush_cache(options.flush_cache);
  if (options.seed_set) config.set_seed(options.seed);
  *job.mutable_config() = config;

  worker::EngineOptions engine_options;
  engine_options.target = options.target;
  engine_options.worker_id = "tuned-measure";
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<worker::MeasurementEngine> engine,
                         worker::CreateMeasurementEngine(engine_options));
  *job.mutable_target() = engine->target();
  TUNED_ASSIGN_OR_RETURN(v1::MeasureResult result, engine->Measure(job));

  if (options.json) {
    TUNED_ASSIGN_OR_RETURN(nlohmann::json config_json, ToJson(job.config()));
    TUNED_ASSIGN_OR_RETURN(nlohmann::json result_json, ToJson(result));
    nlohmann::json out = {{"workload", job.workload().key()},
                          {"target", engine->target().target()},
                          {"config", config_json},
                          {"result", result_json}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    PrintText(job, result, engine->target());
  }
  std::fflush(stdout);
  if (result.status() != v1::MEASURE_STATUS_OK) {
    return AbortedError("measurement of " + job.workload().key() + " failed: " +
                        v1::MeasureStatus_Name(result.status()) + ": " + result.error());
  }
  return Status::Ok();
}

}  // namespace

void RegisterMeasureCommand(Program& program) {
  auto options = std::make_shared<MeasureOptions>();
  CLI::App* cmd = program.AddCommand(
      "measure", "Build, verify and time one candidate on this machine",
      [options] { return RunMeasure(*options); });
  AddWorkloadFlags(*cmd, options->workload, "--workload,-w",
                   "Workload spec, e.g. 'matmul(M=256,N=256,K=256,dtype=float32)', or a stored key");
  cmd->add_option("--trace", options->trace_file,
                  "Trace (JSON, as `tuned lower` takes it); default: none (the unscheduled program)");
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
