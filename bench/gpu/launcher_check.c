/* Runs the launcher `tuned compile --target cuda -o DIR/tuned_mm --name tuned_mm` wrote for
 * matmul(M=M,N=N,K=K) (row-major A[M,K]·B[K,N] = C[M,N]) on GPU 0, the way a user's program
 * would: the cubin loaded with tuned_mm_load, the whole program launched with tuned_mm on the
 * caller's stream. Checks sampled elements of C against a double-precision reference and times
 * the launches with CUDA events.
 *
 *   cc -I DIR -I $CUDA/include launcher_check.c DIR/tuned_mm.c -lcuda -lm -o launcher_check
 *   launcher_check M N K
 *
 * Prints one JSON line; exits 1 with one line on a CUDA error or a wrong result. */

#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tuned_mm.h"

static const char* program = "launcher_check";

static void Check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = "unknown error";
  cuGetErrorString(result, &name);
  fprintf(stderr, "%s: %s: %s\n", program, what, name);
  exit(1);
}

/* Seeded values in [-1, 1] (the same on every run). */
static void Fill(float* values, size_t count, unsigned seed) {
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    values[i] = (float)((seed >> 8) * (2.0 / 16777216.0) - 1.0);
  }
}

/* The largest |got - exact| / sum |products| over sampled elements (every one when few): the
 * rounding error of a sum scales with the sum of its terms' magnitudes. */
static double MaxError(const float* a, const float* b, const float* c, long m, long n, long k) {
  const long elements = m * n, samples = elements < 4096 ? elements : 4096;
  double worst = 0;
  for (long s = 0; s < samples; ++s) {
    const long index = samples == elements ? s : (long)((s * 2654435761u) % (unsigned long)elements);
    const long i = index / n, j = index % n;
    double exact = 0, scale = 0;
    for (long p = 0; p < k; ++p) {
      const double product = (double)a[i * k + p] * b[p * n + j];
      exact += product;
      scale += fabs(product);
    }
    const double error = fabs(c[index] - exact) / (scale > 0 ? scale : 1);
    if (!(error <= worst)) worst = error; /* NaN wins */
  }
  return worst;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s M N K\n", program);
    return 2;
  }
  const long m = atol(argv[1]), n = atol(argv[2]), k = atol(argv[3]);
  if (m <= 0 || n <= 0 || k <= 0) {
    fprintf(stderr, "%s: M, N and K must be positive\n", program);
    return 2;
  }
  CUdevice device;
  CUcontext context;
  CUmodule module;
  CUstream stream;
  Check(cuInit(0), "no CUDA device");
  Check(cuDeviceGet(&device, 0), "GPU 0");
  Check(cuDevicePrimaryCtxRetain(&context, device), "context");
  Check(cuCtxSetCurrent(context), "context");
  Check(tuned_mm_load(&module), "loading the cubin (tuned_mm_load)");
  Check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "stream");

  const size_t a_count = (size_t)(m * k), b_count = (size_t)(k * n), c_count = (size_t)(m * n);
  float* a = malloc(a_count * sizeof(float));
  float* b = malloc(b_count * sizeof(float));
  float* c = malloc(c_count * sizeof(float));
  if (a == NULL || b == NULL || c == NULL) {
    fprintf(stderr, "%s: out of host memory\n", program);
    return 1;
  }
  Fill(a, a_count, 1);
  Fill(b, b_count, 2);
  CUdeviceptr a_dev, b_dev, c_dev;
  Check(cuMemAlloc(&a_dev, a_count * sizeof(float)), "allocating A");
  Check(cuMemAlloc(&b_dev, b_count * sizeof(float)), "allocating B");
  Check(cuMemAlloc(&c_dev, c_count * sizeof(float)), "allocating C");
  Check(cuMemcpyHtoD(a_dev, a, a_count * sizeof(float)), "copying A");
  Check(cuMemcpyHtoD(b_dev, b, b_count * sizeof(float)), "copying B");
  Check(cuMemsetD8(c_dev, 0xff, c_count * sizeof(float)), "poisoning C"); /* NaN if unwritten */

  Check(tuned_mm(stream, module, a_dev, b_dev, c_dev), "launching (tuned_mm)");
  Check(cuStreamSynchronize(stream), "running");
  Check(cuMemcpyDtoH(c, c_dev, c_count * sizeof(float)), "copying C back");
  const double error = MaxError(a, b, c, m, n, k);

  /* Back-to-back launches on the stream, as a model would make them. */
  const int launches = 20;
  CUevent start, stop;
  Check(cuEventCreate(&start, CU_EVENT_DEFAULT), "event");
  Check(cuEventCreate(&stop, CU_EVENT_DEFAULT), "event");
  Check(cuEventRecord(start, stream), "event");
  for (int i = 0; i < launches; ++i) Check(tuned_mm(stream, module, a_dev, b_dev, c_dev), "launching");
  Check(cuEventRecord(stop, stream), "event");
  Check(cuEventSynchronize(stop), "running");
  float ms = 0;
  Check(cuEventElapsedTime(&ms, start, stop), "event time");
  const double mean_us = ms * 1000.0 / launches;
  printf("{\"launcher\":\"tuned_mm\",\"m\":%ld,\"n\":%ld,\"k\":%ld,\"max_rel_error\":%.3g,\"mean_us\":%.2f,"
         "\"gflops\":%.1f}\n",
         m, n, k, error, mean_us, 2.0 * m * n * k / mean_us * 1e-3);
  if (!(error <= 1e-4)) {
    fprintf(stderr, "%s: the launcher's result differs from the reference (max relative error %.3g)\n", program,
            error);
    return 1;
  }
  return 0;
}
