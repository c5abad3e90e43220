#include "worker/measurement_engine.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "common/logging.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "target/target_proto.h"
#include "worker/builder.h"
#include "worker/child_pause.h"
#include "worker/contained_build.h"
#include "common/cache_flush.h"
#include "worker/device_probe.h"
#include "worker/object_cache.h"
#include "common/exclusive_gate.h"
#include "worker/gpu/gpu_engine.h"
#include "worker/reference_cache.h"
#include "worker/runner.h"
#include "worker/tensor_data.h"
#include "worker/timing_protocol.h"

namespace tuned::worker {
namespace {

using Clock = std::chrono::steady_clock;
using Done = std::function<void(StatusOr<v1::MeasureResult>)>;

// Set on the engine's own threads, where Measure() would wait for itself.
thread_local bool t_engine_thread = false;

// How long the timer waits for one more build to end before it times the group it holds.
constexpr Clock::duration kGroupWait = std::chrono::milliseconds(1000);

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

uint64_t LastLevelCacheBytes(const v1::DeviceInfo& device) {
  return HostCaches{device.l1d_cache_bytes(), device.l2_cache_bytes(), device.l3_cache_bytes()}.LastLevel();
}

class MeasurementEngineImpl final : public MeasurementEngine {
 public:
  MeasurementEngineImpl(const EngineOptions& options, target::Target cpu_target,
                        BuilderFactory factory)
      : options_(options),
        cpu_target_(std::move(cpu_target)),
        factory_(std::move(factory)),
        reference_builder_(MakeJitBuilder()),
        device_(ProbeCpuDevice(cpu_target_)),
        runner_(options.memory_limit_bytes, LastLevelCacheBytes(device_)),
        references_(options.reference_cache_entries, options.reference_max_evaluator_flops, gate_,
                    [this](const WorkloadData& data) { return CompiledReference(data); }),
        objects_(options.object_cache_bytes) {
    target_ = target::TargetToProto(cpu_target_);
  }

  // Creates the build slots and starts the threads.
  Status Start() {
    TUNED_ASSIGN_OR_RETURN(builder_, factory_());
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

  ExclusiveGate* timing_gate() override { return &gate_; }

  uint32_t job_capacity() const override {
    return uint32_t(std::max({options_.build_slots, options_.interleave, 1}));
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
  // What one concurrent build uses: its build process launcher and a JIT to link into (one
  // per slot, so that links of different slots do not queue on one JIT's lock).
  struct BuildSlot {
    BuildProcess process;
    ChildPause pause;  // its build process, stopped while a kernel is timed
    std::unique_ptr<codegen::LlvmJit> jit;
  };

  // A build's end: a kernel, or the result status and reason of a build that did not make one.
  struct BuildOutcome {
    StatusOr<BuiltKernel> kernel = InternalError("not built");
    v1::MeasureStatus status = v1::MEASURE_STATUS_COMPILE_ERROR;  // when `kernel` is an error
    double seconds = 0;
  };

  StatusOr<std::unique_ptr<BuildSlot>> MakeSlot() {
    StatusOr<std::unique_ptr<codegen::LlvmJit>> jit = codegen::LlvmJit::Create(cpu_target_);
    if (!jit.ok()) {
      return FailedPreconditionError("worker target '" + cpu_target_.ToString() +
                                     "' cannot run here: " + jit.status().message());
    }
    auto slot = std::make_unique<BuildSlot>();
    slot->jit = std::move(jit).value();
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

  // Reference output from the workload's default schedule (ReferenceJob), compiled and run in a child.
  StatusOr<std::vector<double>> CompiledReference(const WorkloadData& data) {
    const std::string& key = data.workload->key();
    TUNED_ASSIGN_OR_RETURN(v1::MeasureJob job, ReferenceJob(data.workload));
    BuildOutcome built = BuildContained(*reference_builder_, data.workload, job,
                                        options_.reference_timeout_seconds);
    if (!built.kernel.ok()) {
      return built.kernel.status().WithContext("compiling the reference of " + key);
    }
    RunRequest request;
    request.entry = built.kernel->entry;
    request.prepack = built.kernel->prepack;
    request.packed_bytes = built.kernel->packed_bytes;
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
      return InternalError("reference of " + key + " (default schedule) failed: " + outcome->error);
    }
    return std::move(outcome->output);
  }

  // Compiles in the build process of a free slot and links the object into that slot's JIT;
  // an object already built for the same key (a re-measure) is linked again without a build.
  // No build runs beside a timed kernel: the build process is stopped while one is timed (the
  // gate's pausable work; the stopped time counts towards neither its timeout nor its build
  // seconds), and the link, in this process, enters the gate shared. A crash or a hang ends the
  // child only: the slot is reusable at once.
  BuildOutcome BuildContained(Builder& builder, const std::shared_ptr<const ir::Workload>& workload,
                              const v1::MeasureJob& job, double timeout_seconds) {
    BuildOutcome outcome;
    std::unique_ptr<BuildSlot> slot = TakeSlot();
    const std::optional<std::string> cache_key =
        options_.object_cache_bytes > 0 ? builder.CacheKey(job, cpu_target_) : std::nullopt;
    if (std::optional<CompiledCandidate> cached =
            cache_key ? objects_.Find(*cache_key) : std::nullopt) {
      Link(*slot, *cached, outcome);
      {
        std::lock_guard lock(mu_);
        ++stats_.builds_reused;
      }
    } else {
      SandboxLimits limits;
      limits.timeout_seconds = timeout_seconds;
      limits.memory_limit_bytes = options_.memory_limit_bytes;
      StatusOr<ContainedBuildOutcome> child = InternalError("not built");
      {
        ExclusiveGate::PausableHold stopped_while_timing(gate_, slot->pause);
        const int64_t pauses_before = slot->pause.pauses();
        child = slot->process.Run([&] { return builder.Compile(workload, job, cpu_target_); },
                                  limits, &slot->pause);
        if (slot->pause.pauses() > pauses_before) {
          std::lock_guard lock(mu_);
          ++stats_.builds_overlapping_runs;
        }
      }
      if (!child.ok()) {
        outcome.kernel = child.status();
      } else {
        outcome.seconds = child->seconds;
        switch (child->kind) {
          case ContainedBuildOutcome::Kind::kCompiled:
            Link(*slot, child->compiled, outcome);
            if (cache_key && outcome.kernel.ok()) objects_.Put(*cache_key, child->compiled);
            break;
          case ContainedBuildOutcome::Kind::kFailed:
          case ContainedBuildOutcome::Kind::kCrashed:
            outcome.kernel = InternalError(child->error);
            break;
          case ContainedBuildOutcome::Kind::kTimedOut:
            outcome.status = v1::MEASURE_STATUS_BUILD_TIMEOUT;
            outcome.kernel = DeadlineExceededError(
                "build still running after the build timeout of " +
                std::to_string(static_cast<int64_t>(timeout_seconds * 1000 + 0.5)) +
                " ms; killed");
            break;
        }
      }
    }
    ReturnSlot(std::move(slot));
    return outcome;
  }

  // Links `compiled` into the slot's JIT (in this process: inside the gate, and never across a
  // fork) and adds the link's time to the outcome's.
  void Link(BuildSlot& slot, const CompiledCandidate& compiled, BuildOutcome& outcome) {
    ExclusiveGate::Shared share(gate_);
    const Clock::time_point link_start = Clock::now();
    std::shared_lock<std::shared_mutex> no_fork(ForkLock());
    outcome.kernel = LinkCandidate(*slot.jit, compiled);
    outcome.seconds += SecondsSince(link_start);
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

    {
      std::lock_guard lock(mu_);
      ++stats_.builds_in_flight;
    }
    BuildOutcome built =
        BuildContained(*builder_, (*data)->workload, job, config->build_timeout_ms() / 1000.0);
    {
      std::lock_guard lock(mu_);
      --stats_.builds_in_flight;
      last_build_end_ = Clock::now();
    }
    const double build_seconds = built.seconds;
    if (!built.kernel.ok()) {
      v1::MeasureResult result = NewResult(job);
      result.set_build_seconds(build_seconds);
      result.set_status(built.status);
      result.set_error(built.kernel.status().message());
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
                                    std::move(data).value(), std::move(built.kernel).value(),
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

  // What a built job's child allocates of its own: its output and its packed buffers.
  static uint64_t OwnBytes(const Built& built) {
    uint64_t bytes = BufferBytes(built.data->workload->output_stage().output);
    for (uint64_t packed : built.kernel.packed_bytes) bytes += packed;
    return bytes;
  }

  RunRequest TimingRequest(const Built& built) const {
    const WorkloadData& data = *built.data;
    RunRequest request;
    request.entry = built.kernel.entry;
    request.prepack = built.kernel.prepack;
    request.packed_bytes = built.kernel.packed_bytes;
    request.inputs = data.InputPointers();
    for (const runtime::AlignedBuffer& input : data.inputs) request.input_bytes += input.size();
    request.output = data.workload->output_stage().output;
    request.config = built.config;
    request.time_kernel = true;
    request.timeout_seconds = built.config.run_timeout_ms() / 1000.0;
    return request;
  }

  // Times a group of built jobs together (interleaved when there are several) and delivers
  // their results.
  void TimeGroup(std::vector<Built>& group) {
    std::vector<RunRequest> requests;
    for (const Built& built : group) requests.push_back(TimingRequest(built));
    std::vector<StatusOr<RunOutcome>> outcomes;
    {
      ExclusiveGate::Exclusive exclusive(gate_);
      outcomes = runner_.RunInterleaved(requests);
    }
    if (group.size() > 1) {
      std::lock_guard lock(mu_);
      stats_.jobs_timed_interleaved += int64_t(group.size());
    }
    for (size_t i = 0; i < group.size(); ++i) {
      group[i].kernel = BuiltKernel();  // frees the machine code
      Deliver(group[i], outcomes[i]);
    }
  }

  // Turns a timed job's outcome into its result (verified against the reference) and finishes it.
  void Deliver(Built& built, StatusOr<RunOutcome>& outcome) {
    const WorkloadData& data = *built.data;
    if (!outcome.ok()) return Finish(built.done, outcome.status());

    v1::MeasureResult result = NewResult(built.job);
    result.set_build_seconds(built.build_seconds);
    result.set_run_seconds(outcome->child_seconds);
    result.set_status(outcome->status);
    result.set_error(outcome->error);
    if (outcome->status == v1::MEASURE_STATUS_OK) {
      if (built.config.verify()) {
        const WorkloadData::Verdict verdict = data.Verify(outcome->output);
        result.set_max_error(verdict.max_error);
        if (!verdict.failure.empty()) {
          result.set_status(v1::MEASURE_STATUS_WRONG_RESULT);
          result.set_error(verdict.failure);
        }
      }
      if (result.status() == v1::MEASURE_STATUS_OK) {
        for (double seconds : outcome->timing.repeat_seconds) result.add_repeat_seconds(seconds);
        result.set_median_seconds(Median(outcome->timing.repeat_seconds));
        result.set_repeat_cv(CoefficientOfVariation(outcome->timing.repeat_seconds));
        result.set_number(outcome->timing.number);
        result.set_cold(outcome->cold);
      }
    }
    {
      std::lock_guard lock(mu_);
      ++stats_.results;
      stats_.build_seconds += built.build_seconds;
      stats_.kernel_seconds += outcome->timing.kernel_seconds;
      stats_.child_seconds += outcome->child_seconds;
      if (outcome->status != v1::MEASURE_STATUS_OK) ++stats_.runner_restarts;
    }
    if (result.status() != v1::MEASURE_STATUS_OK) {
      Logger("worker")->debug("job {}: {}: {}", built.job.job_id(),
                              v1::MeasureStatus_Name(result.status()), result.error());
    }
    Finish(built.done, std::move(result));
  }

  // Takes the built jobs as a group of up to `interleave`. Once one is built, it waits for the
  // builds of the others it holds (they run while nothing is timed) while every build slot is
  // busy, and then while builds keep ending: a build that takes kGroupWait longer than the
  // last does not hold the group back (nor leave the cores it does not use idle).
  void TimeLoop() {
    t_engine_thread = true;
    const size_t group_size = size_t(std::max(options_.interleave, 1));
    while (true) {
      std::vector<Built> group;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !timing_queue_.empty() || (stopping_ && build_queue_.empty() &&
                                                                 builders_done()); });
        if (timing_queue_.empty()) return;
        while (timing_queue_.size() < group_size && !builders_done()) {
          if (!build_queue_.empty()) {
            cv_.wait(lock);
            continue;
          }
          const Clock::time_point until = last_build_end_ + kGroupWait;
          if (Clock::now() >= until) break;
          cv_.wait_until(lock, until);
        }
        uint64_t group_bytes = 0;
        while (!timing_queue_.empty() && group.size() < group_size) {
          const uint64_t bytes = OwnBytes(timing_queue_.front());
          if (!group.empty() && group_bytes + bytes > options_.interleave_bytes) break;
          group_bytes += bytes;
          group.push_back(std::move(timing_queue_.front()));
          timing_queue_.pop_front();
        }
      }
      TimeGroup(group);
    }
  }

  // Called with mu_ held: no builder can push to the timing queue any more.
  bool builders_done() const { return outstanding_ == static_cast<int>(timing_queue_.size()); }

  const EngineOptions options_;
  const target::Target cpu_target_;
  v1::Target target_;
  const BuilderFactory factory_;
  std::unique_ptr<Builder> builder_;                  // candidates (from the factory)
  const std::unique_ptr<Builder> reference_builder_;  // references (default schedules): the real builder
  const v1::DeviceInfo device_;
  ExclusiveGate gate_;
  Runner runner_;  // used only inside gate_ exclusively
  ReferenceCache references_;
  ObjectCache objects_;

  mutable std::mutex mu_;
  std::condition_variable cv_;          // queues, stop, running builds
  std::condition_variable drained_cv_;  // outstanding_ reached 0
  std::deque<Pending> build_queue_;
  std::deque<Built> timing_queue_;
  std::vector<std::unique_ptr<BuildSlot>> free_slots_;
  int outstanding_ = 0;     // submitted, `done` not yet called
  Clock::time_point last_build_end_;  // of the latest build to end, built or not
  bool stopping_ = false;
  EngineStats stats_;
  std::vector<std::thread> builders_;
  std::thread timer_;
};

}  // namespace

uint32_t DefaultSlots() {
  return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

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
  if (StatusOr<target::Target> gpu = target::ParseTarget(options.target);
      !options.target.empty() && gpu.ok() && gpu->kind != target::TargetKind::kLlvmCpu) {
    return gpu::CreateGpuMeasurementEngine(options, *gpu, []() -> StatusOr<std::unique_ptr<gpu::GpuBuilder>> {
      return gpu::MakeGpuBuilder();
    });
  }
  return CreateMeasurementEngine(options, []() -> StatusOr<std::unique_ptr<Builder>> {
    return MakeJitBuilder();
  });
}

}  // namespace tuned::worker
