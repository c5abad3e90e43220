#include "server/tasks/task_runner.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "common/logging.h"
#include "common/time.h"
#include "common/version.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "proto/measure_config.h"
#include "target/target.h"
#include "tuning_db/trace_hash.h"

namespace tuned::tasks {
namespace {

std::shared_ptr<spdlog::logger> Log() { return Logger("tasks"); }

v1::Workload WorkloadToProto(const ir::Workload& workload) {
  v1::Workload proto;
  proto.set_key(workload.key());
  proto.set_key_sha256(workload.key_sha256());
  proto.set_op(workload.op());
  for (const auto& [name, value] : workload.params()) {
    v1::WorkloadParam* param = proto.add_params();
    param->set_name(name);
    param->set_value(value);
  }
  proto.set_definition(workload.Definition());
  proto.set_flops(workload.flops());
  return proto;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A new search record improves the best unless it is noisy (it ranks after its re-measure) or
// the best is a FINAL record (only FINAL records rank against it).
bool IsBetter(const v1::TuningRecord& candidate, const v1::TaskStatus& status) {
  if (candidate.result().status() != v1::MEASURE_STATUS_OK) return false;
  if (db::IsNoisy(candidate.result(), status.spec().remeasure())) return false;
  if (status.best().kind() == v1::RECORD_KIND_FINAL) return false;
  return status.best().record_id() == 0 ||
         candidate.result().median_seconds() < status.best().result().median_seconds();
}

int64_t SearchTrials(const std::vector<v1::TuningRecord>& records) {
  return std::count_if(records.begin(), records.end(), [](const v1::TuningRecord& record) {
    return record.kind() == v1::RECORD_KIND_SEARCH;
  });
}

// The default schedule (the strategy's first candidate, what `tuned compile` builds without a
// record) is the program tuning's speed-up is measured against.
void NoteDefaultSchedule(const v1::TuningRecord& record, const std::string& default_hash,
                         v1::TaskStatus& status) {
  if (record.trace_hash() == default_hash && record.result().status() == v1::MEASURE_STATUS_OK) {
    status.set_default_median_seconds(record.result().median_seconds());
  }
}

// The trace hash of the workload's default schedule, which every strategy proposes first.
StatusOr<std::string> DefaultScheduleHash(std::shared_ptr<const ir::Workload> workload) {
  TUNED_ASSIGN_OR_RETURN(schedule::Trace trace, lower::DefaultScheduleTrace(std::move(workload)));
  v1::Trace proto;
  schedule::TraceToProto(trace, &proto);
  return db::TraceHash(proto);
}

// The search's share of a measuring engine's gate (TaskManagerOptions::search_gate) for its
// scope: while it is held, no kernel is timed on the cores the search computes on. The scope's
// time, from the gate on, is the search's (TaskTime.search_seconds).
class SearchShare {
 public:
  SearchShare(ExclusiveGate* gate, double& seconds) : gate_(gate), seconds_(seconds) {
    if (gate_ != nullptr) gate_->EnterShared();
    start_ = std::chrono::steady_clock::now();
  }
  ~SearchShare() {
    seconds_ += SecondsSince(start_);
    if (gate_ != nullptr) gate_->LeaveShared();
  }
  SearchShare(const SearchShare&) = delete;
  SearchShare& operator=(const SearchShare&) = delete;

 private:
  ExclusiveGate* gate_;
  double& seconds_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::string RandomHexId(int digits) {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}() ^
                             uint64_t(std::chrono::steady_clock::now().time_since_epoch().count())};
  static constexpr char kHex[] = "0123456789abcdef";
  std::lock_guard<std::mutex> lock(mu);
  std::string out;
  while (int(out.size()) < digits) {
    uint64_t bits = rng();
    for (int i = 0; i < 16 && int(out.size()) < digits; ++i, bits >>= 4) out += kHex[bits & 15];
  }
  return out;
}

TaskManager::Runner::Runner(TaskManager& manager, v1::TaskStatus status)
    : manager_(manager), status_(std::move(status)) {}

TaskManager::Runner::~Runner() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
}

void TaskManager::Runner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void TaskManager::Runner::RequestStop() {
  std::lock_guard<std::mutex> lock(inbox_->mu);
  inbox_->stop = true;
  inbox_->cv.notify_all();
}

void TaskManager::Runner::Abandon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
  }
  RequestStop();
}

bool TaskManager::Runner::Stopping() {
  std::lock_guard<std::mutex> lock(inbox_->mu);
  return inbox_->stop;
}

StatusOr<v1::TaskStatus> TaskManager::Runner::Cancel() {
  std::unique_lock<std::mutex> lock(mu_);
  if (final_ || cancelled_) {
    return FailedPreconditionError("task '" + status_.task_id() + "' has already finished (" +
                                   v1::TaskState_Name(status_.state()) + ")");
  }
  cancelled_ = true;
  status_.set_state(v1::TASK_STATE_CANCELLED);
  status_.set_updated_unix_ms(UnixMs());
  Status saved = SaveAndPublish(lock);
  v1::TaskStatus snapshot = status_;
  lock.unlock();
  RequestStop();
  manager_.dispatcher_.CancelTask(snapshot.task_id());
  Log()->info("task cancelled task={} trials={}", snapshot.task_id(), snapshot.trials_done());
  if (!saved.ok()) return saved;
  return snapshot;
}

bool TaskManager::Runner::finished() {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

v1::TaskStatus TaskManager::Runner::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

Status TaskManager::Runner::SaveAndPublish(std::unique_lock<std::mutex>& lock) {
  Status saved = manager_.tasks_.SaveTask(status_);
  v1::TaskStatus copy = status_;
  lock.unlock();
  manager_.Publish(copy);
  lock.lock();
  return saved;
}

void TaskManager::Runner::Run() {
  const std::string task_id = Snapshot().task_id();
  Status result = RunSearch();
  // Whatever ends the loop, none of this task's jobs may call back into it any more.
  manager_.dispatcher_.CancelTask(task_id);
  std::unique_lock<std::mutex> lock(mu_);
  if (abandoned_) {
    finished_ = true;
    return;
  }
  if (cancelled_) {
    finished_ = true;
    lock.unlock();
    manager_.Disown(task_id);
    return;
  }
  if (Stopping() && result.ok() && !completed_) {
    // Server shutdown: the stored state stays RUNNING, so a restart (or another server sharing
    // the database) resumes the task.
    Log()->info("task paused task={} trials={}/{}", task_id, status_.trials_done(),
                status_.spec().trial_budget());
    lock.unlock();
    manager_.Disown(task_id);
    return;
  }
  final_ = true;
  NoteTime();
  status_.set_updated_unix_ms(UnixMs());
  if (result.ok()) {
    status_.set_state(v1::TASK_STATE_SUCCEEDED);
    Log()->info("task finished task={} state=SUCCEEDED trials={} best_median_s={}", task_id,
                status_.trials_done(), status_.best().result().median_seconds());
  } else {
    status_.set_state(v1::TASK_STATE_FAILED);
    status_.set_error(result.message());
    Log()->error("task finished task={} state=FAILED error='{}'", task_id, result.message());
  }
  Status saved = SaveAndPublish(lock);
  if (!saved.ok()) {
    Log()->error("task {}: saving the final state failed: {}", task_id, saved.message());
  }
  finished_ = true;  // Only now may the manager drop this runner and read the database.
  lock.unlock();
  manager_.Disown(task_id);  // After the final state is saved: a new owner reads it.
}

namespace {

// The device model every connected worker of `target` has; "" when none is connected or they
// differ (then a trace measured on any device counts as measured).
std::string ConnectedDeviceModel(const dispatch::Dispatcher& dispatcher, const std::string& target) {
  std::set<std::string> models;
  for (const dispatch::WorkerSnapshot& worker : dispatcher.ListWorkers()) {
    if (worker.hello.target().target() == target) models.insert(worker.hello.device().model());
  }
  return models.size() == 1 ? *models.begin() : "";
}

}  // namespace

Status TaskManager::Runner::RunSearch() {
  const v1::TaskSpec spec = Snapshot().spec();
  const std::string task_id = Snapshot().task_id();
  db::RecordStore& records = manager_.records_;

  TUNED_ASSIGN_OR_RETURN(ir::Workload parsed, ir::ParseWorkloadSpec(spec.workload_spec()));
  auto workload = std::make_shared<const ir::Workload>(std::move(parsed));
  workload_proto_ = WorkloadToProto(*workload);
  TUNED_ASSIGN_OR_RETURN(default_schedule_hash_, DefaultScheduleHash(workload));
  TUNED_RETURN_IF_ERROR(records.PutWorkload(workload_proto_));

  search::SearchContext context;
  context.workload = workload;
  TUNED_ASSIGN_OR_RETURN(target::Target parsed_target, target::ParseTarget(spec.target().target()));
  context.target = spec.target().target();  // the key of the task's records, as submitted
  context.num_cores = parsed_target.num_cores;
  context.vector_lanes = parsed_target.Fp32VectorLanes();
  context.vector_registers = parsed_target.VectorRegisters();
  context.seed = spec.search().seed();
  context.database = &records;
  context.protocol_version = v1::ProtocolVersion(spec.measure());
  context.device_model = ConnectedDeviceModel(manager_.dispatcher_, context.target);
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<search::SearchStrategy> strategy,
                         manager_.options_.strategy_factory(context, spec.search()));

  // Resume: what this task already stored counts against its budget and teaches the strategy.
  TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> previous, records.TaskRecords(task_id));
  std::vector<search::MeasuredCandidate> replay;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (cancelled_ || abandoned_) return Status::Ok();
    status_.set_trials_done(uint32_t(SearchTrials(previous)));
    status_.clear_best();
    std::vector<const v1::TuningRecord*> ranked = db::RankTraces(previous, status_.spec().remeasure());
    if (!ranked.empty()) *status_.mutable_best() = *ranked.front();
    for (const v1::TuningRecord& record : previous) {
      if (record.kind() != v1::RECORD_KIND_SEARCH) continue;
      replay.push_back({record.trace(), record.result()});
      NoteDefaultSchedule(record, default_schedule_hash_, status_);
    }
    status_.set_state(v1::TASK_STATE_RUNNING);
    status_.clear_time();  // this run's time: a resumed task's earlier runs are not in its wall time
    status_.set_updated_unix_ms(UnixMs());
    TUNED_RETURN_IF_ERROR(SaveAndPublish(lock));
  }
  Log()->info("task started task={} workload='{}' target='{}' budget={} resumed_trials={}", task_id,
              workload_proto_.key(), context.target, spec.trial_budget(), previous.size());
  if (!replay.empty()) {
    SearchShare share(manager_.options_.search_gate, search_seconds_);
    TUNED_RETURN_IF_ERROR(strategy->Update(replay));
  }

  const int batch_size = int(spec.search().batch_size());
  while (!Stopping()) {
    const int remaining = int(spec.trial_budget()) - int(Snapshot().trials_done());
    if (remaining <= 0) break;
    const auto search_start = std::chrono::steady_clock::now();
    StatusOr<std::vector<search::Candidate>> proposed = InternalError("not proposed");
    {
      SearchShare share(manager_.options_.search_gate, search_seconds_);
      proposed = strategy->NextBatch(std::min(batch_size, remaining));
    }
    TUNED_ASSIGN_OR_RETURN(std::vector<search::Candidate> candidates, std::move(proposed));
    if (TaskObserver* observer = manager_.options_.observer) {
      observer->OnBatchProposed(spec, int(candidates.size()), SecondsSince(search_start));
    }
    if (candidates.empty()) {
      Log()->info("task {}: design space exhausted after {} trials", task_id,
                  Snapshot().trials_done());
      break;
    }
    // The strategy never offers a measured trace (search_strategy.h): nothing to check here.
    if (int(candidates.size()) > remaining) candidates.resize(size_t(remaining));
    for (search::Candidate& candidate : candidates) {
      if (candidate.trace_hash.empty()) candidate.trace_hash = db::TraceHash(candidate.trace);
    }
    TUNED_RETURN_IF_ERROR(MeasureBatch(candidates, *strategy));
  }
  AwaitCalibrations();
  TUNED_RETURN_IF_ERROR(RemeasureQueued());
  if (Stopping()) return Status::Ok();
  TUNED_RETURN_IF_ERROR(RemeasureTopK());
  std::lock_guard<std::mutex> lock(mu_);
  completed_ = !Stopping();
  return Status::Ok();
}

v1::MeasureJob TaskManager::Runner::MakeJob(const v1::Trace& trace,
                                            const v1::MeasureConfig& config,
                                            const std::string& worker_id) {
  const v1::TaskSpec spec = Snapshot().spec();
  v1::MeasureJob job;
  job.set_job_id(RandomHexId(32));
  job.set_task_id(Snapshot().task_id());
  *job.mutable_workload() = workload_proto_;
  *job.mutable_target() = spec.target();
  *job.mutable_trace() = trace;
  *job.mutable_config() = config;
  job.set_worker_id(worker_id);
  return job;
}

Status TaskManager::Runner::RunJobs(std::vector<v1::MeasureJob> jobs, const OnResult& on_result) {
  const std::string target = Snapshot().spec().target().target();
  std::map<std::string, v1::MeasureJob> pending;
  for (v1::MeasureJob& job : jobs) {
    const std::string job_id = job.job_id();
    pending[job_id] = job;
    std::shared_ptr<Inbox> inbox = inbox_;
    Status submitted =
        manager_.dispatcher_.Submit(std::move(job), [inbox](const v1::MeasureResult& r) {
          std::lock_guard<std::mutex> lock(inbox->mu);
          inbox->results.push_back(r);
          inbox->cv.notify_all();
        });
    TUNED_RETURN_IF_ERROR(submitted);
  }
  while (!pending.empty()) {
    std::vector<v1::MeasureResult> arrived;
    {
      std::unique_lock<std::mutex> lock(inbox_->mu);
      const bool woken = inbox_->cv.wait_for(lock, std::chrono::seconds(1), [&] {
        return inbox_->stop || !inbox_->results.empty();
      });
      if (inbox_->stop) return Status::Ok();
      arrived.swap(inbox_->results);
      if (!woken) {
        lock.unlock();
        TUNED_RETURN_IF_ERROR(ShowWaiting(target));
        continue;
      }
    }
    for (const v1::MeasureResult& result : arrived) {
      auto it = pending.find(result.job_id());
      if (it == pending.end()) continue;  // A job of an earlier, abandoned batch.
      // The dispatcher's queue timeout: nothing measured it, so nothing is stored.
      if (result.status() == v1::MEASURE_STATUS_UNSPECIFIED) {
        return FailedPreconditionError(result.error());
      }
      TUNED_RETURN_IF_ERROR(on_result(it->second, result));
      pending.erase(it);
    }
  }
  return Status::Ok();
}

Status TaskManager::Runner::MeasureBatch(const std::vector<search::Candidate>& candidates,
                                         search::SearchStrategy& strategy) {
  TUNED_RETURN_IF_ERROR(RemeasureQueued());
  const v1::TaskSpec spec = Snapshot().spec();
  std::vector<v1::MeasureJob> jobs;
  std::map<std::string, Measured> by_job;
  for (const search::Candidate& candidate : candidates) {
    jobs.push_back(MakeJob(candidate.trace, spec.measure(), ""));
    by_job[jobs.back().job_id()] = {candidate.trace, candidate.trace_hash};
  }
  std::vector<search::MeasuredCandidate> measured;
  std::vector<Measured> noisy;
  TUNED_RETURN_IF_ERROR(RunJobs(std::move(jobs), [&](const v1::MeasureJob& job,
                                                     const v1::MeasureResult& result) {
    const Measured& candidate = by_job.at(job.job_id());
    TUNED_RETURN_IF_ERROR(RecordResult(candidate, result, spec.measure(), v1::RECORD_KIND_SEARCH));
    // Only a timed result can be re-measured after a drift: a failed build or run has no
    // figure the drift could have distorted, and building it again cost a 7x7 stem's task a
    // build timeout (10 s) each time, a seventh of its wall time.
    if (result.status() == v1::MEASURE_STATUS_OK) {
      std::lock_guard<std::mutex> lock(mu_);
      search_jobs_[job.job_id()] = candidate;
    }
    measured.push_back({candidate.trace, result});
    if (db::IsNoisy(result, spec.remeasure())) noisy.push_back(candidate);
    return Status::Ok();
  }));
  if (measured.size() < candidates.size()) return Status::Ok();  // stopping
  // Noise: a figure above the CV threshold ranks only after a re-measure with more repeats;
  // the strategy learns from the re-measured figure.
  if (!noisy.empty()) {
    TUNED_ASSIGN_OR_RETURN(auto remeasured, Remeasure(noisy));
    for (search::MeasuredCandidate& entry : measured) {
      auto it = remeasured.find(db::TraceHash(entry.trace));
      if (it != remeasured.end() && it->second.status() == v1::MEASURE_STATUS_OK) {
        entry.result = it->second;
      }
    }
  }
  SearchShare share(manager_.options_.search_gate, search_seconds_);
  return strategy.Update(measured);
}

StatusOr<std::map<std::string, v1::MeasureResult>> TaskManager::Runner::Remeasure(
    const std::vector<Measured>& traces) {
  const v1::TaskSpec spec = Snapshot().spec();
  v1::MeasureConfig config = spec.measure();
  config.set_repeat(config.repeat() * spec.remeasure().noise_repeat_factor());
  std::vector<v1::MeasureJob> jobs;
  std::map<std::string, const Measured*> by_job;
  for (const Measured& trace : traces) {
    jobs.push_back(MakeJob(trace.trace, config, ""));
    by_job[jobs.back().job_id()] = &trace;
  }
  std::map<std::string, v1::MeasureResult> results;
  TUNED_RETURN_IF_ERROR(RunJobs(std::move(jobs), [&](const v1::MeasureJob& job,
                                                     const v1::MeasureResult& result) {
    const Measured& trace = *by_job.at(job.job_id());
    TUNED_RETURN_IF_ERROR(RecordResult(trace, result, config, v1::RECORD_KIND_REMEASURE));
    results[trace.trace_hash] = result;
    return Status::Ok();
  }));
  Log()->info("re-measured task={} traces={} repeats={}", Snapshot().task_id(), traces.size(),
              config.repeat());
  TUNED_RETURN_IF_ERROR(RerankFromRecords());
  return results;
}

void TaskManager::Runner::QueueRemeasure(const std::vector<std::string>& job_ids) {
  std::lock_guard<std::mutex> lock(mu_);
  drifted_jobs_.insert(drifted_jobs_.end(), job_ids.begin(), job_ids.end());
}

Status TaskManager::Runner::RemeasureQueued() {
  std::vector<Measured> traces;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::string> seen;
    for (const std::string& job_id : drifted_jobs_) {
      auto it = search_jobs_.find(job_id);
      if (it != search_jobs_.end() && seen.insert(it->second.trace_hash).second) {
        traces.push_back(it->second);
      }
    }
    drifted_jobs_.clear();
  }
  if (traces.empty()) return Status::Ok();
  return Remeasure(traces).status();
}

void TaskManager::Runner::AwaitCalibrations() {
  // A worker calibrates once it has been idle 100 ms after a job (worker_client.cc), which
  // takes a fraction of a second more; one busy with other tasks' jobs may take longer, and
  // then its drift is not waited for.
  constexpr auto kCalibrationWait = std::chrono::seconds(10);
  const std::string task_id = Snapshot().task_id();
  const auto deadline = std::chrono::steady_clock::now() + kCalibrationWait;
  while (!Stopping() && manager_.dispatcher_.AwaitsCalibration(task_id)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      Log()->info("task {}: final re-measure without waiting longer for calibrations", task_id);
      return;
    }
    std::unique_lock<std::mutex> lock(inbox_->mu);
    inbox_->cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return inbox_->stop; });
  }
}

Status TaskManager::Runner::RemeasureTopK() {
  const v1::TaskStatus snapshot = Snapshot();
  const v1::TaskSpec& spec = snapshot.spec();
  const uint32_t top_k = spec.remeasure().top_k();
  if (top_k == 0) return Status::Ok();
  TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> records,
                         manager_.records_.TaskRecords(snapshot.task_id()));
  for (const v1::TuningRecord& record : records) {
    if (record.kind() == v1::RECORD_KIND_FINAL) return Status::Ok();  // done before a restart
  }
  std::vector<const v1::TuningRecord*> ranked = db::RankTraces(records, spec.remeasure());
  if (ranked.empty()) return Status::Ok();
  if (ranked.size() > top_k) ranked.resize(top_k);

  // The best's worker, else any of the target; and one more of its device model.
  std::vector<std::string> workers;
  std::string device_model;
  const std::vector<dispatch::WorkerSnapshot> connected = manager_.dispatcher_.ListWorkers();
  auto serves = [&](const dispatch::WorkerSnapshot& worker) {
    return !worker.draining && worker.hello.target().target() == spec.target().target();
  };
  for (const dispatch::WorkerSnapshot& worker : connected) {
    if (serves(worker) && worker.hello.worker_id() == ranked.front()->result().worker_id()) {
      workers.push_back(worker.hello.worker_id());
      device_model = worker.hello.device().model();
    }
  }
  for (const dispatch::WorkerSnapshot& worker : connected) {
    if (!serves(worker)) continue;
    if (workers.empty()) {
      workers.push_back(worker.hello.worker_id());
      device_model = worker.hello.device().model();
    } else if (workers.size() == 1 && worker.hello.worker_id() != workers.front() &&
               worker.hello.device().model() == device_model) {
      workers.push_back(worker.hello.worker_id());
    }
  }
  if (workers.empty()) workers.push_back("");  // none connected now: whoever comes

  std::vector<Measured> traces;
  for (const v1::TuningRecord* record : ranked) traces.push_back({record->trace(), record->trace_hash()});
  // Rounds of one job per trace and worker, A B C … A B C …: slow drifts hit every trace alike.
  std::map<std::pair<std::string, std::string>, std::vector<v1::MeasureResult>> rounds;
  const auto started = std::chrono::steady_clock::now();
  for (uint32_t round = 0; round < spec.remeasure().top_k_rounds(); ++round) {
    std::vector<v1::MeasureJob> jobs;
    std::map<std::string, std::pair<std::string, std::string>> by_job;  // -> (hash, worker)
    for (const std::string& worker : workers) {
      for (const Measured& trace : traces) {
        jobs.push_back(MakeJob(trace.trace, spec.measure(), worker));
        by_job[jobs.back().job_id()] = {trace.trace_hash, worker};
      }
    }
    size_t arrived = 0;
    TUNED_RETURN_IF_ERROR(RunJobs(std::move(jobs), [&](const v1::MeasureJob& job,
                                                       const v1::MeasureResult& result) {
      rounds[by_job.at(job.job_id())].push_back(result);
      ++arrived;
      return Status::Ok();
    }));
    if (arrived < by_job.size()) return Status::Ok();  // stopping: a restart re-runs the rounds
  }
  for (const Measured& trace : traces) {
    for (const std::string& worker : workers) {
      const v1::MeasureResult combined = CombineRounds(rounds[{trace.trace_hash, worker}]);
      TUNED_RETURN_IF_ERROR(RecordResult(trace, combined, spec.measure(), v1::RECORD_KIND_FINAL));
    }
  }
  TUNED_RETURN_IF_ERROR(RerankFromRecords());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const v1::TaskStatus done = Snapshot();
  Log()->info("final re-measure task={} top_k={} workers={} rounds={} seconds={:.2f} "
              "winner_record={} winner_median_s={}",
              done.task_id(), traces.size(), workers.size(), spec.remeasure().top_k_rounds(),
              seconds, done.best().record_id(), done.best().result().median_seconds());
  return Status::Ok();
}

Status TaskManager::Runner::RerankFromRecords() {
  const std::string task_id = Snapshot().task_id();
  TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> records,
                         manager_.records_.TaskRecords(task_id));
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_ || abandoned_) return Status::Ok();
  std::vector<const v1::TuningRecord*> ranked = db::RankTraces(records, status_.spec().remeasure());
  if (ranked.empty()) {
    status_.clear_best();
  } else {
    *status_.mutable_best() = *ranked.front();
  }
  status_.set_updated_unix_ms(UnixMs());
  return SaveAndPublish(lock);
}

Status TaskManager::Runner::ShowWaiting(const std::string& target) {
  const int64_t unserved_ms = manager_.dispatcher_.UnservedMs(target);
  std::string waiting;
  if (unserved_ms > 0) {
    waiting = "no worker of target '" + target + "' connected (" +
              std::to_string(unserved_ms / 1000) + " s";
    const int timeout_ms = manager_.dispatcher_.options().queue_timeout_ms;
    if (timeout_ms > 0) waiting += "; the task fails after " + std::to_string(timeout_ms / 1000) + " s";
    waiting += ")";
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_ || waiting == status_.waiting_for()) return Status::Ok();
  status_.set_waiting_for(waiting);
  status_.set_updated_unix_ms(UnixMs());
  return SaveAndPublish(lock);
}

void TaskManager::Runner::NoteTime() {
  status_.mutable_time()->set_wall_seconds(SecondsSince(started_));
  status_.mutable_time()->set_search_seconds(search_seconds_);
}

Status TaskManager::Runner::RecordResult(const Measured& measured,
                                         const v1::MeasureResult& result,
                                         const v1::MeasureConfig& config, v1::RecordKind kind) {
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_ || abandoned_) return Status::Ok();
  v1::TuningRecord record;
  *record.mutable_workload() = workload_proto_;
  *record.mutable_target() = status_.spec().target();
  *record.mutable_trace() = measured.trace;
  record.set_trace_hash(measured.trace_hash);
  *record.mutable_result() = result;
  *record.mutable_config() = config;
  record.set_tuner_version(kTunedVersion);
  record.set_task_id(status_.task_id());
  const auto write_start = std::chrono::steady_clock::now();
  record.set_kind(kind);
  record.set_codegen_version(kCodegenVersion);
  auto id = manager_.records_.InsertRecord(record);
  if (!id.ok()) return id.status().WithContext("storing the result of job " + result.job_id());
  // Trials only: a re-measure is not a trial of the metrics' counters.
  if (TaskObserver* observer = manager_.options_.observer; observer && kind == v1::RECORD_KIND_SEARCH) {
    observer->OnResultStored(status_.spec(), result, SecondsSince(write_start));
  }
  record.set_record_id(*id);
  v1::TaskTime& time = *status_.mutable_time();
  time.set_build_seconds(time.build_seconds() + result.build_seconds());
  time.set_run_seconds(time.run_seconds() + result.run_seconds());
  NoteTime();
  if (kind == v1::RECORD_KIND_SEARCH) {
    time.set_trials(time.trials() + 1);
    status_.set_trials_done(status_.trials_done() + 1);
    if (IsBetter(record, status_)) *status_.mutable_best() = record;
    NoteDefaultSchedule(record, default_schedule_hash_, status_);
  }
  status_.clear_waiting_for();
  status_.set_updated_unix_ms(UnixMs());
  Log()->debug("result stored task={} job={} worker={} status={} median_s={} record={}",
               status_.task_id(), result.job_id(), result.worker_id(),
               v1::MeasureStatus_Name(result.status()), result.median_seconds(), *id);
  return SaveAndPublish(lock);
}

}  // namespace tuned::tasks
