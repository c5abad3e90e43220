#include "server/dispatch/dispatcher.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "common/logging.h"
#include "common/time.h"

namespace tuned::dispatch {
namespace {

std::shared_ptr<spdlog::logger> Log() { return Logger("dispatch"); }

}  // namespace

Dispatcher::Dispatcher(DispatcherOptions options) : options_(std::move(options)) {}

Dispatcher::~Dispatcher() { Stop(); }

int64_t Dispatcher::Now() const {
  if (options_.now_ms) return options_.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

StatusOr<uint64_t> Dispatcher::RegisterWorker(const v1::WorkerHello& hello, std::string peer,
                                              WorkerConnection* connection) {
  if (hello.worker_id().empty()) return InvalidArgumentError("worker hello: empty worker_id");
  if (hello.target().target().empty()) {
    return InvalidArgumentError("worker hello from '" + hello.worker_id() + "': empty target");
  }
  if (hello.slots() == 0) {
    return InvalidArgumentError("worker hello from '" + hello.worker_id() + "': slots is 0");
  }
  std::vector<Completion> completions;
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = session_by_worker_.find(hello.worker_id()); it != session_by_worker_.end()) {
      uint64_t old = it->second;
      WorkerConnection* old_connection = sessions_.at(old).connection;
      DropSessionLocked(old, "worker reconnected", &completions);
      old_connection->Close(AbortedError("worker '" + hello.worker_id() + "' reconnected"));
    }
    id = next_session_id_++;
    Session& session = sessions_[id];
    session.id = id;
    session.hello = hello;
    session.peer = std::move(peer);
    session.connection = connection;
    session.last_seen_ms = Now();
    session.connected_unix_ms = UnixMs();
    session.last_seen_unix_ms = session.connected_unix_ms;
    session_by_worker_[hello.worker_id()] = id;
    queues_[hello.target().target()].sessions.insert(id);
    queues_[hello.target().target()].unserved_since_ms = 0;
    ++stats_.workers;
    Log()->info("worker joined worker={} session={} target='{}' slots={} device='{}' peer={}",
                hello.worker_id(), id, hello.target().target(), hello.slots(),
                hello.device().model(), session.peer);
    PumpLocked(hello.target().target());
  }
  RunCompletions(completions);
  return id;
}

void Dispatcher::UnregisterWorker(uint64_t session_id, std::string_view reason) {
  std::vector<Completion> completions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sessions_.contains(session_id)) return;
    DropSessionLocked(session_id, std::string(reason), &completions);
  }
  RunCompletions(completions);
}

void Dispatcher::DropSessionLocked(uint64_t session_id, const std::string& why,
                                   std::vector<Completion>* completions) {
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) return;
  Session& session = it->second;
  const std::string target = session.hello.target().target();
  Log()->info("worker left worker={} session={} reason='{}' leases_requeued={}",
              session.hello.worker_id(), session_id, why, session.leased.size());
  std::vector<std::string> leased(session.leased.begin(), session.leased.end());
  for (const std::string& job_id : leased) {
    RevokeLeaseLocked(jobs_.at(job_id), session,
                      "worker '" + session.hello.worker_id() + "' " + why, completions);
  }
  if (auto w = session_by_worker_.find(session.hello.worker_id());
      w != session_by_worker_.end() && w->second == session_id) {
    session_by_worker_.erase(w);
  }
  queues_[target].sessions.erase(session_id);
  sessions_.erase(it);
  --stats_.workers;
  PumpLocked(target);
}

void Dispatcher::RevokeLeaseLocked(Job& job, Session& session, const std::string& why,
                                   std::vector<Completion>* completions) {
  const std::string job_id = job.job.job_id();
  session.leased.erase(job_id);
  ++session.leases_lost;
  ++queues_[job.job.target().target()].leases_revoked;
  job.holder = 0;
  job.past_holders.insert(session.id);
  job.last_loss = why;
  if (options_.on_lease_lost) {
    completions->push_back([hook = options_.on_lease_lost, lost = job.job, why] { hook(lost, why); });
  }
  if (job.attempts >= options_.max_attempts) {
    v1::MeasureResult result;
    result.set_job_id(job_id);
    result.set_status(v1::MEASURE_STATUS_WORKER_LOST);
    result.set_error("lost " + std::to_string(job.attempts) + " lease(s); last: " + why);
    result.set_worker_id(session.hello.worker_id());
    Log()->warn("job lost job={} task={} attempts={} reason='{}'", job_id, job.job.task_id(),
                job.attempts, why);
    ++stats_.worker_lost;
    ++stats_.completed;
    completions->push_back(Complete(std::move(job.on_result), std::move(result)));
    jobs_.erase(job_id);
    return;
  }
  ++stats_.requeued;
  Log()->info("job requeued job={} task={} attempt={} reason='{}'", job_id, job.job.task_id(),
              job.attempts, why);
  queues_[job.job.target().target()].by_task[job.job.task_id()].push_front(job_id);
}

void Dispatcher::HandleHeartbeat(uint64_t session_id, const v1::Heartbeat& heartbeat) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) return;
  Session& session = it->second;
  const int64_t now = Now();
  session.last_seen_ms = now;
  session.last_seen_unix_ms = UnixMs();
  for (const std::string& job_id : heartbeat.running_job_ids()) {
    if (!session.leased.contains(job_id)) continue;
    jobs_.at(job_id).lease_deadline_ms = now + options_.lease_timeout_ms;
  }
}

void Dispatcher::HandleDrain(uint64_t session_id, std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end() || it->second.draining) return;
  it->second.draining = true;
  Log()->info("worker draining worker={} session={} reason='{}' leases_held={}",
              it->second.hello.worker_id(), session_id, reason, it->second.leased.size());
}

bool Dispatcher::HandleResult(uint64_t session_id, v1::MeasureResult result) {
  std::vector<Completion> completions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto s = sessions_.find(session_id);
    if (s == sessions_.end()) return false;
    Session& session = s->second;
    session.last_seen_ms = Now();
    session.last_seen_unix_ms = UnixMs();
    auto j = jobs_.find(result.job_id());
    if (j == jobs_.end() ||
        (j->second.holder != session_id && !j->second.past_holders.contains(session_id))) {
      ++stats_.duplicates;
      Log()->debug("result ignored job={} worker={} (duplicate or not leased to it)",
                   result.job_id(), session.hello.worker_id());
      return false;
    }
    Job& job = j->second;
    if (job.holder == session_id) {
      session.leased.erase(job.job.job_id());
    } else if (job.holder != 0) {
      // A late result from an earlier lease holder wins; the current holder stops.
      Session& current = sessions_.at(job.holder);
      current.leased.erase(job.job.job_id());
      current.connection->SendCancel(job.job.job_id());
    } else {
      RemoveFromQueueLocked(job);
    }
    ++session.results;
    ++stats_.completed;
    // A worker that never calibrates (an older version) keeps only its latest jobs.
    if (session.batch.size() >= 4096) session.batch.erase(session.batch.begin());
    session.batch.push_back({job.job.task_id(), job.job.job_id()});
    result.set_worker_id(session.hello.worker_id());
    completions.push_back(Complete(std::move(job.on_result), std::move(result)));
    const std::string target = job.job.target().target();
    jobs_.erase(j);
    PumpLocked(target);
  }
  RunCompletions(completions);
  return true;
}

StatusOr<CalibrationEvent> Dispatcher::HandleCalibration(uint64_t session_id,
                                                         const v1::Calibration& calibration) {
  if (!(calibration.median_seconds() > 0)) {
    return InvalidArgumentError("calibration: median_seconds must be positive");
  }
  CalibrationEvent event;
  std::vector<CompletedJob> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto s = sessions_.find(session_id);
    if (s == sessions_.end()) return NotFoundError("calibration from an unknown session");
    Session& session = s->second;
    session.last_seen_ms = Now();
    session.last_seen_unix_ms = UnixMs();
    event.worker_id = session.hello.worker_id();
    event.device_model = session.hello.device().model();
    event.median_seconds = calibration.median_seconds();
    event.repeat_cv = calibration.repeat_cv();
    CalibrationDrift& history =
        calibration_drift_.try_emplace(event.worker_id, options_.drift_threshold).first->second;
    const CalibrationDrift::Verdict verdict = history.Add(event.median_seconds);
    event.baseline_seconds = verdict.baseline_seconds;
    event.drift = verdict.drift;
    event.band = verdict.band;
    event.drifted = verdict.drifted;
    session.calibration_last_seconds = event.median_seconds;
    batch.swap(session.batch);
    ++calibrations_reporting_;
    if (event.drifted) {
      ++session.drift_events;
      session.last_drift = "calibration " + FormatSeconds(event.median_seconds) + " vs " +
                           FormatSeconds(event.baseline_seconds) + " (" +
                           std::to_string(int(std::lround(event.drift * 100))) + "%) at " +
                           std::to_string(UnixMs() / 1000) + "; " + std::to_string(batch.size()) +
                           " job(s) re-measured";
      Log()->warn("worker drift worker={} calibration_s={} baseline_s={} drift={:.3f} band={:.3f} jobs={}",
                  event.worker_id, event.median_seconds, event.baseline_seconds, event.drift,
                  event.band, batch.size());
    }
  }
  if (options_.on_calibration) options_.on_calibration(event);
  if (event.drifted && options_.on_drift && !batch.empty()) options_.on_drift(event, batch);
  std::lock_guard<std::mutex> lock(mu_);
  --calibrations_reporting_;
  return event;
}

bool Dispatcher::AwaitsCalibration(const std::string& task_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (calibrations_reporting_ > 0) return true;
  for (const auto& [id, session] : sessions_) {
    if (session.calibration_last_seconds == 0) continue;  // it never calibrates
    for (const CompletedJob& job : session.batch) {
      if (job.task_id == task_id) return true;
    }
  }
  return false;
}

Status Dispatcher::Submit(v1::MeasureJob job, ResultCallback on_result) {
  if (job.job_id().empty()) return InvalidArgumentError("measure job: empty job_id");
  if (job.task_id().empty()) {
    return InvalidArgumentError("measure job '" + job.job_id() + "': empty task_id");
  }
  if (job.target().target().empty()) {
    return InvalidArgumentError("measure job '" + job.job_id() + "': empty target");
  }
  const int prior_losses = options_.prior_losses ? options_.prior_losses(job) : 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (jobs_.contains(job.job_id())) {
    return AlreadyExistsError("measure job '" + job.job_id() + "' is already queued");
  }
  const std::string job_id = job.job_id();
  const std::string target = job.target().target();
  queues_[target].by_task[job.task_id()].push_back(job_id);
  Job& entry = jobs_[job_id];
  entry.job = std::move(job);
  entry.on_result = std::move(on_result);
  entry.attempts = prior_losses;
  ++stats_.submitted;
  TargetQueue& queue = queues_[target];
  if (queue.sessions.empty() && queue.unserved_since_ms == 0) queue.unserved_since_ms = Now();
  PumpLocked(target);
  return Status::Ok();
}

int Dispatcher::CancelTask(const std::string& task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  int dropped = 0;
  for (auto& [target, queue] : queues_) queue.by_task.erase(task_id);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& job = it->second;
    if (job.job.task_id() != task_id) {
      ++it;
      continue;
    }
    if (job.holder != 0) {
      Session& session = sessions_.at(job.holder);
      session.leased.erase(job.job.job_id());
      session.connection->SendCancel(job.job.job_id());
    }
    ++dropped;
    it = jobs_.erase(it);
  }
  if (dropped > 0) Log()->info("task jobs cancelled task={} jobs={}", task_id, dropped);
  for (auto& [target, queue] : queues_) PumpLocked(target);
  return dropped;
}

void Dispatcher::CheckLeases() {
  std::vector<Completion> completions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now = Now();
    std::vector<uint64_t> silent;
    for (auto& [id, session] : sessions_) {
      if (now - session.last_seen_ms > options_.lease_timeout_ms) silent.push_back(id);
    }
    for (uint64_t id : silent) {
      WorkerConnection* connection = sessions_.at(id).connection;
      const std::string why =
          "missed heartbeats for " + std::to_string(now - sessions_.at(id).last_seen_ms) + " ms";
      DropSessionLocked(id, why, &completions);
      connection->Close(UnavailableError(why));
    }
    for (auto& [id, session] : sessions_) {
      std::vector<std::string> expired;
      for (const std::string& job_id : session.leased) {
        if (jobs_.at(job_id).lease_deadline_ms < now) expired.push_back(job_id);
      }
      for (const std::string& job_id : expired) {
        session.connection->SendCancel(job_id);
        ++queues_[jobs_.at(job_id).job.target().target()].leases_expired;
        RevokeLeaseLocked(jobs_.at(job_id), session,
                          "lease expired on worker '" + session.hello.worker_id() + "'",
                          &completions);
      }
    }
    for (auto& [target, queue] : queues_) PumpLocked(target);
    ExpireUnservedLocked(now, &completions);
  }
  RunCompletions(completions);
}

void Dispatcher::StartLeaseChecker() {
  std::lock_guard<std::mutex> lock(checker_mu_);
  if (checker_.joinable()) return;
  checker_stop_ = false;
  const int period_ms =
      std::max(1, std::min(options_.heartbeat_interval_ms, options_.lease_timeout_ms / 4));
  checker_ = std::thread([this, period_ms] {
    std::unique_lock<std::mutex> lock(checker_mu_);
    while (!checker_stop_) {
      checker_cv_.wait_for(lock, std::chrono::milliseconds(period_ms));
      if (checker_stop_) break;
      lock.unlock();
      CheckLeases();
      lock.lock();
    }
  });
}

void Dispatcher::Stop() {
  std::thread checker;
  {
    std::lock_guard<std::mutex> lock(checker_mu_);
    checker_stop_ = true;
    checker = std::move(checker_);
  }
  checker_cv_.notify_all();
  if (checker.joinable()) checker.join();
}

void Dispatcher::PumpLocked(const std::string& target) {
  auto q = queues_.find(target);
  if (q == queues_.end()) return;
  TargetQueue& queue = q->second;
  const int64_t now = Now();
  // Jobs naming a worker that has no free slot now wait, in their order, at their queues' fronts.
  std::vector<std::string> deferred;
  while (!queue.by_task.empty()) {
    bool any_free = false;
    for (uint64_t id : queue.sessions) {
      if (sessions_.at(id).FreeSlots() > 0) any_free = true;
    }
    if (!any_free) break;
    std::string job_id;
    if (!PopNextJobLocked(queue, &job_id)) break;
    Job& job = jobs_.at(job_id);
    // A job naming a connected worker of this target waits for that worker.
    uint64_t pinned = 0;
    if (!job.job.worker_id().empty()) {
      auto named = session_by_worker_.find(job.job.worker_id());
      if (named != session_by_worker_.end() && queue.sessions.contains(named->second) &&
          !sessions_.at(named->second).draining) {
        pinned = named->second;
      }
    }
    // The worker with the most free slots gets the job, preferring one that has not lost a
    // lease on it before (a job that kills its worker should not take down the next one too).
    Session* best = nullptr;
    std::pair<bool, int64_t> best_rank{false, 0};
    for (uint64_t id : queue.sessions) {
      if (pinned != 0 && id != pinned) continue;
      Session& session = sessions_.at(id);
      int64_t free_slots = session.FreeSlots();
      if (free_slots <= 0) continue;
      std::pair<bool, int64_t> rank{!job.past_holders.contains(id), free_slots};
      if (best == nullptr || rank > best_rank) {
        best = &session;
        best_rank = rank;
      }
    }
    if (best == nullptr) {
      deferred.push_back(job_id);
      continue;
    }
    job.job.set_attempt(uint32_t(job.attempts));
    ++job.attempts;
    job.holder = best->id;
    job.lease_deadline_ms = now + options_.lease_timeout_ms;
    best->leased.insert(job_id);
    ++best->jobs_assigned;
    Log()->debug("job leased job={} task={} worker={} attempt={}", job_id, job.job.task_id(),
                 best->hello.worker_id(), job.job.attempt());
    best->connection->SendJob(job.job);
  }
  for (auto it = deferred.rbegin(); it != deferred.rend(); ++it) {
    const Job& job = jobs_.at(*it);
    queue.by_task[job.job.task_id()].push_front(*it);
  }
}

bool Dispatcher::PopNextJobLocked(TargetQueue& queue, std::string* job_id) {
  if (queue.by_task.empty()) return false;
  // Round-robin: the first task after the one served last, wrapping around.
  auto it = queue.by_task.upper_bound(queue.last_task);
  if (it == queue.by_task.end()) it = queue.by_task.begin();
  *job_id = it->second.front();
  it->second.pop_front();
  queue.last_task = it->first;
  if (it->second.empty()) queue.by_task.erase(it);
  return true;
}

void Dispatcher::RemoveFromQueueLocked(const Job& job) {
  auto q = queues_.find(job.job.target().target());
  if (q == queues_.end()) return;
  auto t = q->second.by_task.find(job.job.task_id());
  if (t == q->second.by_task.end()) return;
  std::erase(t->second, job.job.job_id());
  if (t->second.empty()) q->second.by_task.erase(t);
}

void Dispatcher::RunCompletions(std::vector<Completion>& completions) {
  for (Completion& completion : completions) completion();
}

Dispatcher::Completion Dispatcher::Complete(ResultCallback callback, v1::MeasureResult result) {
  return [callback = std::move(callback), result = std::move(result)] {
    if (callback) callback(result);
  };
}

void Dispatcher::ExpireUnservedLocked(int64_t now, std::vector<Completion>* completions) {
  for (auto& [target, queue] : queues_) {
    if (queue.by_task.empty() || !queue.sessions.empty()) {
      queue.unserved_since_ms = 0;
      continue;
    }
    if (queue.unserved_since_ms == 0) queue.unserved_since_ms = now;
    const int64_t waited = now - queue.unserved_since_ms;
    if (options_.queue_timeout_ms <= 0 || waited < options_.queue_timeout_ms) continue;
    const std::string why = "no worker of target '" + target + "' connected for " +
                            std::to_string(waited / 1000) + " s";
    int expired = 0;
    for (auto& [task_id, job_ids] : queue.by_task) {
      for (const std::string& job_id : job_ids) {
        auto j = jobs_.find(job_id);
        if (j == jobs_.end()) continue;
        v1::MeasureResult result;
        result.set_job_id(job_id);
        result.set_status(v1::MEASURE_STATUS_UNSPECIFIED);
        result.set_error(why);
        completions->push_back(Complete(std::move(j->second.on_result), std::move(result)));
        jobs_.erase(j);
        ++stats_.completed;
        ++expired;
      }
    }
    queue.by_task.clear();
    queue.unserved_since_ms = 0;
    Log()->warn("jobs expired target='{}' jobs={} reason='{}'", target, expired, why);
  }
}

int64_t Dispatcher::UnservedMs(const std::string& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = queues_.find(target);
  if (q == queues_.end() || q->second.unserved_since_ms == 0) return 0;
  if (q->second.by_task.empty() || !q->second.sessions.empty()) return 0;
  return std::max<int64_t>(Now() - q->second.unserved_since_ms, 1);
}

std::vector<WorkerSnapshot> Dispatcher::ListWorkers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<WorkerSnapshot> out;
  for (const auto& [id, session] : sessions_) {
    WorkerSnapshot snapshot;
    snapshot.session_id = id;
    snapshot.hello = session.hello;
    snapshot.peer = session.peer;
    snapshot.connected_unix_ms = session.connected_unix_ms;
    snapshot.last_seen_unix_ms = session.last_seen_unix_ms;
    snapshot.running_job_ids.assign(session.leased.begin(), session.leased.end());
    snapshot.jobs_assigned = session.jobs_assigned;
    snapshot.results = session.results;
    snapshot.leases_lost = session.leases_lost;
    snapshot.draining = session.draining;
    auto history = calibration_drift_.find(session.hello.worker_id());
    if (history != calibration_drift_.end()) {
      snapshot.calibration_baseline_seconds = history->second.baseline_seconds();
      snapshot.calibration_jitter = history->second.jitter();
    }
    snapshot.calibration_last_seconds = session.calibration_last_seconds;
    snapshot.drift_events = session.drift_events;
    snapshot.last_drift = session.last_drift;
    out.push_back(std::move(snapshot));
  }
  return out;
}

std::vector<std::string> Dispatcher::ConnectedTargets() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> targets;
  for (const auto& [id, session] : sessions_) targets.insert(session.hello.target().target());
  return {targets.begin(), targets.end()};
}

DispatcherStats Dispatcher::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  DispatcherStats stats = stats_;
  stats.queued = 0;
  stats.leased = 0;
  for (const auto& [id, job] : jobs_) (job.holder == 0 ? stats.queued : stats.leased)++;
  return stats;
}

std::vector<TargetQueueSnapshot> Dispatcher::QueueSnapshots() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, TargetQueueSnapshot> by_target;
  for (const auto& [target, queue] : queues_) {
    TargetQueueSnapshot& snapshot = by_target[target];
    snapshot.target = target;
    snapshot.leases_expired = queue.leases_expired;
    snapshot.leases_revoked = queue.leases_revoked;
  }
  for (const auto& [id, job] : jobs_) {
    TargetQueueSnapshot& snapshot = by_target[job.job.target().target()];
    snapshot.target = job.job.target().target();
    (job.holder == 0 ? snapshot.queued : snapshot.leased)++;
  }
  std::vector<TargetQueueSnapshot> out;
  for (auto& [target, snapshot] : by_target) out.push_back(std::move(snapshot));
  return out;
}

}  // namespace tuned::dispatch
