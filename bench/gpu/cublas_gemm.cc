// cuBLAS SGEMM, the GPU baseline for tuned's matmul (bench/gpu/README.md):
//
//   tuned_cublas_gemm M N K [--repeats R]
//
// Row-major C[M,N] = A[M,K] * B[K,N] in fp32, timed twice: TF32 off (CUBLAS_COMPUTE_32F, the
// default math mode: what a plain cublasSgemm caller gets) and TF32 on
// (CUBLAS_COMPUTE_32F_FAST_TF32: tensor cores on inputs rounded to TF32). One JSON row each on
// stdout, with the error against a CPU reference; any CUDA or cuBLAS error is one line on stderr
// and exit code 1.

#include <cublas_v2.h>

#include <string>
#include <vector>

#include "gpu_timing.h"

namespace tuned_gpu_bench {
namespace {

constexpr const char* kUsage = "tuned_cublas_gemm M N K [--repeats R]";

void CheckCublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    Fail(std::string(what) + ": " + cublasGetStatusString(status));
  }
}

struct Shape {
  int m, n, k;
};

// One row of output: how cuBLAS is asked to compute.
struct Math {
  const char* name;  // the row's "math": fp32 or tf32
  cublasComputeType_t compute;
  const char* compute_name;
};

constexpr Math kMaths[] = {
    {"fp32", CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F"},
    {"tf32", CUBLAS_COMPUTE_32F_FAST_TF32, "CUBLAS_COMPUTE_32F_FAST_TF32"},
};

// The device, the cuBLAS handle and the operands, on the host and on the device.
class GemmBench {
 public:
  GemmBench(const Shape& shape, int repeats)
      : shape_(shape),
        repeats_(repeats),
        device_(OpenDevice()),  // first: without a GPU this is the one line that says so
        a_(RandomValues(Count(shape.m, shape.k), 1)),
        b_(RandomValues(Count(shape.k, shape.n), 2)),
        a_dev_(a_.size()),
        b_dev_(b_.size()),
        c_dev_(Count(shape.m, shape.n)),
        flusher_(device_) {
    CheckCuda(cudaStreamCreate(&stream_), "cudaStreamCreate");
    CheckCublas(cublasCreate(&handle_), "cublasCreate");
    CheckCublas(cublasSetStream(handle_, stream_), "cublasSetStream");
    // The default math mode: TF32 only where the compute type asks for it (the tf32 row).
    CheckCublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    CheckCublas(cublasGetVersion(handle_, &version_), "cublasGetVersion");
    a_dev_.Upload(a_);
    b_dev_.Upload(b_);
  }
  ~GemmBench() {
    cublasDestroy(handle_);
    cudaStreamDestroy(stream_);
  }
  GemmBench(const GemmBench&) = delete;
  GemmBench& operator=(const GemmBench&) = delete;

  // Times one row and prints it; false when its result differs from the CPU reference.
  bool Row(const Math& math) {
    // NaNs (all bits set) in C, so that an output the library never wrote fails the check.
    CheckCuda(cudaMemsetAsync(c_dev_.get(), 0xff, c_dev_.bytes(), stream_), "cudaMemsetAsync");
    const Timing timing = TimeLaunches([&] { Gemm(math); }, stream_, flusher_, repeats_);
    const double error = MaxRelativeError(c_dev_.Download(), shape_.k,
                                          [&](size_t index) { return Reference(index); });
    JsonRow row;
    row.String("library", "cublas")
        .String("math", math.name)
        .String("compute_type", math.compute_name)
        .Int("m", shape_.m)
        .Int("n", shape_.n)
        .Int("k", shape_.k)
        .Number("max_rel_error", error)
        .Int("library_version", version_);
    AddTiming(row, timing, 2.0 * shape_.m * shape_.n * shape_.k, device_);
    row.Print();
    return error <= kWrongResultError;  // false for NaN too
  }

 private:
  static size_t Count(int rows, int cols) { return static_cast<size_t>(rows) * cols; }

  // cuBLAS is column-major, and a row-major X[r,c] is the column-major X^T[c,r]. So the
  // row-major C = A*B is computed as the column-major C^T = B^T * A^T: B first, no transposes,
  // and each leading dimension the row length of the row-major matrix.
  void Gemm(const Math& math) {
    const float alpha = 1, beta = 0;
    const Shape& s = shape_;
    CheckCublas(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha,  //
                             b_dev_.get(), CUDA_R_32F, s.n,                             //
                             a_dev_.get(), CUDA_R_32F, s.k, &beta,                      //
                             c_dev_.get(), CUDA_R_32F, s.n, math.compute, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
  }

  // C[i,j] on the CPU in double, from the row-major host copies of A and B.
  Expected Reference(size_t index) const {
    const size_t i = index / shape_.n, j = index % shape_.n, n = shape_.n, k = shape_.k;
    Expected want;
    for (size_t p = 0; p < k; ++p) {
      const double product = static_cast<double>(a_[i * k + p]) * b_[p * n + j];
      want.value += product;
      want.scale += std::fabs(product);
    }
    return want;
  }

  Shape shape_;
  int repeats_;
  Device device_;
  std::vector<float> a_, b_;
  DeviceArray<float> a_dev_, b_dev_, c_dev_;
  L2Flusher flusher_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  int version_ = 0;
};

int Run(int argc, char** argv) {
  g_program = "tuned_cublas_gemm";
  const Args args = ParseArgs(argc, argv, {1, 1, 1}, kUsage);
  const Shape shape{static_cast<int>(args.values[0]), static_cast<int>(args.values[1]),
                    static_cast<int>(args.values[2])};
  GemmBench bench(shape, args.repeats);
  bool right = true;
  for (const Math& math : kMaths) right = bench.Row(math) && right;
  if (!right) Fail("a result differs from the CPU reference (max_rel_error above 1e-2)");
  return 0;
}

}  // namespace
}  // namespace tuned_gpu_bench

int main(int argc, char** argv) { return tuned_gpu_bench::Run(argc, argv); }
