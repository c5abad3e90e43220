#include "worker/gpu/gpu_engine.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>

#include "common/exclusive_gate.h"
#include "common/logging.h"
#include "compiler/codegen/cuda/cuda_candidate.h"
#include "compiler/codegen/gpu/gpu_candidate.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "target/target_proto.h"
#include "worker/builder.h"
#include "worker/contained_build.h"
#include "worker/gpu/runner_process.h"
#include "worker/reference_cache.h"
#include "worker/runner.h"
#include "worker/tensor_data.h"
#include "worker/timing_protocol.h"

namespace tuned::worker::gpu {
namespace {

using Done = std::function<void(StatusOr<v1::MeasureResult>)>;

thread_local bool t_engine_thread = false;

// The OpenCL runner names its device's type; a CUDA device is never the host.
bool DeviceIsHostCpu(const v1::DeviceInfo& device) {
  return std::find(device.features().begin(), device.features().end(), "device_type=cpu") != device.features().end();
}

std::string Milliseconds(double seconds) { return std::to_string(int64_t(seconds * 1000 + 0.5)) + " ms"; }

class GpuEngine final : public MeasurementEngine {
 public:
  GpuEngine(const EngineOptions& options, target::Target target, target::Target host, GpuBuilderFactory factory)
      : options_(options),
        target_(std::move(target)),
        host_(std::move(host)),
        factory_(std::move(factory)),
        runner_(GpuRunnerArgv(options, target_)),
        cpu_runner_(options.memory_limit_bytes, size_t{8} << 20),
        references_(options.reference_cache_entries, options.reference_max_evaluator_flops, gate_,
                    [this](const WorkloadData& data) { return CompiledReference(data); }) {
    target_proto_ = target::TargetToProto(target_);
  }

  Status Start() {
    TUNED_ASSIGN_OR_RETURN(builder_, factory_());
    TUNED_ASSIGN_OR_RETURN(jit_, codegen::LlvmJit::Create(host_));
    TUNED_ASSIGN_OR_RETURN(device_, runner_.Start());
    // A cubin is built here, not by the driver: the compiler that made the code is NVRTC.
    if (target_.kind == target::TargetKind::kCuda) device_.set_toolkit_version(codegen::cuda::CudaCompilerVersion());
    builds_overlap_runs_ = options_.gpu_builds_overlap_runs.value_or(!DeviceIsHostCpu(device_));
    for (int i = 0; i < std::max(options_.build_slots, 1); ++i) builders_.emplace_back([this] { BuildLoop(); });
    run_thread_ = std::thread([this] { RunLoop(); });
    return Status::Ok();
  }

  ~GpuEngine() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& builder : builders_) builder.join();
    if (run_thread_.joinable()) run_thread_.join();
  }

  const v1::Target& target() const override { return target_proto_; }
  const v1::DeviceInfo& device() const override { return device_; }

  StatusOr<v1::MeasureResult> Measure(const v1::MeasureJob& job) override {
    if (t_engine_thread) return FailedPreconditionError("Measure() called from a measurement engine thread");
    std::promise<StatusOr<v1::MeasureResult>> promise;
    auto future = promise.get_future();
    Submit(job, [&promise](StatusOr<v1::MeasureResult> r) { promise.set_value(std::move(r)); });
    return future.get();
  }

  void Submit(v1::MeasureJob job, Done done) override {
    {
      std::lock_guard lock(mu_);
      ++outstanding_;
      build_queue_.push_back({std::move(job), std::move(done)});
    }
    cv_.notify_all();
  }

  void Drain() override {
    std::unique_lock lock(mu_);
    drained_.wait(lock, [&] { return outstanding_ == 0; });
  }

  uint32_t job_capacity() const override { return uint32_t(std::max(options_.build_slots, 1)); }

  EngineStats stats() const override {
    std::lock_guard lock(mu_);
    EngineStats copy = stats_;
    copy.reference_computations = references_.computations();
    return copy;
  }

 private:
  struct Pending {
    v1::MeasureJob job;
    Done done;
  };
  // A job between its build and its run: the runner request, and the result so far.
  struct Built {
    v1::MeasureConfig config;
    std::shared_ptr<const WorkloadData> data;
    v1::GpuRunnerRequest request;
    v1::MeasureResult result;
  };
  struct ReadyToRun {
    Built built;
    Done done;
  };
  // A compile in progress (from its fork to its reap), counted as overlapping a run when a
  // candidate was on the device at any moment of it.
  class BuildInFlight {
   public:
    explicit BuildInFlight(GpuEngine& engine) : engine_(engine) {
      std::lock_guard lock(engine_.mu_);
      overlapped_ = engine_.running_;
      engine_.builds_in_flight_.push_back(this);
      ++engine_.stats_.builds_in_flight;
    }
    ~BuildInFlight() {
      std::lock_guard lock(engine_.mu_);
      auto& builds = engine_.builds_in_flight_;
      builds.erase(std::find(builds.begin(), builds.end(), this));
      --engine_.stats_.builds_in_flight;
      if (overlapped_) ++engine_.stats_.builds_overlapping_runs;
    }
    BuildInFlight(const BuildInFlight&) = delete;
    BuildInFlight& operator=(const BuildInFlight&) = delete;
    void MarkOverlapped() { overlapped_ = true; }  // under the engine's mu_

   private:
    GpuEngine& engine_;
    bool overlapped_ = false;
  };

  // Builds run on the worker's CPU, `build_slots` at a time, ahead of the runner: the next
  // candidates are ready when the device frees (builds_overlap_runs_), or they wait for the run
  // to end when the device is this CPU (PoCL), so they never disturb its timing.
  void BuildLoop() {
    t_engine_thread = true;
    BuildProcess process;  // one per concurrent build
    while (true) {
      Pending pending;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !build_queue_.empty(); });
        if (build_queue_.empty()) return;
        pending = std::move(build_queue_.front());
        build_queue_.pop_front();
      }
      StatusOr<Built> built = BuildCandidate(pending.job, process);
      if (!built.ok()) {
        Finish(pending.done, built.status());
      } else if (built->result.status() != v1::MEASURE_STATUS_UNSPECIFIED) {
        Finish(pending.done, std::move(built->result));  // it did not build: its result already
      } else {
        {
          std::lock_guard lock(mu_);
          run_queue_.push_back({std::move(built).value(), std::move(pending.done)});
        }
        cv_.notify_all();
      }
    }
  }

  // One candidate at a time on the device, in the order their builds finished.
  void RunLoop() {
    t_engine_thread = true;
    while (true) {
      ReadyToRun ready;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return (stopping_ && outstanding_ == 0) || !run_queue_.empty(); });
        if (run_queue_.empty()) return;
        ready = std::move(run_queue_.front());
        run_queue_.pop_front();
      }
      StatusOr<v1::MeasureResult> result = InternalError("not run");
      {
        std::optional<ExclusiveGate::Exclusive> no_build;
        if (!builds_overlap_runs_) no_build.emplace(gate_);
        {
          std::lock_guard lock(mu_);
          running_ = true;
          for (BuildInFlight* build : builds_in_flight_) build->MarkOverlapped();
        }
        result = Run(std::move(ready.built));
        std::lock_guard lock(mu_);
        running_ = false;
      }
      Finish(ready.done, std::move(result));
    }
  }

  // Delivers a job's outcome and counts it done.
  void Finish(Done& done, StatusOr<v1::MeasureResult> result) {
    if (done) done(std::move(result));
    {
      std::lock_guard lock(mu_);
      if (--outstanding_ == 0) drained_.notify_all();
    }
    cv_.notify_all();  // the run thread may be waiting for the builders before it stops
  }

  Status CheckJobTarget(const v1::Target& job_target) const {
    const std::string& text = job_target.target();
    if (text.empty()) return Status::Ok();
    StatusOr<target::Target> parsed = target::ParseTarget(text);
    if (!parsed.ok()) return parsed.status().WithContext("job target");
    if (*parsed != target_) {
      return FailedPreconditionError("job target '" + text + "' is not this worker's target '" +
                                     target_proto_.target() + "'");
    }
    return Status::Ok();
  }

  v1::MeasureResult NewResult(const v1::MeasureJob& job) const {
    v1::MeasureResult result;
    result.set_job_id(job.job_id());
    result.set_worker_id(options_.worker_id);
    *result.mutable_device() = device_;
    return result;
  }

  // The job's inputs and reference, and its source and launches built in a forked build
  // process. A build that fails is a finished result (status set).
  StatusOr<Built> BuildCandidate(const v1::MeasureJob& job, BuildProcess& process) {
    Built built;
    TUNED_ASSIGN_OR_RETURN(built.config, ResolveMeasureConfig(job.config()));
    TUNED_RETURN_IF_ERROR(CheckJobTarget(job.target()));
    TUNED_ASSIGN_OR_RETURN(built.data, references_.Get(job.workload(), built.config.seed()));
    const WorkloadData& data = *built.data;
    built.result = NewResult(job);
    v1::MeasureResult& result = built.result;

    SandboxLimits limits;
    limits.timeout_seconds = built.config.build_timeout_ms() / 1000.0;
    limits.memory_limit_bytes = options_.memory_limit_bytes;
    StatusOr<ContainedBuildOutcome> compiled = InternalError("not built");
    {
      // Where the device is this CPU, a build waits for the run (and a run for the builds).
      std::optional<ExclusiveGate::Shared> no_run;
      if (!builds_overlap_runs_) no_run.emplace(gate_);
      BuildInFlight in_flight(*this);
      compiled = process.Run(
          [&]() -> StatusOr<CompiledCandidate> {
            TUNED_ASSIGN_OR_RETURN(v1::GpuCandidateProgram program, builder_->Build(data.workload, job, target_));
            CompiledCandidate candidate;
            candidate.object = program.SerializeAsString();
            return candidate;
          },
          limits);
    }
    if (!compiled.ok()) return compiled.status();
    result.set_build_seconds(compiled->seconds);
    if (compiled->kind != ContainedBuildOutcome::Kind::kCompiled) {
      const bool timed_out = compiled->kind == ContainedBuildOutcome::Kind::kTimedOut;
      result.set_status(timed_out ? v1::MEASURE_STATUS_BUILD_TIMEOUT : v1::MEASURE_STATUS_COMPILE_ERROR);
      result.set_error(timed_out ? "build still running after the build timeout of " +
                                       Milliseconds(limits.timeout_seconds) + "; killed"
                                 : compiled->error);
      built.result = Count(std::move(result), 0);
      return built;
    }
    if (!built.request.mutable_run()->mutable_program()->ParseFromString(compiled->compiled.object)) {
      return InternalError("the build process returned no GPU program");
    }
    return built;
  }

  StatusOr<v1::MeasureResult> Run(Built built) {
    const v1::MeasureConfig& config = built.config;
    const WorkloadData* data = built.data.get();
    v1::GpuRunnerRequest& request = built.request;
    v1::MeasureResult result = std::move(built.result);

    // The workload's inputs, once per runner.
    const std::string inputs_key = data->workload->key() + "#" + std::to_string(config.seed());
    if (!runner_.running() || runner_.inputs_key != inputs_key) {
      v1::GpuRunnerRequest upload;
      for (size_t i = 0; i < data->inputs.size(); ++i) {
        upload.mutable_inputs()->add_inputs(static_cast<const char*>(data->inputs[i].data()),
                                            BufferBytes(data->workload->inputs()[i]));
      }
      upload.mutable_inputs()->set_key(inputs_key);
      upload.mutable_inputs()->set_output_bytes(BufferBytes(data->workload->output_stage().output));
      TUNED_ASSIGN_OR_RETURN(RunnerCall uploaded, runner_.Call(upload, options_.reference_timeout_seconds));
      if (uploaded.kind != RunnerCall::Kind::kReplied || uploaded.reply.status() != v1::MEASURE_STATUS_OK) {
        runner_.Stop();
        return UnavailableError("GPU runner: uploading the inputs failed: " +
                                (uploaded.error.empty() ? uploaded.reply.error() : uploaded.error));
      }
      runner_.inputs_key = inputs_key;
    }

    v1::GpuRunnerRequest::Run& run = *request.mutable_run();
    run.set_repeats(config.repeat());
    run.set_number(config.number());
    run.set_warmup(config.warmup());
    run.set_min_repeat_seconds(config.min_repeat_ms() / 1000.0);
    run.set_time_kernel(true);
    // The program build is in the runner too, so its limit adds to the run's.
    const double timeout = (config.run_timeout_ms() + config.build_timeout_ms()) / 1000.0;
    const auto run_start = std::chrono::steady_clock::now();
    TUNED_ASSIGN_OR_RETURN(RunnerCall call, runner_.Call(request, timeout));
    result.set_run_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count());
    switch (call.kind) {
      case RunnerCall::Kind::kTimedOut:
        result.set_status(v1::MEASURE_STATUS_TIMEOUT);
        result.set_error("GPU runner still running after " + Milliseconds(timeout) + "; killed, a fresh runner follows");
        return Count(std::move(result), 0, /*runner_lost=*/true);
      case RunnerCall::Kind::kCrashed:
        result.set_status(v1::MEASURE_STATUS_RUNTIME_ERROR);
        result.set_error("GPU runner " + call.error + " while running the candidate; a fresh runner follows");
        return Count(std::move(result), 0, /*runner_lost=*/true);
      case RunnerCall::Kind::kReplied:
        break;
    }
    const v1::GpuRunnerReply& reply = call.reply;
    result.set_build_seconds(result.build_seconds() + reply.build_seconds());
    result.set_run_seconds(std::max(0.0, result.run_seconds() - reply.build_seconds()));
    *result.mutable_kernels() = request.run().program().kernels();
    if (reply.status() != v1::MEASURE_STATUS_OK) {
      result.set_status(reply.status());
      result.set_error(reply.error());
      // A sticky device error ends the runner (a fresh one serves the next job).
      return Count(std::move(result), reply.kernel_seconds(), /*runner_lost=*/reply.runner_unusable());
    }
    const ir::Buffer& output = data->workload->output_stage().output;
    if (reply.output().size() != BufferBytes(output)) {
      return InternalError("GPU runner returned " + std::to_string(reply.output().size()) + " output bytes, not " +
                           std::to_string(BufferBytes(output)));
    }
    result.set_status(v1::MEASURE_STATUS_OK);
    if (config.verify()) {
      const WorkloadData::Verdict verdict = data->Verify(FromKernelBuffer(output, reply.output().data()));
      result.set_max_error(verdict.max_error);
      if (!verdict.failure.empty()) {
        result.set_status(v1::MEASURE_STATUS_WRONG_RESULT);
        result.set_error(verdict.failure);
      }
    }
    if (result.status() == v1::MEASURE_STATUS_OK) {
      std::vector<double> repeats(reply.repeat_seconds().begin(), reply.repeat_seconds().end());
      for (double s : repeats) result.add_repeat_seconds(s);
      result.set_median_seconds(Median(repeats));
      result.set_repeat_cv(CoefficientOfVariation(repeats));
      result.set_number(reply.number());
    }
    return Count(std::move(result), reply.kernel_seconds());
  }

  v1::MeasureResult Count(v1::MeasureResult result, double kernel_seconds, bool runner_lost = false) {
    if (result.status() != v1::MEASURE_STATUS_OK) {
      Logger("worker")->debug("job {}: {}: {}", result.job_id(), v1::MeasureStatus_Name(result.status()), result.error());
    }
    std::lock_guard lock(mu_);
    ++stats_.results;
    stats_.build_seconds += result.build_seconds();
    stats_.kernel_seconds += kernel_seconds;
    if (runner_lost) ++stats_.runner_restarts;
    return result;
  }

  // The default schedule compiled for the host CPU and run isolated (the CPU engine's way).
  StatusOr<std::vector<double>> CompiledReference(const WorkloadData& data) {
    const std::string& key = data.workload->key();
    std::unique_ptr<Builder> builder = MakeJitBuilder();
    SandboxLimits limits;
    limits.timeout_seconds = options_.reference_timeout_seconds;
    limits.memory_limit_bytes = options_.memory_limit_bytes;
    TUNED_ASSIGN_OR_RETURN(v1::MeasureJob job, ReferenceJob(data.workload));
    BuildProcess process;
    StatusOr<ContainedBuildOutcome> built =
        process.Run([&] { return builder->Compile(data.workload, job, host_); }, limits);
    if (!built.ok()) return built.status();
    if (built->kind != ContainedBuildOutcome::Kind::kCompiled) {
      return InternalError("compiling the reference of " + key + ": " + built->error);
    }
    StatusOr<BuiltKernel> kernel = InternalError("not linked");
    {
      std::shared_lock<std::shared_mutex> no_fork(ForkLock());
      kernel = LinkCandidate(*jit_, built->compiled);
    }
    if (!kernel.ok()) return kernel.status().WithContext("linking the reference of " + key);
    RunRequest request;
    request.entry = kernel->entry;
    request.inputs = data.InputPointers();
    request.output = data.workload->output_stage().output;
    request.config = DefaultMeasureConfig();
    request.time_kernel = false;
    request.timeout_seconds = options_.reference_timeout_seconds;
    StatusOr<RunOutcome> outcome = InternalError("not run");
    {
      ExclusiveGate::Exclusive exclusive(gate_);
      outcome = cpu_runner_.Run(request);
    }
    if (!outcome.ok()) return outcome.status();
    if (outcome->status != v1::MEASURE_STATUS_OK) {
      return InternalError("reference of " + key + " (default schedule) failed: " + outcome->error);
    }
    return std::move(outcome->output);
  }

  const EngineOptions options_;
  const target::Target target_;
  const target::Target host_;  // where references run
  v1::Target target_proto_;
  const GpuBuilderFactory factory_;
  std::unique_ptr<GpuBuilder> builder_;
  std::unique_ptr<codegen::LlvmJit> jit_;  // references only
  v1::DeviceInfo device_;
  RunnerProcess runner_;  // the run thread's
  Runner cpu_runner_;
  ExclusiveGate gate_;
  ReferenceCache references_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable drained_;
  std::deque<Pending> build_queue_;
  std::deque<ReadyToRun> run_queue_;
  std::vector<BuildInFlight*> builds_in_flight_;
  bool running_ = false;  // a candidate is on the device
  bool builds_overlap_runs_ = true;
  int outstanding_ = 0;
  bool stopping_ = false;
  EngineStats stats_;
  std::vector<std::thread> builders_;
  std::thread run_thread_;
};

}  // namespace

std::vector<std::string> GpuRunnerArgv(const EngineOptions& options, const target::Target& target) {
  std::string path = options.gpu_runner;
  if (path.empty()) {
    char self[4096] = {};
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    std::string exe = n > 0 ? std::string(self, size_t(n)) : std::string();
    size_t slash = exe.rfind('/');
    path = (slash == std::string::npos ? std::string(".") : exe.substr(0, slash)) +
           (target.kind == target::TargetKind::kCuda ? "/tuned-cuda-runner" : "/tuned-opencl-runner");
  }
  std::vector<std::string> argv = {path, target.ToString()};
  if (target.kind == target::TargetKind::kCuda) argv.push_back("--device=" + std::to_string(options.gpu_device));
  return argv;
}

StatusOr<std::unique_ptr<MeasurementEngine>> CreateGpuMeasurementEngine(const EngineOptions& options,
                                                                        const target::Target& target,
                                                                        const GpuBuilderFactory& factory) {
  // Said before any runner starts: a build without NVRTC has no CUDA runner to start either.
  TUNED_RETURN_IF_ERROR(codegen::gpu::CheckGpuTarget(target));
  TUNED_ASSIGN_OR_RETURN(target::Target host, codegen::HostCpuTarget());
  auto engine = std::make_unique<GpuEngine>(options, target, std::move(host), factory);
  TUNED_RETURN_IF_ERROR(engine->Start().WithContext("worker target '" + target.ToString() + "'"));
  return std::unique_ptr<MeasurementEngine>(std::move(engine));
}

}  // namespace tuned::worker::gpu
