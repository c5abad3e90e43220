#ifndef TUNED_SERVER_DISPATCH_DISPATCHER_H_
#define TUNED_SERVER_DISPATCH_DISPATCHER_H_

/// \file
/// The dispatcher: hands measurement jobs to connected workers and gets every job a result.
/// Jobs are opaque payloads (a `MeasureJob` read only for its job id, task id and target
/// string); the dispatcher knows nothing of schedules, searches or the database.
///
///     tasks ──Submit(job, callback)──▶ queue per target ──lease──▶ WorkerConnection::SendJob
///     worker ──result──▶ HandleResult ──▶ callback (exactly once per job)
///     worker ──heartbeat──▶ HandleHeartbeat (renews the leases it lists)
///     worker ──drain──▶ HandleDrain (no more jobs for it; it finishes the ones it holds)
///     worker ──calibration──▶ HandleCalibration (compared with its baseline: a drift
///                       beyond `drift_threshold` reports the jobs it completed since its
///                       previous calibration to `on_drift`)
///     lease checker ──▶ CheckLeases: silent workers dropped, expired leases revoked, jobs
///                       requeued at the front of their task's queue; after `max_attempts`
///                       leases the job completes as MEASURE_STATUS_WORKER_LOST; jobs of a
///                       target no connected worker serves for `queue_timeout_ms` complete
///                       unmeasured (status UNSPECIFIED, the reason in `error`)
///
/// Rules:
/// - A worker gets only jobs whose target string equals the target it announced in its hello,
///   and at most `slots` of them at a time; a job naming a worker (`MeasureJob.worker_id`) goes
///   only to that worker while it is connected.
/// - Tasks share workers fairly: each target queue keeps one FIFO per task and serves the tasks
///   round-robin, one job at a time.
/// - Results are idempotent by job id: the first result from a worker that held a lease on the
///   job completes it; a later duplicate, or a result from a worker that never held the job, is
///   ignored.
/// - Result callbacks run on the thread that completed the job (a stream's read thread, or the
///   lease checker), never with the dispatcher's lock held, so they may call `Submit`.
///
/// Thread-safe: every public method may be called from any thread.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "server/dispatch/calibration_drift.h"
#include "tuned/v1/measure.pb.h"
#include "tuned/v1/worker_service.pb.h"

namespace tuned::dispatch {

/// One calibration of a worker, compared with its baseline.
struct CalibrationEvent {
  std::string worker_id;
  std::string device_model;
  double median_seconds = 0;
  double repeat_cv = 0;
  double baseline_seconds = 0;  // its first figure since this server started, or its last drifted one
  double drift = 0;             // (median - baseline) / baseline
  double band = 0;              // the largest |drift| that is not a drift (CalibrationDrift)
  bool drifted = false;         // |drift| > band
};

/// A job a worker completed (for the re-measure of a drifted batch).
struct CompletedJob {
  std::string task_id;
  std::string job_id;
};

struct DispatcherOptions {
  /// How often workers are told to send heartbeats, milliseconds.
  int heartbeat_interval_ms = 2000;
  /// A lease (and a worker's liveness) lasts this long without a heartbeat renewing it,
  /// milliseconds. Should be several heartbeat intervals.
  int lease_timeout_ms = 10000;
  /// Leases a job may get before it completes as WORKER_LOST (1 = never requeued): a trace
  /// whose worker died under it twice is not sent a third time.
  int max_attempts = 2;
  /// A job queued this long while no connected worker serves its target completes unmeasured:
  /// status MEASURE_STATUS_UNSPECIFIED and error "no worker of target 'X' connected for N s".
  /// 0: wait forever. Milliseconds.
  int queue_timeout_ms = 180000;
  /// Called for every lease revoked because its worker went away or let it expire (outside
  /// the dispatcher's lock, from the thread that noticed), with the job and the reason.
  std::function<void(const v1::MeasureJob& job, const std::string& why)> on_lease_lost;
  /// Leases the job's candidate already lost before it was submitted (e.g. before a server
  /// restart); they count against max_attempts. Called by Submit, outside the lock.
  std::function<int(const v1::MeasureJob& job)> prior_losses;
  /// A worker's calibration figure moving more than this fraction from its baseline, and
  /// more than twice the worker's own jitter (server/dispatch/calibration_drift.h), is a drift
  /// (a noisy neighbour, a clock change): the jobs it completed since its previous
  /// calibration go to `on_drift`. 0: no drift detection.
  double drift_threshold = 0.10;
  /// Called for every calibration (outside the lock): the figure as the server stores it.
  std::function<void(const CalibrationEvent& event)> on_calibration;
  /// Called on a drift (outside the lock) with the jobs of the drifted batch.
  std::function<void(const CalibrationEvent& event, const std::vector<CompletedJob>& batch)>
      on_drift;
  /// Monotonic clock in milliseconds; the steady clock when empty (tests inject their own).
  std::function<int64_t()> now_ms;
};

/// The dispatcher's side of one worker's stream; implemented by the WorkerService adaptor.
/// The dispatcher calls these with its lock held: they must only enqueue, never block, and
/// never call back into the dispatcher.
class WorkerConnection {
 public:
  virtual ~WorkerConnection() = default;
  virtual void SendJob(const v1::MeasureJob& job) = 0;
  /// The job's result is no longer wanted (its task was cancelled, or another worker
  /// reported it first).
  virtual void SendCancel(const std::string& job_id) = 0;
  /// The dispatcher has dropped this worker (it missed its heartbeats); end the stream with
  /// `reason`. The worker is already unregistered when this is called.
  virtual void Close(const Status& reason) = 0;
};

/// Called exactly once per submitted job (unless its task is cancelled) with its result.
using ResultCallback = std::function<void(const v1::MeasureResult&)>;

/// A connected worker, for `tuned workers`.
struct WorkerSnapshot {
  uint64_t session_id = 0;
  v1::WorkerHello hello;
  std::string peer;
  int64_t connected_unix_ms = 0;
  int64_t last_seen_unix_ms = 0;
  std::vector<std::string> running_job_ids;
  int64_t jobs_assigned = 0;
  int64_t results = 0;
  int64_t leases_lost = 0;
  bool draining = false;
  double calibration_baseline_seconds = 0;
  double calibration_last_seconds = 0;
  double calibration_jitter = 0;
  int64_t drift_events = 0;
  std::string last_drift;
};

struct DispatcherStats {
  int64_t queued = 0;       // Jobs waiting for a worker.
  int64_t leased = 0;       // Jobs held by a worker.
  int64_t submitted = 0;    // Since start.
  int64_t completed = 0;    // Jobs whose callback ran (results and WORKER_LOST).
  int64_t requeued = 0;     // Leases revoked and put back in a queue.
  int64_t worker_lost = 0;  // Jobs completed as WORKER_LOST.
  int64_t duplicates = 0;   // Results ignored because the job was already complete or unknown.
  int64_t workers = 0;      // Connected workers.
};

/// One target's queue, for metrics and the status page.
struct TargetQueueSnapshot {
  std::string target;
  int64_t queued = 0;          // Jobs waiting for a worker.
  int64_t leased = 0;          // Jobs held by a worker.
  int64_t leases_expired = 0;  // Since start: leases revoked because no heartbeat renewed them.
  int64_t leases_revoked = 0;  // Since start: every revoked lease (expired, or worker gone).
};

class Dispatcher {
 public:
  explicit Dispatcher(DispatcherOptions options = {});
  /// Stops the lease checker. Pending callbacks are dropped.
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  const DispatcherOptions& options() const { return options_; }

  /// Registers a worker that said hello on a stream and returns its session id. A worker id
  /// that is already connected (a reconnect before its old stream was noticed dead) replaces
  /// the old session: its leases are requeued and the old connection closed.
  /// `connection` must stay valid until `UnregisterWorker` returns or `Close` is called on it.
  /// InvalidArgument for a hello without worker id or target or with 0 slots.
  StatusOr<uint64_t> RegisterWorker(const v1::WorkerHello& hello, std::string peer,
                                    WorkerConnection* connection);
  /// The worker's stream ended: its leases are revoked and the jobs requeued. A session that is
  /// no longer registered is ignored.
  void UnregisterWorker(uint64_t session_id, std::string_view reason);
  /// Renews the worker's liveness and the leases of the jobs it lists.
  void HandleHeartbeat(uint64_t session_id, const v1::Heartbeat& heartbeat);
  /// The worker is shutting down: it gets no more jobs; its leases stay until it reports them
  /// or its stream ends (then they are requeued as for any worker that leaves).
  void HandleDrain(uint64_t session_id, std::string_view reason);
  /// Completes the result's job (first result wins). Returns false when the result was ignored
  /// (duplicate, unknown job, or a job this worker never held). `result.worker_id` is set to the
  /// session's worker id.
  bool HandleResult(uint64_t session_id, v1::MeasureResult result);
  /// Compares the worker's calibration with its baseline (its first figure, kept per worker id
  /// across reconnects; after a drift the drifted figure) by the rule of CalibrationDrift and
  /// reports it to `on_calibration`, and a drift to `on_drift`. Returns
  /// the event; NotFound for an unknown session, InvalidArgument for a figure that is not
  /// positive.
  StatusOr<CalibrationEvent> HandleCalibration(uint64_t session_id,
                                               const v1::Calibration& calibration);
  /// Whether a calibration could still send jobs of `task_id` to `on_drift`: a connected
  /// worker that calibrates (it has sent a figure) completed jobs of the task since its last
  /// one, or a calibration's callbacks are running now. A task waits for this to end before
  /// its final re-measure, so a drift after its last batch is not lost.
  bool AwaitsCalibration(const std::string& task_id) const;

  /// Queues a job for the workers of `job.target().target()`. `job.job_id` must be unique
  /// (AlreadyExists otherwise) and `job.task_id` and the target non-empty (InvalidArgument).
  Status Submit(v1::MeasureJob job, ResultCallback on_result);
  /// Drops the task's queued jobs and cancels its leased ones; their callbacks never run.
  /// Returns the number of jobs dropped.
  int CancelTask(const std::string& task_id);

  /// Drops workers silent for longer than the lease timeout and revokes expired leases.
  /// Run periodically by the lease checker; tests call it directly with an injected clock.
  void CheckLeases();
  /// Starts a thread calling CheckLeases every quarter lease timeout (at most every heartbeat).
  void StartLeaseChecker();
  /// Stops the lease checker (idempotent).
  void Stop();

  std::vector<WorkerSnapshot> ListWorkers() const;
  /// Distinct targets of the connected workers, sorted.
  std::vector<std::string> ConnectedTargets() const;
  /// How long jobs of `target` have been queued with no connected worker of that target,
  /// milliseconds; 0 when the target has a worker or no queued job.
  int64_t UnservedMs(const std::string& target) const;
  DispatcherStats Stats() const;
  /// Every target that has had a queue since start, sorted by target.
  std::vector<TargetQueueSnapshot> QueueSnapshots() const;

 private:
  struct Job {
    v1::MeasureJob job;
    ResultCallback on_result;
    int attempts = 0;     // Leases granted so far.
    uint64_t holder = 0;  // Session holding the lease; 0 while queued.
    int64_t lease_deadline_ms = 0;
    std::set<uint64_t> past_holders;
    std::string last_loss;  // Why the last lease was revoked.
  };
  struct Session {
    uint64_t id = 0;
    v1::WorkerHello hello;
    std::string peer;
    WorkerConnection* connection = nullptr;
    std::set<std::string> leased;
    int64_t last_seen_ms = 0;
    int64_t connected_unix_ms = 0;
    int64_t last_seen_unix_ms = 0;
    int64_t jobs_assigned = 0;
    int64_t results = 0;
    int64_t leases_lost = 0;
    bool draining = false;  // Gets no new jobs.
    std::vector<CompletedJob> batch;  // Completed since its previous calibration.
    double calibration_last_seconds = 0;
    int64_t drift_events = 0;
    std::string last_drift;
    int64_t FreeSlots() const {
      return draining ? 0 : int64_t(hello.slots()) - int64_t(leased.size());
    }
  };
  struct TargetQueue {
    std::map<std::string, std::deque<std::string>> by_task;  // task id -> job ids, FIFO
    std::string last_task;  // Round-robin cursor: the task served last.
    std::set<uint64_t> sessions;
    int64_t unserved_since_ms = 0;  // Jobs queued and no worker since then; 0: not so.
    int64_t leases_expired = 0;     // Counters of QueueSnapshots.
    int64_t leases_revoked = 0;
  };
  // Work deferred until the lock is released: result callbacks, loss notifications.
  using Completion = std::function<void()>;

  int64_t Now() const;
  // The *Locked helpers require mu_.
  void PumpLocked(const std::string& target);
  bool PopNextJobLocked(TargetQueue& queue, std::string* job_id);
  void RevokeLeaseLocked(Job& job, Session& session, const std::string& why,
                         std::vector<Completion>* completions);
  void DropSessionLocked(uint64_t session_id, const std::string& why,
                         std::vector<Completion>* completions);
  void RemoveFromQueueLocked(const Job& job);
  // Completes, unmeasured, the queued jobs of targets no worker served for the queue timeout.
  void ExpireUnservedLocked(int64_t now, std::vector<Completion>* completions);
  // Deferred call of `callback` with `result`.
  static Completion Complete(ResultCallback callback, v1::MeasureResult result);
  static void RunCompletions(std::vector<Completion>& completions);

  const DispatcherOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Job> jobs_;
  std::map<std::string, TargetQueue> queues_;
  std::map<uint64_t, Session> sessions_;
  std::map<std::string, uint64_t> session_by_worker_;
  std::map<std::string, CalibrationDrift> calibration_drift_;  // by worker id, across reconnects
  int calibrations_reporting_ = 0;  // HandleCalibration calls between their lock and callbacks' end
  uint64_t next_session_id_ = 1;
  DispatcherStats stats_;

  std::mutex checker_mu_;
  std::condition_variable checker_cv_;
  bool checker_stop_ = false;
  std::thread checker_;
};

}  // namespace tuned::dispatch

#endif  // TUNED_SERVER_DISPATCH_DISPATCHER_H_
