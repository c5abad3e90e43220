#ifndef TUNED_TESTS_SUPPORT_CUDA_KERNELS_H_
#define TUNED_TESTS_SUPPORT_CUDA_KERNELS_H_

// Hand-written CUDA C kernels that the NVRTC tests and tuned_nvrtc_bench compile: the reference
// points for what generated GPU code should look like and cost.

#include <string>

namespace tuned::test_kernels {

// A tiled matmul: each block stages a TILE x TILE tile of A and of B in shared memory.
inline std::string TiledMatmulCuda(int tile) {
  return "#define TILE " + std::to_string(tile) + R"(
extern "C" __global__ void __launch_bounds__(TILE * TILE)
tiled_matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    a_tile[ty][tx] = (row < n && k0 + tx < n) ? a[row * n + k0 + tx] : 0.0f;
    b_tile[ty][tx] = (k0 + ty < n && col < n) ? b[(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += a_tile[ty][k] * b_tile[k][tx];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = acc;
}
)";
}

// 64 accumulators per thread: about 96 registers unconstrained, spills when capped at 32.
inline constexpr const char* kRegisterBlockedCuda = R"(
extern "C" __global__ void blocked_8x8(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, int n) {
  float acc[8][8];
  for (int i = 0; i < 8; ++i) for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  int r0 = (blockIdx.y * blockDim.y + threadIdx.y) * 8;
  int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  for (int k = 0; k < n; ++k) {
    float av[8], bv[8];
    for (int i = 0; i < 8; ++i) av[i] = a[(r0 + i) * n + k];
    for (int j = 0; j < 8; ++j) bv[j] = b[k * n + c0 + j];
    for (int i = 0; i < 8; ++i) for (int j = 0; j < 8; ++j) acc[i][j] += av[i] * bv[j];
  }
  for (int i = 0; i < 8; ++i) for (int j = 0; j < 8; ++j) c[(r0 + i) * n + c0 + j] = acc[i][j];
}
)";

}  // namespace tuned::test_kernels

#endif  // TUNED_TESTS_SUPPORT_CUDA_KERNELS_H_
