#include "worker/measurement_engine.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "common/logging.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/evaluator.h"
#include "target/target_proto.h"
#include "worker/builder.h"
#include "worker/device_probe.h"
#include "worker/exclusive_gate.h"
#include "worker/reference_cache.h"
#include "worker/runner.h"
#include "worker/timing_protocol.h"

namespace tuned::worker {
namespace {

using Clock = std::chrono::steady_clock;
using Done = std::function<void(StatusOr<v1::MeasureResult>)>;

// Set on the engine's own threads, where Measure() would wait for itself.
thread_local bool t_engine_thread = false;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The cache-flush buffer: twice the last-level cache, so that writing through it evicts
// everything the kernel left there; 64 MiB when the size is unknown.
size_t FlushBytes(const v1::DeviceInfo& device) {
  const uint64_t llc = device.l3_cache_bytes() > 0 ? device.l3_cache_bytes() : device.l2_cache_bytes();
  if (llc == 0) return size_t{64} << 20;
  return static_cast<size_t>(std::clamp<uint64_t>(2 * llc, uint64_t{8} << 20, uint64_t{512} << 20));
}

class MeasurementEngineImpl final : public MeasurementEngine {
 public:
  MeasurementEngineImpl(const EngineOptions& options, target::Target cpu_target,
                        BuilderFactory factory)
      : options_(options),
        cpu_target_(std::move(cpu_target)),
        factory_(std::move(factory)),
        device_(ProbeCpuDevice(cpu_target_)),
        runner_(options.memory_limit_bytes, FlushBytes(device_)),
        references_(options.reference_cache_entries, options.reference_max_evaluator_flops, gate_,
                    [this](const WorkloadData& data) { return CompiledReference(data); }) {
    target_ = target::TargetToProto(cpu_target_);
  }

  // Creates the build slots and starts the threads.
  Status Start() {
    const int slots = std::max(options_.build_slots, 1);
    for (int i = 0; i < slots; ++i) {
      TUNED_ASSIGN_OR_RETURN(std::unique_ptr<BuildSlot> slot, MakeSlot());
      free_slots_.push_back(std::move(slot));
    }
    for (int i = 0; i < slots; ++i) builders_.emplace_back([this] { BuildLoop(); });
    timer_ = std::thread([this] { TimeLoop(); });
    return Status::Ok();
  }

  ~MeasurementEngineImpl() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : builders_) t.join();
    if (timer_.joinable()) timer_.join();
    // Builds abandoned at their timeout still use the gate and the builder.
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return running_builds_ == 0; });
  }

  const v1::Target& target() const override { return target_; }
  const v1::DeviceInfo& device() const override { return device_; }

  StatusOr<v1::MeasureResult> Measure(const v1::MeasureJob& job) override {
    if (t_engine_thread) {
      return FailedPreconditionError("Measure() called from a measurement engine thread");
    }
    std::promise<StatusOr<v1::MeasureResult>> promise;
    std::future<StatusOr<v1::MeasureResult>> future = promise.get_future();
    Submit(job, [&promise](StatusOr<v1::MeasureResult> result) {
      promise.set_value(std::move(result));
    });
    return future.get();
  }

  void Submit(v1::MeasureJob job, Done done) override {
    {
      std::lock_guard lock(mu_);
      ++outstanding_;
      build_queue_.push_back(Pending{std::move(job), std::move(done)});
    }
    cv_.notify_all();
  }

  void Drain() override {
    std::unique_lock lock(mu_);
    drained_cv_.wait(lock, [&] { return outstanding_ == 0; });
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
  struct Built {
    v1::MeasureJob job;
    v1::MeasureConfig config;
    Done done;
    std::shared_ptr<const WorkloadData> data;
    BuiltKernel kernel;
    double build_seconds = 0;
  };
  // A JIT and the builders that use it. LLJIT's default compile function drives one
  // TargetMachine, so two kernels materialised at once on one LlvmJit race inside LLVM's MC
  // layer ("symbol 'kernel' is already defined"); each concurrent build therefore checks out a
  // slot of its own.
  struct BuildSlot {
    std::unique_ptr<Builder> builder;    // candidates (from the factory)
    std::unique_ptr<Builder> reference;  // unscheduled programs, always the real JIT builder
  };

  StatusOr<std::unique_ptr<BuildSlot>> MakeSlot() {
    StatusOr<std::unique_ptr<codegen::LlvmJit>> jit = codegen::LlvmJit::Create(cpu_target_);
    if (!jit.ok()) {
      return FailedPreconditionError("worker target '" + cpu_target_.ToString() +
                                     "' cannot run here: " + jit.status().message());
    }
    std::shared_ptr<codegen::LlvmJit> shared_jit = std::move(jit).value();
    auto slot = std::make_unique<BuildSlot>();
    TUNED_ASSIGN_OR_RETURN(slot->builder, factory_(shared_jit));
    slot->reference = MakeJitBuilder(shared_jit);
    return slot;
  }

  std::unique_ptr<BuildSlot> TakeSlot() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !free_slots_.empty(); });
    std::unique_ptr<BuildSlot> slot = std::move(free_slots_.back());
    free_slots_.pop_back();
    return slot;
  }

  void ReturnSlot(std::unique_ptr<BuildSlot> slot) {
    {
      std::lock_guard lock(mu_);
      free_slots_.push_back(std::move(slot));
    }
    cv_.notify_all();
  }

  // One build's hand-over between the thread that runs it and the one that waits for it.
  struct BuildState {
    std::mutex mu;
    std::condition_variable cv;
    bool started = false;  // inside the gate, building
    bool finished = false;
    bool abandoned = false;
    StatusOr<BuiltKernel> result = InternalError("build did not finish");
    double seconds = 0;
  };

  v1::MeasureResult NewResult(const v1::MeasureJob& job) const {
    v1::MeasureResult result;
    result.set_job_id(job.job_id());
    result.set_worker_id(options_.worker_id);
    *result.mutable_device() = device_;
    return result;
  }

  // Delivers a job's outcome and counts it done.
  void Finish(Done& done, StatusOr<v1::MeasureResult> result) {
    if (done) done(std::move(result));
    {
      std::lock_guard lock(mu_);
      if (--outstanding_ == 0) drained_cv_.notify_all();
    }
    cv_.notify_all();  // the timer may be waiting for the builders to finish before it stops
  }

  Status CheckJobTarget(const v1::Target& job_target) const {
    const std::string& text = job_target.target();
    if (job_target.kind() == v1::TARGET_KIND_CUDA) {
      return FailedPreconditionError("job target '" + text + "' is a CUDA target; this worker measures '" +
                                     target_.target() + "'");
    }
    if (text.empty()) return Status::Ok();  // this worker's target
    StatusOr<target::Target> parsed = target::ParseTarget(text);
    if (parsed.ok() && parsed->kind != target::TargetKind::kLlvmCpu) {
      return FailedPreconditionError("job target '" + text + "' is a " +
                                     std::string(target::KindName(parsed->kind)) +
                                     " target; this worker measures '" + target_.target() + "'");
    }
    if (parsed.ok()) parsed = codegen::ValidateLlvmCpuTarget(*parsed);
    if (!parsed.ok()) return parsed.status().WithContext("job target");
    if (*parsed == cpu_target_) return Status::Ok();
    Status runnable = codegen::CheckRunnableOnHost(*parsed);
    if (!runnable.ok()) {
      return FailedPreconditionError("job target '" + text + "' cannot run on this worker (" +
                                     target_.target() + "): " + runnable.message());
    }
    return FailedPreconditionError("job target '" + text + "' is not this worker's target '" +
                                   target_.target() + "'");
  }

  // Reference output from the workload's unscheduled program, compiled and run in a child.
  StatusOr<std::vector<double>> CompiledReference(const WorkloadData& data) {
    const std::string& key = data.workload->key();
    StatusOr<BuiltKernel> built = InternalError("not built");
    {
      std::unique_ptr<BuildSlot> slot = TakeSlot();
      {
        ExclusiveGate::Shared share(gate_);
        built = slot->reference->Build(data.workload, v1::MeasureJob());
      }
      ReturnSlot(std::move(slot));
    }
    if (!built.ok()) return built.status().WithContext("compiling the reference of " + key);
    RunRequest request;
    request.entry = built->entry;
    request.inputs = data.InputPointers();
    request.output = data.workload->output_stage().output;
    request.config = DefaultMeasureConfig();
    request.time_kernel = false;
    request.timeout_seconds = options_.reference_timeout_seconds;
    StatusOr<RunOutcome> outcome = InternalError("not run");
    {
      ExclusiveGate::Exclusive exclusive(gate_);
      outcome = runner_.Run(request);
    }
    if (!outcome.ok()) return outcome.status();
    if (outcome->status != v1::MEASURE_STATUS_OK) {
      return InternalError("reference of " + key + " (unscheduled program) failed: " + outcome->error);
    }
    return std::move(outcome->output);
  }

  // Runs a slot's Build on its own thread so that the wait can end at the build timeout; a
  // build past it is abandoned: it finishes in the background, inside the gate, its kernel and
  // its slot are dropped, and a fresh slot takes the slot's place at once.
  StatusOr<BuiltKernel> BuildWithTimeout(const std::shared_ptr<const ir::Workload>& workload,
                                         const v1::MeasureJob& job, double timeout_seconds,
                                         double* seconds, bool* timed_out) {
    auto state = std::make_shared<BuildState>();
    {
      std::lock_guard lock(mu_);
      ++running_builds_;
    }
    std::thread([this, state, workload, job] {
      t_engine_thread = true;
      std::unique_ptr<BuildSlot> slot = TakeSlot();
      StatusOr<BuiltKernel> result = InternalError("not built");
      Clock::time_point start;
      {
        ExclusiveGate::Shared share(gate_);
        start = Clock::now();
        {
          std::lock_guard lock(state->mu);
          state->started = true;
        }
        state->cv.notify_all();
        result = slot->builder->Build(workload, job);
      }
      bool abandoned;
      {
        std::lock_guard lock(state->mu);
        state->seconds = SecondsSince(start);
        state->finished = true;
        abandoned = state->abandoned;
        if (!abandoned) state->result = std::move(result);
      }
      state->cv.notify_all();
      if (abandoned) {
        // The kernel and the slot die here, before the engine may.
        result = InternalError("dropped");
        slot.reset();
      } else {
        ReturnSlot(std::move(slot));
      }
      std::lock_guard lock(mu_);
      if (--running_builds_ == 0) cv_.notify_all();
    }).detach();

    // The build timeout counts from entering the gate: waiting for a long timing run to end is
    // not the candidate's fault.
    std::unique_lock lock(state->mu);
    state->cv.wait(lock, [&] { return state->started || state->finished; });
    const bool finished = state->cv.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                                             [&] { return state->finished; });
    if (!finished) {
      state->abandoned = true;
      lock.unlock();
      StatusOr<std::unique_ptr<BuildSlot>> replacement = MakeSlot();
      if (replacement.ok()) {
        ReturnSlot(std::move(replacement).value());
      } else {
        Logger("worker")->error("cannot replace an abandoned build slot: {}",
                                replacement.status().message());
      }
      *timed_out = true;
      *seconds = timeout_seconds;
      return DeadlineExceededError("build");
    }
    *timed_out = false;
    *seconds = state->seconds;
    return std::move(state->result);
  }

  void ProcessJob(Pending pending) {
    v1::MeasureJob& job = pending.job;
    StatusOr<v1::MeasureConfig> config = ResolveMeasureConfig(job.config());
    if (!config.ok()) return Finish(pending.done, config.status());
    if (Status target = CheckJobTarget(job.target()); !target.ok()) {
      return Finish(pending.done, target);
    }
    StatusOr<std::shared_ptr<const WorkloadData>> data = references_.Get(job.workload(), config->seed());
    if (!data.ok()) return Finish(pending.done, data.status());

    double build_seconds = 0;
    bool timed_out = false;
    StatusOr<BuiltKernel> kernel = BuildWithTimeout(
        (*data)->workload, job, config->build_timeout_ms() / 1000.0, &build_seconds, &timed_out);
    if (!kernel.ok()) {
      v1::MeasureResult result = NewResult(job);
      result.set_build_seconds(build_seconds);
      if (timed_out) {
        result.set_status(v1::MEASURE_STATUS_TIMEOUT);
        result.set_error("build still running after the build timeout of " +
                         std::to_string(config->build_timeout_ms()) + " ms");
      } else {
        result.set_status(v1::MEASURE_STATUS_COMPILE_ERROR);
        result.set_error(kernel.status().message());
      }
      {
        std::lock_guard lock(mu_);
        ++stats_.results;
        stats_.build_seconds += build_seconds;
      }
      return Finish(pending.done, std::move(result));
    }
    {
      std::lock_guard lock(mu_);
      timing_queue_.push_back(Built{std::move(job), *config, std::move(pending.done),
                                    std::move(data).value(), std::move(kernel).value(),
                                    build_seconds});
    }
    cv_.notify_all();
  }

  void BuildLoop() {
    t_engine_thread = true;
    while (true) {
      Pending pending;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !build_queue_.empty(); });
        if (build_queue_.empty()) return;
        pending = std::move(build_queue_.front());
        build_queue_.pop_front();
      }
      ProcessJob(std::move(pending));
    }
  }

  void TimeOne(Built& built) {
    const WorkloadData& data = *built.data;
    RunRequest request;
    request.entry = built.kernel.entry;
    request.inputs = data.InputPointers();
    request.output = data.workload->output_stage().output;
    request.config = built.config;
    request.time_kernel = true;
    request.timeout_seconds = built.config.run_timeout_ms() / 1000.0;
    StatusOr<RunOutcome> outcome = InternalError("not run");
    {
      ExclusiveGate::Exclusive exclusive(gate_);
      outcome = runner_.Run(request);
    }
    built.kernel = BuiltKernel();  // frees the machine code
    if (!outcome.ok()) return Finish(built.done, outcome.status());

    v1::MeasureResult result = NewResult(built.job);
    result.set_build_seconds(built.build_seconds);
    result.set_status(outcome->status);
    result.set_error(outcome->error);
    if (outcome->status == v1::MEASURE_STATUS_OK) {
      if (built.config.verify()) {
        const double error = ir::MaxRelativeError(outcome->output, data.reference);
        result.set_max_error(error);
        if (!(error <= data.tolerance)) {
          char message[200];
          std::snprintf(message, sizeof(message),
                        "max relative error %.3g exceeds the %s tolerance %.0e (reference: %s)",
                        error, request.output->dtype.ToString().c_str(), data.tolerance,
                        data.reference_source.c_str());
          result.set_status(v1::MEASURE_STATUS_WRONG_RESULT);
          result.set_error(message);
        }
      }
      if (result.status() == v1::MEASURE_STATUS_OK) {
        for (double seconds : outcome->timing.repeat_seconds) result.add_repeat_seconds(seconds);
        result.set_median_seconds(Median(outcome->timing.repeat_seconds));
        result.set_number(outcome->timing.number);
      }
    }
    {
      std::lock_guard lock(mu_);
      ++stats_.results;
      stats_.build_seconds += built.build_seconds;
      stats_.kernel_seconds += outcome->timing.kernel_seconds;
      stats_.child_seconds += outcome->child_seconds;
    }
    if (result.status() != v1::MEASURE_STATUS_OK) {
      Logger("worker")->debug("job {}: {}: {}", built.job.job_id(),
                              v1::MeasureStatus_Name(result.status()), result.error());
    }
    Finish(built.done, std::move(result));
  }

  void TimeLoop() {
    t_engine_thread = true;
    while (true) {
      Built built;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !timing_queue_.empty() || (stopping_ && build_queue_.empty() &&
                                                                 builders_done()); });
        if (timing_queue_.empty()) return;
        built = std::move(timing_queue_.front());
        timing_queue_.pop_front();
      }
      TimeOne(built);
    }
  }

  // Called with mu_ held: no builder can push to the timing queue any more.
  bool builders_done() const { return outstanding_ == static_cast<int>(timing_queue_.size()); }

  const EngineOptions options_;
  const target::Target cpu_target_;
  v1::Target target_;
  const BuilderFactory factory_;
  const v1::DeviceInfo device_;
  ExclusiveGate gate_;
  Runner runner_;  // used only inside gate_ exclusively
  ReferenceCache references_;

  mutable std::mutex mu_;
  std::condition_variable cv_;          // queues, stop, running builds
  std::condition_variable drained_cv_;  // outstanding_ reached 0
  std::deque<Pending> build_queue_;
  std::deque<Built> timing_queue_;
  std::vector<std::unique_ptr<BuildSlot>> free_slots_;
  int outstanding_ = 0;     // submitted, `done` not yet called
  int running_builds_ = 0;  // build threads alive (including abandoned ones)
  bool stopping_ = false;
  EngineStats stats_;
  std::vector<std::thread> builders_;
  std::thread timer_;
};

}  // namespace

StatusOr<std::unique_ptr<MeasurementEngine>> CreateMeasurementEngine(const EngineOptions& options,
                                                                     const BuilderFactory& factory) {
  target::Target cpu_target;
  if (options.target.empty()) {
    TUNED_ASSIGN_OR_RETURN(cpu_target, codegen::HostCpuTarget());
  } else {
    StatusOr<target::Target> parsed = codegen::ParseCpuTarget(options.target);
    if (!parsed.ok()) return parsed.status().WithContext("worker target");
    cpu_target = *parsed;
  }
  auto engine = std::make_unique<MeasurementEngineImpl>(options, std::move(cpu_target), factory);
  TUNED_RETURN_IF_ERROR(engine->Start());
  return std::unique_ptr<MeasurementEngine>(std::move(engine));
}

StatusOr<std::unique_ptr<MeasurementEngine>> CreateMeasurementEngine(const EngineOptions& options) {
  return CreateMeasurementEngine(options, [](std::shared_ptr<codegen::LlvmJit> jit)
                                              -> StatusOr<std::unique_ptr<Builder>> {
    return MakeJitBuilder(std::move(jit));
  });
}

}  // namespace tuned::worker
