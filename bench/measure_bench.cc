// The measurement worker's stability and overhead (docs/worker.md).
//
//   build/bench/tuned_measure_bench [--quick | --containment]
//
// Prints, for a short and a long kernel measured 10 times with the default protocol: the
// median of each measurement, the coefficient of variation (CV) of those medians, and the
// worker's overhead per candidate (wall time of Measure() minus the time the kernel ran), split
// into build and the rest. Then the figures behind the protocol's defaults: fork cost, CV of the
// short kernel under other min_repeat_ms / repeat / flush settings, first-run vs steady-state
// time, and the float64 evaluator's speed (which decides the reference path).
// `--containment` prints only the cost of building in a forked build process (what the engine
// does) against building in the worker's own process, per candidate.
// A plain program rather than a Google Benchmark: its results are statistics over series of
// measurements, not one timed loop.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/trace.h"
#include "worker/builder.h"
#include "worker/contained_build.h"
#include "worker/measurement_engine.h"
#include "worker/sandbox.h"
#include "worker/timing_protocol.h"
#include "worker/workload_message.h"

namespace tuned::worker {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Series {
  std::vector<double> medians;
  double mean_total = 0;
  double mean_kernel = 0;
  double mean_build = 0;
  double mean_child = 0;
  uint32_t number = 0;
};

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / v.size();
}

double Cv(const std::vector<double>& v) {
  const double mean = Mean(v);
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return v.size() < 2 || mean == 0 ? 0 : std::sqrt(sq / (v.size() - 1)) / mean;
}

v1::MeasureJob MakeJob(const std::string& spec, const v1::MeasureConfig& config) {
  StatusOr<ir::Workload> workload = ir::ParseWorkloadSpec(spec);
  if (!workload.ok()) {
    std::fprintf(stderr, "%s\n", workload.status().ToString().c_str());
    std::exit(1);
  }
  v1::MeasureJob job;
  job.set_job_id("bench");
  *job.mutable_workload() = WorkloadMessage(*workload);
  *job.mutable_config() = config;
  return job;
}

// Measures `job` `n` times (after one unrecorded measurement that fills the reference cache).
Series MeasureSeries(MeasurementEngine& engine, const v1::MeasureJob& job, int n) {
  StatusOr<v1::MeasureResult> first = engine.Measure(job);
  if (!first.ok() || first->status() != v1::MEASURE_STATUS_OK) {
    std::fprintf(stderr, "measurement failed: %s %s\n", first.status().ToString().c_str(),
                 first.ok() ? first->error().c_str() : "");
    std::exit(1);
  }
  Series series;
  std::vector<double> totals, kernels, builds, children;
  for (int i = 0; i < n; ++i) {
    const EngineStats before = engine.stats();
    const Clock::time_point start = Clock::now();
    StatusOr<v1::MeasureResult> result = engine.Measure(job);
    const double total = SecondsSince(start);
    const EngineStats after = engine.stats();
    if (!result.ok() || result->status() != v1::MEASURE_STATUS_OK) std::exit(1);
    series.medians.push_back(result->median_seconds());
    series.number = result->number();
    totals.push_back(total);
    kernels.push_back(after.kernel_seconds - before.kernel_seconds);
    builds.push_back(after.build_seconds - before.build_seconds);
    children.push_back(after.child_seconds - before.child_seconds);
  }
  series.mean_total = Mean(totals);
  series.mean_kernel = Mean(kernels);
  series.mean_build = Mean(builds);
  series.mean_child = Mean(children);
  return series;
}

void PrintSeries(const char* label, const Series& s) {
  const double overhead = s.mean_total - s.mean_kernel;
  std::printf("%-34s median %10.2f us  CV %5.2f%%  number %6u | per candidate: total %7.1f ms, "
              "kernel %7.1f ms, overhead %6.1f ms (build %5.1f, child-not-kernel %4.1f, "
              "other %4.1f)\n",
              label, Mean(s.medians) * 1e6, 100 * Cv(s.medians), s.number, s.mean_total * 1e3,
              s.mean_kernel * 1e3, overhead * 1e3, s.mean_build * 1e3,
              (s.mean_child - s.mean_kernel) * 1e3,
              (overhead - s.mean_build - (s.mean_child - s.mean_kernel)) * 1e3);
}

// Build cost per candidate: replay + lower + LLVM in this process (LlvmJit::Compile) against
// the same in a forked build process that emits an object, linked here (the engine's way).
int ContainmentCost() {
  StatusOr<target::Target> host = codegen::HostCpuTarget();
  if (!host.ok()) return 1;
  StatusOr<std::unique_ptr<codegen::LlvmJit>> jit = codegen::LlvmJit::Create(*host);
  if (!jit.ok()) return 1;
  std::unique_ptr<Builder> builder = MakeJitBuilder();
  BuildProcess process;
  constexpr int kRuns = 20;
  std::printf("== build per candidate, default schedule, median of %d (after one warm-up)\n", kRuns);
  for (const std::string spec : {"matmul(M=64,N=64,K=64,dtype=float32)",
                                 "matmul(M=512,N=512,K=512,dtype=float32)"}) {
    StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(spec);
    if (!parsed.ok()) {
      std::fprintf(stderr, "%s\n", parsed.status().ToString().c_str());
      return 1;
    }
    auto workload = std::make_shared<const ir::Workload>(*parsed);
    v1::MeasureJob job;
    StatusOr<schedule::Trace> trace = lower::DefaultScheduleTrace(workload);
    if (!trace.ok()) return 1;
    schedule::TraceToProto(*trace, job.mutable_trace());
    std::vector<double> in_process, contained, link;
    for (int i = 0; i <= kRuns; ++i) {
      Clock::time_point start = Clock::now();
      StatusOr<lower::LoweredFunc> func = lower::LowerTraceProto(workload, job.trace());
      if (!func.ok()) return 1;
      StatusOr<std::unique_ptr<codegen::JitKernel>> kernel = (*jit)->Compile(*func);
      if (!kernel.ok()) return 1;
      const double direct = SecondsSince(start);
      start = Clock::now();
      StatusOr<ContainedBuildOutcome> outcome =
          process.Run([&] { return builder->Compile(workload, job, *host); }, SandboxLimits{60, 0});
      if (!outcome.ok() || outcome->kind != ContainedBuildOutcome::Kind::kCompiled) return 1;
      const Clock::time_point link_start = Clock::now();
      StatusOr<BuiltKernel> built = LinkCandidate(**jit, outcome->compiled);
      if (!built.ok()) return 1;
      if (i == 0) continue;
      link.push_back(SecondsSince(link_start));
      contained.push_back(SecondsSince(start));
      in_process.push_back(direct);
    }
    std::printf("%-72s in-process %6.1f ms, contained %6.1f ms (link %4.2f ms), cost %+5.1f ms\n",
                spec.c_str(), Median(in_process) * 1e3, Median(contained) * 1e3,
                Median(link) * 1e3, (Median(contained) - Median(in_process)) * 1e3);
  }
  return 0;
}

int Main(bool quick) {
  StatusOr<std::unique_ptr<MeasurementEngine>> created = CreateMeasurementEngine({});
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  MeasurementEngine& engine = **created;
  std::printf("device: %s, %u cores; target %s\n\n", engine.device().model().c_str(),
              engine.device().num_cores(), engine.target().target().c_str());

  const int n = quick ? 5 : 10;
  const std::string short_spec = "matmul(M=64,N=64,K=64,dtype=float32)";
  const std::string long_spec = "matmul(M=256,N=256,K=256,dtype=float32)";
  const v1::MeasureConfig defaults = DefaultMeasureConfig();

  std::printf("== stability and overhead, default protocol (warmup %u, repeat %u, "
              "min_repeat_ms %g, flush %d), %d measurements each\n",
              defaults.warmup(), defaults.repeat(), defaults.min_repeat_ms(),
              defaults.flush_cache(), n);
  PrintSeries(("short " + short_spec).c_str(), MeasureSeries(engine, MakeJob(short_spec, defaults), n));
  PrintSeries(("long  " + long_spec).c_str(), MeasureSeries(engine, MakeJob(long_spec, defaults), n));

  std::printf("\n== fork of this process (engine and JIT loaded), empty child, 50 runs\n");
  std::vector<double> forks;
  for (int i = 0; i < 50; ++i) {
    StatusOr<ChildOutcome> child = RunInChild([] { return 0; }, SandboxLimits{5, 0});
    if (child.ok()) forks.push_back(child->wall_seconds);
  }
  std::printf("fork_us median %.0f, max %.0f\n", Median(forks) * 1e6,
              *std::max_element(forks.begin(), forks.end()) * 1e6);

  std::printf("\n== short kernel under other protocol settings (CV of %d medians)\n", n);
  struct Variant {
    const char* label;
    double min_repeat_ms;
    uint32_t repeat;
    bool flush;
  };
  const std::vector<Variant> variants = {
      {"min_repeat_ms 0 (number 1)", 0, 5, false}, {"min_repeat_ms 1", 1, 5, false},
      {"min_repeat_ms 5", 5, 5, false},            {"min_repeat_ms 10", 10, 5, false},
      {"min_repeat_ms 25", 25, 5, false},          {"min_repeat_ms 10, repeat 3", 10, 3, false},
      {"min_repeat_ms 10, repeat 10", 10, 10, false}, {"min_repeat_ms 10, flush", 10, 5, true},
      {"min_repeat_ms 0, flush", 0, 5, true}};
  for (const Variant& v : variants) {
    v1::MeasureConfig config = defaults;
    config.set_min_repeat_ms(v.min_repeat_ms);
    config.set_repeat(v.repeat);
    config.set_flush_cache(v.flush);
    PrintSeries(v.label, MeasureSeries(engine, MakeJob(short_spec, config), n));
  }

  std::printf("\n== warm-up: first-run vs steady time (min_repeat_ms 0, number 1, repeat 10, "
              "warmup 0)\n");
  for (const std::string& spec : {short_spec, long_spec}) {
    v1::MeasureConfig config = defaults;
    config.set_warmup(0);
    config.set_min_repeat_ms(0);
    config.set_repeat(10);
    StatusOr<v1::MeasureResult> result = engine.Measure(MakeJob(spec, config));
    if (!result.ok() || result->repeat_seconds_size() < 10) return 1;
    std::printf("%-40s repeat 1: %9.2f us, repeat 2: %9.2f us, median: %9.2f us\n", spec.c_str(),
                result->repeat_seconds(0) * 1e6, result->repeat_seconds(1) * 1e6,
                result->median_seconds() * 1e6);
  }

  std::printf("\n== float64 evaluator (reference path for workloads up to 2e7 flops)\n");
  for (const std::string spec : {"matmul(M=64,N=64,K=64,dtype=float32)",
                                 "matmul(M=128,N=128,K=128,dtype=float32)",
                                 "matmul(M=256,N=128,K=256,dtype=float32)"}) {
    StatusOr<ir::Workload> workload = ir::ParseWorkloadSpec(spec);
    if (!workload.ok()) return 1;
    auto inputs = ir::RandomInputs(*workload, 1);
    const Clock::time_point start = Clock::now();
    auto reference = ir::EvaluateReference(*workload, inputs);
    const double seconds = SecondsSince(start);
    if (!reference.ok()) return 1;
    std::printf("%-42s %8.0f kflop  %7.1f ms  %6.1f Mflop/s\n", spec.c_str(),
                workload->flops() / 1e3, seconds * 1e3, workload->flops() / seconds / 1e6);
  }
  return 0;
}

}  // namespace
}  // namespace tuned::worker

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && std::strcmp(argv[1], "--containment") == 0) {
    return tuned::worker::ContainmentCost();
  }
  return tuned::worker::Main(quick);
}
