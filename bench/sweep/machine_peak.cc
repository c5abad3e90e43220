// What this machine can do at most, measured now, so that the sweep (bench/sweep/sweep.py)
// reports percent of peak against a figure of the same run rather than a constant:
//
//   tuned_machine_peak [--seconds S] [--memory-only]
//
// fp32 FMA peak: every core runs 12 independent FMA chains on the widest vectors it has (AVX-512,
// else AVX2 + FMA; the best of both where both run), no memory traffic. Memory bandwidth, STREAM
// style on arrays far larger than the caches, first touched by the threads that use them: triad
// a = b + s * c (12 bytes per element, the write-allocate not counted) and a read-only sum (4
// bytes per element, 4 streams per core, as a GEMV reads several rows at once). Each figure is
// the best of repeated runs for about S seconds (0.5). OpenMP on every core. Prints JSON.
// --memory-only skips the FMA peak (0 in the JSON): the sweep measures the bandwidth again
// around each round of a memory-bound op, since this host's memory changes speed for minutes.

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kChains = 12;        // independent FMAs in flight per core: covers latency x ports
constexpr long kFmaIterations = 1L << 22;

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// FLOPs of kFmaIterations rounds of kChains FMAs on one core, returned through `sink`.
__attribute__((target("avx512f"))) double Fma512(float* sink) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(float(c) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < kFmaIterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  *sink = lanes[0] + lanes[15];
  return 2.0 * 16 * kChains * double(kFmaIterations);
}

__attribute__((target("avx2,fma"))) double Fma256(float* sink) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(float(c) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < kFmaIterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  *sink = lanes[0] + lanes[7];
  return 2.0 * 8 * kChains * double(kFmaIterations);
}

// Best GFLOP/s of `kernel` run on every core at once, over about `seconds`.
double FmaPeak(double (*kernel)(float*), double seconds) {
  double best = 0;
  std::vector<float> sinks(size_t(omp_get_max_threads()) * 16);
  const Clock::time_point begin = Clock::now();
  do {
    double flops = 0;
    const Clock::time_point start = Clock::now();
#pragma omp parallel reduction(+ : flops)
    flops += kernel(&sinks[size_t(omp_get_thread_num()) * 16]);
    best = std::max(best, flops / Seconds(start) * 1e-9);
  } while (Seconds(begin) < seconds);
  return best;
}

// The sum of a[begin, end) read as 4 streams at once (its quarters), each into its own vector
// accumulators: one stream per core leaves the prefetchers idle (a GEMV reads several rows at
// once), and a float sum the compiler may not reorder would be one slow add chain.
__attribute__((target("avx2"))) float SumRange(const float* a, long begin, long end) {
  constexpr int kStreams = 4;
  const long quarter = ((end - begin) / kStreams) & ~15L;
  __m256 acc[kStreams][2];
  for (auto& stream : acc) stream[0] = stream[1] = _mm256_setzero_ps();
  for (long i = 0; i < quarter; i += 16) {
#pragma GCC unroll 4
    for (int s = 0; s < kStreams; ++s) {
      const float* p = a + begin + s * quarter + i;
      acc[s][0] = _mm256_add_ps(acc[s][0], _mm256_load_ps(p));
      acc[s][1] = _mm256_add_ps(acc[s][1], _mm256_load_ps(p + 8));
    }
  }
  __m256 total = _mm256_setzero_ps();
  for (auto& stream : acc) total = _mm256_add_ps(total, _mm256_add_ps(stream[0], stream[1]));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, total);
  float sum = 0;
  for (float lane : lanes) sum += lane;
  for (long i = begin + kStreams * quarter; i < end; ++i) sum += a[i];
  return sum;
}

// Best GB/s of `body(bytes)` (which returns the bytes it moved) over about `seconds`.
template <typename Body>
double Bandwidth(Body body, double seconds) {
  double best = 0;
  const Clock::time_point begin = Clock::now();
  do {
    const Clock::time_point start = Clock::now();
    double bytes = body();
    best = std::max(best, bytes / Seconds(start) * 1e-9);
  } while (Seconds(begin) < seconds);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.5;
  bool memory_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::string(argv[i]) == "--memory-only") {
      memory_only = true;
    } else {
      std::fprintf(stderr, "usage: tuned_machine_peak [--seconds S] [--memory-only]\n");
      return 2;
    }
  }
  omp_set_num_threads(omp_get_num_procs());
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const double fma256 = avx2 && !memory_only ? FmaPeak(Fma256, seconds) : 0;
  const double fma512 = avx512 && !memory_only ? FmaPeak(Fma512, seconds) : 0;

  // 3 x 256 MiB: far past any last-level cache of this machine kind.
  const long n = 64L << 20;
  float* a = static_cast<float*>(std::aligned_alloc(64, size_t(n) * sizeof(float)));
  float* b = static_cast<float*>(std::aligned_alloc(64, size_t(n) * sizeof(float)));
  float* c = static_cast<float*>(std::aligned_alloc(64, size_t(n) * sizeof(float)));
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) a[i] = 0.f, b[i] = 1.f, c[i] = 2.f;
  const double triad = Bandwidth(
      [&] {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i) a[i] = b[i] + 3.f * c[i];
        return 12.0 * double(n);
      },
      seconds);
  volatile float keep = 0;
  const double read = Bandwidth(
      [&] {
        float sum = 0;
#pragma omp parallel reduction(+ : sum)
        {
          // Each thread the block it first touched (schedule(static) above), 64-byte aligned.
          const long threads = omp_get_num_threads(), t = omp_get_thread_num();
          const long chunk = (n / threads) & ~15L;
          sum += SumRange(a, t * chunk, t + 1 == threads ? n : (t + 1) * chunk);
        }
        keep = keep + sum;
        return 4.0 * double(n);
      },
      seconds);
  std::printf("{\"threads\": %d, \"fma_gflops\": %.1f, \"fma_avx2_gflops\": %.1f, \"fma_avx512_gflops\": %.1f, "
              "\"triad_gbs\": %.2f, \"read_gbs\": %.2f}\n",
              omp_get_max_threads(), std::max(fma256, fma512), fma256, fma512, triad, read);
  std::free(a);
  std::free(b);
  std::free(c);
  return 0;
}
