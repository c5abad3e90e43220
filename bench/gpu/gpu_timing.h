// What the GPU baseline programs (cublas_gemm.cc, cudnn_conv.cc) share: failing with one line,
// the command line, the device, the timing protocol, the check against a CPU reference and the
// JSON rows (bench/gpu/README.md). Header only and CUDA runtime only, so that each program
// builds from its one .cc file with a bare nvcc on a machine that has nothing of tuned.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tuned_gpu_bench {

// ---- Failing -------------------------------------------------------------------------------

// The program's name at the start of every error line; each program sets it first thing.
inline const char* g_program = "gpu_bench";

// One line on stderr and exit code 1. _Exit rather than exit: after a CUDA error the libraries'
// own teardown at exit may fail again or crash, and the line must be the last word.
[[noreturn]] inline void Fail(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", g_program, message.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

inline std::string CudaErrorText(cudaError_t status) {
  return std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")";
}

inline void CheckCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) Fail(std::string(what) + ": " + CudaErrorText(status));
}

// ---- Command line --------------------------------------------------------------------------

struct Args {
  std::vector<long long> values;  // the positional integers, in order
  int repeats = 20;
};

// Bad usage: the usage text on stderr and exit code 2, as tuned's own commands do.
[[noreturn]] inline void UsageError(const char* usage, const std::string& problem) {
  std::fprintf(stderr, "%s: %s\nusage: %s\n", g_program, problem.c_str(), usage);
  std::_Exit(2);
}

// A whole decimal integer in [minimum, 2^31 - 1] (the libraries take int sizes).
inline long long ParseInt(const char* text, long long minimum, const char* usage) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || value < minimum || value > 2147483647LL) {
    UsageError(usage, std::string("bad number '") + text + "' (want an integer from " +
                          std::to_string(minimum) + " to 2147483647)");
  }
  return value;
}

// As many positional integers as `minimums` has (each at least its entry there) and an optional
// --repeats R.
inline Args ParseArgs(int argc, char** argv, const std::vector<long long>& minimums,
                      const char* usage) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      args.repeats = static_cast<int>(ParseInt(argv[++i], 1, usage));
    } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: %s\n", usage);
      std::exit(0);
    } else if (args.values.size() < minimums.size()) {
      args.values.push_back(ParseInt(argv[i], minimums[args.values.size()], usage));
    } else {
      UsageError(usage, std::string("unexpected argument '") + argv[i] + "'");
    }
  }
  if (args.values.size() != minimums.size()) UsageError(usage, "missing arguments");
  return args;
}

// ---- Device --------------------------------------------------------------------------------

struct Device {
  std::string name;
  std::string cc;  // compute capability, "9.0"
  int l2_bytes = 0;
};

// Device 0 (CUDA_VISIBLE_DEVICES picks another). Where there is no usable GPU (no driver, none
// visible) this is the one line "no CUDA device: <why>", which the CTest test looks for.
inline Device OpenDevice() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) Fail("no CUDA device: " + CudaErrorText(status));
  if (count == 0) Fail("no CUDA device: the driver sees none");
  CheckCuda(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp props;
  CheckCuda(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
  int major = 0, minor = 0;
  Device device;
  CheckCuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0),
            "cudaDeviceGetAttribute");
  CheckCuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0),
            "cudaDeviceGetAttribute");
  CheckCuda(cudaDeviceGetAttribute(&device.l2_bytes, cudaDevAttrL2CacheSize, 0),
            "cudaDeviceGetAttribute");
  device.name = props.name;
  device.cc = std::to_string(major) + "." + std::to_string(minor);
  return device;
}

// An array in device memory, freed with its owner.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count) : count_(count) {
    const size_t bytes = std::max<size_t>(count, 1) * sizeof(T);
    CheckCuda(cudaMalloc(reinterpret_cast<void**>(&data_), bytes),
              ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return data_; }
  size_t bytes() const { return count_ * sizeof(T); }
  void Upload(const std::vector<T>& host) {
    CheckCuda(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice),
              "cudaMemcpy to the device");
  }
  std::vector<T> Download() const {
    std::vector<T> host(count_);
    CheckCuda(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost),
              "cudaMemcpy to the host");
    return host;
  }

 private:
  T* data_ = nullptr;
  size_t count_;
};

// Seeded values in [-1, 1]: the same inputs on every run.
inline std::vector<float> RandomValues(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> values(count);
  for (float& value : values) value = dist(rng);
  return values;
}

// ---- Timing protocol -----------------------------------------------------------------------

struct Timing {
  double median_us = 0;  // per launch: the median over repeats of each repeat's mean
  double min_us = 0;
  int repeats = 0;
  long launches_per_repeat = 0;
};

// Evicts the operands from L2 before a repeat: a memset of 4x the L2 size writes through the
// whole cache, so the first launch of every repeat reads its inputs from device memory.
class L2Flusher {
 public:
  explicit L2Flusher(const Device& device) : buffer_(4 * static_cast<size_t>(device.l2_bytes)) {}
  void Flush(cudaStream_t stream) {
    CheckCuda(cudaMemsetAsync(buffer_.get(), ++value_ & 0xff, buffer_.bytes(), stream),
              "cudaMemsetAsync (L2 flush)");
  }

 private:
  DeviceArray<unsigned char> buffer_;
  int value_ = 0;
};

class Event {
 public:
  Event() { CheckCuda(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds that `launches` back-to-back launches take on the stream, after an L2 flush that
// is not timed (it runs before the start event is reached).
inline double TimeBatch(const std::function<void()>& launch, long launches, cudaStream_t stream,
                        L2Flusher& flusher) {
  Event start, stop;
  flusher.Flush(stream);
  CheckCuda(cudaEventRecord(start.get(), stream), "cudaEventRecord");
  for (long i = 0; i < launches; ++i) launch();
  CheckCuda(cudaEventRecord(stop.get(), stream), "cudaEventRecord");
  CheckCuda(cudaEventSynchronize(stop.get()), "running the timed launches");
  float ms = 0;
  CheckCuda(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return ms;
}

// The protocol of bench/gpu/README.md: warm-up, then as many launches per repeat as pass
// min_repeat_ms (so the events' resolution and the launch gaps do not dominate), `repeats`
// repeats each after an L2 flush, and the median of the per-launch means.
inline Timing TimeLaunches(const std::function<void()>& launch, cudaStream_t stream,
                           L2Flusher& flusher, int repeats, double min_repeat_ms = 10) {
  // The first calls pick kernels, load modules and allocate library workspaces.
  for (int i = 0; i < 3; ++i) launch();
  CheckCuda(cudaStreamSynchronize(stream), "running the warm-up launches");

  Timing timing;
  timing.repeats = repeats;
  timing.launches_per_repeat = 1;
  while (timing.launches_per_repeat < (1L << 20) &&
         TimeBatch(launch, timing.launches_per_repeat, stream, flusher) < min_repeat_ms) {
    timing.launches_per_repeat *= 2;
  }
  std::vector<double> per_launch_us;
  for (int r = 0; r < repeats; ++r) {
    const double ms = TimeBatch(launch, timing.launches_per_repeat, stream, flusher);
    per_launch_us.push_back(ms * 1e3 / static_cast<double>(timing.launches_per_repeat));
  }
  std::sort(per_launch_us.begin(), per_launch_us.end());
  const size_t mid = per_launch_us.size() / 2;
  timing.median_us = per_launch_us.size() % 2 ? per_launch_us[mid]
                                              : (per_launch_us[mid - 1] + per_launch_us[mid]) / 2;
  timing.min_us = per_launch_us.front();
  return timing;
}

// ---- Check against a CPU reference ---------------------------------------------------------

// One output element computed on the CPU in double: its value and the sum of the absolute
// values of the products that make it (the scale of the rounding error a sum of them can have).
struct Expected {
  double value = 0;
  double scale = 0;
};

// The largest |got - expected| / scale over the checked elements (so an element whose exact
// value is near zero does not blow the error up). Every element when that costs at most
// 2^26 multiply-adds on the CPU, else the first, the last and 4096 seeded random ones.
inline double MaxRelativeError(const std::vector<float>& got, long long macs_per_element,
                               const std::function<Expected(size_t)>& expected) {
  const size_t count = got.size();
  std::vector<size_t> checked;
  if (static_cast<double>(count) * static_cast<double>(macs_per_element) <= double(1 << 26)) {
    for (size_t i = 0; i < count; ++i) checked.push_back(i);
  } else {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<size_t> pick(0, count - 1);
    checked = {0, count - 1};
    for (int i = 0; i < 4096; ++i) checked.push_back(pick(rng));
  }
  double worst = 0;
  for (size_t i : checked) {
    const Expected want = expected(i);
    const double diff = std::fabs(static_cast<double>(got[i]) - want.value);
    const double error = want.scale > 0 ? diff / want.scale : diff;
    // A NaN compares false: count it as the worst error there is.
    worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error);
  }
  return worst;
}

// Above this the result is wrong (a bad layout or operand order gives errors near 1), not merely
// rounded: TF32 stays far below it.
constexpr double kWrongResultError = 1e-2;

// ---- JSON rows -----------------------------------------------------------------------------

// One JSON object on one line of stdout, fields in the order they are added.
class JsonRow {
 public:
  JsonRow& String(const char* key, const std::string& value) {
    Key(key);
    text_ += '"';
    for (char c : value) {
      if (c == '"' || c == '\\') {
        text_ += '\\';
        text_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
        text_ += escaped;
      } else {
        text_ += c;
      }
    }
    text_ += '"';
    return *this;
  }
  JsonRow& Int(const char* key, long long value) {
    Key(key);
    text_ += std::to_string(value);
    return *this;
  }
  // JSON has no NaN or infinity: those are written as null.
  JsonRow& Number(const char* key, double value) {
    Key(key);
    char number[32];
    std::snprintf(number, sizeof number, "%.6g", value);
    text_ += std::isfinite(value) ? number : "null";
    return *this;
  }
  void Print() const {
    std::printf("{%s}\n", text_.c_str());
    std::fflush(stdout);
  }

 private:
  void Key(const char* key) {
    if (!text_.empty()) text_ += ',';
    text_ += '"';
    text_ += key;
    text_ += "\":";
  }
  std::string text_;
};

// The fields every row ends with: the time, the rate, the protocol and the device.
inline void AddTiming(JsonRow& row, const Timing& timing, double flops, const Device& device) {
  row.Number("median_us", timing.median_us)
      .Number("min_us", timing.min_us)
      .Number("gflops", flops / timing.median_us * 1e-3)
      .Int("repeats", timing.repeats)
      .Int("launches_per_repeat", timing.launches_per_repeat)
      .String("device", device.name)
      .String("cc", device.cc);
}

}  // namespace tuned_gpu_bench
