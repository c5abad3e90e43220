// `tuned-cuda-runner TARGET [--device=N]`: the CUDA runner process of a worker (worker/gpu/README.md,
// docs/gpu.md). It alone holds a CUDA context: the worker starts it by exec (never a fork of a
// process with a context), uploads a workload's inputs once, then sends candidates already built
// to cubins on the worker's CPU (cuda_candidate.h). A kernel that faults (an illegal address, a
// launch failure: sticky errors that poison the context), crashes or hangs this process costs
// it only; the worker starts a fresh one.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/cuda/driver.h"
#include "target/target.h"
#include "worker/gpu_runner/runner_loop.h"

namespace tuned::worker::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// L2 flushes write this many times the L2's bytes, so nothing a kernel read stays in it.
constexpr int64_t kL2FlushMultiple = 4;

// Device memory owned by one value.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const cuda::Driver* driver, CUdeviceptr ptr, size_t bytes) : driver_(driver), ptr_(ptr), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(driver_, other.driver_);
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_ != 0) driver_->cuMemFree(ptr_);
  }
  static StatusOr<DeviceBuffer> Allocate(const cuda::Driver& driver, size_t bytes) {
    CUdeviceptr ptr = 0;
    TUNED_RETURN_IF_ERROR(cuda::Check(driver, driver.cuMemAlloc(&ptr, std::max<size_t>(bytes, 1)),
                                      "allocating " + std::to_string(bytes) + " bytes"));
    return DeviceBuffer(&driver, ptr, bytes);
  }
  CUdeviceptr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  const cuda::Driver* driver_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

struct DeviceFacts {
  CUdevice device = 0;
  std::string arch;  // "sm_90"
  int64_t l2_bytes = 0;
  std::array<int64_t, 3> max_grid{};
  v1::DeviceInfo info;
};

StatusOr<DeviceFacts> DescribeDevice(const cuda::Driver& driver, int ordinal) {
  int count = 0;
  TUNED_RETURN_IF_ERROR(cuda::Check(driver, driver.cuDeviceGetCount(&count), "counting CUDA devices"));
  if (ordinal < 0 || ordinal >= count) {
    return NotFoundError("--device=" + std::to_string(ordinal) + ": this machine has " + std::to_string(count) +
                         " CUDA device" + (count == 1 ? "" : "s"));
  }
  DeviceFacts facts;
  TUNED_RETURN_IF_ERROR(cuda::Check(driver, driver.cuDeviceGet(&facts.device, ordinal), "cuDeviceGet"));
  auto attribute = [&](CUdevice_attribute what) {
    int value = 0;
    driver.cuDeviceGetAttribute(&value, what, facts.device);
    return int64_t(value);
  };
  char name[256] = {};
  TUNED_RETURN_IF_ERROR(cuda::Check(driver, driver.cuDeviceGetName(name, sizeof(name) - 1, facts.device), "cuDeviceGetName"));
  const int64_t major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int64_t minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  facts.arch = "sm_" + std::to_string(major) + std::to_string(minor);
  facts.l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  facts.max_grid = {attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                    attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
  size_t memory = 0;
  driver.cuDeviceTotalMem(&memory, facts.device);
  int driver_version = 0;
  driver.cuDriverGetVersion(&driver_version);

  v1::DeviceInfo& info = facts.info;
  info.set_model(name);
  info.set_num_cores(uint32_t(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)));
  info.set_memory_bytes(memory);
  info.set_driver_version("CUDA driver " + std::to_string(driver_version / 1000) + "." +
                          std::to_string(driver_version % 1000 / 10));
  info.add_features("compute_capability=" + std::to_string(major) + "." + std::to_string(minor));
  info.add_features("device=" + std::to_string(ordinal));
  info.add_features("l2_bytes=" + std::to_string(facts.l2_bytes));
  info.add_features("clock_khz=" + std::to_string(attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE)));
  info.add_features("memory_clock_khz=" + std::to_string(attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)));
  info.add_features("memory_bus_bits=" + std::to_string(attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)));
  info.add_features("registers_per_block=" + std::to_string(attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)));
  return facts;
}

class CudaRunner final : public DeviceRunner {
 public:
  CudaRunner(const cuda::Driver& driver, DeviceFacts facts) : driver_(driver), facts_(std::move(facts)) {}

  ~CudaRunner() override {
    inputs_.clear();
    flush_ = DeviceBuffer();
    if (start_ != nullptr) driver_.cuEventDestroy(start_);
    if (end_ != nullptr) driver_.cuEventDestroy(end_);
    if (stream_ != nullptr) driver_.cuStreamDestroy(stream_);
    if (context_ != nullptr) driver_.cuDevicePrimaryCtxRelease(facts_.device);
  }

  Status Open() {
    TUNED_RETURN_IF_ERROR(Check(driver_.cuDevicePrimaryCtxRetain(&context_, facts_.device), "retaining the context"));
    TUNED_RETURN_IF_ERROR(Check(driver_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"));
    TUNED_RETURN_IF_ERROR(Check(driver_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
    TUNED_RETURN_IF_ERROR(Check(driver_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate"));
    TUNED_RETURN_IF_ERROR(Check(driver_.cuEventCreate(&end_, CU_EVENT_DEFAULT), "cuEventCreate"));
    TUNED_ASSIGN_OR_RETURN(flush_, DeviceBuffer::Allocate(driver_, size_t(kL2FlushMultiple * std::max<int64_t>(facts_.l2_bytes, 1 << 20))));
    return Status::Ok();
  }

  const v1::DeviceInfo& device() const override { return facts_.info; }

  v1::GpuRunnerReply SetInputs(const v1::GpuRunnerRequest::Inputs& request) override {
    output_bytes_ = request.output_bytes();
    auto upload = [&](const std::string& data) -> StatusOr<DeviceBuffer> {
      TUNED_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(driver_, data.size()));
      TUNED_RETURN_IF_ERROR(Check(driver_.cuMemcpyHtoD(buffer.ptr(), data.data(), data.size()), "cuMemcpyHtoD"));
      return buffer;
    };
    return UploadInputs(request, upload, inputs_);
  }

  v1::GpuRunnerReply Run(const v1::GpuRunnerRequest::Run& request) override {
    v1::GpuRunnerReply reply;
    const v1::GpuCandidateProgram& candidate = request.program();
    if (candidate.binary().empty()) {
      return Failed(reply, v1::MEASURE_STATUS_COMPILE_ERROR, "the candidate has no cubin (the worker builds it)", false);
    }
    const Clock::time_point load_start = Clock::now();
    CUmodule module = nullptr;
    Status loaded = Check(driver_.cuModuleLoadData(&module, candidate.binary().data()), "loading the cubin");
    reply.set_build_seconds(std::chrono::duration<double>(Clock::now() - load_start).count());
    if (!loaded.ok()) return Failed(reply, v1::MEASURE_STATUS_COMPILE_ERROR, loaded.message(), false);
    struct ModuleGuard {
      const cuda::Driver& driver;
      CUmodule module;
      ~ModuleGuard() { driver.cuModuleUnload(module); }
    } guard{driver_, module};

    // The output starts as 0xff bytes (NaN for floats): an element never written fails verification.
    std::vector<DeviceBuffer> own;  // the output, then the intermediates
    StatusOr<DeviceBuffer> output = DeviceBuffer::Allocate(driver_, output_bytes_);
    Status poisoned =
        output.ok() ? Check(driver_.cuMemsetD8(output->ptr(), 0xff, output_bytes_), "poisoning the output") : output.status();
    if (!poisoned.ok()) return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, poisoned.message(), true);
    own.push_back(std::move(output).value());
    for (uint64_t bytes : candidate.intermediate_bytes()) {
      StatusOr<DeviceBuffer> b = DeviceBuffer::Allocate(driver_, bytes);
      if (!b.ok()) return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, b.status().message(), false);
      own.push_back(std::move(b).value());
    }

    struct Launch {
      CUfunction function = nullptr;
      std::array<unsigned, 3> grid{};
      std::array<unsigned, 3> block{};
      std::vector<CUdeviceptr> pointers;
      std::vector<void*> params;  // into `pointers`
    };
    std::vector<Launch> launches(size_t(candidate.launches_size()));
    for (int i = 0; i < candidate.launches_size(); ++i) {
      const v1::GpuKernelLaunch& l = candidate.launches(i);
      Launch& launch = launches[size_t(i)];
      if (Status found = Check(driver_.cuModuleGetFunction(&launch.function, module, l.function().c_str()),
                               "kernel '" + l.function() + "'");
          !found.ok()) {
        return Failed(reply, v1::MEASURE_STATUS_COMPILE_ERROR, found.message(), false);
      }
      int64_t threads = 1;
      for (int d = 0; d < 3; ++d) {
        const int64_t grid = d < l.grid_size() ? l.grid(d) : 1;
        const int64_t block = d < l.block_size() ? l.block(d) : 1;
        if (grid < 1 || grid > facts_.max_grid[size_t(d)] || block < 1) {
          return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR,
                        "launch of '" + l.function() + "': grid dimension " + std::to_string(d) + " of " +
                            std::to_string(grid) + " is outside 1.." + std::to_string(facts_.max_grid[size_t(d)]),
                        false);
        }
        launch.grid[size_t(d)] = unsigned(grid);
        launch.block[size_t(d)] = unsigned(block);
        threads *= block;
      }
      // The driver's own limit for this function on this device: registers and block size.
      int max_threads = 0;
      driver_.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, launch.function);
      if (threads > max_threads) {
        return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR,
                      "launch of '" + l.function() + "': a block of " + std::to_string(threads) + " threads; the function can run at most " +
                          std::to_string(max_threads) + " on " + facts_.info.model(),
                      false);
      }
      for (uint32_t index : l.buffers()) {
        const DeviceBuffer* b = index < inputs_.size() ? &inputs_[index]
                                : index - inputs_.size() < own.size() ? &own[index - inputs_.size()]
                                                                     : nullptr;
        if (b == nullptr) {
          return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR,
                        "launch names buffer " + std::to_string(index) + ", which does not exist", false);
        }
        launch.pointers.push_back(b->ptr());
      }
      for (CUdeviceptr& p : launch.pointers) launch.params.push_back(&p);
    }

    auto run_all = [&]() -> Status {
      for (Launch& l : launches) {
        TUNED_RETURN_IF_ERROR(Check(driver_.cuLaunchKernel(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                                                           l.block[2], 0, stream_, l.params.data(), nullptr),
                                    "launching"));
      }
      return Status::Ok();
    };
    // The first run, for the output. From here on an error may be sticky: the context is done.
    Status ran = run_all();
    if (ran.ok()) ran = Check(driver_.cuStreamSynchronize(stream_), "running the candidate");
    std::string out(output_bytes_, '\0');
    if (ran.ok()) ran = Check(driver_.cuMemcpyDtoH(out.data(), own[0].ptr(), out.size()), "reading the output");
    if (!ran.ok()) return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, ran.message(), true);
    reply.set_output(std::move(out));
    if (request.time_kernel()) {
      // `number` runs between two events; the L2 flushed before each repeat.
      auto pass = [&](uint32_t number) -> StatusOr<double> {
        TUNED_RETURN_IF_ERROR(Check(driver_.cuEventRecord(start_, stream_), "cuEventRecord"));
        for (uint32_t n = 0; n < number; ++n) TUNED_RETURN_IF_ERROR(run_all());
        TUNED_RETURN_IF_ERROR(Check(driver_.cuEventRecord(end_, stream_), "cuEventRecord"));
        TUNED_RETURN_IF_ERROR(Check(driver_.cuEventSynchronize(end_), "running the candidate"));
        float ms = 0;
        TUNED_RETURN_IF_ERROR(Check(driver_.cuEventElapsedTime(&ms, start_, end_), "cuEventElapsedTime"));
        return double(ms) / 1000.0 / double(number);
      };
      auto flush = [&]() -> Status {
        return Check(driver_.cuMemsetD8Async(flush_.ptr(), 0, flush_.bytes(), stream_), "flushing the L2");
      };
      if (Status timed = TimeRepeats(request, pass, flush, reply); !timed.ok()) {
        return Failed(reply, v1::MEASURE_STATUS_RUNTIME_ERROR, timed.message(), true);
      }
    }
    reply.set_status(v1::MEASURE_STATUS_OK);
    return reply;
  }

 private:
  Status Check(CUresult result, std::string_view what) const { return cuda::Check(driver_, result, what); }

  const cuda::Driver& driver_;
  const DeviceFacts facts_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr;
  CUevent end_ = nullptr;
  DeviceBuffer flush_;
  std::vector<DeviceBuffer> inputs_;
  uint64_t output_bytes_ = 0;
};

StatusOr<std::unique_ptr<DeviceRunner>> OpenRunner(int argc, char** argv) {
  const std::string usage = "usage: tuned-cuda-runner TARGET [--device=N]";
  if (argc < 2 || argc > 3) return InvalidArgumentError(usage);
  int ordinal = 0;
  if (argc == 3) {
    const std::string flag = argv[2];
    char* end = nullptr;
    const long value = flag.rfind("--device=", 0) == 0 ? std::strtol(flag.c_str() + 9, &end, 10) : -1;
    if (end == nullptr || *end != '\0' || end == flag.c_str() + 9 || value < 0) {
      return InvalidArgumentError("'" + flag + "' is not --device=N; " + usage);
    }
    ordinal = int(value);
  }
  TUNED_ASSIGN_OR_RETURN(target::Target target, target::ParseTarget(argv[1]));
  if (target.kind != target::TargetKind::kCuda) {
    return InvalidArgumentError("target '" + std::string(argv[1]) + "' is not a cuda target");
  }
  TUNED_ASSIGN_OR_RETURN(const cuda::Driver* driver, cuda::LoadDriver());
  TUNED_ASSIGN_OR_RETURN(DeviceFacts facts, DescribeDevice(*driver, ordinal));
  if (facts.arch != target.cuda.arch) {
    return FailedPreconditionError("device " + std::to_string(ordinal) + " (" + facts.info.model() + ") is " + facts.arch +
                                   "; the target is " + target.cuda.arch + " (cubins are built for one arch)");
  }
  auto runner = std::make_unique<CudaRunner>(*driver, std::move(facts));
  TUNED_RETURN_IF_ERROR(runner->Open());
  return std::unique_ptr<DeviceRunner>(std::move(runner));
}

}  // namespace
}  // namespace tuned::worker::gpu

int main(int argc, char** argv) {
  return tuned::worker::gpu::ServeRunner(tuned::worker::gpu::OpenRunner(argc, argv));
}
