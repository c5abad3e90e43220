// Candidates per second from trace to lowered program (replay + lowering), for design-space
// candidates of matmul and conv2d: the rate the search can explore at.
//
//   build/bench/tuned_lower_bench

#include <benchmark/benchmark.h>

#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "server/search/design_space.h"

namespace tuned {
namespace {

void ReplayAndLower(benchmark::State& state, const char* spec) {
  search::SearchContext ctx;
  ctx.workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
  ctx.num_cores = 2;
  std::vector<search::Sketch> sketches = search::GenerateSketches(ctx);
  std::vector<schedule::Trace> traces;
  for (uint64_t seed = 0; traces.size() < 64; ++seed) {
    auto sch = search::SampleSketch(ctx, sketches[seed % sketches.size()], seed);
    if (sch.ok()) traces.push_back(sch->trace());
  }
  size_t i = 0;
  for (auto _ : state) {
    auto sch = schedule::ReplayTrace(ctx.workload, traces[i++ % traces.size()]);
    auto func = lower::Lower(*sch);
    benchmark::DoNotOptimize(func);
  }
  state.counters["candidates/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

void Sample(benchmark::State& state, const char* spec) {
  search::SearchContext ctx;
  ctx.workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
  ctx.num_cores = 2;
  std::vector<search::Sketch> sketches = search::GenerateSketches(ctx);
  uint64_t seed = 0;
  for (auto _ : state) {
    auto sch = search::SampleSketch(ctx, sketches[seed % sketches.size()], seed);
    ++seed;
    benchmark::DoNotOptimize(sch);
  }
  state.counters["samples/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(ReplayAndLower, matmul_1024, "matmul(M=1024,N=1024,K=1024)");
BENCHMARK_CAPTURE(ReplayAndLower, conv2d_resnet, "conv2d_nchw(N=1,C=64,H=56,W=56,F=64,R=3,S=3,pad=1)");
BENCHMARK_CAPTURE(Sample, matmul_1024, "matmul(M=1024,N=1024,K=1024)");
BENCHMARK_CAPTURE(Sample, conv2d_resnet, "conv2d_nchw(N=1,C=64,H=56,W=56,F=64,R=3,S=3,pad=1)");

}  // namespace
}  // namespace tuned

BENCHMARK_MAIN();
