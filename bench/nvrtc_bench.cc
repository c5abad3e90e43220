// NVRTC compile time per kernel and ptxas's resources of the hand-written tiled matmul, of the
// tiled matmul our GPU lowering generates from a hand schedule, and per generated candidate.
//
//   build/bench/tuned_nvrtc_bench [--runs N] [--candidates N]
//       (default 20 compiles per kernel and arch; 30 random GPU schedules of a 256^3 matmul)
//
// For each hand-written kernel (tests/support/cuda_kernels.h) and each of sm_80 and sm_90: the
// median and 95th percentile of NVRTC's compile time over N compiles of the same source (what a
// GPU tuning candidate costs to build), then the registers, shared bytes, spills and stack ptxas
// reports for them. No GPU needed. A plain program rather than a Google Benchmark: its results
// are percentiles over a series, plus resource figures.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/codegen/cuda/cuda_build.h"
#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "tests/support/cuda_kernels.h"
#include "tests/support/gpu_schedules.h"

namespace tuned::codegen::cuda {
namespace {

struct Kernel {
  const char* label;
  std::string name;  // the __global__ function
  std::string source;
  CudaBuildOptions options;
};

// The value at fraction `q` of the sorted series (nearest rank).
double Percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(q * values.size()));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

CudaBuild MustBuild(const Kernel& kernel, const target::Target& target) {
  StatusOr<CudaBuild> build = BuildCuda(kernel.source, target, kernel.options);
  if (!build.ok()) {
    std::fprintf(stderr, "%s for %s: %s\n", kernel.label, target.cuda.arch.c_str(),
                 build.status().message().c_str());
    std::exit(1);
  }
  return *build;
}

// CUDA C of `sch` as our GPU lowering generates it for `target`; empty when it does not lower.
std::string Generated(const schedule::Schedule& sch, const target::Target& target, const std::string& name) {
  StatusOr<lower::gpu::GpuProgram> program = lower::gpu::LowerGpu(sch, gpu::LimitsOf(target), name);
  if (!program.ok() || program->kernels.size() != 1) return "";
  return gpu::PrintGpuSource(*program, gpu::Dialect::kCuda);
}

// NVRTC time per generated candidate: random GPU schedules of one matmul, each compiled once.
int BenchCandidates(int candidates) {
  auto w = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec("matmul(M=256,N=256,K=256)"));
  target::Target target = *target::ParseTarget("cuda -arch=sm_90");
  std::vector<double> ms;
  int tried = 0;
  for (uint64_t seed = 1; int(ms.size()) < candidates && tried < candidates * 20; ++seed, ++tried) {
    std::string source = Generated(testing::RandomGpuSchedule(w, seed), target, "candidate");
    if (source.empty()) continue;
    StatusOr<CudaBuild> build = BuildCuda(source, target);
    if (!build.ok()) {
      std::fprintf(stderr, "candidate %d: %s\n", int(seed), build.status().message().c_str());
      return 1;
    }
    ms.push_back(build->compile_seconds * 1e3);
  }
  if (ms.empty()) return 1;
  std::printf("\n%zu generated candidates of matmul(M=256,N=256,K=256) for sm_90 (of %d schedules "
              "sampled): NVRTC median %.1f ms, p95 %.1f ms\n", ms.size(), tried, Percentile(ms, 0.5),
              Percentile(ms, 0.95));
  return 0;
}

int Main(int argc, char** argv) {
  int runs = 20, candidates = 30;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--candidates") == 0 && i + 1 < argc) {
      candidates = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--runs N] [--candidates N]\n", argv[0]);
      return 2;
    }
  }
  if (runs < 1 || candidates < 1) {
    std::fprintf(stderr, "--runs and --candidates must be at least 1\n");
    return 2;
  }
  auto matmul = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec("matmul(M=1024,N=1024,K=1024)"));
  target::Target sm90 = *target::ParseTarget("cuda -arch=sm_90");
  testing::MatmulTiles big;
  big.block_m = big.block_n = 64;
  big.tile_k = 16;
  const std::string generated_32 = Generated(testing::GpuTiledMatmul(matmul), sm90, "generated_matmul");
  const std::string generated_64 = Generated(testing::GpuTiledMatmul(matmul, big), sm90, "generated_matmul");
  if (generated_32.empty() || generated_64.empty()) {
    std::fprintf(stderr, "the hand schedule of the tiled matmul does not lower\n");
    return 1;
  }
  const std::vector<Kernel> kernels = {
      {"tiled matmul 16x16", "tiled_matmul", test_kernels::TiledMatmulCuda(16), {}},
      {"tiled matmul 32x32", "tiled_matmul", test_kernels::TiledMatmulCuda(32), {}},
      {"register-blocked 8x8", "blocked_8x8", test_kernels::kRegisterBlockedCuda, {}},
      {"register-blocked 8x8, maxrregcount=32", "blocked_8x8", test_kernels::kRegisterBlockedCuda,
       {.max_registers = 32}},
      {"generated: 32x32 tile, 16x16 threads, k 8", "generated_matmul", generated_32, {}},
      {"generated: 64x64 tile, 16x16 threads, k 16", "generated_matmul", generated_64, {}},
  };
  std::printf("NVRTC %s, %d compiles per kernel and arch\n\n", NvrtcVersion().c_str(), runs);
  std::printf("%-44s %-6s %10s %10s %5s %7s %7s %7s %6s\n", "kernel", "arch", "median ms", "p95 ms",
              "regs", "smem B", "spill>B", "spill<B", "stack");
  for (const char* arch : {"sm_80", "sm_90"}) {
    target::Target target = *target::ParseTarget(std::string("cuda -arch=") + arch);
    for (const Kernel& kernel : kernels) {
      std::vector<double> ms;
      CudaBuild build;
      for (int r = 0; r < runs; ++r) {
        build = MustBuild(kernel, target);
        ms.push_back(build.compile_seconds * 1e3);
      }
      const KernelResources* resources = build.FindKernel(kernel.name);
      if (resources == nullptr) {
        std::fprintf(stderr, "%s: no ptxas report for %s\n", kernel.label, kernel.name.c_str());
        return 1;
      }
      std::printf("%-44s %-6s %10.1f %10.1f %5d %7d %7d %7d %6d\n", kernel.label, arch,
                  Percentile(ms, 0.5), Percentile(ms, 0.95), resources->registers,
                  resources->shared_bytes, resources->spill_store_bytes, resources->spill_load_bytes,
                  resources->stack_bytes);
    }
  }
  return BenchCandidates(candidates);
}

}  // namespace
}  // namespace tuned::codegen::cuda

int main(int argc, char** argv) { return tuned::codegen::cuda::Main(argc, argv); }
