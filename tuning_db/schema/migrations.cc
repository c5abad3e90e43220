#include "tuning_db/schema/migrations.h"

#include <sqlite3.h>

#include <string>

#include "common/logging.h"
#include "tuning_db/sqlite_util.h"

namespace tuned::db {
namespace {

// Version 1: workloads, targets, measured records, tasks. `meta` holds the database's random id,
// which every record stored here is stamped with (provenance for merges).
constexpr char kMigration1[] = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO meta(key, value) VALUES
  ('database_id', lower(hex(randomblob(16)))),
  ('created_unix_ms', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));

CREATE TABLE workloads(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,          -- canonical workload key text
  key_sha256 TEXT NOT NULL,          -- SHA-256 of key, 64 hex digits
  op TEXT NOT NULL,                  -- library op name or 'custom'
  definition TEXT NOT NULL,          -- canonical printed compute
  flops REAL NOT NULL,               -- floating-point operations per execution; 0 if unknown
  workload BLOB NOT NULL,            -- serialized tuned.v1.Workload
  created_unix_ms INTEGER NOT NULL
);

CREATE TABLE targets(
  id INTEGER PRIMARY KEY,
  target TEXT NOT NULL UNIQUE,       -- canonical target string
  kind INTEGER NOT NULL,             -- tuned.v1.TargetKind
  device_description TEXT NOT NULL   -- device model most recently measured on for this target
);

CREATE TABLE records(
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  trace BLOB NOT NULL,               -- serialized tuned.v1.Trace
  trace_hash TEXT NOT NULL,          -- TraceHash(trace)
  status INTEGER NOT NULL,           -- tuned.v1.MeasureStatus
  median_seconds REAL,               -- median repeat time, seconds; NULL unless status is OK
  error TEXT NOT NULL,
  result BLOB NOT NULL,              -- serialized tuned.v1.MeasureResult: every repeat, device
  config BLOB NOT NULL,              -- serialized tuned.v1.MeasureConfig
  worker_id TEXT NOT NULL,
  device_model TEXT NOT NULL,
  tuner_version TEXT NOT NULL,
  task_id TEXT NOT NULL,             -- empty for records not produced by a task
  created_unix_ms INTEGER NOT NULL
);
-- A measurement's identity: the same trace on the same worker at the same millisecond.
CREATE UNIQUE INDEX records_identity
  ON records(workload_id, target_id, trace_hash, worker_id, created_unix_ms);
CREATE INDEX records_best ON records(workload_id, target_id, status, median_seconds);
CREATE INDEX records_task ON records(task_id, id);

CREATE TABLE tasks(
  task_id TEXT PRIMARY KEY,
  spec BLOB NOT NULL,                -- serialized tuned.v1.TaskSpec
  workload_key TEXT NOT NULL,
  target TEXT NOT NULL,
  trial_budget INTEGER NOT NULL,
  trials_done INTEGER NOT NULL,
  state INTEGER NOT NULL,            -- tuned.v1.TaskState
  best_record_id INTEGER,            -- records.id of the best OK record so far
  error TEXT NOT NULL,
  updated_unix_ms INTEGER NOT NULL
);
CREATE INDEX tasks_state ON tasks(state, updated_unix_ms);
)sql";

// Version 2: record provenance, cost-model snapshots, and the log of merges.
constexpr char kMigration2[] = R"sql(
ALTER TABLE records ADD COLUMN origin TEXT NOT NULL DEFAULT '';
UPDATE records SET origin = (SELECT value FROM meta WHERE key = 'database_id');

CREATE TABLE cost_model_snapshots(
  id INTEGER PRIMARY KEY,
  target_id INTEGER NOT NULL REFERENCES targets(id),
  format TEXT NOT NULL,              -- model format, e.g. 'xgboost-json'
  feature_version INTEGER NOT NULL,  -- version of the feature schema the model was trained on
  num_records INTEGER NOT NULL,      -- records the model was trained on
  model BLOB NOT NULL,
  origin TEXT NOT NULL,              -- database id the snapshot was first saved in
  created_unix_ms INTEGER NOT NULL
);
CREATE UNIQUE INDEX cost_model_snapshots_identity
  ON cost_model_snapshots(target_id, origin, created_unix_ms);

CREATE TABLE merges(
  id INTEGER PRIMARY KEY,
  source_path TEXT NOT NULL,
  source_database_id TEXT NOT NULL,
  workloads_added INTEGER NOT NULL,
  records_added INTEGER NOT NULL,
  snapshots_added INTEGER NOT NULL,
  merged_unix_ms INTEGER NOT NULL
);
)sql";

// Version 3: worker losses per trace (quarantine after repeated losses, across restarts and
// tasks), and whether a record's output was verified.
constexpr char kMigration3[] = R"sql(
CREATE TABLE worker_losses(
  workload_key TEXT NOT NULL,
  target TEXT NOT NULL,
  trace_hash TEXT NOT NULL,
  losses INTEGER NOT NULL,           -- leases of this trace that ended with their worker gone
  reason TEXT NOT NULL,              -- why the last one ended
  updated_unix_ms INTEGER NOT NULL,
  PRIMARY KEY (workload_key, target, trace_hash)
) WITHOUT ROWID;
ALTER TABLE records ADD COLUMN verified INTEGER NOT NULL DEFAULT 1;  -- 0: measured with verify off
)sql";

// Version 4: the complete key of a record (toolkit, code-generation and protocol versions; the
// device model is a column since version 1), why it was measured (search trial, re-measure,
// final re-measure), and the workers' calibration figures (drift detection).
constexpr char kMigration4[] = R"sql(
ALTER TABLE records ADD COLUMN kind INTEGER NOT NULL DEFAULT 0;             -- tuned.v1.RecordKind
ALTER TABLE records ADD COLUMN toolkit_version TEXT NOT NULL DEFAULT '';   -- e.g. 'LLVM 16.0.6'
ALTER TABLE records ADD COLUMN codegen_version INTEGER NOT NULL DEFAULT 0; -- 0: before version 4
ALTER TABLE records ADD COLUMN protocol_version INTEGER NOT NULL DEFAULT 1;
CREATE TABLE worker_calibrations(
  id INTEGER PRIMARY KEY,
  worker_id TEXT NOT NULL,
  device_model TEXT NOT NULL,
  median_seconds REAL NOT NULL,      -- the calibration kernel's median time
  repeat_cv REAL NOT NULL,
  drift REAL NOT NULL,               -- relative move from the worker's first figure
  drifted INTEGER NOT NULL,          -- 1: beyond the threshold; the batch was re-measured
  created_unix_ms INTEGER NOT NULL
);
CREATE INDEX worker_calibrations_worker ON worker_calibrations(worker_id, id);
)sql";

constexpr Migration kMigrations[] = {
    {1, "workloads, targets, records, tasks", kMigration1},
    {2, "record provenance, cost-model snapshots, merge log", kMigration2},
    {3, "worker losses per trace, verified records", kMigration3},
    {4, "record key versions and kinds, worker calibrations", kMigration4},
};
static_assert(std::size(kMigrations) == kSchemaVersion, "one migration per schema version");

StatusOr<int64_t> ReadPragma(sqlite3* conn, const char* pragma) {
  TUNED_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn, std::string("PRAGMA ") + pragma));
  TUNED_ASSIGN_OR_RETURN(bool has_row, stmt.Step());
  if (!has_row) return InternalError(std::string("PRAGMA ") + pragma + " returned nothing");
  return stmt.ColumnInt(0);
}

Status MigrateInTransaction(sqlite3* conn, int target_version) {
  TUNED_ASSIGN_OR_RETURN(int64_t version, ReadPragma(conn, "user_version"));
  if (version > target_version) {
    return FailedPreconditionError("schema version " + std::to_string(version) + " is newer than " +
                                   std::to_string(target_version));
  }
  for (const Migration& migration : kMigrations) {
    if (migration.version <= version || migration.version > target_version) continue;
    Logger("db")->info("migrating schema to version {}: {}", migration.version,
                       migration.description);
    int rc = sqlite3_exec(conn, migration.sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) {
      return SqliteStatus(conn, rc, "schema migration " + std::to_string(migration.version));
    }
  }
  std::string stamp = "PRAGMA application_id = " + std::to_string(kApplicationId) +
                      "; PRAGMA user_version = " + std::to_string(target_version) + ";";
  int rc = sqlite3_exec(conn, stamp.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(conn, rc, "stamping schema version");
  return Status::Ok();
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

Status MigrateSchema(sqlite3* conn, int target_version) {
  int rc = sqlite3_exec(conn, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(conn, rc, "starting schema migration");
  Status status = MigrateInTransaction(conn, target_version);
  if (!status.ok()) {
    sqlite3_exec(conn, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  rc = sqlite3_exec(conn, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_exec(conn, "ROLLBACK", nullptr, nullptr, nullptr);
    return SqliteStatus(conn, rc, "committing schema migration");
  }
  return Status::Ok();
}

}  // namespace tuned::db
