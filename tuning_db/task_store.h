#ifndef TUNED_TUNING_DB_TASK_STORE_H_
#define TUNED_TUNING_DB_TASK_STORE_H_

/// \file
/// Tuning tasks and their state (spec, budget, progress, best record), saved by the server so
/// that a restarted server resumes them. Implemented by the SQLite database (database.h).

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tuned/v1/task.pb.h"

namespace tuned::db {

class TaskStore {
 public:
  virtual ~TaskStore() = default;

  /// Creates or replaces a task's state. `status.best` is stored by reference: its `record_id`
  /// (0 for none) must name a stored record.
  virtual Status SaveTask(const v1::TaskStatus& status) = 0;
  /// NotFound when no task has `task_id`. `best` is filled from the referenced record.
  virtual StatusOr<v1::TaskStatus> LoadTask(const std::string& task_id) = 0;
  /// Tasks in `state` (every task when nullopt), least recently updated first.
  virtual StatusOr<std::vector<v1::TaskStatus>> ListTasks(std::optional<v1::TaskState> state) = 0;
};

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_TASK_STORE_H_
