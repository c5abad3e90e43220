#ifndef TUNED_TUNING_DB_TASK_OWNERSHIP_H_
#define TUNED_TUNING_DB_TASK_OWNERSHIP_H_

/// \file
/// Which server runs a task when several servers share one database (PostgreSQL): a task is
/// owned by one process at a time, and when that process dies its tasks become free for
/// another to take over. The PostgreSQL database implements it with session advisory locks
/// held on one connection of their own (`Database::task_ownership()`); an SQLite file has one
/// server and no ownership (null there). Thread-safe.

#include <string>
#include <vector>

#include "common/status.h"

namespace tuned::db {

class TaskOwnership {
 public:
  virtual ~TaskOwnership() = default;

  /// Takes `task_id` for this process without waiting: true when this process owns it now
  /// (also when it already did), false when another process does.
  virtual StatusOr<bool> TryOwn(const std::string& task_id) = 0;
  /// Gives a task up (finished, cancelled, server stopping); nothing when not owned.
  virtual Status Release(const std::string& task_id) = 0;
  /// Checks that this process still owns its tasks and returns those it lost since the last
  /// check: all it owned when its session with the database ended (a dropped connection, also
  /// one noticed by another call), after which it owns nothing until TryOwn again.
  virtual StatusOr<std::vector<std::string>> CheckOwned() = 0;
};

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_TASK_OWNERSHIP_H_
