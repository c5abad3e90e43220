#include <sqlite3.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "common/logging.h"
#include "common/sha256.h"
#include "common/time.h"
#include "proto/measure_config.h"
#include "tuning_db/database.h"
#include "tuning_db/record_batch_internal.h"
#include "tuning_db/record_checks.h"
#include "tuning_db/schema/migrations.h"
#include "tuning_db/sqlite_database_internal.h"
#include "tuning_db/stored_record_internal.h"
#include "tuning_db/trace_hash.h"

namespace tuned::db {

StatusOr<int64_t> RecordStore::InsertRecord(const v1::TuningRecord& record) {
  TUNED_ASSIGN_OR_RETURN(InsertResult result, InsertRecords(std::span(&record, 1)));
  return result.record_ids.front();
}

std::string QuarantineStatusesSql() {
  std::string sql = "(";
  for (v1::MeasureStatus status : kQuarantineStatuses) {
    sql += (sql.size() > 1 ? ", " : "") + std::to_string(static_cast<int>(status));
  }
  return sql + ")";
}

std::string UnverifiedOnlyReason(const std::string& workload, const std::string& target,
                                 int64_t unverified_ok) {
  return "the " + std::to_string(unverified_ok) + " ok records of " + workload +
         " for target '" + target +
         "' were all measured with verification off (--no-verify); allow unverified records "
         "to use them";
}

namespace {

uint32_t ReadBigEndian(const unsigned char* bytes, int size) {
  uint32_t value = 0;
  for (int i = 0; i < size; ++i) value = (value << 8) | bytes[i];
  return value;
}

// Checks the 100-byte SQLite header ourselves, before SQLite touches the file: the magic string,
// and that the file is as long as the header says (SQLite would otherwise open a truncated
// file and fail only on the first read of a missing page). An empty file is a new database.
Status CheckFileHeader(const std::string& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return NotFoundError("cannot read database '" + path + "': " + error.message());
  if (size == 0) return Status::Ok();
  std::ifstream file(path, std::ios::binary);
  std::array<unsigned char, 100> header{};
  file.read(reinterpret_cast<char*>(header.data()), header.size());
  static constexpr char kMagic[] = "SQLite format 3";  // Followed by a NUL byte.
  if (file.gcount() < static_cast<std::streamsize>(header.size()) ||
      std::memcmp(header.data(), kMagic, sizeof(kMagic)) != 0) {
    return InvalidArgumentError("'" + path + "' is not a tuned database (not an SQLite file)");
  }
  uint32_t page_size = ReadBigEndian(&header[16], 2);
  if (page_size == 1) page_size = 65536;
  const uint32_t change_counter = ReadBigEndian(&header[24], 4);
  const uint32_t page_count = ReadBigEndian(&header[28], 4);
  const uint32_t valid_for = ReadBigEndian(&header[92], 4);
  if (page_size < 512 || (page_size & (page_size - 1)) != 0) {
    return DataLossError("database '" + path + "' is damaged: bad page size in its header");
  }
  // The in-header page count is authoritative only when it was written by the same change.
  if (page_count > 0 && valid_for == change_counter &&
      size < static_cast<uintmax_t>(page_count) * page_size) {
    return DataLossError("database '" + path + "' is damaged: the file has " +
                         std::to_string(size) + " bytes, its header says " +
                         std::to_string(static_cast<uintmax_t>(page_count) * page_size) +
                         " (truncated?)");
  }
  return Status::Ok();
}

// Adds which file a SQLite failure on open concerns, in the words a user needs.
Status DescribeOpenFailure(const std::string& path, const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return InvalidArgumentError("'" + path + "' is not a tuned database (" + status.message() +
                                  ")");
    case StatusCode::kDataLoss:
      return DataLossError("database '" + path + "' is damaged (" + status.message() + ")");
    default:
      return status.WithContext("database '" + path + "'");
  }
}

struct FileState {
  int64_t application_id = 0;
  int64_t user_version = 0;
  int64_t num_tables = 0;
};

StatusOr<FileState> ReadFileState(sqlite3* conn) {
  TUNED_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(conn,
                         "SELECT (SELECT application_id FROM pragma_application_id), "
                         "(SELECT user_version FROM pragma_user_version), "
                         "(SELECT COUNT(*) FROM sqlite_schema)"));
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt.Step());
  if (!has_row) return InternalError("reading the schema version returned nothing");
  return FileState{stmt.ColumnInt(0), stmt.ColumnInt(1), stmt.ColumnInt(2)};
}

StatusOr<std::string> ReadDatabaseId(sqlite3* conn) {
  TUNED_ASSIGN_OR_RETURN(
      Statement stmt, Statement::Prepare(conn, "SELECT value FROM meta WHERE key = 'database_id'"));
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt.Step());
  if (!has_row) return DataLossError("the meta table has no database id");
  return stmt.ColumnText(0);
}

StatusOr<std::unique_ptr<Database>> Open(const std::string& path, const OpenOptions& options) {
  std::error_code error;
  const bool exists = std::filesystem::exists(path, error);
  if (!exists && !options.create_if_missing) {
    return NotFoundError("database '" + path + "' does not exist");
  }
  if (exists) TUNED_RETURN_IF_ERROR(CheckFileHeader(path));

  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (options.create_if_missing) flags |= SQLITE_OPEN_CREATE;
  TUNED_ASSIGN_OR_RETURN(SqliteConnection conn, SqliteConnection::Open(path, flags));
  sqlite3_busy_timeout(conn.get(), options.busy_timeout_ms);

  // Look before writing anything: a foreign, damaged or newer file must stay as it is.
  StatusOr<FileState> state = ReadFileState(conn.get());
  if (!state.ok()) return DescribeOpenFailure(path, state.status());
  if (state->user_version > kSchemaVersion) {
    return FailedPreconditionError("database '" + path + "' has schema version " +
                                   std::to_string(state->user_version) +
                                   ", newer than this tuned supports (" +
                                   std::to_string(kSchemaVersion) + "); use a newer tuned");
  }
  const bool is_fresh = state->application_id == 0 && state->num_tables == 0;
  if (state->application_id != kApplicationId && !is_fresh) {
    return InvalidArgumentError("'" + path +
                                "' is an SQLite database of another application, not a tuned "
                                "database");
  }

  // WAL: readers never block the writer. synchronous=FULL: a committed transaction is on disk
  // before COMMIT returns, so an acknowledged record survives a killed process and a power cut.
  Status pragmas = conn.Exec(
      "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; "
      "PRAGMA foreign_keys = ON;",
      "setting journal mode");
  if (!pragmas.ok()) return DescribeOpenFailure(path, pragmas);
  if (state->user_version < kSchemaVersion) {
    Status migrated = MigrateSchema(conn.get(), kSchemaVersion);
    if (!migrated.ok()) return DescribeOpenFailure(path, migrated);
  }
  StatusOr<std::string> database_id = ReadDatabaseId(conn.get());
  if (!database_id.ok()) return DescribeOpenFailure(path, database_id.status());
  Logger("db")->debug("opened '{}' (database id {})", path, *database_id);
  return std::unique_ptr<Database>(
      std::make_unique<SqliteDatabase>(path, std::move(conn), std::move(*database_id)));
}

}  // namespace

StatusOr<std::unique_ptr<Database>> OpenSqliteDatabase(const std::string& path,
                                                       const OpenOptions& options) {
  return Open(path, options);
}

StatusOr<CachedStatement> SqliteDatabase::Cached(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    TUNED_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn_.get(), sql));
    it = statements_.emplace(sql, std::move(stmt)).first;
  }
  return CachedStatement(&it->second);
}

StatusOr<int64_t> SqliteDatabase::WorkloadIdLocked(const std::string& key) {
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt, Cached("SELECT id FROM workloads WHERE key = ?"));
  stmt->BindText(1, key);
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  return has_row ? stmt->ColumnInt(0) : 0;
}

StatusOr<int64_t> SqliteDatabase::TargetIdLocked(const std::string& target) {
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt, Cached("SELECT id FROM targets WHERE target = ?"));
  stmt->BindText(1, target);
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  return has_row ? stmt->ColumnInt(0) : 0;
}

StatusOr<int64_t> SqliteDatabase::UpsertWorkloadLocked(const v1::Workload& workload, bool* added) {
  TUNED_RETURN_IF_ERROR(CheckWorkload(workload));
  v1::Workload stored = workload;
  if (stored.key_sha256().empty()) stored.set_key_sha256(Sha256Hex(stored.key()));
  TUNED_ASSIGN_OR_RETURN(int64_t id, WorkloadIdLocked(stored.key()));
  *added = id == 0;
  if (id != 0) {
    // Workloads are immutable per key; only a FLOP count that was unknown is filled in.
    if (stored.flops() > 0) {
      TUNED_ASSIGN_OR_RETURN(CachedStatement update,
                             Cached("UPDATE workloads SET flops = ?, workload = ? "
                                    "WHERE id = ? AND flops = 0"));
      update->BindDouble(1, stored.flops()).BindBlob(2, stored.SerializeAsString()).BindInt(3, id);
      TUNED_RETURN_IF_ERROR(update->Run());
    }
    return id;
  }
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement insert,
      Cached("INSERT INTO workloads(key, key_sha256, op, definition, flops, workload, "
             "created_unix_ms) VALUES(?, ?, ?, ?, ?, ?, ?)"));
  insert->BindText(1, stored.key())
      .BindText(2, stored.key_sha256())
      .BindText(3, stored.op())
      .BindText(4, stored.definition())
      .BindDouble(5, stored.flops())
      .BindBlob(6, stored.SerializeAsString())
      .BindInt(7, UnixMs());
  TUNED_RETURN_IF_ERROR(insert->Run());
  return sqlite3_last_insert_rowid(conn_.get());
}

StatusOr<int64_t> SqliteDatabase::UpsertTargetLocked(const v1::Target& target,
                                                     const std::string& device) {
  if (target.target().empty()) return InvalidArgumentError("target string is empty");
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement stmt,
      Cached("INSERT INTO targets(target, kind, device_description) VALUES(?, ?, ?) "
             "ON CONFLICT(target) DO UPDATE SET "
             "kind = CASE WHEN excluded.kind != 0 THEN excluded.kind ELSE kind END, "
             "device_description = CASE WHEN excluded.device_description != '' "
             "THEN excluded.device_description ELSE device_description END "
             "RETURNING id"));
  stmt->BindText(1, target.target()).BindInt(2, target.kind()).BindText(3, device);
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return InternalError("target upsert returned no id");
  int64_t id = stmt->ColumnInt(0);
  return id;
}

Status SqliteDatabase::PutWorkload(const v1::Workload& workload) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginWrite(conn_.get()));
  bool added = false;
  TUNED_ASSIGN_OR_RETURN(int64_t id, UpsertWorkloadLocked(workload, &added));
  (void)id;
  return txn.Commit();
}

// SQLite's statements for InsertRecordBatch; the caller holds the lock and the transaction.
class SqliteDatabase::BatchWriter final : public RecordBatchWriter {
 public:
  BatchWriter(SqliteDatabase& db, sqlite3* conn, CachedStatement& insert,
                    CachedStatement& find)
      : db_(db), conn_(conn), insert_(insert), find_(find) {}

  StatusOr<int64_t> UpsertWorkload(const v1::Workload& workload) override {
    bool added = false;
    return db_.UpsertWorkloadLocked(workload, &added);
  }
  StatusOr<int64_t> UpsertTarget(const v1::Target& target, const std::string& device) override {
    return db_.UpsertTargetLocked(target, device);
  }
  StatusOr<int64_t> InsertIfNew(const RecordRow& row) override {
    insert_->Reset();  // Reused for every record of the batch.
    insert_->BindInt(1, row.workload_id)
        .BindInt(2, row.target_id)
        .BindBlob(3, row.trace)
        .BindText(4, row.trace_hash)
        .BindInt(5, row.status)
        .BindText(7, row.error)
        .BindBlob(8, row.result)
        .BindBlob(9, row.config)
        .BindText(10, row.worker_id)
        .BindText(11, row.device_model)
        .BindText(12, row.tuner_version)
        .BindText(13, row.task_id)
        .BindInt(14, row.created_unix_ms)
        .BindText(15, row.origin)
        .BindInt(16, row.verified ? 1 : 0)
        .BindInt(17, row.kind)
        .BindText(18, row.toolkit_version)
        .BindInt(19, row.codegen_version)
        .BindInt(20, row.protocol_version);
    if (row.median_seconds) {
      insert_->BindDouble(6, *row.median_seconds);
    } else {
      insert_->BindNull(6);
    }
    TUNED_RETURN_IF_ERROR(insert_->Run());
    return sqlite3_changes(conn_) > 0 ? sqlite3_last_insert_rowid(conn_) : 0;
  }
  StatusOr<int64_t> FindIdentity(const RecordRow& row) override {
    find_->Reset();
    find_->BindInt(1, row.workload_id)
        .BindInt(2, row.target_id)
        .BindText(3, row.trace_hash)
        .BindText(4, row.worker_id)
        .BindInt(5, row.created_unix_ms);
    TUNED_ASSIGN_OR_RETURN(bool found, find_->Step());
    const int64_t id = found ? find_->ColumnInt(0) : 0;
    find_->Reset();
    return id;
  }

 private:
  SqliteDatabase& db_;
  sqlite3* conn_;
  CachedStatement& insert_;
  CachedStatement& find_;
};

StatusOr<InsertResult> SqliteDatabase::InsertRecords(std::span<const v1::TuningRecord> records,
                                                     const InsertOptions& options) {
  for (size_t i = 0; i < records.size(); ++i) TUNED_RETURN_IF_ERROR(CheckRecord(records[i], i));
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginWrite(conn_.get()));
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement insert,
      Cached("INSERT OR IGNORE INTO records(workload_id, target_id, trace, trace_hash, status, "
             "median_seconds, error, result, config, worker_id, device_model, tuner_version, "
             "task_id, created_unix_ms, origin, verified, kind, toolkit_version, "
             "codegen_version, protocol_version) "
             "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement find,
      Cached("SELECT id FROM records WHERE workload_id = ? AND target_id = ? AND trace_hash = ? "
             "AND worker_id = ? AND created_unix_ms = ?"));
  BatchWriter writer(*this, conn_.get(), insert, find);
  TUNED_ASSIGN_OR_RETURN(InsertResult out,
                         InsertRecordBatch(records, options, database_id_, writer));
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return out;
}

StatusOr<int> SqliteDatabase::CountWorkerLoss(const std::string& workload_key,
                                              const std::string& target,
                                              const std::string& trace_hash,
                                              const std::string& reason) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginWrite(conn_.get()));
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement upsert,
      Cached("INSERT INTO worker_losses(workload_key, target, trace_hash, losses, reason, "
             "updated_unix_ms) VALUES(?, ?, ?, 1, ?, ?) ON CONFLICT(workload_key, target, "
             "trace_hash) DO UPDATE SET losses = losses + 1, reason = excluded.reason, "
             "updated_unix_ms = excluded.updated_unix_ms RETURNING losses"));
  upsert->BindText(1, workload_key)
      .BindText(2, target)
      .BindText(3, trace_hash)
      .BindText(4, reason)
      .BindInt(5, UnixMs());
  TUNED_ASSIGN_OR_RETURN(bool has_row, upsert->Step());
  if (!has_row) return InternalError("counting a worker loss returned nothing");
  const int losses = static_cast<int>(upsert->ColumnInt(0));
  upsert->Reset();
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return losses;
}

Status SqliteDatabase::SaveTask(const v1::TaskStatus& status) {
  if (status.task_id().empty()) return InvalidArgumentError("task has an empty id");
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginWrite(conn_.get()));
  const int64_t best_id = status.best().record_id();
  if (best_id != 0) {
    TUNED_ASSIGN_OR_RETURN(CachedStatement exists, Cached("SELECT 1 FROM records WHERE id = ?"));
    exists->BindInt(1, best_id);
    TUNED_ASSIGN_OR_RETURN(bool found, exists->Step());
    if (!found) {
      return InvalidArgumentError("task '" + status.task_id() + "': best record " +
                                  std::to_string(best_id) + " is not in the database");
    }
  }
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement upsert,
      Cached("INSERT INTO tasks(task_id, spec, workload_key, target, trial_budget, trials_done, "
             "state, best_record_id, error, updated_unix_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
             "ON CONFLICT(task_id) DO UPDATE SET spec = excluded.spec, "
             "workload_key = excluded.workload_key, target = excluded.target, "
             "trial_budget = excluded.trial_budget, trials_done = excluded.trials_done, "
             "state = excluded.state, best_record_id = excluded.best_record_id, "
             "error = excluded.error, updated_unix_ms = excluded.updated_unix_ms"));
  upsert->BindText(1, status.task_id())
      .BindBlob(2, status.spec().SerializeAsString())
      .BindText(3, status.spec().workload_spec())
      .BindText(4, status.spec().target().target())
      .BindInt(5, status.spec().trial_budget())
      .BindInt(6, status.trials_done())
      .BindInt(7, status.state())
      .BindText(9, status.error())
      .BindInt(10, status.updated_unix_ms() != 0 ? status.updated_unix_ms() : UnixMs());
  if (best_id != 0) {
    upsert->BindInt(8, best_id);
  } else {
    upsert->BindNull(8);
  }
  TUNED_RETURN_IF_ERROR(upsert->Run());
  return txn.Commit();
}

StatusOr<bool> SqliteDatabase::SaveCostModelSnapshot(const CostModelSnapshot& snapshot) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginWrite(conn_.get()));
  v1::Target target;
  target.set_target(snapshot.target);
  TUNED_ASSIGN_OR_RETURN(int64_t target_id, UpsertTargetLocked(target, /*device=*/""));
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement insert,
      Cached("INSERT OR IGNORE INTO cost_model_snapshots(target_id, format, feature_version, "
             "num_records, model, origin, created_unix_ms) VALUES(?, ?, ?, ?, ?, ?, ?)"));
  insert->BindInt(1, target_id)
      .BindText(2, snapshot.format)
      .BindInt(3, snapshot.feature_version)
      .BindInt(4, snapshot.num_records)
      .BindBlob(5, snapshot.model)
      .BindText(6, snapshot.origin.empty() ? database_id_ : snapshot.origin)
      .BindInt(7, snapshot.created_unix_ms != 0 ? snapshot.created_unix_ms : UnixMs());
  TUNED_RETURN_IF_ERROR(insert->Run());
  const int64_t new_id =
      sqlite3_changes(conn_.get()) > 0 ? sqlite3_last_insert_rowid(conn_.get()) : 0;
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement prune,
      Cached("DELETE FROM cost_model_snapshots WHERE target_id = ?1 AND id NOT IN ("
             "SELECT id FROM cost_model_snapshots WHERE target_id = ?1 "
             "ORDER BY created_unix_ms DESC, id DESC LIMIT ?2)"));
  prune->BindInt(1, target_id).BindInt(2, kKeptSnapshotsPerTarget);
  TUNED_RETURN_IF_ERROR(prune->Run());
  // A snapshot older than the kept ones is pruned at once: it does not count as added.
  bool added = false;
  if (new_id != 0) {
    TUNED_ASSIGN_OR_RETURN(CachedStatement kept,
                           Cached("SELECT 1 FROM cost_model_snapshots WHERE id = ?"));
    kept->BindInt(1, new_id);
    TUNED_ASSIGN_OR_RETURN(added, kept->Step());
  }
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return added;
}

Status SqliteDatabase::LogMerge(const MergeEntry& entry) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement insert,
      Cached("INSERT INTO merges(source_path, source_database_id, workloads_added, "
             "records_added, snapshots_added, merged_unix_ms) VALUES(?, ?, ?, ?, ?, ?)"));
  insert->BindText(1, entry.source_path)
      .BindText(2, entry.source_database_id)
      .BindInt(3, entry.workloads_added)
      .BindInt(4, entry.records_added)
      .BindInt(5, entry.snapshots_added)
      .BindInt(6, entry.merged_unix_ms != 0 ? entry.merged_unix_ms : UnixMs());
  return insert->Run();
}

}  // namespace tuned::db
