// cuDNN convolution, the GPU baseline for tuned's conv2d (bench/gpu/README.md):
//
//   tuned_cudnn_conv N C H W F R S STRIDE PAD [--repeats R]
//
// y[N,F,P,Q] = conv(x[N,C,H,W], w[F,C,R,S]) in fp32, NCHW, one stride and one padding for both
// axes, no dilation, no groups (a cross-correlation, as every framework's conv). Timed twice,
// through the legacy API (cudnnConvolutionForward) with the fastest algorithm
// cudnnFindConvolutionForwardAlgorithmEx measures: fp32 math only (CUDNN_FMA_MATH), and TF32
// allowed (CUDNN_DEFAULT_MATH, which lets Ampere and later GPUs use TF32 tensor cores for fp32
// data). One JSON row each on stdout, with the error against a CPU reference; any CUDA or cuDNN
// error is one line on stderr and exit code 1.

#include <cudnn.h>

#include <string>
#include <utility>
#include <vector>

#include "gpu_timing.h"

namespace tuned_gpu_bench {
namespace {

constexpr const char* kUsage = "tuned_cudnn_conv N C H W F R S STRIDE PAD [--repeats R]";

// The status and, from cuDNN 9, the library's own account of the last error, on one line.
void CheckCudnn(cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  std::string message = std::string(what) + ": " + cudnnGetErrorString(status);
#if CUDNN_MAJOR >= 9
  char detail[512] = "";
  cudnnGetLastErrorString(detail, sizeof detail);
  if (detail[0] != '\0') message += std::string(" (") + detail + ")";
#endif
  for (char& c : message) c = c == '\n' ? ' ' : c;
  Fail(message);
}

struct Shape {
  int n, c, h, w, f, r, s, stride, pad;
  int p = 0, q = 0;  // output height and width, from cuDNN
};

// One row of output: the math the convolution descriptor permits.
struct Math {
  const char* name;  // the row's "math": fp32 or tf32
  cudnnMathType_t type;
};

constexpr Math kMaths[] = {
    {"fp32", CUDNN_FMA_MATH},
    {"tf32", CUDNN_DEFAULT_MATH},
};

const char* MathName(cudnnMathType_t type) {
  switch (type) {
    case CUDNN_DEFAULT_MATH:
      return "CUDNN_DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH:
      return "CUDNN_TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
      return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH:
      return "CUDNN_FMA_MATH";
  }
  return "unknown";
}

std::string AlgoName(cudnnConvolutionFwdAlgo_t algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
      return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
      return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
      return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
      return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
      return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
      return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
      return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
      return "WINOGRAD_NONFUSED";
    default:
      return "algo_" + std::to_string(static_cast<int>(algo));
  }
}

// The cuDNN handle and the four descriptors of the convolution.
struct Conv {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t desc = nullptr;

  Conv() {
    CheckCudnn(cudnnCreate(&handle), "cudnnCreate");
    CheckCudnn(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    CheckCudnn(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    CheckCudnn(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    CheckCudnn(cudnnCreateConvolutionDescriptor(&desc), "cudnnCreateConvolutionDescriptor");
  }
  ~Conv() {
    cudnnDestroyConvolutionDescriptor(desc);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroy(handle);
  }
  Conv(const Conv&) = delete;
  Conv& operator=(const Conv&) = delete;
};

// Describes the convolution to cuDNN; the shape with the output size cuDNN computes.
Shape Describe(const Conv& conv, Shape s) {
  CheckCudnn(
      cudnnSetTensor4dDescriptor(conv.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w),
      "cudnnSetTensor4dDescriptor (x)");
  CheckCudnn(
      cudnnSetFilter4dDescriptor(conv.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.f, s.c, s.r, s.s),
      "cudnnSetFilter4dDescriptor");
  CheckCudnn(cudnnSetConvolution2dDescriptor(conv.desc, s.pad, s.pad, s.stride, s.stride, 1, 1,
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "cudnnSetConvolution2dDescriptor");
  int n = 0, f = 0;
  CheckCudnn(cudnnGetConvolution2dForwardOutputDim(conv.desc, conv.x, conv.w, &n, &f, &s.p, &s.q),
             "cudnnGetConvolution2dForwardOutputDim");
  if (s.p < 1 || s.q < 1) Fail("the filter does not fit the padded image: no output");
  CheckCudnn(
      cudnnSetTensor4dDescriptor(conv.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s.n, s.f, s.p, s.q),
      "cudnnSetTensor4dDescriptor (y)");
  return s;
}

size_t Count(int a, int b, int c, int d) { return size_t{1} * a * b * c * d; }

// The device, the cuDNN handle and descriptors, and the operands on the host and the device.
class ConvBench {
 public:
  ConvBench(const Shape& shape, int repeats)
      : repeats_(repeats),
        device_(OpenDevice()),  // first: without a GPU this is the one line that says so
        shape_(Describe(conv_, shape)),
        x_(RandomValues(Count(shape_.n, shape_.c, shape_.h, shape_.w), 1)),
        w_(RandomValues(Count(shape_.f, shape_.c, shape_.r, shape_.s), 2)),
        x_dev_(x_.size()),
        w_dev_(w_.size()),
        y_dev_(Count(shape_.n, shape_.f, shape_.p, shape_.q)),
        flusher_(device_) {
    CheckCuda(cudaStreamCreate(&stream_), "cudaStreamCreate");
    CheckCudnn(cudnnSetStream(conv_.handle, stream_), "cudnnSetStream");
    x_dev_.Upload(x_);
    w_dev_.Upload(w_);
  }
  ~ConvBench() { cudaStreamDestroy(stream_); }
  ConvBench(const ConvBench&) = delete;
  ConvBench& operator=(const ConvBench&) = delete;

  // Times one row and prints it; false when its result differs from the CPU reference.
  bool Row(const Math& math) {
    CheckCudnn(cudnnSetConvolutionMathType(conv_.desc, math.type), "cudnnSetConvolutionMathType");
    DeviceArray<unsigned char> workspace(WorkspaceBytes());
    const cudnnConvolutionFwdAlgoPerf_t algo = FindFastest(math, workspace);
    // The algorithm runs with the math it was measured with (cuDNN picks kernels by both).
    CheckCudnn(cudnnSetConvolutionMathType(conv_.desc, algo.mathType),
               "cudnnSetConvolutionMathType");
    // NaNs (all bits set) in y, so that an output the library never wrote fails the check.
    CheckCuda(cudaMemsetAsync(y_dev_.get(), 0xff, y_dev_.bytes(), stream_), "cudaMemsetAsync");
    const Timing timing =
        TimeLaunches([&] { Forward(algo, workspace); }, stream_, flusher_, repeats_);
    const Shape& s = shape_;
    const double error = MaxRelativeError(y_dev_.Download(), 1LL * s.c * s.r * s.s,
                                          [&](size_t index) { return Reference(index); });
    Print(math, algo, timing, error);
    return error <= kWrongResultError;  // false for NaN too
  }

 private:
  void Print(const Math& math, const cudnnConvolutionFwdAlgoPerf_t& algo, const Timing& timing,
             double error) const {
    const Shape& s = shape_;
    JsonRow row;
    row.String("library", "cudnn")
        .String("math", math.name)
        .String("cudnn_math", MathName(math.type))
        .String("algo", AlgoName(algo.algo))
        .String("algo_math", MathName(algo.mathType))
        .Int("workspace_bytes", static_cast<long long>(algo.memory));
    const std::pair<const char*, int> dims[] = {
        {"n", s.n}, {"c", s.c},           {"h", s.h},     {"w", s.w}, {"f", s.f}, {"r", s.r},
        {"s", s.s}, {"stride", s.stride}, {"pad", s.pad}, {"p", s.p}, {"q", s.q}};
    for (const auto& [name, value] : dims) row.Int(name, value);
    row.Number("max_rel_error", error)
        .Int("library_version", static_cast<long long>(cudnnGetVersion()));
    const double flops = 2.0 * static_cast<double>(Count(s.n, s.f, s.p, s.q)) * s.c * s.r * s.s;
    AddTiming(row, timing, flops, device_);
    row.Print();
  }

  // The largest workspace any algorithm asks for under the descriptor's math, capped at 4 GiB
  // so that one wanting more (FFT on large images) is left out rather than taking the device.
  size_t WorkspaceBytes() const {
    size_t largest = 0;
    for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
      size_t bytes = 0;
      // An algorithm that does not apply to this shape answers an error: it needs nothing.
      if (cudnnGetConvolutionForwardWorkspaceSize(
              conv_.handle, conv_.x, conv_.w, conv_.desc, conv_.y,
              static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes) == CUDNN_STATUS_SUCCESS) {
        largest = std::max(largest, bytes);
      }
    }
    return std::min(largest, size_t{4} << 30);
  }

  // The fastest algorithm cuDNN measures whose math the row permits. cuDNN reports the math each
  // result ran with; the fp32 row takes only CUDNN_FMA_MATH ones, so no TF32 kernel counts.
  cudnnConvolutionFwdAlgoPerf_t FindFastest(const Math& math,
                                            DeviceArray<unsigned char>& workspace) {
    // One algorithm may come back once per math type: more results than algorithms.
    int max_count = 0;
    CheckCudnn(cudnnGetConvolutionForwardAlgorithmMaxCount(conv_.handle, &max_count),
               "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> results(static_cast<size_t>(std::max(max_count, 1)));
    int returned = 0;
    CheckCudnn(cudnnFindConvolutionForwardAlgorithmEx(
                   conv_.handle, conv_.x, x_dev_.get(), conv_.w, w_dev_.get(), conv_.desc, conv_.y,
                   y_dev_.get(), static_cast<int>(results.size()), &returned, results.data(),
                   workspace.get(), workspace.bytes()),
               "cudnnFindConvolutionForwardAlgorithmEx");
    // The results come sorted by time, fastest first.
    for (int i = 0; i < returned; ++i) {
      const cudnnConvolutionFwdAlgoPerf_t& result = results[static_cast<size_t>(i)];
      const bool permitted = math.type != CUDNN_FMA_MATH || result.mathType == CUDNN_FMA_MATH;
      if (result.status == CUDNN_STATUS_SUCCESS && permitted) return result;
    }
    Fail(std::string("no convolution algorithm runs this shape with ") + MathName(math.type));
  }

  void Forward(const cudnnConvolutionFwdAlgoPerf_t& algo, DeviceArray<unsigned char>& workspace) {
    const float alpha = 1, beta = 0;
    CheckCudnn(cudnnConvolutionForward(conv_.handle, &alpha, conv_.x, x_dev_.get(), conv_.w,
                                       w_dev_.get(), conv_.desc, algo.algo, workspace.get(),
                                       algo.memory, &beta, conv_.y, y_dev_.get()),
               "cudnnConvolutionForward");
  }

  // y[n,f,p,q] on the CPU in double, from the NCHW host copies of x and w (zero padding).
  Expected Reference(size_t index) const {
    const Shape& s = shape_;
    const size_t q = index % s.q, p = index / s.q % s.p, f = index / s.q / s.p % s.f,
                 n = index / s.q / s.p / s.f;
    Expected want;
    for (size_t c = 0; c < size_t(s.c); ++c) {
      for (size_t r = 0; r < size_t(s.r); ++r) {
        // The input row and column under the filter tap; outside the image it is padding.
        const long long h = static_cast<long long>(p * s.stride + r) - s.pad;
        if (h < 0 || h >= s.h) continue;
        for (size_t t = 0; t < size_t(s.s); ++t) {
          const long long col = static_cast<long long>(q * s.stride + t) - s.pad;
          if (col < 0 || col >= s.w) continue;
          const double product =
              static_cast<double>(x_[((n * s.c + c) * s.h + size_t(h)) * s.w + size_t(col)]) *
              w_[((f * s.c + c) * s.r + r) * s.s + t];
          want.value += product;
          want.scale += std::fabs(product);
        }
      }
    }
    return want;
  }

  int repeats_;
  Device device_;
  Conv conv_;
  Shape shape_;
  std::vector<float> x_, w_;
  DeviceArray<float> x_dev_, w_dev_, y_dev_;
  L2Flusher flusher_;
  cudaStream_t stream_ = nullptr;
};

int Run(int argc, char** argv) {
  g_program = "tuned_cudnn_conv";
  const Args args = ParseArgs(argc, argv, {1, 1, 1, 1, 1, 1, 1, 1, 0}, kUsage);
  std::vector<int> v(args.values.begin(), args.values.end());  // each fits an int (ParseInt)
  ConvBench bench({v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]}, args.repeats);
  bool right = true;
  for (const Math& math : kMaths) right = bench.Row(math) && right;
  if (!right) Fail("a result differs from the CPU reference (max_rel_error above 1e-2)");
  return 0;
}

}  // namespace
}  // namespace tuned_gpu_bench

int main(int argc, char** argv) { return tuned_gpu_bench::Run(argc, argv); }
