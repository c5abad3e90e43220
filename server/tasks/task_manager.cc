#include "server/tasks/task_manager.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <utility>

#include "common/logging.h"
#include "common/time.h"
#include "compiler/ir/op_library.h"
#include "proto/measure_config.h"
#include "proto/task_state.h"
#include "server/tasks/task_runner.h"
#include "target/target_proto.h"

namespace tuned::tasks {
namespace {

constexpr size_t kMaxSpecChars = 4096;
constexpr uint32_t kMaxBatchSize = 4096;
constexpr uint32_t kMaxPopulation = 1000000;
constexpr uint32_t kMaxRepeat = 10000;
constexpr uint32_t kMaxTimeoutMs = 3600 * 1000;
constexpr double kMaxMinRepeatMs = 60000;

Status ValidateMeasure(const v1::MeasureConfig& m) {
  if (m.repeat() == 0 || m.repeat() > kMaxRepeat) {
    return InvalidArgumentError("measure.repeat " + std::to_string(m.repeat()) +
                                " is outside [1, " + std::to_string(kMaxRepeat) + "]");
  }
  if (m.warmup() > kMaxRepeat || m.number() > 1000000) {
    return InvalidArgumentError("measure.warmup or measure.number is too large");
  }
  if (!std::isfinite(m.min_repeat_ms()) || m.min_repeat_ms() < 0 ||
      m.min_repeat_ms() > kMaxMinRepeatMs) {
    return InvalidArgumentError("measure.min_repeat_ms must be within [0, 60000]");
  }
  if (m.build_timeout_ms() == 0 || m.run_timeout_ms() == 0 ||
      m.build_timeout_ms() > kMaxTimeoutMs || m.run_timeout_ms() > kMaxTimeoutMs) {
    return InvalidArgumentError(
        "measure.build_timeout_ms and measure.run_timeout_ms must be within [1, 3600000]");
  }
  return Status::Ok();
}

}  // namespace

TaskManager::TaskManager(db::TaskStore& tasks, db::RecordStore& records,
                         dispatch::Dispatcher& dispatcher,
                         TaskManagerOptions options)
    : tasks_(tasks), records_(records), dispatcher_(dispatcher), options_(std::move(options)) {}

TaskManager::~TaskManager() { Stop(); }

StatusOr<v1::TaskSpec> TaskManager::NormalizeSpec(v1::TaskSpec spec) const {
  const std::string& text = spec.workload_spec();
  if (text.empty()) return InvalidArgumentError("task spec: empty workload_spec");
  if (text.size() > kMaxSpecChars) {
    return InvalidArgumentError("task spec: workload_spec is longer than " +
                                std::to_string(kMaxSpecChars) + " characters");
  }
  auto workload = ir::ParseWorkloadSpec(text);
  if (!workload.ok()) {
    return InvalidArgumentError(workload.status().message());  // It names the spec.
  }
  if (spec.trial_budget() == 0 || spec.trial_budget() > options_.max_trial_budget) {
    return InvalidArgumentError("task spec: trial_budget " + std::to_string(spec.trial_budget()) +
                                " is outside [1, " + std::to_string(options_.max_trial_budget) +
                                "]");
  }

  std::string target = spec.target().target();
  if (target.empty()) {
    std::vector<std::string> connected = dispatcher_.ConnectedTargets();
    target = connected.size() == 1 ? connected.front() : options_.default_target;
    if (target.empty()) {
      return InvalidArgumentError("task spec: no target given and the server has no default");
    }
  }
  if (target.size() > kMaxSpecChars) return InvalidArgumentError("task spec: target too long");
  auto parsed_target = target::ParseTarget(target);  // refuses unknown kinds and options
  if (!parsed_target.ok()) return InvalidArgumentError("task spec: " + parsed_target.status().message());
  target = parsed_target->ToString();
  if (options_.canonicalize_target) {
    auto canonical = options_.canonicalize_target(target);
    if (!canonical.ok()) return InvalidArgumentError(canonical.status().message());
    target = *canonical;
  }
  spec.mutable_target()->set_target(target);
  spec.mutable_target()->set_kind(target::KindToProto(parsed_target->kind));

  v1::SearchOptions* search = spec.mutable_search();
  if (search->batch_size() == 0) search->set_batch_size(options_.default_batch_size);
  if (search->batch_size() > kMaxBatchSize) {
    return InvalidArgumentError("search.batch_size " + std::to_string(search->batch_size()) +
                                " is larger than " + std::to_string(kMaxBatchSize));
  }
  if (search->population() > kMaxPopulation) {
    return InvalidArgumentError("search.population is larger than " +
                                std::to_string(kMaxPopulation));
  }
  if (!std::isfinite(search->epsilon()) || search->epsilon() < 0 || search->epsilon() > 1) {
    return InvalidArgumentError("search.epsilon must be within [0, 1]");
  }
  // Field by field: a client that sets some fields keeps the defaults of the others (verify
  // included). A version of 0 is how "unset" was written before fields had presence.
  if (spec.measure().has_protocol_version() && spec.measure().protocol_version() == 0) {
    spec.mutable_measure()->clear_protocol_version();
  }
  *spec.mutable_measure() = v1::WithMeasureDefaults(spec.measure(), options_.default_measure);
  TUNED_RETURN_IF_ERROR(ValidateMeasure(spec.measure()));
  *spec.mutable_remeasure() = WithRemeasureDefaults(spec.remeasure(), options_.default_remeasure);
  TUNED_RETURN_IF_ERROR(ValidateRemeasure(spec.remeasure()));
  return spec;
}

void TaskManager::RemeasureDrifted(const std::string& worker_id,
                                   const std::vector<dispatch::CompletedJob>& batch) {
  std::map<std::string, std::vector<std::string>> by_task;
  for (const dispatch::CompletedJob& job : batch) by_task[job.task_id].push_back(job.job_id);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [task_id, job_ids] : by_task) {
    auto it = runners_.find(task_id);
    if (it == runners_.end()) continue;
    Logger("tasks")->warn("drift re-measure task={} worker={} jobs={}", task_id, worker_id,
                          job_ids.size());
    it->second->QueueRemeasure(job_ids);
  }
}

StatusOr<int> TaskManager::ResumeUnfinished() {
  if (options_.ownership != nullptr) {
    TUNED_ASSIGN_OR_RETURN(int resumed, TakeUnownedTasks("resumed"));
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopped_ && !ownership_thread_.joinable()) {
      ownership_thread_ = std::thread([this] { WatchOwnership(); });
    }
    return resumed;
  }
  int resumed = 0;
  for (v1::TaskState state : {v1::TASK_STATE_PENDING, v1::TASK_STATE_RUNNING}) {
    TUNED_ASSIGN_OR_RETURN(std::vector<v1::TaskStatus> tasks, tasks_.ListTasks(state));
    for (const v1::TaskStatus& status : tasks) {
      Logger("tasks")->info("task resumed task={} trials={}/{}", status.task_id(),
                            status.trials_done(), status.spec().trial_budget());
      StartRunner(status);
      ++resumed;
    }
  }
  return resumed;
}

StatusOr<int> TaskManager::TakeUnownedTasks(const char* verb) {
  int taken = 0;
  for (v1::TaskState state : {v1::TASK_STATE_PENDING, v1::TASK_STATE_RUNNING}) {
    TUNED_ASSIGN_OR_RETURN(std::vector<v1::TaskStatus> tasks, tasks_.ListTasks(state));
    for (const v1::TaskStatus& listed : tasks) {
      const std::string& task_id = listed.task_id();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopped_) return taken;
        if (auto it = runners_.find(task_id); it != runners_.end() && !it->second->finished()) {
          continue;  // Runs here.
        }
      }
      TUNED_ASSIGN_OR_RETURN(bool owned, options_.ownership->TryOwn(task_id));
      if (!owned) continue;  // Another live server runs it.
      // Read again now that it is ours: it may have finished since it was listed (an owner
      // saves the final state before it lets go).
      StatusOr<v1::TaskStatus> status = tasks_.LoadTask(task_id);
      if (!status.ok() || v1::IsFinal(status->state())) {
        Disown(task_id);
        if (!status.ok()) return status.status();
        continue;
      }
      Logger("tasks")->info("task {} task={} trials={}/{}", verb, task_id, status->trials_done(),
                            status->spec().trial_budget());
      if (!StartRunner(*status)) {
        Disown(task_id);
        return taken;
      }
      ++taken;
    }
  }
  return taken;
}

void TaskManager::AbandonLostTasks() {
  StatusOr<std::vector<std::string>> lost = options_.ownership->CheckOwned();
  if (!lost.ok()) {
    Logger("tasks")->warn("checking task ownership failed: {}", lost.status().message());
    return;
  }
  for (const std::string& task_id : *lost) {
    std::shared_ptr<Runner> runner;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = runners_.find(task_id);
      if (it == runners_.end()) continue;
      runner = it->second;
      runners_.erase(it);
    }
    if (runner->finished()) continue;
    Logger("tasks")->warn("task given up task={} reason='ownership lost'", task_id);
    runner->Abandon();
    runner.reset();  // Joins its thread before anyone may take the task again.
  }
}

void TaskManager::WatchOwnership() {
  const auto period = std::chrono::milliseconds(std::max(1, options_.ownership_check_ms));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_.wait_for(lock, period, [this] { return stopped_; })) {
    lock.unlock();
    AbandonLostTasks();
    StatusOr<int> taken = TakeUnownedTasks("taken over");
    if (!taken.ok()) {
      Logger("tasks")->warn("looking for tasks without an owner failed: {}",
                            taken.status().message());
    }
    lock.lock();
  }
}

void TaskManager::Disown(const std::string& task_id) {
  if (options_.ownership == nullptr) return;
  Status released = options_.ownership->Release(task_id);
  if (!released.ok()) {
    Logger("tasks")->warn("task {}: giving up its ownership failed: {}", task_id,
                          released.message());
  }
}

StatusOr<v1::TaskStatus> TaskManager::Submit(v1::TaskSpec spec) {
  TUNED_ASSIGN_OR_RETURN(v1::TaskSpec normalized, NormalizeSpec(std::move(spec)));
  v1::TaskStatus status;
  status.set_task_id(RandomHexId(16));
  *status.mutable_spec() = std::move(normalized);
  status.set_state(v1::TASK_STATE_PENDING);
  status.set_updated_unix_ms(UnixMs());
  // Owned before it is stored, so no other server sharing the database takes it first.
  if (options_.ownership != nullptr) {
    TUNED_ASSIGN_OR_RETURN(bool owned, options_.ownership->TryOwn(status.task_id()));
    if (!owned) return InternalError("a new task id is owned by another server");
  }
  Status saved = tasks_.SaveTask(status);
  if (!saved.ok()) {
    Disown(status.task_id());
    return saved;
  }
  Logger("tasks")->info("task submitted task={} workload='{}' target='{}' budget={}",
                        status.task_id(), status.spec().workload_spec(),
                        status.spec().target().target(), status.spec().trial_budget());
  if (!StartRunner(status)) Disown(status.task_id());
  return status;
}

bool TaskManager::StartRunner(const v1::TaskStatus& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return false;
  // Finished tasks are served from the database; join their threads.
  std::erase_if(runners_, [](const auto& entry) { return entry.second->finished(); });
  auto runner = std::make_shared<Runner>(*this, status);
  runners_[status.task_id()] = runner;
  runner->Start();
  return true;
}

StatusOr<v1::TaskStatus> TaskManager::Get(const std::string& task_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = runners_.find(task_id); it != runners_.end()) return it->second->Snapshot();
  }
  auto loaded = tasks_.LoadTask(task_id);
  if (!loaded.ok() && loaded.status().code() == StatusCode::kNotFound) {
    return NotFoundError("no task '" + task_id + "'");
  }
  return loaded;
}

StatusOr<std::vector<v1::TaskStatus>> TaskManager::List(std::optional<v1::TaskState> state) {
  TUNED_ASSIGN_OR_RETURN(std::vector<v1::TaskStatus> tasks, tasks_.ListTasks(state));
  // Running tasks: the in-memory status is the newest.
  std::lock_guard<std::mutex> lock(mu_);
  for (v1::TaskStatus& task : tasks) {
    if (auto it = runners_.find(task.task_id()); it != runners_.end()) {
      task = it->second->Snapshot();
    }
  }
  return tasks;
}

StatusOr<v1::TaskStatus> TaskManager::Cancel(const std::string& task_id) {
  std::shared_ptr<Runner> runner;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = runners_.find(task_id); it != runners_.end()) runner = it->second;
  }
  // Outside mu_: cancelling publishes to watchers, and AddWatcher locks watchers_mu_ then mu_.
  if (runner) return runner->Cancel();
  TUNED_ASSIGN_OR_RETURN(v1::TaskStatus status, Get(task_id));
  if (v1::IsFinal(status.state())) {
    return FailedPreconditionError("task '" + task_id + "' has already finished (" +
                                   v1::TaskState_Name(status.state()) + ")");
  }
  // Another server running the task would overwrite the cancel with its progress.
  if (options_.ownership != nullptr) {
    TUNED_ASSIGN_OR_RETURN(bool owned, options_.ownership->TryOwn(task_id));
    if (!owned) {
      return FailedPreconditionError("task '" + task_id +
                                     "' runs on another server sharing the database; cancel "
                                     "it there");
    }
  }
  status.set_state(v1::TASK_STATE_CANCELLED);
  status.set_updated_unix_ms(UnixMs());
  Status saved = tasks_.SaveTask(status);
  Disown(task_id);
  TUNED_RETURN_IF_ERROR(saved);
  Publish(status);
  return status;
}

StatusOr<uint64_t> TaskManager::AddWatcher(const std::string& task_id, TaskWatcher watcher) {
  std::lock_guard<std::mutex> lock(watchers_mu_);
  TUNED_ASSIGN_OR_RETURN(v1::TaskStatus status, Get(task_id));
  watcher(status);
  uint64_t id = next_watcher_id_++;
  watchers_.emplace(task_id, std::make_pair(id, std::move(watcher)));
  return id;
}

void TaskManager::RemoveWatcher(uint64_t watcher_id) {
  std::lock_guard<std::mutex> lock(watchers_mu_);
  for (auto it = watchers_.begin(); it != watchers_.end(); ++it) {
    if (it->second.first == watcher_id) {
      watchers_.erase(it);
      return;
    }
  }
}

void TaskManager::Publish(const v1::TaskStatus& status) {
  std::lock_guard<std::mutex> lock(watchers_mu_);
  auto [begin, end] = watchers_.equal_range(status.task_id());
  for (auto it = begin; it != end; ++it) it->second.second(status);
}

void TaskManager::Stop() {
  std::map<std::string, std::shared_ptr<Runner>> runners;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    stopping_.notify_all();
  }
  if (ownership_thread_.joinable()) ownership_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    runners.swap(runners_);
  }
  for (auto& [id, runner] : runners) runner->RequestStop();
  runners.clear();  // Joins the threads.
}

}  // namespace tuned::tasks
