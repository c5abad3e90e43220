#include "worker/gpu/gpu_engine.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "common/logging.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/evaluator.h"
#include "target/target_proto.h"
#include "worker/builder.h"
#include "worker/contained_build.h"
#include "common/exclusive_gate.h"
#include "worker/gpu/cuda_candidate.h"
#include "worker/gpu/runner_process.h"
#include "worker/reference_cache.h"
#include "worker/runner.h"
#include "worker/tensor_data.h"
#include "worker/timing_protocol.h"

namespace tuned::worker::gpu {
namespace {

using Done = std::function<void(StatusOr<v1::MeasureResult>)>;

thread_local bool t_engine_thread = false;

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
    if (target_.kind == target::TargetKind::kCuda) device_.set_toolkit_version(CudaCompilerVersion());
    thread_ = std::thread([this] { Loop(); });
    return Status::Ok();
  }

  ~GpuEngine() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
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
      queue_.push_back({std::move(job), std::move(done)});
    }
    cv_.notify_all();
  }

  void Drain() override {
    std::unique_lock lock(mu_);
    drained_.wait(lock, [&] { return outstanding_ == 0; });
  }

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

  void Loop() {
    t_engine_thread = true;
    while (true) {
      Pending pending;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        pending = std::move(queue_.front());
        queue_.pop_front();
      }
      StatusOr<v1::MeasureResult> result = Process(pending.job);
      if (pending.done) pending.done(std::move(result));
      {
        std::lock_guard lock(mu_);
        if (--outstanding_ == 0) drained_.notify_all();
      }
    }
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

  StatusOr<v1::MeasureResult> Process(const v1::MeasureJob& job) {
    TUNED_ASSIGN_OR_RETURN(v1::MeasureConfig config, ResolveMeasureConfig(job.config()));
    TUNED_RETURN_IF_ERROR(CheckJobTarget(job.target()));
    TUNED_ASSIGN_OR_RETURN(std::shared_ptr<const WorkloadData> data, references_.Get(job.workload(), config.seed()));
    v1::MeasureResult result = NewResult(job);

    // Source and launches, built in a forked build process.
    SandboxLimits limits;
    limits.timeout_seconds = config.build_timeout_ms() / 1000.0;
    limits.memory_limit_bytes = options_.memory_limit_bytes;
    StatusOr<ContainedBuildOutcome> built = build_process_.Run(
        [&]() -> StatusOr<CompiledCandidate> {
          TUNED_ASSIGN_OR_RETURN(v1::GpuCandidateProgram program, builder_->Build(data->workload, job, target_));
          CompiledCandidate compiled;
          compiled.object = program.SerializeAsString();
          return compiled;
        },
        limits);
    if (!built.ok()) return built.status();
    result.set_build_seconds(built->seconds);
    if (built->kind != ContainedBuildOutcome::Kind::kCompiled) {
      const bool timed_out = built->kind == ContainedBuildOutcome::Kind::kTimedOut;
      result.set_status(timed_out ? v1::MEASURE_STATUS_BUILD_TIMEOUT : v1::MEASURE_STATUS_COMPILE_ERROR);
      result.set_error(timed_out ? "build still running after the build timeout of " +
                                       Milliseconds(limits.timeout_seconds) + "; killed"
                                 : built->error);
      return Count(std::move(result), 0);
    }
    v1::GpuRunnerRequest request;
    if (!request.mutable_run()->mutable_program()->ParseFromString(built->compiled.object)) {
      return InternalError("the build process returned no GPU program");
    }

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
      const double error = ir::MaxRelativeError(FromKernelBuffer(output, reply.output().data()), data->reference);
      result.set_max_error(error);
      if (!(error <= data->tolerance)) {
        char message[200];
        std::snprintf(message, sizeof(message), "max relative error %.3g exceeds the %s tolerance %.0e (reference: %s)",
                      error, output->dtype.ToString().c_str(), data->tolerance, data->reference_source.c_str());
        result.set_status(v1::MEASURE_STATUS_WRONG_RESULT);
        result.set_error(message);
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

  // The unscheduled program compiled for the host CPU and run isolated (the CPU engine's way).
  StatusOr<std::vector<double>> CompiledReference(const WorkloadData& data) {
    const std::string& key = data.workload->key();
    std::unique_ptr<Builder> builder = MakeJitBuilder();
    SandboxLimits limits;
    limits.timeout_seconds = options_.reference_timeout_seconds;
    limits.memory_limit_bytes = options_.memory_limit_bytes;
    StatusOr<ContainedBuildOutcome> built =
        build_process_.Run([&] { return builder->Compile(data.workload, v1::MeasureJob(), host_); }, limits);
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
      return InternalError("reference of " + key + " (unscheduled program) failed: " + outcome->error);
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
  RunnerProcess runner_;
  BuildProcess build_process_;
  Runner cpu_runner_;
  ExclusiveGate gate_;
  ReferenceCache references_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable drained_;
  std::deque<Pending> queue_;
  int outstanding_ = 0;
  bool stopping_ = false;
  EngineStats stats_;
  std::thread thread_;
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
  if (target.kind != target::TargetKind::kOpencl && target.kind != target::TargetKind::kCuda) {
    return InvalidArgumentError("target '" + target.ToString() + "' is not a GPU target (cuda or opencl)");
  }
  // Said before any runner starts: a build without NVRTC has no CUDA runner to start either.
  if (target.kind == target::TargetKind::kCuda && CudaCompilerVersion().empty()) {
    return FailedPreconditionError("target '" + target.ToString() +
                                   "': this build has no CUDA support (no NVRTC: install the CUDA toolkit "
                                   "and reconfigure with TUNED_ENABLE_CUDA=ON)");
  }
  TUNED_ASSIGN_OR_RETURN(target::Target host, codegen::HostCpuTarget());
  auto engine = std::make_unique<GpuEngine>(options, target, std::move(host), factory);
  TUNED_RETURN_IF_ERROR(engine->Start().WithContext("worker target '" + target.ToString() + "'"));
  return std::unique_ptr<MeasurementEngine>(std::move(engine));
}

}  // namespace tuned::worker::gpu
