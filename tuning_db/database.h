#ifndef TUNED_TUNING_DB_DATABASE_H_
#define TUNED_TUNING_DB_DATABASE_H_

/// \file
/// The tuning database: the single source of truth for workloads, measured records, tasks and
/// cost-model snapshots. The server writes it, the compiler and the CLI read it, often at the
/// same time from different processes. It stores workloads and traces as the messages of
/// `proto/tuned/v1/` and knows nothing of the compiler's IR.
///
/// Its users see the part they need: `RecordStore` (record_store.h), `TaskStore`
/// (task_store.h), `SnapshotStore` (snapshot_store.h). `Database` is all three plus what only
/// the administration commands use (identity, statistics, the merge log). Two backends
/// implement it: an SQLite file (the embedded default) and a PostgreSQL database (one log
/// shared by many servers and compilers); `OpenDatabase` picks one from the argument.
///
/// Lifecycle: `OpenDatabase` opens (or creates) the log, refuses one it must not touch, and runs
/// pending migrations; the returned object is thread-safe and closes its connections when
/// destroyed. Every write is one transaction; a write that returned OK survives the process
/// being killed right after.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tuning_db/record_store.h"
#include "tuning_db/snapshot_store.h"
#include "tuning_db/task_ownership.h"
#include "tuning_db/task_store.h"

namespace tuned::db {

struct OpenOptions {
  /// Create (and initialize) the file when it does not exist; when false a missing file is a
  /// NotFound error and nothing is created.
  bool create_if_missing = true;
  /// How long an operation waits for another process's write lock before failing Unavailable.
  /// (PostgreSQL: `lock_timeout`.)
  int busy_timeout_ms = 10000;
  /// PostgreSQL: at most this many server connections, opened when first needed; calls beyond
  /// it wait for a free one. SQLite uses one connection and ignores it.
  int pool_size = 4;
};

struct TargetCount {
  std::string target;
  std::string device_description;
  int64_t num_records = 0;
  int64_t num_ok = 0;
};

struct MergeEntry {
  std::string source_path;
  std::string source_database_id;
  int64_t workloads_added = 0;
  int64_t records_added = 0;
  int64_t snapshots_added = 0;
  int64_t merged_unix_ms = 0;
};

struct DatabaseStats {
  std::string path;
  std::string database_id;
  int schema_version = 0;
  int64_t file_bytes = 0;
  int64_t num_workloads = 0;
  int64_t num_targets = 0;
  int64_t num_records = 0;
  int64_t num_tasks = 0;
  int64_t num_snapshots = 0;
  std::vector<std::pair<v1::MeasureStatus, int64_t>> records_by_status;  // Non-zero counts.
  std::vector<std::pair<v1::TaskState, int64_t>> tasks_by_state;         // Non-zero counts.
  std::vector<TargetCount> targets;
  std::vector<MergeEntry> merges;  // Oldest first.
};

class Database : public RecordStore, public TaskStore, public SnapshotStore {
 public:
  ~Database() override = default;

  /// The file path, or the PostgreSQL URL without its password.
  virtual const std::string& path() const = 0;
  /// Random 32-hex-digit id created with the file; records first stored here carry it.
  virtual const std::string& database_id() const = 0;

  /// Appends an entry to the merge log.
  virtual Status LogMerge(const MergeEntry& entry) = 0;
  virtual StatusOr<DatabaseStats> Stats() = 0;

  /// Task ownership among the servers sharing this database (PostgreSQL; owned by this
  /// object), or null where one server has the database to itself (an SQLite file).
  virtual TaskOwnership* task_ownership() { return nullptr; }
};

/// Opens the SQLite tuning database at `path`. Refused, with a one-line error naming the file
/// and leaving it unchanged: a file that is not an SQLite database or is an SQLite database of
/// another application (InvalidArgument), a damaged or truncated file (DataLoss), a file
/// written by a newer schema version (FailedPrecondition), a missing file when
/// `create_if_missing` is false (NotFound).
StatusOr<std::unique_ptr<Database>> OpenSqliteDatabase(const std::string& path,
                                                       const OpenOptions& options = {});

/// Opens the tuning log a user's database argument names (`--db`, `TUNED_DB`): a
/// `postgresql://` or `postgres://` URL is a PostgreSQL database (libpq's URI syntax; the tuned
/// tables live in the connection's current schema), anything else an SQLite file
/// (`OpenSqliteDatabase`). PostgreSQL errors are one line naming the URL without its password:
/// a bad URL (InvalidArgument), an unreachable server or refused login (Unavailable,
/// Unauthenticated), a schema of another application (InvalidArgument), a newer schema
/// (FailedPrecondition), no tuned schema when `create_if_missing` is false (NotFound), a build
/// without libpq (Unimplemented).
StatusOr<std::unique_ptr<Database>> OpenDatabase(const std::string& location,
                                                 const OpenOptions& options = {});

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_DATABASE_H_
