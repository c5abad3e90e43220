// The read side of PostgresDatabase: lookups, best-k with miss reasons, listings and statistics.
// Text is ordered with COLLATE "C" so that listings come in the same (byte) order as on SQLite,
// whatever the server's default collation.

#include <sstream>

#include "tuning_db/postgres_database_internal.h"
#include "tuning_db/record_key_internal.h"
#include "tuning_db/record_text.h"
#include "tuning_db/stored_record_internal.h"

namespace tuned::db {
namespace {

// Column reads of one result row, as RecordFromColumns wants them.
struct PgRow {
  const PgResult& rows;
  int row;
  int64_t Int(int column) const { return rows.Int(row, column); }
  std::string Text(int column) const { return rows.Text(row, column); }
  std::string Bytes(int column) const { return rows.Bytes(row, column); }
};

StatusOr<v1::TuningRecord> RecordFromRow(const PgResult& rows, int row) {
  return RecordFromColumns(PgRow{rows, row});
}

std::string Quoted(const std::string& text) { return "'" + text + "'"; }

// Appends the four parameters of KeyConditionsSql.
void AddKey(PgParams& params, const MeasurementKey& key) {
  params.Text(key.device_model)
      .Text(key.toolkit_version)
      .Int(key.codegen_version)
      .Int(key.protocol_version);
}

constexpr char kTaskSelect[] =
    "SELECT task_id, spec, state, trials_done, best_record_id, error, updated_unix_ms FROM tasks ";

constexpr char kSnapshotSelect[] =
    "SELECT t.target, s.format, s.feature_version, s.num_records, s.model, s.created_unix_ms, "
    "s.origin FROM cost_model_snapshots s JOIN targets t ON t.id = s.target_id ";

CostModelSnapshot SnapshotFromRow(const PgResult& rows, int row) {
  return CostModelSnapshot{rows.Text(row, 0),  rows.Text(row, 1),
                           static_cast<uint32_t>(rows.Int(row, 2)),
                           rows.Int(row, 3),   rows.Bytes(row, 4),
                           rows.Int(row, 5),   rows.Text(row, 6)};
}

// A text[] literal for `= ANY($n)`: every element double-quoted, quotes and backslashes escaped.
std::string TextArray(std::span<const std::string> items) {
  std::string array = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) array += ',';
    array += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') array += '\\';
      array += c;
    }
    array += '"';
  }
  return array + "}";
}

}  // namespace

StatusOr<std::vector<v1::TuningRecord>> PostgresDatabase::QueryRecords(PgConnection& conn,
                                                                       const std::string& sql,
                                                                       const PgParams& params) {
  TUNED_ASSIGN_OR_RETURN(PgResult rows, conn.Query(sql, params));
  std::vector<v1::TuningRecord> records;
  records.reserve(rows.rows());
  for (int row = 0; row < rows.rows(); ++row) {
    TUNED_ASSIGN_OR_RETURN(v1::TuningRecord record, RecordFromRow(rows, row));
    records.push_back(std::move(record));
  }
  return records;
}

StatusOr<v1::TuningRecord> PostgresDatabase::GetRecordOn(PgConnection& conn, int64_t record_id) {
  PgParams params;
  params.Int(record_id);
  TUNED_ASSIGN_OR_RETURN(
      std::vector<v1::TuningRecord> records,
      QueryRecords(conn, std::string(kPgRecordSelect) + "WHERE r.id = $1", params));
  if (records.empty()) return NotFoundError("no record with id " + std::to_string(record_id));
  return std::move(records.front());
}

StatusOr<v1::Workload> PostgresDatabase::GetWorkload(const std::string& key) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams params;
  params.Text(key);
  TUNED_ASSIGN_OR_RETURN(PgResult row,
                         conn->Query("SELECT id, workload FROM workloads WHERE key = $1", params));
  if (row.rows() == 0) return NotFoundError("no workload with key '" + key + "'");
  v1::Workload workload;
  TUNED_RETURN_IF_ERROR(ParseStored(workload, row.Bytes(0, 1), "workload", row.Int(0, 0)));
  return workload;
}

StatusOr<std::vector<WorkloadSummary>> PostgresDatabase::ListWorkloads() {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  TUNED_ASSIGN_OR_RETURN(
      PgResult rows,
      conn->Query("SELECT w.id, w.workload, COUNT(r.id), COUNT(r.id) FILTER (WHERE r.status = 1), "
                  "COALESCE(MIN(r.median_seconds), 0), COALESCE(MAX(r.created_unix_ms), 0), "
                  "COALESCE((SELECT string_agg(d.target, E'\\n' ORDER BY d.target COLLATE \"C\") "
                  " FROM (SELECT DISTINCT t.target FROM records r2 "
                  " JOIN targets t ON t.id = r2.target_id WHERE r2.workload_id = w.id) d), '') "
                  "FROM workloads w LEFT JOIN records r ON r.workload_id = w.id "
                  "GROUP BY w.id ORDER BY w.key COLLATE \"C\""));
  std::vector<WorkloadSummary> summaries;
  for (int row = 0; row < rows.rows(); ++row) {
    WorkloadSummary summary;
    TUNED_RETURN_IF_ERROR(
        ParseStored(summary.workload, rows.Bytes(row, 1), "workload", rows.Int(row, 0)));
    summary.num_records = rows.Int(row, 2);
    summary.num_ok = rows.Int(row, 3);
    summary.best_median_seconds = rows.Double(row, 4);
    summary.last_unix_ms = rows.Int(row, 5);
    std::istringstream targets(rows.Text(row, 6));
    for (std::string line; std::getline(targets, line);) summary.targets.push_back(line);
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

StatusOr<std::vector<std::string>> PostgresDatabase::ListTargets(const std::string& workload_key) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams params;
  if (!workload_key.empty()) params.Text(workload_key);
  TUNED_ASSIGN_OR_RETURN(
      PgResult rows,
      conn->Query(workload_key.empty()
                      ? "SELECT t.target FROM targets t WHERE EXISTS "
                        "(SELECT 1 FROM records r WHERE r.target_id = t.id) "
                        "ORDER BY t.target COLLATE \"C\""
                      : "SELECT t.target FROM targets t WHERE EXISTS (SELECT 1 FROM records r "
                        "WHERE r.workload_id = (SELECT id FROM workloads WHERE key = $1) "
                        "AND r.target_id = t.id) ORDER BY t.target COLLATE \"C\"",
                  params));
  std::vector<std::string> targets;
  for (int row = 0; row < rows.rows(); ++row) targets.push_back(rows.Text(row, 0));
  return targets;
}

StatusOr<v1::TuningRecord> PostgresDatabase::GetRecord(int64_t record_id) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  return GetRecordOn(*conn, record_id);
}

StatusOr<std::vector<v1::TuningRecord>> PostgresDatabase::ListRecords(const RecordFilter& filter) {
  // Parameters are numbered in the order the filter uses them: PostgreSQL needs every number
  // up to the highest to appear in the statement.
  PgParams params;
  params.Int(filter.after_id);
  std::string sql = std::string(kPgRecordSelect) + "WHERE r.id > $1";
  auto add = [&](const std::string& column, const std::string& value) {
    params.Text(value);
    sql += " AND " + column + " = $" + std::to_string(params.size());
  };
  if (!filter.workload_key.empty()) add("w.key", filter.workload_key);
  if (!filter.target.empty()) add("t.target", filter.target);
  if (!filter.task_id.empty()) add("r.task_id", filter.task_id);
  params.Int(filter.limit);
  sql += " ORDER BY r.id LIMIT $" + std::to_string(params.size());
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  return QueryRecords(*conn, sql, params);
}

StatusOr<BestRecords> PostgresDatabase::GetBestRecords(const BestRecordsQuery& query) {
  if (query.limit <= 0) return InvalidArgumentError("best-records limit must be positive");
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  TUNED_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::BeginRead(*conn));
  TUNED_ASSIGN_OR_RETURN(int64_t workload_id, WorkloadId(*conn, query.workload_key));
  TUNED_ASSIGN_OR_RETURN(int64_t target_id, TargetId(*conn, query.target));
  BestRecords best;
  if (workload_id != 0 && target_id != 0) {
    PgParams params;
    params.Int(workload_id).Int(target_id).Int(query.limit);
    AddKey(params, query.Key());
    std::string sql = std::string(kPgRecordSelect) +
                      "WHERE r.workload_id = $1 AND r.target_id = $2 AND r.status = 1" +
                      KeyConditionsSql("r", 4, '$');
    if (!query.allow_unverified) sql += " AND r.verified <> 0";
    sql += RankingConditionsSql(4, '$', query.allow_unverified);
    sql += " ORDER BY r.median_seconds, r.id LIMIT $3";
    TUNED_ASSIGN_OR_RETURN(best.records, QueryRecords(*conn, sql, params));
    PgParams pair;
    pair.Int(workload_id).Int(target_id);
    TUNED_ASSIGN_OR_RETURN(PgResult trials,
                           conn->Query("SELECT COUNT(*) FROM records WHERE workload_id = $1 AND "
                                       "target_id = $2 AND kind = " + std::to_string(int(v1::RECORD_KIND_SEARCH)),
                                       pair));
    best.trials = trials.Int(0, 0);
  }
  if (best.records.empty()) {
    TUNED_ASSIGN_OR_RETURN(best.miss_reason, ExplainMiss(*conn, query, workload_id, target_id));
  }
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return best;
}

StatusOr<std::string> PostgresDatabase::ExplainMiss(PgConnection& conn,
                                                    const BestRecordsQuery& query,
                                                    int64_t workload_id, int64_t target_id) {
  if (workload_id == 0) return "no workload with key " + Quoted(query.workload_key);
  PgParams workload_param;
  workload_param.Int(workload_id);
  // Per target of this workload: how many records, how many OK.
  TUNED_ASSIGN_OR_RETURN(
      PgResult per_target,
      conn.Query("SELECT t.id, t.target, COUNT(*), COUNT(*) FILTER (WHERE r.status = 1) "
                 "FROM records r JOIN targets t ON t.id = r.target_id WHERE r.workload_id = $1 "
                 "GROUP BY t.id ORDER BY t.target COLLATE \"C\"",
                 workload_param));
  int64_t here_total = 0;
  int64_t here_ok = 0;
  std::vector<std::string> elsewhere;
  for (int row = 0; row < per_target.rows(); ++row) {
    if (per_target.Int(row, 0) == target_id) {
      here_total = per_target.Int(row, 2);
      here_ok = per_target.Int(row, 3);
    } else {
      elsewhere.push_back(Quoted(per_target.Text(row, 1)) + " (" +
                          std::to_string(per_target.Int(row, 3)) + " ok of " +
                          std::to_string(per_target.Int(row, 2)) + ")");
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
  PgParams pair;
  pair.Int(workload_id).Int(target_id);
  if (here_ok == 0) {
    TUNED_ASSIGN_OR_RETURN(
        PgResult by_status,
        conn.Query("SELECT status, COUNT(*) FROM records WHERE workload_id = $1 AND "
                   "target_id = $2 GROUP BY status ORDER BY status",
                   pair));
    std::string reason = "all " + std::to_string(here_total) + " records of " + workload +
                         " for target " + Quoted(query.target) + " failed (";
    for (int row = 0; row < by_status.rows(); ++row) {
      reason += (row ? ", " : "") + std::to_string(by_status.Int(row, 1)) + " " +
                MeasureStatusLabel(static_cast<v1::MeasureStatus>(by_status.Int(row, 0)));
    }
    return reason + ")";
  }
  if (!query.allow_unverified) {
    TUNED_ASSIGN_OR_RETURN(
        PgResult verified,
        conn.Query("SELECT COUNT(*) FROM records WHERE workload_id = $1 AND target_id = $2 AND "
                   "status = 1 AND verified <> 0",
                   pair));
    if (verified.Int(0, 0) == 0) return UnverifiedOnlyReason(workload, query.target, here_ok);
  }
  // Verified OK records exist for the target, so the key excluded them all.
  TUNED_ASSIGN_OR_RETURN(
      PgResult keys,
      conn.Query("SELECT device_model, toolkit_version, codegen_version, protocol_version, "
                 "COUNT(*) FROM records WHERE workload_id = $1 AND target_id = $2 AND status = 1 "
                 "GROUP BY device_model, toolkit_version, codegen_version, protocol_version",
                 pair));
  std::vector<KeyCount> existing;
  for (int row = 0; row < keys.rows(); ++row) {
    existing.push_back({keys.Text(row, 0), keys.Text(row, 1), keys.Int(row, 2), keys.Int(row, 3),
                        keys.Int(row, 4)});
  }
  return KeyMissReason(query, workload, existing);
}

StatusOr<int> PostgresDatabase::WorkerLosses(const std::string& workload_key,
                                             const std::string& target,
                                             const std::string& trace_hash) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams params;
  params.Text(workload_key).Text(target).Text(trace_hash);
  TUNED_ASSIGN_OR_RETURN(PgResult row,
                         conn->Query("SELECT losses FROM worker_losses WHERE workload_key = $1 "
                                     "AND target = $2 AND trace_hash = $3",
                                     params));
  return row.rows() > 0 ? static_cast<int>(row.Int(0, 0)) : 0;
}

StatusOr<std::vector<QuarantinedTrace>> PostgresDatabase::ListQuarantined(
    const std::string& workload_key) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams params;
  params.Text(workload_key);
  TUNED_ASSIGN_OR_RETURN(
      PgResult rows,
      conn->Query("SELECT w.key, t.target, r.trace_hash, r.status, r.error, r.id, "
                  "r.created_unix_ms FROM records r JOIN workloads w ON w.id = r.workload_id "
                  "JOIN targets t ON t.id = r.target_id WHERE r.status IN " +
                      QuarantineStatusesSql() + " AND ($1 = '' OR w.key = $1) ORDER BY r.id",
                  params));
  std::vector<QuarantinedTrace> out;
  for (int row = 0; row < rows.rows(); ++row) {
    QuarantinedTrace trace;
    trace.workload_key = rows.Text(row, 0);
    trace.target = rows.Text(row, 1);
    trace.trace_hash = rows.Text(row, 2);
    trace.status = static_cast<v1::MeasureStatus>(rows.Int(row, 3));
    trace.reason = rows.Text(row, 4);
    trace.record_id = rows.Int(row, 5);
    trace.created_unix_ms = rows.Int(row, 6);
    out.push_back(std::move(trace));
  }
  return out;
}

StatusOr<std::vector<v1::TuningRecord>> PostgresDatabase::TaskRecords(const std::string& task_id) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams params;
  params.Text(task_id);
  return QueryRecords(*conn, std::string(kPgRecordSelect) + "WHERE r.task_id = $1 ORDER BY r.id",
                      params);
}

StatusOr<bool> PostgresDatabase::HasMeasured(const std::string& workload_key,
                                             const std::string& target,
                                             const std::string& trace_hash,
                                             const MeasurementKey& key) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams params;
  params.Text(workload_key).Text(target).Text(trace_hash);
  AddKey(params, key);
  TUNED_ASSIGN_OR_RETURN(
      PgResult row,
      conn->Query("SELECT 1 FROM records r WHERE r.workload_id = (SELECT id FROM workloads WHERE "
                  "key = $1) AND r.target_id = (SELECT id FROM targets WHERE target = $2) AND "
                  "r.trace_hash = $3" + KeyConditionsSql("r", 4, '$') + " LIMIT 1",
                  params));
  return row.rows() > 0;
}

StatusOr<std::set<std::string>> PostgresDatabase::MeasuredTraceHashes(
    const std::string& workload_key, const std::string& target,
    const std::vector<std::string>& trace_hashes, const MeasurementKey& key) {
  constexpr size_t kChunk = 64;  // As on SQLite: one query per 64 hashes.
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  std::set<std::string> measured;
  for (size_t begin = 0; begin < trace_hashes.size(); begin += kChunk) {
    const size_t count = std::min(kChunk, trace_hashes.size() - begin);
    PgParams params;
    params.Text(workload_key)
        .Text(target)
        .Text(TextArray(std::span(trace_hashes).subspan(begin, count)));
    AddKey(params, key);
    TUNED_ASSIGN_OR_RETURN(
        PgResult rows,
        conn->Query("SELECT DISTINCT r.trace_hash FROM records r WHERE r.workload_id = (SELECT "
                    "id FROM workloads WHERE key = $1) AND r.target_id = (SELECT id FROM targets "
                    "WHERE target = $2) AND r.trace_hash = ANY($3::text[])" +
                        KeyConditionsSql("r", 4, '$'),
                    params));
    for (int row = 0; row < rows.rows(); ++row) measured.insert(rows.Text(row, 0));
  }
  return measured;
}

StatusOr<std::vector<WorkerCalibration>> PostgresDatabase::ListCalibrations(
    const std::string& worker_id, int limit) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams params;
  params.Text(worker_id).Int(limit);
  TUNED_ASSIGN_OR_RETURN(
      PgResult rows,
      conn->Query("SELECT worker_id, device_model, median_seconds, repeat_cv, drift, drifted, "
                  "created_unix_ms FROM (SELECT * FROM worker_calibrations WHERE worker_id = $1 "
                  "ORDER BY id DESC LIMIT $2) newest ORDER BY id",
                  params));
  std::vector<WorkerCalibration> out;
  for (int row = 0; row < rows.rows(); ++row) {
    out.push_back({rows.Text(row, 0), rows.Text(row, 1), rows.Double(row, 2),
                   rows.Double(row, 3), rows.Double(row, 4), rows.Int(row, 5) != 0,
                   rows.Int(row, 6)});
  }
  return out;
}

StatusOr<DatabaseStats> PostgresDatabase::Stats() {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  TUNED_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::BeginRead(*conn));
  DatabaseStats stats;
  stats.path = shown_url_;
  stats.database_id = database_id_;
  // The tables of this schema (not the whole server database, which may hold others).
  TUNED_ASSIGN_OR_RETURN(
      PgResult counts,
      conn->Query("SELECT (SELECT value FROM meta WHERE key = 'schema_version')::int, "
                  "(SELECT COUNT(*) FROM workloads), (SELECT COUNT(*) FROM targets), "
                  "(SELECT COUNT(*) FROM records), (SELECT COUNT(*) FROM tasks), "
                  "(SELECT COUNT(*) FROM cost_model_snapshots), "
                  "(SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                  " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r')"));
  stats.schema_version = static_cast<int>(counts.Int(0, 0));
  stats.num_workloads = counts.Int(0, 1);
  stats.num_targets = counts.Int(0, 2);
  stats.num_records = counts.Int(0, 3);
  stats.num_tasks = counts.Int(0, 4);
  stats.num_snapshots = counts.Int(0, 5);
  stats.file_bytes = counts.Int(0, 6);

  TUNED_ASSIGN_OR_RETURN(
      PgResult by_status,
      conn->Query("SELECT status, COUNT(*) FROM records GROUP BY status ORDER BY status"));
  for (int row = 0; row < by_status.rows(); ++row) {
    stats.records_by_status.emplace_back(static_cast<v1::MeasureStatus>(by_status.Int(row, 0)),
                                         by_status.Int(row, 1));
  }
  TUNED_ASSIGN_OR_RETURN(
      PgResult by_state,
      conn->Query("SELECT state, COUNT(*) FROM tasks GROUP BY state ORDER BY state"));
  for (int row = 0; row < by_state.rows(); ++row) {
    stats.tasks_by_state.emplace_back(static_cast<v1::TaskState>(by_state.Int(row, 0)),
                                      by_state.Int(row, 1));
  }
  TUNED_ASSIGN_OR_RETURN(
      PgResult targets,
      conn->Query("SELECT t.target, t.device_description, COUNT(r.id), "
                  "COUNT(r.id) FILTER (WHERE r.status = 1) "
                  "FROM targets t LEFT JOIN records r ON r.target_id = t.id GROUP BY t.id "
                  "ORDER BY t.target COLLATE \"C\""));
  for (int row = 0; row < targets.rows(); ++row) {
    stats.targets.push_back(TargetCount{targets.Text(row, 0), targets.Text(row, 1),
                                        targets.Int(row, 2), targets.Int(row, 3)});
  }
  TUNED_ASSIGN_OR_RETURN(
      PgResult merges,
      conn->Query("SELECT source_path, source_database_id, workloads_added, records_added, "
                  "snapshots_added, merged_unix_ms FROM merges ORDER BY id"));
  for (int row = 0; row < merges.rows(); ++row) {
    stats.merges.push_back(MergeEntry{merges.Text(row, 0), merges.Text(row, 1),
                                      merges.Int(row, 2), merges.Int(row, 3),
                                      merges.Int(row, 4), merges.Int(row, 5)});
  }
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return stats;
}

StatusOr<std::vector<v1::TaskStatus>> PostgresDatabase::QueryTasks(PgConnection& conn,
                                                                   const std::string& sql,
                                                                   const PgParams& params) {
  TUNED_ASSIGN_OR_RETURN(PgResult rows, conn.Query(sql, params));
  std::vector<v1::TaskStatus> tasks;
  for (int row = 0; row < rows.rows(); ++row) {
    v1::TaskStatus status;
    status.set_task_id(rows.Text(row, 0));
    if (!status.mutable_spec()->ParseFromString(rows.Bytes(row, 1))) {
      return DataLossError("stored spec of task '" + status.task_id() + "' cannot be parsed");
    }
    status.set_state(static_cast<v1::TaskState>(rows.Int(row, 2)));
    status.set_trials_done(static_cast<uint32_t>(rows.Int(row, 3)));
    status.set_error(rows.Text(row, 5));
    status.set_updated_unix_ms(rows.Int(row, 6));
    if (!rows.IsNull(row, 4)) {
      TUNED_ASSIGN_OR_RETURN(*status.mutable_best(), GetRecordOn(conn, rows.Int(row, 4)));
    }
    tasks.push_back(std::move(status));
  }
  return tasks;
}

StatusOr<v1::TaskStatus> PostgresDatabase::LoadTask(const std::string& task_id) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  TUNED_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::BeginRead(*conn));
  PgParams params;
  params.Text(task_id);
  TUNED_ASSIGN_OR_RETURN(
      std::vector<v1::TaskStatus> tasks,
      QueryTasks(*conn, std::string(kTaskSelect) + "WHERE task_id = $1", params));
  if (tasks.empty()) return NotFoundError("no task with id '" + task_id + "'");
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return std::move(tasks.front());
}

StatusOr<std::vector<v1::TaskStatus>> PostgresDatabase::ListTasks(
    std::optional<v1::TaskState> state) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  TUNED_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::BeginRead(*conn));
  PgParams params;
  if (state) params.Int(*state);
  TUNED_ASSIGN_OR_RETURN(
      std::vector<v1::TaskStatus> tasks,
      QueryTasks(*conn,
                 std::string(kTaskSelect) + (state ? "WHERE state = $1 " : "") +
                     "ORDER BY updated_unix_ms, task_id COLLATE \"C\"",
                 params));
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return tasks;
}

StatusOr<CostModelSnapshot> PostgresDatabase::LatestCostModelSnapshot(const std::string& target) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams params;
  params.Text(target);
  TUNED_ASSIGN_OR_RETURN(
      PgResult rows,
      conn->Query(std::string(kSnapshotSelect) +
                      "WHERE t.target = $1 ORDER BY s.created_unix_ms DESC, s.id DESC LIMIT 1",
                  params));
  if (rows.rows() == 0) return NotFoundError("no cost-model snapshot for target '" + target + "'");
  return SnapshotFromRow(rows, 0);
}

StatusOr<std::vector<CostModelSnapshot>> PostgresDatabase::ListCostModelSnapshots() {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  TUNED_ASSIGN_OR_RETURN(
      PgResult rows,
      conn->Query(std::string(kSnapshotSelect) + "ORDER BY s.created_unix_ms, s.id"));
  std::vector<CostModelSnapshot> snapshots;
  for (int row = 0; row < rows.rows(); ++row) snapshots.push_back(SnapshotFromRow(rows, row));
  return snapshots;
}

}  // namespace tuned::db
