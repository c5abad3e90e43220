// The read side of SqliteDatabase: lookups, best-k with miss reasons, listings and statistics.

#include <sqlite3.h>

#include <filesystem>
#include <sstream>

#include "tuning_db/record_key_internal.h"
#include "tuning_db/record_text.h"
#include "tuning_db/stored_record_internal.h"
#include "tuning_db/sqlite_database_internal.h"

namespace tuned::db {
namespace {

// Column reads of the statement's current row, as RecordFromColumns wants them.
struct SqliteRow {
  const Statement& stmt;
  int64_t Int(int column) const { return stmt.ColumnInt(column); }
  std::string Text(int column) const { return stmt.ColumnText(column); }
  std::string Bytes(int column) const { return stmt.ColumnBlob(column); }
};

StatusOr<v1::TuningRecord> RecordFromRow(const Statement& stmt) {
  return RecordFromColumns(SqliteRow{stmt});
}

std::string Quoted(const std::string& text) { return "'" + text + "'"; }

// Binds the four parameters of KeyConditionsSql from `first`.
void BindKey(Statement& stmt, int first, const MeasurementKey& key) {
  stmt.BindText(first, key.device_model)
      .BindText(first + 1, key.toolkit_version)
      .BindInt(first + 2, key.codegen_version)
      .BindInt(first + 3, key.protocol_version);
}

}  // namespace

StatusOr<std::vector<v1::TuningRecord>> SqliteDatabase::QueryRecordsLocked(Statement& stmt) {
  std::vector<v1::TuningRecord> records;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, stmt.Step());
    if (!has_row) break;
    TUNED_ASSIGN_OR_RETURN(v1::TuningRecord record, RecordFromRow(stmt));
    records.push_back(std::move(record));
  }
  return records;
}

StatusOr<v1::TuningRecord> SqliteDatabase::GetRecordLocked(int64_t record_id) {
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt,
                         Cached(std::string(kRecordSelect) + "WHERE r.id = ?"));
  stmt->BindInt(1, record_id);
  TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> records, QueryRecordsLocked(*stmt));
  if (records.empty()) return NotFoundError("no record with id " + std::to_string(record_id));
  return std::move(records.front());
}

StatusOr<v1::Workload> SqliteDatabase::GetWorkload(const std::string& key) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt,
                         Cached("SELECT id, workload FROM workloads WHERE key = ?"));
  stmt->BindText(1, key);
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return NotFoundError("no workload with key '" + key + "'");
  v1::Workload workload;
  TUNED_RETURN_IF_ERROR(ParseStored(workload, stmt->ColumnBlob(1), "workload", stmt->ColumnInt(0)));
  return workload;
}

StatusOr<std::vector<WorkloadSummary>> SqliteDatabase::ListWorkloads() {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginRead(conn_.get()));
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement stmt,
      Cached("SELECT w.id, w.workload, COUNT(r.id), COALESCE(SUM(r.status = 1), 0), "
             "COALESCE(MIN(r.median_seconds), 0), COALESCE(MAX(r.created_unix_ms), 0), "
             "(SELECT group_concat(target, char(10)) FROM (SELECT DISTINCT t.target AS target "
             " FROM records r2 JOIN targets t ON t.id = r2.target_id "
             " WHERE r2.workload_id = w.id ORDER BY t.target)) "
             "FROM workloads w LEFT JOIN records r ON r.workload_id = w.id "
             "GROUP BY w.id ORDER BY w.key"));
  std::vector<WorkloadSummary> summaries;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) break;
    WorkloadSummary summary;
    TUNED_RETURN_IF_ERROR(
        ParseStored(summary.workload, stmt->ColumnBlob(1), "workload", stmt->ColumnInt(0)));
    summary.num_records = stmt->ColumnInt(2);
    summary.num_ok = stmt->ColumnInt(3);
    summary.best_median_seconds = stmt->ColumnDouble(4);
    summary.last_unix_ms = stmt->ColumnInt(5);
    std::istringstream targets(stmt->ColumnText(6));
    for (std::string line; std::getline(targets, line);) summary.targets.push_back(line);
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

StatusOr<std::vector<std::string>> SqliteDatabase::ListTargets(const std::string& workload_key) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement stmt,
      Cached(workload_key.empty()
                 ? "SELECT t.target FROM targets t WHERE EXISTS "
                   "(SELECT 1 FROM records r WHERE r.target_id = t.id) ORDER BY t.target"
                 : "SELECT t.target FROM targets t WHERE EXISTS (SELECT 1 FROM records r "
                   "WHERE r.workload_id = (SELECT id FROM workloads WHERE key = ?) "
                   "AND r.target_id = t.id) ORDER BY t.target"));
  if (!workload_key.empty()) stmt->BindText(1, workload_key);
  std::vector<std::string> targets;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) break;
    targets.push_back(stmt->ColumnText(0));
  }
  return targets;
}

StatusOr<v1::TuningRecord> SqliteDatabase::GetRecord(int64_t record_id) {
  std::lock_guard lock(mutex_);
  return GetRecordLocked(record_id);
}

StatusOr<std::vector<v1::TuningRecord>> SqliteDatabase::ListRecords(const RecordFilter& filter) {
  std::string sql = std::string(kRecordSelect) + "WHERE r.id > ?1";
  if (!filter.workload_key.empty()) sql += " AND w.key = ?2";
  if (!filter.target.empty()) sql += " AND t.target = ?3";
  if (!filter.task_id.empty()) sql += " AND r.task_id = ?4";
  sql += " ORDER BY r.id LIMIT ?5";
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt, Cached(sql));
  stmt->BindInt(1, filter.after_id).BindInt(5, filter.limit);
  if (!filter.workload_key.empty()) stmt->BindText(2, filter.workload_key);
  if (!filter.target.empty()) stmt->BindText(3, filter.target);
  if (!filter.task_id.empty()) stmt->BindText(4, filter.task_id);
  return QueryRecordsLocked(*stmt);
}

StatusOr<BestRecords> SqliteDatabase::GetBestRecords(const BestRecordsQuery& query) {
  if (query.limit <= 0) return InvalidArgumentError("best-records limit must be positive");
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginRead(conn_.get()));
  TUNED_ASSIGN_OR_RETURN(int64_t workload_id, WorkloadIdLocked(query.workload_key));
  TUNED_ASSIGN_OR_RETURN(int64_t target_id, TargetIdLocked(query.target));
  BestRecords best;
  if (workload_id != 0 && target_id != 0) {
    std::string sql = std::string(kRecordSelect) +
                      "WHERE r.workload_id = ?1 AND r.target_id = ?2 AND r.status = 1" +
                      KeyConditionsSql("r", 4, '?');
    if (!query.allow_unverified) sql += " AND r.verified <> 0";
    sql += RankingConditionsSql(4, '?', query.allow_unverified);
    sql += " ORDER BY r.median_seconds, r.id LIMIT ?3";
    TUNED_ASSIGN_OR_RETURN(CachedStatement stmt, Cached(sql));
    stmt->BindInt(1, workload_id).BindInt(2, target_id).BindInt(3, query.limit);
    BindKey(*stmt, 4, query.Key());
    TUNED_ASSIGN_OR_RETURN(best.records, QueryRecordsLocked(*stmt));
    TUNED_ASSIGN_OR_RETURN(CachedStatement trials,
                           Cached("SELECT COUNT(*) FROM records WHERE workload_id = ?1 AND "
                                  "target_id = ?2 AND kind = " + std::to_string(int(v1::RECORD_KIND_SEARCH))));
    trials->BindInt(1, workload_id).BindInt(2, target_id);
    TUNED_ASSIGN_OR_RETURN(bool has_row, trials->Step());
    if (has_row) best.trials = trials->ColumnInt(0);
  }
  if (best.records.empty()) {
    TUNED_ASSIGN_OR_RETURN(best.miss_reason, ExplainMissLocked(query, workload_id, target_id));
  }
  return best;
}

StatusOr<std::string> SqliteDatabase::ExplainMissLocked(const BestRecordsQuery& query,
                                                        int64_t workload_id, int64_t target_id) {
  if (workload_id == 0) return "no workload with key " + Quoted(query.workload_key);
  // Per target of this workload: how many records, how many OK.
  TUNED_ASSIGN_OR_RETURN(CachedStatement per_target,
                         Cached("SELECT t.id, t.target, COUNT(*), SUM(r.status = 1) FROM records r "
                                "JOIN targets t ON t.id = r.target_id WHERE r.workload_id = ? "
                                "GROUP BY t.id ORDER BY t.target"));
  per_target->BindInt(1, workload_id);
  int64_t here_total = 0;
  int64_t here_ok = 0;
  std::vector<std::string> elsewhere;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, per_target->Step());
    if (!has_row) break;
    if (per_target->ColumnInt(0) == target_id) {
      here_total = per_target->ColumnInt(2);
      here_ok = per_target->ColumnInt(3);
    } else {
      elsewhere.push_back(Quoted(per_target->ColumnText(1)) + " (" +
                          std::to_string(per_target->ColumnInt(3)) + " ok of " +
                          std::to_string(per_target->ColumnInt(2)) + ")");
    }
  }
  const std::string workload = "workload " + Quoted(query.workload_key);
  if (here_total == 0) {
    if (elsewhere.empty()) return workload + " has no records";
    std::string reason = "no records of " + workload + " for target " + Quoted(query.target) +
                         "; records exist for other targets: ";
    for (size_t i = 0; i < elsewhere.size(); ++i) reason += (i ? ", " : "") + elsewhere[i];
    return reason;
  }
  if (here_ok == 0) {
    TUNED_ASSIGN_OR_RETURN(CachedStatement by_status,
                           Cached("SELECT status, COUNT(*) FROM records WHERE workload_id = ? AND "
                                  "target_id = ? GROUP BY status ORDER BY status"));
    by_status->BindInt(1, workload_id).BindInt(2, target_id);
    std::string reason = "all " + std::to_string(here_total) + " records of " + workload +
                         " for target " + Quoted(query.target) + " failed (";
    bool first = true;
    while (true) {
      TUNED_ASSIGN_OR_RETURN(bool has_row, by_status->Step());
      if (!has_row) break;
      reason += (first ? "" : ", ") + std::to_string(by_status->ColumnInt(1)) + " " +
                MeasureStatusLabel(static_cast<v1::MeasureStatus>(by_status->ColumnInt(0)));
      first = false;
    }
    return reason + ")";
  }
  if (!query.allow_unverified) {
    TUNED_ASSIGN_OR_RETURN(CachedStatement verified,
                           Cached("SELECT COUNT(*) FROM records WHERE workload_id = ? AND "
                                  "target_id = ? AND status = 1 AND verified <> 0"));
    verified->BindInt(1, workload_id).BindInt(2, target_id);
    TUNED_ASSIGN_OR_RETURN(bool has_row, verified->Step());
    if (has_row && verified->ColumnInt(0) == 0) {
      return UnverifiedOnlyReason(workload, query.target, here_ok);
    }
  }
  // Verified OK records exist for the target, so the key excluded them all.
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement keys,
      Cached("SELECT device_model, toolkit_version, codegen_version, protocol_version, COUNT(*) "
             "FROM records WHERE workload_id = ? AND target_id = ? AND status = 1 GROUP BY "
             "device_model, toolkit_version, codegen_version, protocol_version"));
  keys->BindInt(1, workload_id).BindInt(2, target_id);
  std::vector<KeyCount> existing;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, keys->Step());
    if (!has_row) break;
    existing.push_back({keys->ColumnText(0), keys->ColumnText(1), keys->ColumnInt(2),
                        keys->ColumnInt(3), keys->ColumnInt(4)});
  }
  return KeyMissReason(query, workload, existing);
}

StatusOr<int> SqliteDatabase::WorkerLosses(const std::string& workload_key,
                                           const std::string& target,
                                           const std::string& trace_hash) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt,
                         Cached("SELECT losses FROM worker_losses WHERE workload_key = ? AND "
                                "target = ? AND trace_hash = ?"));
  stmt->BindText(1, workload_key).BindText(2, target).BindText(3, trace_hash);
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  return has_row ? static_cast<int>(stmt->ColumnInt(0)) : 0;
}

StatusOr<std::vector<QuarantinedTrace>> SqliteDatabase::ListQuarantined(
    const std::string& workload_key) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement stmt,
      Cached("SELECT w.key, t.target, r.trace_hash, r.status, r.error, r.id, r.created_unix_ms "
             "FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON "
             "t.id = r.target_id WHERE r.status IN " + QuarantineStatusesSql() +
             " AND (?1 = '' OR w.key = ?1) ORDER BY r.id"));
  stmt->BindText(1, workload_key);
  std::vector<QuarantinedTrace> out;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) break;
    QuarantinedTrace trace;
    trace.workload_key = stmt->ColumnText(0);
    trace.target = stmt->ColumnText(1);
    trace.trace_hash = stmt->ColumnText(2);
    trace.status = static_cast<v1::MeasureStatus>(stmt->ColumnInt(3));
    trace.reason = stmt->ColumnText(4);
    trace.record_id = stmt->ColumnInt(5);
    trace.created_unix_ms = stmt->ColumnInt(6);
    out.push_back(std::move(trace));
  }
  return out;
}

StatusOr<std::vector<v1::TuningRecord>> SqliteDatabase::TaskRecords(const std::string& task_id) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt,
                         Cached(std::string(kRecordSelect) + "WHERE r.task_id = ? ORDER BY r.id"));
  stmt->BindText(1, task_id);
  return QueryRecordsLocked(*stmt);
}

StatusOr<bool> SqliteDatabase::HasMeasured(const std::string& workload_key,
                                           const std::string& target,
                                           const std::string& trace_hash,
                                           const MeasurementKey& key) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement stmt,
      Cached("SELECT 1 FROM records r WHERE r.workload_id = (SELECT id FROM workloads WHERE key = "
             "?1) AND r.target_id = (SELECT id FROM targets WHERE target = ?2) AND r.trace_hash = "
             "?3" + KeyConditionsSql("r", 4, '?') + " LIMIT 1"));
  stmt->BindText(1, workload_key).BindText(2, target).BindText(3, trace_hash);
  BindKey(*stmt, 4, key);
  return stmt->Step();
}

StatusOr<std::set<std::string>> SqliteDatabase::MeasuredTraceHashes(
    const std::string& workload_key, const std::string& target,
    const std::vector<std::string>& trace_hashes, const MeasurementKey& key) {
  // One statement of a fixed width, so it is prepared once; a short chunk repeats its first hash.
  // Parameters: workload, target, the key's four, then the hashes.
  constexpr size_t kChunk = 64;
  static const std::string kSql = [] {
    std::string sql =
        "SELECT DISTINCT r.trace_hash FROM records r WHERE r.workload_id = (SELECT id FROM "
        "workloads WHERE key = ?1) AND r.target_id = (SELECT id FROM targets WHERE target = ?2)" +
        KeyConditionsSql("r", 3, '?') + " AND r.trace_hash IN (?7";
    for (size_t i = 1; i < kChunk; ++i) sql += ",?" + std::to_string(7 + i);
    return sql + ")";
  }();
  std::lock_guard lock(mutex_);
  std::set<std::string> measured;
  for (size_t begin = 0; begin < trace_hashes.size(); begin += kChunk) {
    TUNED_ASSIGN_OR_RETURN(CachedStatement stmt, Cached(kSql));
    stmt->BindText(1, workload_key).BindText(2, target);
    BindKey(*stmt, 3, key);
    for (size_t i = 0; i < kChunk; ++i) {
      size_t index = begin + i < trace_hashes.size() ? begin + i : begin;
      stmt->BindText(int(7 + i), trace_hashes[index]);
    }
    while (true) {
      TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
      if (!has_row) break;
      measured.insert(stmt->ColumnText(0));
    }
  }
  return measured;
}

Status SqliteDatabase::InsertCalibration(const WorkerCalibration& calibration) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement stmt,
      Cached("INSERT INTO worker_calibrations(worker_id, device_model, median_seconds, "
             "repeat_cv, drift, drifted, created_unix_ms) VALUES(?, ?, ?, ?, ?, ?, ?)"));
  stmt->BindText(1, calibration.worker_id)
      .BindText(2, calibration.device_model)
      .BindDouble(3, calibration.median_seconds)
      .BindDouble(4, calibration.repeat_cv)
      .BindDouble(5, calibration.drift)
      .BindInt(6, calibration.drifted ? 1 : 0)
      .BindInt(7, calibration.created_unix_ms);
  return stmt->Run();
}

StatusOr<std::vector<WorkerCalibration>> SqliteDatabase::ListCalibrations(
    const std::string& worker_id, int limit) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement stmt,
      Cached("SELECT worker_id, device_model, median_seconds, repeat_cv, drift, drifted, "
             "created_unix_ms FROM (SELECT * FROM worker_calibrations WHERE worker_id = ? "
             "ORDER BY id DESC LIMIT ?) ORDER BY id"));
  stmt->BindText(1, worker_id).BindInt(2, limit);
  std::vector<WorkerCalibration> out;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) break;
    out.push_back({stmt->ColumnText(0), stmt->ColumnText(1), stmt->ColumnDouble(2),
                   stmt->ColumnDouble(3), stmt->ColumnDouble(4), stmt->ColumnInt(5) != 0,
                   stmt->ColumnInt(6)});
  }
  return out;
}

StatusOr<DatabaseStats> SqliteDatabase::Stats() {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginRead(conn_.get()));
  DatabaseStats stats;
  stats.path = path_;
  stats.database_id = database_id_;
  std::error_code error;
  for (const char* suffix : {"", "-wal"}) {
    uintmax_t size = std::filesystem::file_size(path_ + suffix, error);
    if (!error) stats.file_bytes += static_cast<int64_t>(size);
  }
  TUNED_ASSIGN_OR_RETURN(CachedStatement counts,
                         Cached("SELECT (SELECT user_version FROM pragma_user_version), "
                                "(SELECT COUNT(*) FROM workloads), (SELECT COUNT(*) FROM targets), "
                                "(SELECT COUNT(*) FROM records), (SELECT COUNT(*) FROM tasks), "
                                "(SELECT COUNT(*) FROM cost_model_snapshots)"));
  TUNED_ASSIGN_OR_RETURN(bool has_row, counts->Step());
  if (!has_row) return InternalError("database counts returned nothing");
  stats.schema_version = static_cast<int>(counts->ColumnInt(0));
  stats.num_workloads = counts->ColumnInt(1);
  stats.num_targets = counts->ColumnInt(2);
  stats.num_records = counts->ColumnInt(3);
  stats.num_tasks = counts->ColumnInt(4);
  stats.num_snapshots = counts->ColumnInt(5);

  TUNED_ASSIGN_OR_RETURN(
      CachedStatement by_status,
      Cached("SELECT status, COUNT(*) FROM records GROUP BY status ORDER BY status"));
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool row, by_status->Step());
    if (!row) break;
    stats.records_by_status.emplace_back(static_cast<v1::MeasureStatus>(by_status->ColumnInt(0)),
                                         by_status->ColumnInt(1));
  }
  TUNED_ASSIGN_OR_RETURN(CachedStatement by_state,
                         Cached("SELECT state, COUNT(*) FROM tasks GROUP BY state ORDER BY state"));
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool row, by_state->Step());
    if (!row) break;
    stats.tasks_by_state.emplace_back(static_cast<v1::TaskState>(by_state->ColumnInt(0)),
                                      by_state->ColumnInt(1));
  }
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement targets,
      Cached("SELECT t.target, t.device_description, COUNT(r.id), COALESCE(SUM(r.status = 1), 0) "
             "FROM targets t LEFT JOIN records r ON r.target_id = t.id GROUP BY t.id "
             "ORDER BY t.target"));
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool row, targets->Step());
    if (!row) break;
    stats.targets.push_back(TargetCount{targets->ColumnText(0), targets->ColumnText(1),
                                        targets->ColumnInt(2), targets->ColumnInt(3)});
  }
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement merges,
      Cached("SELECT source_path, source_database_id, workloads_added, records_added, "
             "snapshots_added, merged_unix_ms FROM merges ORDER BY id"));
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool row, merges->Step());
    if (!row) break;
    stats.merges.push_back(MergeEntry{merges->ColumnText(0), merges->ColumnText(1),
                                      merges->ColumnInt(2), merges->ColumnInt(3),
                                      merges->ColumnInt(4), merges->ColumnInt(5)});
  }
  return stats;
}

static constexpr char kTaskSelect[] =
    "SELECT task_id, spec, state, trials_done, best_record_id, error, updated_unix_ms FROM tasks ";

StatusOr<v1::TaskStatus> SqliteDatabase::TaskFromRowLocked(Statement& stmt) {
  v1::TaskStatus status;
  status.set_task_id(stmt.ColumnText(0));
  if (!status.mutable_spec()->ParseFromString(stmt.ColumnBlob(1))) {
    return DataLossError("stored spec of task '" + status.task_id() + "' cannot be parsed");
  }
  status.set_state(static_cast<v1::TaskState>(stmt.ColumnInt(2)));
  status.set_trials_done(static_cast<uint32_t>(stmt.ColumnInt(3)));
  status.set_error(stmt.ColumnText(5));
  status.set_updated_unix_ms(stmt.ColumnInt(6));
  if (!stmt.ColumnIsNull(4)) {
    TUNED_ASSIGN_OR_RETURN(*status.mutable_best(), GetRecordLocked(stmt.ColumnInt(4)));
  }
  return status;
}

StatusOr<v1::TaskStatus> SqliteDatabase::LoadTask(const std::string& task_id) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginRead(conn_.get()));
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt,
                         Cached(std::string(kTaskSelect) + "WHERE task_id = ?"));
  stmt->BindText(1, task_id);
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return NotFoundError("no task with id '" + task_id + "'");
  return TaskFromRowLocked(*stmt);
}

StatusOr<std::vector<v1::TaskStatus>> SqliteDatabase::ListTasks(
    std::optional<v1::TaskState> state) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(Transaction txn, Transaction::BeginRead(conn_.get()));
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt,
                         Cached(std::string(kTaskSelect) + (state ? "WHERE state = ? " : "") +
                                "ORDER BY updated_unix_ms, task_id"));
  if (state) stmt->BindInt(1, *state);
  std::vector<v1::TaskStatus> tasks;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) break;
    TUNED_ASSIGN_OR_RETURN(v1::TaskStatus task, TaskFromRowLocked(*stmt));
    tasks.push_back(std::move(task));
  }
  return tasks;
}

static constexpr char kSnapshotSelect[] =
    "SELECT t.target, s.format, s.feature_version, s.num_records, s.model, s.created_unix_ms, "
    "s.origin FROM cost_model_snapshots s JOIN targets t ON t.id = s.target_id ";

static CostModelSnapshot SnapshotFromRow(const Statement& stmt) {
  return CostModelSnapshot{
      stmt.ColumnText(0), stmt.ColumnText(1), static_cast<uint32_t>(stmt.ColumnInt(2)),
      stmt.ColumnInt(3),  stmt.ColumnBlob(4), stmt.ColumnInt(5),
      stmt.ColumnText(6)};
}

StatusOr<CostModelSnapshot> SqliteDatabase::LatestCostModelSnapshot(const std::string& target) {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(
      CachedStatement stmt,
      Cached(std::string(kSnapshotSelect) +
             "WHERE t.target = ? ORDER BY s.created_unix_ms DESC, s.id DESC LIMIT 1"));
  stmt->BindText(1, target);
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return NotFoundError("no cost-model snapshot for target '" + target + "'");
  return SnapshotFromRow(*stmt);
}

StatusOr<std::vector<CostModelSnapshot>> SqliteDatabase::ListCostModelSnapshots() {
  std::lock_guard lock(mutex_);
  TUNED_ASSIGN_OR_RETURN(CachedStatement stmt,
                         Cached(std::string(kSnapshotSelect) + "ORDER BY s.created_unix_ms, s.id"));
  std::vector<CostModelSnapshot> snapshots;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) break;
    snapshots.push_back(SnapshotFromRow(*stmt));
  }
  return snapshots;
}

}  // namespace tuned::db
