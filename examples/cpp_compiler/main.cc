// Builds the best recorded kernel of a matmul from a tuning log with <tuned/compiler.h>, runs it
// and checks it against a plain loop. Prints whether the kernel came from a record.
//   cpp_compiler TUNED_DB [SPEC M N K]
#include <tuned/compiler.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

float* AlignedFloats(size_t count) {  // generated kernels assume 64-byte aligned buffers
  return static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 6) {
    std::fprintf(stderr, "usage: cpp_compiler TUNED_DB [SPEC M N K]\n");
    return 2;
  }
  std::string spec = argc == 6 ? argv[2] : "matmul(M=64,N=48,K=32)";
  int m = argc == 6 ? std::atoi(argv[3]) : 64, n = argc == 6 ? std::atoi(argv[4]) : 48,
      k = argc == 6 ? std::atoi(argv[5]) : 32;

  auto compiler = tuned::Compiler::Open({.db_path = argv[1]});
  if (!compiler.ok()) {
    std::fprintf(stderr, "cpp_compiler: %s\n", compiler.status().ToString().c_str());
    return 1;
  }
  auto kernel = (*compiler)->GetKernel(spec);
  if (!kernel.ok()) {
    std::fprintf(stderr, "cpp_compiler: %s\n", kernel.status().ToString().c_str());
    return 1;
  }

  float* a = AlignedFloats(m * k);
  float* b = AlignedFloats(k * n);
  float* c = AlignedFloats(m * n);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>((i * 5) % 11) / 11.0f - 0.5f;
  tuned::Status run = (*kernel)->Run({a, b, c});
  if (!run.ok()) {
    std::fprintf(stderr, "cpp_compiler: %s\n", run.ToString().c_str());
    return 1;
  }
  double worst = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double expected = 0;
      for (int p = 0; p < k; ++p) expected += static_cast<double>(a[i * k + p]) * b[p * n + j];
      worst = std::fmax(worst, std::fabs(c[i * n + j] - expected));
    }
  }
  if ((*kernel)->from_record()) {
    std::printf("kernel from record %lld, max abs error %.3g\n",
                static_cast<long long>((*kernel)->record_id()), worst);
  } else {
    std::printf("kernel from the default schedule (%s), max abs error %.3g\n",
                (*kernel)->fallback_reason().c_str(), worst);
  }
  std::free(a);
  std::free(b);
  std::free(c);
  return worst < 1e-4 ? 0 : 1;
}
