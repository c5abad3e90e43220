#ifndef TUNED_SERVER_TASKS_TASK_RUNNER_H_
#define TUNED_SERVER_TASKS_TASK_RUNNER_H_

/// \file
/// Private to server/tasks: the thread that runs one task's search (see task_manager.h for the
/// loop). Not part of the module's public headers.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/tasks/task_manager.h"

namespace tuned::tasks {

/// Hex digits from a process-wide random generator (ids of tasks and jobs).
std::string RandomHexId(int digits);

/// Threads of the parallel loops and fp32 vector lanes a target string implies, for the
/// search's context (`-num-cores=N`, AVX-512 in -mcpu/-mattr; defaults 1 and 8).
int TargetNumCores(const std::string& target);
int TargetVectorLanes(const std::string& target);

class TaskManager::Runner {
 public:
  Runner(TaskManager& manager, v1::TaskStatus status);
  /// Stops and joins the thread (see RequestStop).
  ~Runner();

  void Start();
  /// Server shutdown: the thread stops at its next wait without touching the stored state.
  void RequestStop();
  /// The server lost the task to another server: stops without saving anything more.
  void Abandon();
  /// User cancel: saves CANCELLED and stops. FailedPrecondition when already finished.
  StatusOr<v1::TaskStatus> Cancel();
  v1::TaskStatus Snapshot();
  /// Whether the task reached a final state (its thread is ending or has ended).
  bool finished();
  /// These jobs' results are suspect (their worker drifted): measure their traces again before
  /// the next batch. Jobs this runner does not know are ignored.
  void QueueRemeasure(const std::vector<std::string>& job_ids);

 private:
  /// Results delivered by the dispatcher's callbacks; shared with them so a late callback never
  /// touches a destroyed runner.
  struct Inbox {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<v1::MeasureResult> results;
    bool stop = false;
  };

  /// A candidate's trace and hash, as the jobs of its re-measures need them.
  struct Measured {
    v1::Trace trace;
    std::string trace_hash;
  };
  using OnResult = std::function<Status(const v1::MeasureJob&, const v1::MeasureResult&)>;

  void Run();
  Status RunSearch();
  Status MeasureBatch(const std::vector<search::Candidate>& candidates,
                      search::SearchStrategy& strategy);
  /// A job of this task for `trace` with `config`, for `worker_id` only when not empty.
  v1::MeasureJob MakeJob(const v1::Trace& trace, const v1::MeasureConfig& config,
                         const std::string& worker_id);
  /// Submits `jobs` and calls `on_result` with each result as it arrives, until every job has
  /// one or the runner stops (then OK, with results missing). A job the queue timeout expired
  /// fails the task with its reason.
  Status RunJobs(std::vector<v1::MeasureJob> jobs, const OnResult& on_result);
  /// Measures `traces` again with noise_repeat_factor times the repeats (noisy or drifted
  /// figures), stored as REMEASURE records; returns the new results by trace hash.
  StatusOr<std::map<std::string, v1::MeasureResult>> Remeasure(
      const std::vector<Measured>& traces);
  /// The drift re-measures queued by QueueRemeasure.
  Status RemeasureQueued();
  /// After the last batch: waits (at most kCalibrationWaitMs) for the calibrations that
  /// follow this task's jobs, so a drift they show still re-measures the batch.
  void AwaitCalibrations();
  /// The end of a task: the top-k measured again, interleaved, on the best's worker (and one
  /// more of its device model); the winner is chosen on those FINAL records.
  Status RemeasureTopK();
  /// The task's best from its stored records (RankTraces).
  Status RerankFromRecords();
  // Sets (or clears) the status's `waiting_for` from the dispatcher's view of `target`.
  Status ShowWaiting(const std::string& target);
  /// Stores one result as a record and saves the task's progress; the record is on disk before
  /// the new progress is visible to anyone. Only SEARCH records count as trials.
  Status RecordResult(const Measured& measured, const v1::MeasureResult& result,
                      const v1::MeasureConfig& config, v1::RecordKind kind);
  /// Brings the status's wall and search time up to now (under mu_).
  void NoteTime();
  /// Saves `status_` (under mu_) and publishes a copy to the watchers.
  Status SaveAndPublish(std::unique_lock<std::mutex>& lock);
  bool Stopping();

  TaskManager& manager_;
  const std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  v1::Workload workload_proto_;
  std::string default_schedule_hash_;  // trace hash of the workload's default schedule
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  // Time the search computed (proposing, learning). Only the runner's thread writes and reads
  // it (NoteTime runs there too), so it needs no lock.
  double search_seconds_ = 0;

  std::mutex mu_;  // Guards status_ and the flags below.
  v1::TaskStatus status_;
  bool cancelled_ = false;
  bool abandoned_ = false;  // Another server owns the task now.
  bool final_ = false;     // The final state is decided (a cancel comes too late).
  bool finished_ = false;  // The final state is saved; the thread is ending.
  bool completed_ = false;  // The search and its final re-measure ran to their end.
  std::map<std::string, Measured> search_jobs_;  // job id -> candidate, of timed SEARCH jobs
  std::vector<std::string> drifted_jobs_;        // queued by QueueRemeasure
  std::thread thread_;
};

}  // namespace tuned::tasks

#endif  // TUNED_SERVER_TASKS_TASK_RUNNER_H_
