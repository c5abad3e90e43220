#include <cstdlib>
#include <utility>

#include "common/logging.h"
#include "common/sha256.h"
#include "tuning_db/postgres_task_ownership_internal.h"

namespace tuned::db {
namespace {

// A head node that vanishes without closing its connection (power, network) must not keep its
// tasks for the operating system's default two hours: the server probes an idle session after
// 5 s and drops it after 3 unanswered probes 2 s apart. (TCP only; a Unix socket closes with
// its process.)
constexpr char kSessionSql[] =
    "SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3";

}  // namespace

StatusOr<PgConnection*> PgTaskOwnership::ConnectionLocked() {
  if (conn_ != nullptr && !conn_->broken()) return conn_.get();
  if (conn_ != nullptr) DropSessionLocked();
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn,
                         PgConnection::Connect(url_, shown_url_));
  TUNED_RETURN_IF_ERROR(conn->Exec(std::string(kSessionSql) + "; SET application_name = 'tuned tasks " +
                                       database_id_ + "'",
                                   "setting up the task-ownership session"));
  TUNED_ASSIGN_OR_RETURN(PgResult schema, conn->Query("SELECT current_schema()"));
  schema_ = schema.rows() > 0 ? schema.Text(0, 0) : "";
  conn_ = std::move(conn);
  return conn_.get();
}

int64_t PgTaskOwnership::LockKey(const std::string& task_id) const {
  const std::string digest = Sha256Hex("tuned task\n" + schema_ + "\n" + task_id);
  return static_cast<int64_t>(std::strtoull(digest.substr(0, 16).c_str(), nullptr, 16));
}

void PgTaskOwnership::DropSessionLocked() {
  lost_.insert(lost_.end(), owned_.begin(), owned_.end());
  owned_.clear();
  conn_.reset();  // Ends the session, and with it any lock the server still holds for it.
}

StatusOr<bool> PgTaskOwnership::TryOwn(const std::string& task_id) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(PgConnection * conn, ConnectionLocked());
  if (owned_.contains(task_id)) return true;  // Session locks stack: take each once.
  PgParams key;
  key.Int(LockKey(task_id));
  StatusOr<PgResult> locked = conn->Query("SELECT pg_try_advisory_lock($1)::int", key);
  if (!locked.ok()) {
    DropSessionLocked();
    return locked.status().WithContext("taking task '" + task_id + "'");
  }
  if (locked->Int(0, 0) == 0) return false;
  owned_.insert(task_id);
  return true;
}

Status PgTaskOwnership::Release(const std::string& task_id) {
  std::lock_guard lock(mutex_);
  if (!owned_.contains(task_id) || conn_ == nullptr) return Status::Ok();
  PgParams key;
  key.Int(LockKey(task_id));
  StatusOr<PgResult> unlocked = conn_->Query("SELECT pg_advisory_unlock($1)::int", key);
  owned_.erase(task_id);
  if (!unlocked.ok()) {
    DropSessionLocked();  // Releases everything; better than holding a lock we cannot drop.
    return unlocked.status().WithContext("releasing task '" + task_id + "'");
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> PgTaskOwnership::CheckOwned() {
  std::lock_guard lock(mutex_);
  if (conn_ != nullptr) {
    // Locks live as long as the session: a working session still holds all of them.
    StatusOr<PgResult> alive = conn_->Query("SELECT 1");
    if (!alive.ok() || conn_->broken()) DropSessionLocked();
  }
  std::vector<std::string> lost = std::exchange(lost_, {});
  if (!lost.empty()) {
    Logger("db")->warn("lost the task-ownership session with '{}': {} task(s) given up",
                       shown_url_, lost.size());
  }
  return lost;
}

}  // namespace tuned::db
