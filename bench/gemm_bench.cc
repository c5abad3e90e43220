// GEMM through the LLVM code generator against OpenBLAS, in one run on one machine.
//
//   build/bench/tuned_gemm_bench [--threads 1,2] [--repeats 10] [--min-repeat-ms 50]
//                                [--shapes 1024x1024x1024,...] [--naive-max-gflop 5]
//                                [--candidates 20] [--print-program] [--asm FILE]
//
// For each fp32 shape (M x N x K) and thread count it times
//   naive     the workload's unscheduled program (one loop nest, k innermost), single-threaded;
//   hand      a schedule written only with schedule primitives (split, reorder, cache_write
//             local + decompose_reduction for a register tile, cache_read for a packed B panel,
//             reverse_compute_at, vectorize, unroll, fuse, parallel) -- no matmul-specific
//             code exists in the code generator;
//   openblas  cblas_sgemm of Debian's OpenBLAS with openblas_set_num_threads.
// and prints GFLOP/s (median of the repeats, with min..max), the ratio to OpenBLAS and to the
// fp32 FMA roofline (2 FMA x 8 lanes x 2 flop per cycle per core at the measured clock is not
// known here, so the nominal ~90 GFLOP/s per core of this machine kind is used).
// It also reports the JIT compile time per matmul candidate (median, p95 over --candidates
// schedules with sampled tile sizes) and the launch overhead of the parallel runtime.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cblas.h>

#include "bench/bench_util.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/runtime/aligned_buffer.h"
#include "compiler/runtime/parallel.h"
#include "compiler/schedule/schedule.h"

namespace tuned::bench {
namespace {

using codegen::JitKernel;
using codegen::LlvmJit;
using schedule::Factor;
using schedule::LoopRV;

constexpr double kRooflinePerCore = 90.0;  // GFLOP/s, fp32 FMA peak per core of this machine kind

struct Options {
  std::vector<int> threads{1, 2};
  int repeats = 10;
  double min_repeat_ms = 50;
  double naive_max_gflop = 5;  // skip the naive schedule above this much work (it takes minutes)
  int candidates = 20;
  bool print_program = false;
  std::string asm_path;
  std::vector<std::array<int64_t, 3>> shapes{{512, 512, 512},   {1024, 1024, 1024},
                                              {2048, 2048, 2048}, {128, 768, 3072},
                                              {1, 4096, 4096}};
};

#define BENCH_CHECK_OK(expr)                                                            \
  do {                                                                                   \
    ::tuned::Status bench_status_ = (expr);                                              \
    if (!bench_status_.ok()) {                                                           \
      std::fprintf(stderr, "%s: %s\n", #expr, bench_status_.ToString().c_str());         \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

// The hand-written schedule. Loop nest (for M >= tile_m):
//   parallel j_o
//     B_panel[K, tile_n] = B[:, j_o*tile_n : ...]            cache_read, computed at j_o
//     acc[tile_m, tile_n] = 0                                cache_write local + decompose
//     for k: for i_i (unrolled): for j_i (vectorized): acc[i_i, j_i] += A[i, k] * B_panel[k, j_i]
//     C[...] = acc                                           reverse_compute_at i_o
//     for i_o:
StatusOr<lower::LoweredFunc> HandSchedule(std::shared_ptr<const ir::Workload> workload,
                                          int64_t tile_m, int64_t tile_n, bool pack_b) {
  schedule::Schedule sch(workload, /*seed=*/0);
  TUNED_ASSIGN_OR_RETURN(auto c, sch.GetBlock("C"));
  TUNED_ASSIGN_OR_RETURN(auto write_back, sch.CacheWrite(c, "local"));
  TUNED_ASSIGN_OR_RETURN(auto loops, sch.GetLoops(c));
  TUNED_ASSIGN_OR_RETURN(auto i_split, sch.Split(loops[0], {Factor{}, Factor{tile_m}}));
  TUNED_ASSIGN_OR_RETURN(auto j_split, sch.Split(loops[1], {Factor{}, Factor{tile_n}}));
  LoopRV io = i_split[0], ii = i_split[1], jo = j_split[0], ji = j_split[1], k = loops[2];
  TUNED_RETURN_IF_ERROR(sch.Reorder({jo, io, k, ii, ji}));
  TUNED_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, io));
  TUNED_RETURN_IF_ERROR(sch.DecomposeReduction(c, k));
  if (pack_b) {
    TUNED_ASSIGN_OR_RETURN(auto panel, sch.CacheRead(c, 1, "global"));
    TUNED_RETURN_IF_ERROR(sch.ComputeAt(panel, jo));
    TUNED_ASSIGN_OR_RETURN(auto panel_loops, sch.GetLoops(panel));
    TUNED_RETURN_IF_ERROR(sch.Vectorize(panel_loops.back()));
  }
  TUNED_RETURN_IF_ERROR(sch.Unroll(ii));
  TUNED_RETURN_IF_ERROR(sch.Vectorize(ji));
  // The write-back tile: unroll the rows, vectorize the columns (the init nest of
  // decompose_reduction inherits the kinds of ii and ji).
  TUNED_ASSIGN_OR_RETURN(auto write_loops, sch.GetLoops(write_back));
  TUNED_RETURN_IF_ERROR(sch.Unroll(write_loops[write_loops.size() - 2]));
  TUNED_RETURN_IF_ERROR(sch.Vectorize(write_loops.back()));
  TUNED_RETURN_IF_ERROR(sch.Parallel(jo));
  return lower::Lower(sch, "gemm_hand");
}

struct Matrices {
  runtime::AlignedBuffer a, b, c;
  int64_t m, n, k;
  Matrices(int64_t m_, int64_t n_, int64_t k_)
      : a(size_t(m_ * k_) * 4), b(size_t(k_ * n_) * 4), c(size_t(m_ * n_) * 4), m(m_), n(n_), k(k_) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (int64_t i = 0; i < m * k; ++i) a.as<float>()[i] = dist(rng);
    for (int64_t i = 0; i < k * n; ++i) b.as<float>()[i] = dist(rng);
  }
  void RunBlas() {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.f,
                a.as<float>(), int(k), b.as<float>(), int(n), 0.f, c.as<float>(), int(n));
  }
};

double MaxRelativeDifference(const float* x, const float* y, int64_t count) {
  double worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    worst = std::max(worst, std::fabs(double(x[i]) - y[i]) / std::max(1.0, std::fabs(double(y[i]))));
  }
  return worst;
}

std::string Format(const Timing& t, double flops) {
  char text[96];
  std::snprintf(text, sizeof(text), "%7.1f (%5.1f..%5.1f)", Gflops(flops, t.median_ms),
                Gflops(flops, t.max_ms), Gflops(flops, t.min_ms));
  return text;
}

// Launch overhead: an empty parallel region, through the OpenMP runtime and through the two
// home-made alternatives (a thread per launch; a persistent pool woken by a condition variable).
void BenchLaunchOverhead(const Options& options, int threads) {
  static std::atomic<int64_t> sink{0};
  auto body = [](int64_t begin, int64_t end, void*) { sink += end - begin; };
  Timing omp = Measure([&] { tuned_parallel_for(threads, threads, body, nullptr); },
                       options.min_repeat_ms, 5);

  Timing spawn = Measure(
      [&] {
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { body(t, t + 1, nullptr); });
        body(0, 1, nullptr);
        for (std::thread& t : pool) t.join();
      },
      options.min_repeat_ms, 5);

  struct Pool {
    std::mutex mu;
    std::condition_variable wake, done;
    int64_t generation = 0;
    int pending = 0;
    bool stop = false;
    std::vector<std::thread> workers;
  } pool;
  for (int t = 1; t < threads; ++t) {
    pool.workers.emplace_back([&pool, &body, t] {
      int64_t seen = 0;
      for (;;) {
        std::unique_lock<std::mutex> lock(pool.mu);
        pool.wake.wait(lock, [&] { return pool.stop || pool.generation != seen; });
        if (pool.stop) return;
        seen = pool.generation;
        lock.unlock();
        body(t, t + 1, nullptr);
        lock.lock();
        if (--pool.pending == 0) pool.done.notify_one();
      }
    });
  }
  Timing condvar = Measure(
      [&] {
        {
          std::lock_guard<std::mutex> lock(pool.mu);
          pool.pending = threads - 1;
          ++pool.generation;
        }
        pool.wake.notify_all();
        body(0, 1, nullptr);
        std::unique_lock<std::mutex> lock(pool.mu);
        pool.done.wait(lock, [&] { return pool.pending == 0; });
      },
      options.min_repeat_ms, 5);
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.stop = true;
  }
  pool.wake.notify_all();
  for (std::thread& t : pool.workers) t.join();
  std::printf("parallel launch overhead, %d threads (median us): OpenMP runtime %.2f, "
              "condvar pool %.2f, thread per launch %.2f\n",
              threads, omp.median_ms * 1e3, condvar.median_ms * 1e3, spawn.median_ms * 1e3);
}

void BenchCompileTime(const Options& options, const target::Target& target) {
  auto workload = std::make_shared<const ir::Workload>(
      Unwrap(ir::ParseWorkloadSpec("matmul(M=1024,N=1024,K=1024)"), "workload"));
  auto jit = Unwrap(LlvmJit::Create(target), "jit");
  std::vector<double> total, codegen, optimize, machine;
  const int64_t tiles_m[] = {1, 2, 4, 8}, tiles_n[] = {8, 16, 32, 64};
  std::mt19937 rng(3);
  for (int i = 0; i < options.candidates; ++i) {
    int64_t tm = tiles_m[rng() % 4], tn = tiles_n[rng() % 4];
    lower::LoweredFunc func = Unwrap(HandSchedule(workload, tm, tn, rng() % 2 == 0), "schedule");
    auto kernel = Unwrap(jit->Compile(func), "compile");
    const codegen::CompileStats& s = kernel->stats();
    total.push_back(s.total_ms());
    codegen.push_back(s.codegen_ms);
    optimize.push_back(s.optimize_ms);
    machine.push_back(s.machine_code_ms);
  }
  auto median = [](const std::vector<double>& v) { return Percentile(v, 0.5); };
  std::printf("jit compile time per matmul candidate (%d candidates, ms): median %.1f, p95 %.1f "
              "(median: codegen %.1f, O3 %.1f, machine code %.1f)\n",
              options.candidates, median(total), Percentile(total, 0.95), median(codegen), median(optimize),
              median(machine));
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--threads") {
      o.threads.clear();
      for (const std::string& t : SplitList(next())) o.threads.push_back(std::stoi(t));
    } else if (arg == "--repeats") {
      o.repeats = std::stoi(next());
    } else if (arg == "--min-repeat-ms") {
      o.min_repeat_ms = std::stod(next());
    } else if (arg == "--naive-max-gflop") {
      o.naive_max_gflop = std::stod(next());
    } else if (arg == "--candidates") {
      o.candidates = std::stoi(next());
    } else if (arg == "--print-program") {
      o.print_program = true;
    } else if (arg == "--asm") {
      o.asm_path = next();
    } else if (arg == "--shapes") {
      o.shapes.clear();
      for (const std::string& s : SplitList(next())) {
        std::array<int64_t, 3> shape{};
        if (std::sscanf(s.c_str(), "%ldx%ldx%ld", &shape[0], &shape[1], &shape[2]) != 3) {
          std::fprintf(stderr, "bad shape %s (want MxNxK)\n", s.c_str());
          std::exit(2);
        }
        o.shapes.push_back(shape);
      }
    } else {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      std::exit(2);
    }
  }
  return o;
}

int Main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  target::Target host = Unwrap(codegen::HostCpuTarget(), "host target");
  std::printf("host target: %s\n", host.ToString().c_str());
  for (int threads : options.threads) BenchLaunchOverhead(options, std::max(threads, 2));
  BenchCompileTime(options, host);
  std::printf("\n%-18s %3s %24s %24s %24s %8s %9s\n", "shape MxNxK", "thr", "naive GFLOP/s",
              "hand GFLOP/s", "openblas GFLOP/s", "hand/blas", "hand/peak");
  for (const auto& shape : options.shapes) {
    const int64_t m = shape[0], n = shape[1], k = shape[2];
    char spec[128];
    std::snprintf(spec, sizeof(spec), "matmul(M=%ld,N=%ld,K=%ld)", m, n, k);
    auto workload = std::make_shared<const ir::Workload>(Unwrap(ir::ParseWorkloadSpec(spec), spec));
    const double flops = 2.0 * double(m) * double(n) * double(k);
    Matrices mats(m, n, k);
    std::vector<float> expected;
    {
      openblas_set_num_threads(1);
      mats.RunBlas();
      expected.assign(mats.c.as<float>(), mats.c.as<float>() + m * n);
    }
    std::string naive_text = "skipped";
    for (int threads : options.threads) {
      target::Target target = host;
      target.num_cores = threads;
      auto jit = Unwrap(LlvmJit::Create(target), "jit");
      std::vector<void*> args{mats.a.data(), mats.b.data(), mats.c.data()};
      // Naive: the unscheduled program has no parallel loop, so it is measured once per shape.
      if (threads == options.threads.front() && flops <= options.naive_max_gflop * 1e9) {
        lower::LoweredFunc naive =
            Unwrap(lower::Lower(schedule::Schedule(workload, 0), "gemm_naive"), "lower naive");
        auto kernel = Unwrap(jit->Compile(naive), "compile naive");
        Timing t = Measure([&] { (void)kernel->Run(args); }, options.min_repeat_ms,
                           std::min(options.repeats, 3));
        naive_text = Format(t, flops);
      }
      // A 4x16 register tile (8 ymm accumulators on AVX2) over a packed B panel; for a matrix-
      // vector product (M < 4) B is read once, so packing only adds traffic: a 1x64 tile
      // streams B rows in 256-byte pieces instead.
      const bool gemv = m < 4;
      const int64_t tile_m = gemv ? m : 4, tile_n = gemv ? 64 : 16;
      lower::LoweredFunc hand =
          Unwrap(HandSchedule(workload, tile_m, tile_n, /*pack_b=*/!gemv), "hand schedule");
      if (options.print_program) std::printf("%s\n", ir::ToString(hand.body).c_str());
      if (!options.asm_path.empty()) {
        std::ofstream(options.asm_path) << Unwrap(codegen::EmitAssembly({hand}, target), "asm");
      }
      auto kernel = Unwrap(jit->Compile(hand), "compile hand");
      std::memset(mats.c.data(), 0, mats.c.size());
      BENCH_CHECK_OK(kernel->Run(args));
      double error = MaxRelativeDifference(mats.c.as<float>(), expected.data(), m * n);
      if (error > 1e-3) {
        std::fprintf(stderr, "hand schedule of %s is wrong: max relative error %g\n", spec, error);
        return 1;
      }
      Timing hand_t =
          Measure([&] { (void)kernel->Run(args); }, options.min_repeat_ms, options.repeats);
      openblas_set_num_threads(threads);
      Timing blas_t = Measure([&] { mats.RunBlas(); }, options.min_repeat_ms, options.repeats);
      double ratio = blas_t.median_ms / hand_t.median_ms;
      double peak = Gflops(flops, hand_t.median_ms) / (kRooflinePerCore * threads);
      char label[40];
      std::snprintf(label, sizeof(label), "%ldx%ldx%ld", m, n, k);
      std::printf("%-18s %3d %24s %24s %24s %7.0f%% %8.0f%%\n", label, threads,
                  threads == options.threads.front() ? naive_text.c_str() : "-",
                  Format(hand_t, flops).c_str(), Format(blas_t, flops).c_str(), ratio * 100,
                  peak * 100);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tuned::bench

int main(int argc, char** argv) { return tuned::bench::Main(argc, argv); }
