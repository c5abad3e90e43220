// How long the CPU back end takes to build the candidates of a tuning log: each record's trace
// replayed, lowered and compiled by the JIT as a worker builds it, the time split into IR
// generation, the O3 pipeline and machine code. Convolutions are the slow ones (their border
// partitions make many loop nests), and on two cores their builds, not their runs, set the wall
// time per trial.
//
//   tuned db export --db LOG -o records.jsonl
//   build/bench/tuned_build_bench records.jsonl [--limit N] [--slowest-ir FILE]
//
// Prints the median, 90th percentile and total of each phase over the records, and the slowest
// trace; --slowest-ir writes that candidate's module before optimisation, for `opt -O3
// -time-passes`.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"

namespace tuned {
namespace {

template <typename T>
T Unwrap(StatusOr<T> value, const std::string& what) {
  if (!value.ok()) {
    std::fprintf(stderr, "tuned_build_bench: %s: %s\n", what.c_str(), value.status().message().c_str());
    std::exit(1);
  }
  return std::move(value).value();
}

struct Phases {
  std::vector<double> total, codegen, optimize, machine;
};

int Run(int argc, char** argv) {
  std::string path, slowest_ir;
  size_t limit = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--limit" && i + 1 < argc) {
      limit = std::strtoul(argv[++i], nullptr, 10);
    } else if (arg == "--slowest-ir" && i + 1 < argc) {
      slowest_ir = argv[++i];
    } else if (path.empty() && arg[0] != '-') {
      path = arg;
    } else {
      std::fprintf(stderr, "usage: tuned_build_bench RECORDS.jsonl [--limit N] [--slowest-ir FILE]\n");
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: tuned_build_bench RECORDS.jsonl [--limit N] [--slowest-ir FILE]\n");
    return 2;
  }
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "tuned_build_bench: '%s': cannot open the file\n", path.c_str());
    return 1;
  }
  const target::Target host = Unwrap(codegen::HostCpuTarget(), "host target");
  auto jit = Unwrap(codegen::LlvmJit::Create(host), "jit");
  Phases phases;
  std::string slowest;
  std::optional<lower::LoweredFunc> slowest_func;
  double slowest_ms = 0;
  std::string line;
  std::shared_ptr<const ir::Workload> workload;
  std::string workload_key;
  while (std::getline(in, line) && (limit == 0 || phases.total.size() < limit)) {
    if (line.empty()) continue;
    const nlohmann::json record = nlohmann::json::parse(line);
    const std::string key = record["workload"]["key"].get<std::string>();
    if (key != workload_key) {
      workload = std::make_shared<const ir::Workload>(Unwrap(ir::ParseWorkloadSpec(key), "workload"));
      workload_key = key;
    }
    const schedule::Trace trace = Unwrap(schedule::TraceFromJson(record["trace"].dump()), "trace");
    auto sch = schedule::ReplayTrace(workload, trace);
    if (!sch.ok()) continue;  // a record of a trace this design space no longer replays
    auto func = lower::Lower(*sch);
    if (!func.ok()) continue;
    auto kernel = Unwrap(jit->Compile(*func), "compile");
    const codegen::CompileStats& s = kernel->stats();
    phases.total.push_back(s.total_ms());
    phases.codegen.push_back(s.codegen_ms);
    phases.optimize.push_back(s.optimize_ms);
    phases.machine.push_back(s.machine_code_ms);
    if (s.total_ms() > slowest_ms) {
      slowest_ms = s.total_ms();
      slowest = schedule::TraceToJson(trace);
      slowest_func = *func;
    }
  }
  if (phases.total.empty()) {
    std::fprintf(stderr, "tuned_build_bench: no record of '%s' replays and lowers\n", path.c_str());
    return 1;
  }
  auto row = [](const char* name, const std::vector<double>& v) {
    std::printf("%-13s median %8.1f ms  p90 %8.1f ms  total %8.2f s\n", name, bench::Percentile(v, 0.5),
                bench::Percentile(v, 0.9), std::accumulate(v.begin(), v.end(), 0.0) * 1e-3);
  };
  std::printf("%zu candidates built\n", phases.total.size());
  row("build", phases.total);
  row("codegen", phases.codegen);
  row("O3", phases.optimize);
  row("machine code", phases.machine);
  std::printf("slowest       %.1f ms: %s\n", slowest_ms, slowest.c_str());
  if (!slowest_ir.empty()) {
    std::ofstream(slowest_ir) << Unwrap(codegen::EmitLlvmIr({*slowest_func}, host, {}, /*optimize=*/false), "IR");
  }
  return 0;
}

}  // namespace
}  // namespace tuned

int main(int argc, char** argv) { return tuned::Run(argc, argv); }
