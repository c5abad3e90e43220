// The compiler's reuse of the tuning log, for a workload tuned earlier (e.g. by `tuned tune`):
//   - time from request to callable kernel when the database has the record (lookup + replay +
//     lowering + JIT), median over fresh compilers (no in-process cache);
//   - the recorded kernel's speed-up over the default schedule, timed in the same run.
//
//   build/cli/tuned tune --workload 'matmul(M=1024,N=1024,K=1024)' --trials 200 --db mm.db
//   build/bench/tuned_reuse_bench --db mm.db --workload 'matmul(M=1024,N=1024,K=1024)'

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "compiler/runtime/aligned_buffer.h"
#include "tuned/compiler.h"

namespace tuned::bench {
namespace {

double MedianRunSeconds(const std::function<void()>& run, int repeats) {
  run();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    Clock::time_point start = Clock::now();
    run();
    times.push_back(Seconds(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace
}  // namespace tuned::bench

int main(int argc, char** argv) {
  using namespace tuned;
  using namespace tuned::bench;
  std::string db_path = "tuned.db", spec = "matmul(M=1024,N=1024,K=1024)";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--db") db_path = argv[i + 1];
    if (flag == "--workload") spec = argv[i + 1];
  }
  std::vector<double> build_ms;
  std::shared_ptr<const Kernel> kernel;
  for (int i = 0; i < 10; ++i) {
    auto compiler = Unwrap(Compiler::Open({db_path}), "open");
    Clock::time_point start = Clock::now();
    kernel = Unwrap((*compiler).GetKernel(spec), "kernel");
    build_ms.push_back(1e3 * Seconds(start));
  }
  std::sort(build_ms.begin(), build_ms.end());
  if (!kernel->from_record()) {
    std::fprintf(stderr, "no record for %s in %s: %s\n", spec.c_str(), db_path.c_str(),
                 kernel->fallback_reason().c_str());
    return 1;
  }

  auto workload = std::make_shared<const ir::Workload>(Unwrap(ir::ParseWorkloadSpec(spec), "workload"));
  KernelArguments arguments = RandomArguments(*workload, 3);
  const std::vector<void*>& args = arguments.args;
  auto jit = Unwrap(codegen::LlvmJit::Create(Unwrap(codegen::HostCpuTarget(), "host")), "jit");
  auto fallback = Unwrap(jit->Compile(Unwrap(lower::LowerDefaultSchedule(workload, "default_kernel"), "default")),
                         "compile default");
  double tuned_s = MedianRunSeconds([&] { (void)kernel->Run(args); }, 10);
  double default_s = MedianRunSeconds([&] { (void)fallback->Run(args); }, 3);
  std::printf("workload %s (record %lld, trace %s)\n", workload->key().c_str(),
              static_cast<long long>(kernel->record_id()), kernel->trace_hash().substr(0, 12).c_str());
  std::printf("request -> callable kernel (db hit): median %.1f ms, min %.1f, max %.1f (10 fresh compilers)\n",
              build_ms[build_ms.size() / 2], build_ms.front(), build_ms.back());
  std::printf("tuned kernel %.3f ms (%.1f GFLOP/s), default schedule %.3f ms (%.1f GFLOP/s): speed-up %.1fx\n",
              1e3 * tuned_s, workload->flops() / tuned_s / 1e9, 1e3 * default_s,
              workload->flops() / default_s / 1e9, default_s / tuned_s);
  return 0;
}
