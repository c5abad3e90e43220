/* Calls a matmul kernel produced by `tuned compile` and checks it against a plain C loop.
 *
 *   tuned compile --workload 'matmul(M=64,N=48,K=32)' --db tuned.db -o matmul.so
 *   cmake -S examples/c_matmul -B out -DTUNED_KERNEL=$PWD/matmul.so && cmake --build out && out/c_matmul
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "matmul.h"

enum { M = 64, N = 48, K = 32 };

static float* AlignedArray(size_t count) {
  /* The generated code assumes 64-byte aligned buffers. */
  return aligned_alloc(64, ((count * sizeof(float) + 63) / 64) * 64);
}

int main(void) {
  float* a = AlignedArray(M * K);
  float* b = AlignedArray(K * N);
  float* c = AlignedArray(M * N);
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;

  tuned_kernel(a, b, c);

  double worst = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double expected = 0;
      for (int k = 0; k < K; ++k) expected += (double)a[i * K + k] * b[k * N + j];
      double error = fabs(c[i * N + j] - expected);
      if (error > worst) worst = error;
    }
  }
  printf("max abs error %.3g\n", worst);
  free(a);
  free(b);
  free(c);
  return worst < 1e-4 ? 0 : 1;
}
