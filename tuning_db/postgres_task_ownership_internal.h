#ifndef TUNED_TUNING_DB_POSTGRES_TASK_OWNERSHIP_INTERNAL_H_
#define TUNED_TUNING_DB_POSTGRES_TASK_OWNERSHIP_INTERNAL_H_

/// \file
/// Task ownership on PostgreSQL: one session advisory lock per owned task, all held on one
/// connection of their own (not the pool's, whose connections come and go). The lock key is
/// derived from the schema and the task id, so logs in different schemas of one server never
/// collide. PostgreSQL drops a session's locks when it ends, so a killed server's tasks are
/// free at once; a vanished host's session ends after the TCP keepalives set here. Private to
/// tuning_db; reached through `Database::task_ownership()`.

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tuning_db/postgres_util.h"
#include "tuning_db/task_ownership.h"

namespace tuned::db {

class PgTaskOwnership final : public TaskOwnership {
 public:
  /// The session is named `tuned tasks <database_id>` (pg_stat_activity's application_name), so
  /// an administrator sees which log it serves.
  PgTaskOwnership(std::string url, std::string shown_url, std::string database_id)
      : url_(std::move(url)), shown_url_(std::move(shown_url)),
        database_id_(std::move(database_id)) {}

  StatusOr<bool> TryOwn(const std::string& task_id) override;
  Status Release(const std::string& task_id) override;
  StatusOr<std::vector<std::string>> CheckOwned() override;

 private:
  /// The locking connection, opened when first needed; callers hold mutex_.
  StatusOr<PgConnection*> ConnectionLocked();
  /// The advisory-lock key of `task_id` in this connection's schema.
  int64_t LockKey(const std::string& task_id) const;
  /// Ends the session: every owned task is lost (the server drops the locks with the session)
  /// and kept in lost_ until CheckOwned reports it.
  void DropSessionLocked();

  const std::string url_;
  const std::string shown_url_;
  const std::string database_id_;
  std::mutex mutex_;
  std::unique_ptr<PgConnection> conn_;
  std::string schema_;
  std::set<std::string> owned_;
  std::vector<std::string> lost_;  // Lost with a session, not yet reported by CheckOwned.
};

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_POSTGRES_TASK_OWNERSHIP_INTERNAL_H_
