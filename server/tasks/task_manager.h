#ifndef TUNED_SERVER_TASKS_TASK_MANAGER_H_
#define TUNED_SERVER_TASKS_TASK_MANAGER_H_

/// \file
/// The task manager: owns tuning tasks. A task is (workload spec, target, trial budget, search
/// options, measurement protocol). Each running task has one thread that runs a SearchStrategy
/// and measures its candidates through the dispatcher:
///
///     NextBatch(n) (never a measured trace: search_strategy.h) ──▶ Dispatcher::Submit
///        ▲                                                                 │ results
///        └──── Update(batch) ◀── InsertRecord + SaveTask (each result, as it arrives) ◀┘
///
/// The database is the single source of truth: every result is inserted before the task's
/// progress is saved or reported, task state (PENDING, RUNNING, final states) is saved on every
/// change, and `ResumeUnfinished` restarts every PENDING or RUNNING task of a database after a
/// server restart, counting its stored records against the budget and feeding them to the new
/// strategy, so nothing acknowledged is lost and nothing is measured twice.
///
/// Several servers may share one database (PostgreSQL): then a task is run by the server that
/// owns it (`db::TaskOwnership`), a submitted task belongs to the server that accepted it, and
/// every server keeps looking for unfinished tasks that no live server owns (their owner died)
/// and takes them over, resuming them from their records as after a restart. Without ownership
/// (SQLite: one server per file) the server runs every unfinished task of its database.
///
/// The strategy comes from a factory (the random search now, the evolutionary search later), so
/// a new search plugs in at the composition root without touching tasks or the dispatcher.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/exclusive_gate.h"
#include "common/status.h"
#include "server/dispatch/dispatcher.h"
#include "server/search/search_strategy.h"
#include "server/tasks/task_observer.h"
#include "server/tasks/remeasure.h"
#include "tuned/v1/task.pb.h"
#include "tuning_db/record_store.h"
#include "tuning_db/task_ownership.h"
#include "tuning_db/task_store.h"

namespace tuned::tasks {

/// Creates the search of one task.
using StrategyFactory = std::function<StatusOr<std::unique_ptr<search::SearchStrategy>>(
    const search::SearchContext& context, const v1::SearchOptions& options)>;

struct TaskManagerOptions {
  /// Required: builds each task's search.
  StrategyFactory strategy_factory;
  /// Protocol used when a spec leaves `measure` unset.
  v1::MeasureConfig default_measure;
  /// Re-measures of a spec that leaves fields of `remeasure` unset (remeasure.h).
  v1::RemeasureOptions default_remeasure = DefaultRemeasureOptions();
  /// Checks a target that target::ParseTarget accepted (e.g. against LLVM's CPU tables) and
  /// returns its canonical form (InvalidArgument otherwise). When empty, the text form of the
  /// parsed target is used as it is.
  std::function<StatusOr<std::string>(const std::string&)> canonicalize_target;
  /// Target for a spec without one when the connected workers do not share a single target.
  std::string default_target;
  /// Batch size when a spec leaves it 0.
  uint32_t default_batch_size = 16;
  /// Largest trial budget a spec may ask for.
  uint32_t max_trial_budget = 100000;
  /// Which server runs a task when several share the database; null when this server has the
  /// database to itself (SQLite) and runs every unfinished task in it. Must outlive the manager.
  db::TaskOwnership* ownership = nullptr;
  /// With `ownership`, after ResumeUnfinished: how often the server checks that it still owns
  /// its tasks (giving up those it lost) and takes over unfinished tasks nobody owns.
  int ownership_check_ms = 2000;
  /// Told of every search batch and stored result (metrics); null for none. Must outlive the
  /// manager.
  TaskObserver* observer = nullptr;
  /// When the search shares its cores with a measuring engine (the embedded `tuned tune`): the
  /// engine's timing gate, held shared while a task proposes a batch or learns from one, so that
  /// no kernel, a calibration included, is timed while the search computes. Null: the search
  /// runs on other cores than the kernels (remote workers). Must outlive the manager.
  ExclusiveGate* search_gate = nullptr;
};

/// Called with a task's status after every change (from the thread making the change); it must
/// not block and must not call back into the task manager.
using TaskWatcher = std::function<void(const v1::TaskStatus&)>;

class TaskManager {
 public:
  /// `tasks` (the tasks' states), `records` (the results they produce) and `dispatcher` must
  /// outlive this object.
  TaskManager(db::TaskStore& tasks, db::RecordStore& records, dispatch::Dispatcher& dispatcher,
              TaskManagerOptions options);
  /// Stops every task thread (see Stop).
  ~TaskManager();
  TaskManager(const TaskManager&) = delete;
  TaskManager& operator=(const TaskManager&) = delete;

  /// Restarts every PENDING or RUNNING task stored in the database (with ownership: those no
  /// other live server owns, and from then on every `ownership_check_ms` those whose owner
  /// died); returns how many it restarted now.
  StatusOr<int> ResumeUnfinished();

  /// Validates `spec` (InvalidArgument with the reason: bad workload spec, target, budget,
  /// search or measurement options), fills in defaults, stores the task and starts it.
  StatusOr<v1::TaskStatus> Submit(v1::TaskSpec spec);
  /// NotFound for an unknown id.
  StatusOr<v1::TaskStatus> Get(const std::string& task_id);
  StatusOr<std::vector<v1::TaskStatus>> List(std::optional<v1::TaskState> state);
  /// Cancels a running task (its queued jobs are dropped). FailedPrecondition when the task has
  /// already finished or runs on another server sharing the database; NotFound for an unknown
  /// id.
  StatusOr<v1::TaskStatus> Cancel(const std::string& task_id);

  /// Registers a watcher of `task_id`, calls it once with the current status, and returns its
  /// id. NotFound for an unknown task.
  StatusOr<uint64_t> AddWatcher(const std::string& task_id, TaskWatcher watcher);
  void RemoveWatcher(uint64_t watcher_id);

  /// A worker's calibration drifted (calibrations.h): each running task of a job in `batch`
  /// re-measures its jobs there (RECORD_KIND_REMEASURE) before its next batch.
  void RemeasureDrifted(const std::string& worker_id,
                        const std::vector<dispatch::CompletedJob>& batch);

  /// Stops every task thread without changing the tasks' stored state, so a restarted server
  /// resumes them. Idempotent.
  void Stop();

  /// Validates and fills in defaults; exposed for the service's error tests.
  StatusOr<v1::TaskSpec> NormalizeSpec(v1::TaskSpec spec) const;

 private:
  class Runner;

  /// False (nothing started) once the manager is stopping.
  bool StartRunner(const v1::TaskStatus& status);
  void Publish(const v1::TaskStatus& status);
  /// With ownership: takes every unfinished task that neither runs here nor has a live owner,
  /// and starts it (logging `verb`); returns how many.
  StatusOr<int> TakeUnownedTasks(const char* verb);
  /// With ownership: stops, without saving anything, the runners of tasks this server lost.
  void AbandonLostTasks();
  /// The ownership thread: AbandonLostTasks and TakeUnownedTasks every ownership_check_ms.
  void WatchOwnership();
  /// Gives up the ownership of a task that ended here or paused (no-op without ownership).
  void Disown(const std::string& task_id);

  db::TaskStore& tasks_;
  db::RecordStore& records_;
  dispatch::Dispatcher& dispatcher_;
  const TaskManagerOptions options_;

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Runner>> runners_;
  bool stopped_ = false;
  std::condition_variable stopping_;  // Wakes the ownership thread on Stop.
  std::thread ownership_thread_;

  std::mutex watchers_mu_;
  std::multimap<std::string, std::pair<uint64_t, TaskWatcher>> watchers_;
  uint64_t next_watcher_id_ = 1;
};

}  // namespace tuned::tasks

#endif  // TUNED_SERVER_TASKS_TASK_MANAGER_H_
