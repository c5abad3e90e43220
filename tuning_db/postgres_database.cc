// The PostgreSQL tuning database: opening (schema checks and migrations) and the writes.

#include <map>
#include <tuple>

#include "common/logging.h"
#include "common/sha256.h"
#include "common/time.h"
#include "proto/measure_config.h"
#include "tuning_db/postgres_database_internal.h"
#include "tuning_db/postgres_url.h"
#include "tuning_db/record_batch_internal.h"
#include "tuning_db/record_checks.h"
#include "tuning_db/schema/postgres_migrations.h"

namespace tuned::db {
namespace {

struct SchemaState {
  bool has_meta = false;
  int64_t num_tables = 0;  // Tables in the current schema.
  std::string application;
  int version = 0;
};

StatusOr<SchemaState> ReadSchemaState(PgConnection& conn) {
  SchemaState state;
  TUNED_ASSIGN_OR_RETURN(
      PgResult shape,
      conn.Query("SELECT (to_regclass('meta') IS NOT NULL)::int, "
                 "(SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema())"));
  state.has_meta = shape.Int(0, 0) != 0;
  state.num_tables = shape.Int(0, 1);
  if (!state.has_meta) return state;
  TUNED_ASSIGN_OR_RETURN(
      PgResult meta,
      conn.Query("SELECT key, value FROM meta WHERE key IN ('application', 'schema_version')"));
  for (int row = 0; row < meta.rows(); ++row) {
    if (meta.Text(row, 0) == "application") state.application = meta.Text(row, 1);
    if (meta.Text(row, 0) == "schema_version") state.version = std::stoi(meta.Text(row, 1));
  }
  return state;
}

// Looks before writing anything: a schema of another application, or one written by a newer
// tuned, stays as it is. Creates or migrates ours while holding an advisory lock, so that
// processes opening one database at once migrate it once.
StatusOr<std::string> PrepareSchema(PgConnection& conn, const std::string& shown_url,
                                    const OpenOptions& options) {
  TUNED_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::BeginWrite(conn));
  PgParams lock_key;
  lock_key.Int(kApplicationId);
  TUNED_ASSIGN_OR_RETURN(PgResult locked,
                         conn.Query("SELECT pg_advisory_xact_lock($1)::text", lock_key));
  (void)locked;
  TUNED_ASSIGN_OR_RETURN(SchemaState state, ReadSchemaState(conn));
  const std::string named = "PostgreSQL database '" + shown_url + "'";
  if (state.has_meta && state.application != "tuned") {
    return InvalidArgumentError(named +
                                " has a 'meta' table of another application, not a tuned "
                                "database");
  }
  if (!state.has_meta && state.num_tables > 0) {
    return InvalidArgumentError(named + " holds " + std::to_string(state.num_tables) +
                                " tables of another application and no tuned schema");
  }
  if (!state.has_meta && !options.create_if_missing) {
    return NotFoundError("database '" + shown_url + "' does not exist (no tuned schema there)");
  }
  if (state.version > kPostgresSchemaVersion) {
    return FailedPreconditionError("database '" + shown_url + "' has schema version " +
                                   std::to_string(state.version) +
                                   ", newer than this tuned supports (" +
                                   std::to_string(kPostgresSchemaVersion) + "); use a newer tuned");
  }
  if (state.version < kPostgresSchemaVersion) {
    TUNED_RETURN_IF_ERROR(ApplyPostgresMigrations(conn, state.version, kPostgresSchemaVersion));
  }
  TUNED_ASSIGN_OR_RETURN(PgResult id,
                         conn.Query("SELECT value FROM meta WHERE key = 'database_id'"));
  if (id.rows() == 0) return DataLossError(named + ": the meta table has no database id");
  std::string database_id = id.Text(0, 0);
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return database_id;
}

}  // namespace

StatusOr<std::unique_ptr<Database>> OpenPostgresDatabase(const std::string& url,
                                                         const OpenOptions& options) {
  const std::string shown_url = RedactPostgresUrl(url);
  // lock_timeout is the server's counterpart of SQLite's busy timeout.
  auto pool = std::make_unique<PgPool>(
      url, shown_url, options.pool_size,
      "SET lock_timeout = " + std::to_string(options.busy_timeout_ms));
  std::string database_id;
  {
    TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool->Acquire());
    TUNED_ASSIGN_OR_RETURN(database_id, PrepareSchema(*conn, shown_url, options));
  }
  Logger("db")->debug("opened '{}' (database id {})", shown_url, database_id);
  return std::unique_ptr<Database>(
      std::make_unique<PostgresDatabase>(shown_url, std::move(pool), database_id,
                                         std::make_unique<PgTaskOwnership>(url, shown_url, database_id)));
}

StatusOr<int64_t> PostgresDatabase::WorkloadId(PgConnection& conn, const std::string& key) {
  PgParams params;
  params.Text(key);
  TUNED_ASSIGN_OR_RETURN(PgResult row, conn.Query("SELECT id FROM workloads WHERE key = $1", params));
  return row.rows() > 0 ? row.Int(0, 0) : 0;
}

StatusOr<int64_t> PostgresDatabase::TargetId(PgConnection& conn, const std::string& target) {
  PgParams params;
  params.Text(target);
  TUNED_ASSIGN_OR_RETURN(PgResult row,
                         conn.Query("SELECT id FROM targets WHERE target = $1", params));
  return row.rows() > 0 ? row.Int(0, 0) : 0;
}

StatusOr<int64_t> PostgresDatabase::UpsertWorkload(PgConnection& conn,
                                                   const v1::Workload& workload, bool* added) {
  TUNED_RETURN_IF_ERROR(CheckWorkload(workload));
  v1::Workload stored = workload;
  if (stored.key_sha256().empty()) stored.set_key_sha256(Sha256Hex(stored.key()));
  PgParams insert;
  insert.Text(stored.key())
      .Text(stored.key_sha256())
      .Text(stored.op())
      .Text(stored.definition())
      .Double(stored.flops())
      .Bytes(stored.SerializeAsString())
      .Int(UnixMs());
  // ON CONFLICT: another process may add the same workload at the same time.
  TUNED_ASSIGN_OR_RETURN(
      PgResult inserted,
      conn.Query("INSERT INTO workloads(key, key_sha256, op, definition, flops, workload, "
                 "created_unix_ms) VALUES($1, $2, $3, $4, $5, $6, $7) "
                 "ON CONFLICT(key) DO NOTHING RETURNING id",
                 insert));
  *added = inserted.rows() > 0;
  if (*added) return inserted.Int(0, 0);
  TUNED_ASSIGN_OR_RETURN(int64_t id, WorkloadId(conn, stored.key()));
  // Workloads are immutable per key; only a FLOP count that was unknown is filled in.
  if (stored.flops() > 0) {
    PgParams update;
    update.Double(stored.flops()).Bytes(stored.SerializeAsString()).Int(id);
    TUNED_ASSIGN_OR_RETURN(PgResult updated,
                           conn.Query("UPDATE workloads SET flops = $1, workload = $2 "
                                      "WHERE id = $3 AND flops = 0",
                                      update));
    (void)updated;
  }
  return id;
}

StatusOr<int64_t> PostgresDatabase::UpsertTarget(PgConnection& conn, const v1::Target& target,
                                                 const std::string& device) {
  if (target.target().empty()) return InvalidArgumentError("target string is empty");
  PgParams params;
  params.Text(target.target()).Int(target.kind()).Text(device);
  TUNED_ASSIGN_OR_RETURN(
      PgResult row,
      conn.Query("INSERT INTO targets(target, kind, device_description) VALUES($1, $2, $3) "
                 "ON CONFLICT(target) DO UPDATE SET "
                 "kind = CASE WHEN excluded.kind != 0 THEN excluded.kind ELSE targets.kind END, "
                 "device_description = CASE WHEN excluded.device_description != '' "
                 "THEN excluded.device_description ELSE targets.device_description END "
                 "RETURNING id",
                 params));
  if (row.rows() == 0) return InternalError("target upsert returned no id");
  return row.Int(0, 0);
}

Status PostgresDatabase::PutWorkload(const v1::Workload& workload) {
  TUNED_RETURN_IF_ERROR(CheckWorkload(workload));
  return RunWriteTransaction(*pool_, [&](PgConnection& conn) -> Status {
    bool added = false;
    TUNED_ASSIGN_OR_RETURN(int64_t id, UpsertWorkload(conn, workload, &added));
    (void)id;
    return Status::Ok();
  });
}

// PostgreSQL's statements for InsertRecordBatch, on the connection of the caller's transaction.
class PostgresDatabase::BatchWriter final : public RecordBatchWriter {
 public:
  BatchWriter(PostgresDatabase& db, PgConnection& conn) : db_(db), conn_(conn) {}

  StatusOr<int64_t> UpsertWorkload(const v1::Workload& workload) override {
    bool added = false;
    return db_.UpsertWorkload(conn_, workload, &added);
  }
  StatusOr<int64_t> UpsertTarget(const v1::Target& target, const std::string& device) override {
    return db_.UpsertTarget(conn_, target, device);
  }
  StatusOr<int64_t> InsertIfNew(const RecordRow& row) override {
    PgParams params;
    params.Int(row.workload_id)
        .Int(row.target_id)
        .Bytes(row.trace)
        .Text(row.trace_hash)
        .Int(row.status);
    if (row.median_seconds) {
      params.Double(*row.median_seconds);
    } else {
      params.Null();
    }
    params.Text(row.error)
        .Bytes(row.result)
        .Bytes(row.config)
        .Text(row.worker_id)
        .Text(row.device_model)
        .Text(row.tuner_version)
        .Text(row.task_id)
        .Int(row.created_unix_ms)
        .Text(row.origin)
        .Int(row.verified ? 1 : 0)
        .Int(row.kind)
        .Text(row.toolkit_version)
        .Int(row.codegen_version)
        .Int(row.protocol_version);
    // The unique identity index decides what is a duplicate, also between processes.
    TUNED_ASSIGN_OR_RETURN(
        PgResult inserted,
        conn_.Query("INSERT INTO records(workload_id, target_id, trace, trace_hash, status, "
                    "median_seconds, error, result, config, worker_id, device_model, "
                    "tuner_version, task_id, created_unix_ms, origin, verified, kind, "
                    "toolkit_version, codegen_version, protocol_version) "
                    "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, "
                    "$16, $17, $18, $19, $20) "
                    "ON CONFLICT(workload_id, target_id, trace_hash, worker_id, created_unix_ms) "
                    "DO NOTHING RETURNING id",
                    params));
    return inserted.rows() > 0 ? inserted.Int(0, 0) : 0;
  }
  StatusOr<int64_t> FindIdentity(const RecordRow& row) override {
    PgParams identity;
    identity.Int(row.workload_id)
        .Int(row.target_id)
        .Text(row.trace_hash)
        .Text(row.worker_id)
        .Int(row.created_unix_ms);
    TUNED_ASSIGN_OR_RETURN(
        PgResult found,
        conn_.Query("SELECT id FROM records WHERE workload_id = $1 AND target_id = $2 AND "
                    "trace_hash = $3 AND worker_id = $4 AND created_unix_ms = $5",
                    identity));
    return found.rows() > 0 ? found.Int(0, 0) : 0;
  }

 private:
  PostgresDatabase& db_;
  PgConnection& conn_;
};

StatusOr<InsertResult> PostgresDatabase::InsertRecords(std::span<const v1::TuningRecord> records,
                                                       const InsertOptions& options) {
  for (size_t i = 0; i < records.size(); ++i) TUNED_RETURN_IF_ERROR(CheckRecord(records[i], i));
  InsertResult out;
  TUNED_RETURN_IF_ERROR(RunWriteTransaction(*pool_, [&](PgConnection& conn) -> Status {
    BatchWriter writer(*this, conn);
    TUNED_ASSIGN_OR_RETURN(out, InsertRecordBatch(records, options, database_id_, writer));
    return Status::Ok();
  }));
  return out;
}

StatusOr<int> PostgresDatabase::CountWorkerLoss(const std::string& workload_key,
                                                const std::string& target,
                                                const std::string& trace_hash,
                                                const std::string& reason) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  TUNED_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::BeginWrite(*conn));
  PgParams row;
  row.Text(workload_key).Text(target).Text(trace_hash).Text(reason).Int(UnixMs());
  TUNED_ASSIGN_OR_RETURN(
      PgResult counted,
      conn->Query("INSERT INTO worker_losses(workload_key, target, trace_hash, losses, reason, "
                  "updated_unix_ms) VALUES($1, $2, $3, 1, $4, $5) ON CONFLICT(workload_key, "
                  "target, trace_hash) DO UPDATE SET losses = worker_losses.losses + 1, "
                  "reason = excluded.reason, updated_unix_ms = excluded.updated_unix_ms "
                  "RETURNING losses",
                  row));
  if (counted.rows() == 0) return InternalError("counting a worker loss returned nothing");
  const int losses = static_cast<int>(counted.Int(0, 0));
  TUNED_RETURN_IF_ERROR(txn.Commit());
  return losses;
}

Status PostgresDatabase::InsertCalibration(const WorkerCalibration& calibration) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_->Acquire());
  PgParams row;
  row.Text(calibration.worker_id)
      .Text(calibration.device_model)
      .Double(calibration.median_seconds)
      .Double(calibration.repeat_cv)
      .Double(calibration.drift)
      .Int(calibration.drifted ? 1 : 0)
      .Int(calibration.created_unix_ms);
  return conn
      ->Query("INSERT INTO worker_calibrations(worker_id, device_model, median_seconds, "
              "repeat_cv, drift, drifted, created_unix_ms) VALUES($1, $2, $3, $4, $5, $6, $7)",
              row)
      .status();
}

Status PostgresDatabase::SaveTask(const v1::TaskStatus& status) {
  if (status.task_id().empty()) return InvalidArgumentError("task has an empty id");
  return RunWriteTransaction(*pool_, [&](PgConnection& conn) { return SaveTaskOn(conn, status); });
}

Status PostgresDatabase::SaveTaskOn(PgConnection& conn, const v1::TaskStatus& status) {
  const int64_t best_id = status.best().record_id();
  if (best_id != 0) {
    PgParams id;
    id.Int(best_id);
    TUNED_ASSIGN_OR_RETURN(PgResult found, conn.Query("SELECT 1 FROM records WHERE id = $1", id));
    if (found.rows() == 0) {
      return InvalidArgumentError("task '" + status.task_id() + "': best record " +
                                  std::to_string(best_id) + " is not in the database");
    }
  }
  PgParams row;
  row.Text(status.task_id())
      .Bytes(status.spec().SerializeAsString())
      .Text(status.spec().workload_spec())
      .Text(status.spec().target().target())
      .Int(status.spec().trial_budget())
      .Int(status.trials_done())
      .Int(status.state());
  if (best_id != 0) {
    row.Int(best_id);
  } else {
    row.Null();
  }
  row.Text(status.error()).Int(status.updated_unix_ms() != 0 ? status.updated_unix_ms() : UnixMs());
  TUNED_ASSIGN_OR_RETURN(
      PgResult saved,
      conn.Query("INSERT INTO tasks(task_id, spec, workload_key, target, trial_budget, "
                  "trials_done, state, best_record_id, error, updated_unix_ms) "
                  "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                  "ON CONFLICT(task_id) DO UPDATE SET spec = excluded.spec, "
                  "workload_key = excluded.workload_key, target = excluded.target, "
                  "trial_budget = excluded.trial_budget, trials_done = excluded.trials_done, "
                  "state = excluded.state, best_record_id = excluded.best_record_id, "
                  "error = excluded.error, updated_unix_ms = excluded.updated_unix_ms",
                  row));
  (void)saved;
  return Status::Ok();
}

StatusOr<bool> PostgresDatabase::SaveCostModelSnapshot(const CostModelSnapshot& snapshot) {
  bool added = false;
  TUNED_RETURN_IF_ERROR(RunWriteTransaction(*pool_, [&](PgConnection& conn) -> Status {
    TUNED_ASSIGN_OR_RETURN(added, SaveCostModelSnapshotOn(conn, snapshot));
    return Status::Ok();
  }));
  return added;
}

StatusOr<bool> PostgresDatabase::SaveCostModelSnapshotOn(PgConnection& conn,
                                                         const CostModelSnapshot& snapshot) {
  v1::Target target;
  target.set_target(snapshot.target);
  TUNED_ASSIGN_OR_RETURN(int64_t target_id, UpsertTarget(conn, target, /*device=*/""));
  PgParams row;
  row.Int(target_id)
      .Text(snapshot.format)
      .Int(snapshot.feature_version)
      .Int(snapshot.num_records)
      .Bytes(snapshot.model)
      .Text(snapshot.origin.empty() ? database_id_ : snapshot.origin)
      .Int(snapshot.created_unix_ms != 0 ? snapshot.created_unix_ms : UnixMs());
  TUNED_ASSIGN_OR_RETURN(
      PgResult inserted,
      conn.Query("INSERT INTO cost_model_snapshots(target_id, format, feature_version, "
                  "num_records, model, origin, created_unix_ms) "
                  "VALUES($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING id",
                  row));
  const int64_t new_id = inserted.rows() > 0 ? inserted.Int(0, 0) : 0;
  PgParams prune;
  prune.Int(target_id).Int(kKeptSnapshotsPerTarget);
  TUNED_ASSIGN_OR_RETURN(
      PgResult pruned,
      conn.Query("DELETE FROM cost_model_snapshots WHERE target_id = $1 AND id NOT IN ("
                  "SELECT id FROM cost_model_snapshots WHERE target_id = $1 "
                  "ORDER BY created_unix_ms DESC, id DESC LIMIT $2)",
                  prune));
  (void)pruned;
  // A snapshot older than the kept ones is pruned at once: it does not count as added.
  bool added = false;
  if (new_id != 0) {
    PgParams id;
    id.Int(new_id);
    TUNED_ASSIGN_OR_RETURN(PgResult kept,
                           conn.Query("SELECT 1 FROM cost_model_snapshots WHERE id = $1", id));
    added = kept.rows() > 0;
  }
  return added;
}

Status PostgresDatabase::LogMerge(const MergeEntry& entry) {
  PgParams row;
  row.Text(entry.source_path)
      .Text(entry.source_database_id)
      .Int(entry.workloads_added)
      .Int(entry.records_added)
      .Int(entry.snapshots_added)
      .Int(entry.merged_unix_ms != 0 ? entry.merged_unix_ms : UnixMs());
  return RunWriteTransaction(*pool_, [&](PgConnection& conn) -> Status {
    TUNED_ASSIGN_OR_RETURN(
        PgResult logged,
        conn.Query("INSERT INTO merges(source_path, source_database_id, workloads_added, "
                   "records_added, snapshots_added, merged_unix_ms) "
                   "VALUES($1, $2, $3, $4, $5, $6)",
                   row));
    (void)logged;
    return Status::Ok();
  });
}

}  // namespace tuned::db
