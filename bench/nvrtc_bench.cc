// NVRTC compile time per kernel and ptxas's resources of the hand-written tiled matmul.
//
//   build/bench/tuned_nvrtc_bench [--runs N]     (default 20 compiles per kernel and arch)
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
#include "tests/support/cuda_kernels.h"

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

int Main(int argc, char** argv) {
  int runs = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--runs N]\n", argv[0]);
      return 2;
    }
  }
  if (runs < 1) {
    std::fprintf(stderr, "--runs must be at least 1\n");
    return 2;
  }
  const std::vector<Kernel> kernels = {
      {"tiled matmul 16x16", "tiled_matmul", test_kernels::TiledMatmulCuda(16), {}},
      {"tiled matmul 32x32", "tiled_matmul", test_kernels::TiledMatmulCuda(32), {}},
      {"register-blocked 8x8", "blocked_8x8", test_kernels::kRegisterBlockedCuda, {}},
      {"register-blocked 8x8, maxrregcount=32", "blocked_8x8", test_kernels::kRegisterBlockedCuda,
       {.max_registers = 32}},
  };
  std::printf("NVRTC %s, %d compiles per kernel and arch\n\n", NvrtcVersion().c_str(), runs);
  std::printf("%-40s %-6s %10s %10s %5s %7s %7s %7s %6s\n", "kernel", "arch", "median ms", "p95 ms",
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
      std::printf("%-40s %-6s %10.1f %10.1f %5d %7d %7d %7d %6d\n", kernel.label, arch,
                  Percentile(ms, 0.5), Percentile(ms, 0.95), resources->registers,
                  resources->shared_bytes, resources->spill_store_bytes, resources->spill_load_bytes,
                  resources->stack_bytes);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tuned::codegen::cuda

int main(int argc, char** argv) { return tuned::codegen::cuda::Main(argc, argv); }
