// Search efficiency and overhead: the evolutionary search with the XGBoost cost model against
// uniform random sampling of the same design space, measured in-process through the LLVM JIT,
// plus OpenBLAS as the library baseline for matmul. In one run on one machine:
//   - best-so-far GFLOP/s over trials for each strategy, and the trials each needs to reach 90%
//     of the best either found;
//   - the search's own time per trial (sampling, mutation, features, model training and
//     prediction) as a share of the total;
//   - for matmul, the best kernel's ratio to cblas_sgemm with the same thread count.
//
//   build/bench/tuned_search_bench [--workload SPEC] [--trials 200] [--batch 16]
//                                  [--strategies evolutionary,random] [--seed 1]

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "compiler/runtime/aligned_buffer.h"
#include "costmodel/model/cost_model.h"
#include "server/search/evolutionary_search.h"
#include "server/search/random_search.h"

namespace tuned::bench {
namespace {

// Median per-run seconds of `run` over 3 repeats of `number` runs (grown to >= 10 ms).
double TimeKernel(const std::function<void()>& run) {
  run();
  int number = 1;
  for (;;) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < number; ++i) run();
    if (Seconds(start) >= 0.01 || number >= (1 << 16)) break;
    number *= 2;
  }
  std::vector<double> times;
  for (int r = 0; r < 3; ++r) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < number; ++i) run();
    times.push_back(Seconds(start) / number);
  }
  std::sort(times.begin(), times.end());
  return times[1];
}

struct Run {
  std::string strategy;
  std::vector<double> best_gflops;  // best so far after each trial
  double search_seconds = 0;        // NextBatch + Update
  double measure_seconds = 0;       // compile + run
  int failures = 0;
};

Run Tune(const std::string& strategy, const search::SearchContext& ctx, int trials, int batch_size,
         codegen::LlvmJit& jit, const std::vector<void*>& args) {
  std::unique_ptr<costmodel::CostModel> model =
      std::getenv("SEARCH_BENCH_RANDOM_MODEL") ? costmodel::MakeRandomCostModel(1)
                                               : Unwrap(costmodel::MakeXgbCostModel(), "cost model");
  std::unique_ptr<search::SearchStrategy> search =
      strategy == "random" ? Unwrap(search::MakeRandomSearch(ctx), "random search")
                           : Unwrap(search::MakeEvolutionarySearch(ctx, model.get()), "evolutionary search");
  Run run{strategy, {}, 0, 0, 0};
  double best = 0;
  while (int(run.best_gflops.size()) < trials) {
    Clock::time_point t0 = Clock::now();
    auto batch = Unwrap(search->NextBatch(std::min(batch_size, trials - int(run.best_gflops.size()))), "batch");
    run.search_seconds += Seconds(t0);
    if (batch.empty()) break;
    std::vector<search::MeasuredCandidate> results;
    for (const search::Candidate& c : batch) {
      Clock::time_point t1 = Clock::now();
      v1::MeasureResult result;
      auto func = lower::LowerTraceProto(ctx.workload, c.trace);
      auto kernel = func.ok() ? jit.Compile(*func) : StatusOr<std::unique_ptr<codegen::JitKernel>>(func.status());
      if (kernel.ok()) {
        double seconds = TimeKernel([&] { (void)(*kernel)->Run(args); });
        result.set_status(v1::MEASURE_STATUS_OK);
        result.set_median_seconds(seconds);
        best = std::max(best, ctx.workload->flops() / seconds / 1e9);
      } else {
        result.set_status(v1::MEASURE_STATUS_COMPILE_ERROR);
        ++run.failures;
      }
      run.measure_seconds += Seconds(t1);
      run.best_gflops.push_back(best);
      results.push_back({c.trace, result});
    }
    Clock::time_point t2 = Clock::now();
    if (Status s = search->Update(results); !s.ok()) std::fprintf(stderr, "update: %s\n", s.ToString().c_str());
    run.search_seconds += Seconds(t2);
    std::fprintf(stderr, "  %s: %zu trials, best %.1f GFLOP/s\n", strategy.c_str(), run.best_gflops.size(), best);
  }
  return run;
}

int TrialsToReach(const Run& run, double target) {
  for (size_t i = 0; i < run.best_gflops.size(); ++i) {
    if (run.best_gflops[i] >= target) return int(i) + 1;
  }
  return -1;
}

}  // namespace
}  // namespace tuned::bench

int main(int argc, char** argv) {
  // The search's model (XGBoost, OpenMP) and the measured kernels (OpenMP) share this process;
  // spinning idle OpenMP threads left by one distort the timing of the other on 2 cores. The
  // worker measures in its own process; here idle threads must sleep, so re-run with passive
  // waiting (read by libgomp at load time, hence the re-exec).
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
  }
  using namespace tuned;
  using namespace tuned::bench;
  std::string spec = "matmul(M=1024,N=1024,K=1024)";
  int trials = 200, batch = 16;
  uint64_t seed = 1;
  std::vector<std::string> strategies = {"evolutionary", "random"};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--workload") spec = value;
    else if (flag == "--trials") trials = std::stoi(value);
    else if (flag == "--batch") batch = std::stoi(value);
    else if (flag == "--seed") seed = std::stoull(value);
    else if (flag == "--strategies") strategies = SplitList(value);
  }
  auto workload = std::make_shared<const ir::Workload>(Unwrap(ir::ParseWorkloadSpec(spec), "workload"));
  target::Target target = Unwrap(codegen::HostCpuTarget(), "host target");
  auto jit = Unwrap(codegen::LlvmJit::Create(target), "jit");
  search::SearchContext ctx;
  ctx.workload = workload;
  ctx.target = target.ToString();
  ctx.num_cores = target.num_cores;
  ctx.vector_lanes = target.Fp32VectorLanes();
  ctx.vector_registers = target.VectorRegisters();
  ctx.seed = seed;

  KernelArguments arguments = RandomArguments(*workload, 7);
  const std::vector<void*>& args = arguments.args;

  // OpenBLAS first, before any OpenMP thread of ours exists.
  double blas = 0;
  if (workload->op() == "matmul") {
    const auto& s = workload->output_stage();
    int M = int(s.axes[0].extent), N = int(s.axes[1].extent), K = int(workload->inputs()[0]->shape[1]);
    float* a = static_cast<float*>(args[0]);
    float* b = static_cast<float*>(args[1]);
    float* c = static_cast<float*>(args[2]);
    openblas_set_num_threads(target.num_cores);
    double seconds = TimeKernel([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, a, K, b, N, 0.f, c, N);
    });
    blas = workload->flops() / seconds / 1e9;
  }
  std::printf("workload %s, target %s, %d trials, batch %d\n", workload->key().c_str(), ctx.target.c_str(), trials, batch);
  std::vector<Run> runs;
  for (const std::string& s : strategies) runs.push_back(Tune(s, ctx, trials, batch, *jit, args));

  double best = 0;
  for (const Run& r : runs) best = std::max(best, r.best_gflops.empty() ? 0 : r.best_gflops.back());
  std::printf("\n%-13s %8s %8s %8s %8s %10s %14s %12s\n", "strategy", "@25", "@50", "@100", "final",
              "to 90%", "search ms/trial", "search share");
  for (const Run& r : runs) {
    auto at = [&](size_t n) { return n <= r.best_gflops.size() ? r.best_gflops[n - 1] : r.best_gflops.back(); };
    double per_trial = 1e3 * r.search_seconds / double(r.best_gflops.size());
    std::printf("%-13s %8.1f %8.1f %8.1f %8.1f %10d %14.2f %11.1f%%\n", r.strategy.c_str(), at(25), at(50),
                at(100), r.best_gflops.back(), TrialsToReach(r, 0.9 * best), per_trial,
                100 * r.search_seconds / (r.search_seconds + r.measure_seconds));
  }
  if (blas > 0) {
    std::printf("\nOpenBLAS sgemm (%d threads): %.1f GFLOP/s; best tuned / OpenBLAS = %.2f; roofline %d x 90 GFLOP/s\n",
                target.num_cores, blas, best / blas, target.num_cores);
  }
  return 0;
}
