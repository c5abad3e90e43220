#ifndef TUNED_TUNING_DB_DATABASE_H_
#define TUNED_TUNING_DB_DATABASE_H_

/// \file
/// The tuning database: the single source of truth for workloads, measured records, tasks and
/// cost-model snapshots. The server writes it, the compiler and the CLI read it, often at the
/// same time from different processes. It stores workloads and traces as the messages of
/// `proto/tuned/v1/` and knows nothing of the compiler's IR.
///
/// Lifecycle: `OpenSqliteDatabase` opens (or creates) a file, refuses files it must not touch,
/// and runs pending migrations; the returned object is thread-safe (operations are serialized)
/// and closes the file when destroyed. Every write is one transaction; a write that returned OK
/// survives the process being killed right after.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "tuned/v1/record.pb.h"
#include "tuned/v1/task.pb.h"

namespace tuned::db {

struct OpenOptions {
  /// Create (and initialize) the file when it does not exist; when false a missing file is a
  /// NotFound error and nothing is created.
  bool create_if_missing = true;
  /// How long an operation waits for another process's write lock before failing Unavailable.
  int busy_timeout_ms = 10000;
};

struct InsertOptions {
  /// Stamp records whose `created_unix_ms` is 0 with the current time. Import and merge turn
  /// this off so that a record's identity (and with it deduplication) does not change.
  bool stamp_missing_time = true;
};

struct InsertResult {
  int64_t inserted = 0;
  int64_t duplicates = 0;           // Records already present (same identity), left unchanged.
  std::vector<int64_t> record_ids;  // Per input record: its row id, existing one for duplicates.
};

struct BestRecordsQuery {
  std::string workload_key;
  std::string target;
  std::string device_model;  // Empty matches any device.
  int limit = 1;             // At most this many records, best first.
};

struct BestRecords {
  std::vector<v1::TuningRecord> records;  // OK records, fastest median first.
  std::string miss_reason;                // Why `records` is empty; empty when it is not.
};

/// Selects records for listing and export, in row-id order. Empty strings match everything.
struct RecordFilter {
  std::string workload_key;
  std::string target;
  std::string task_id;
  int64_t after_id = 0;  // Only records with a larger row id (for paging).
  int limit = 1000;
};

struct WorkloadSummary {
  v1::Workload workload;
  int64_t num_records = 0;
  int64_t num_ok = 0;
  double best_median_seconds = 0;  // Fastest OK median over every target; 0 without OK records.
  std::vector<std::string> targets;
  int64_t last_unix_ms = 0;  // Newest record's time; 0 without records.
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

/// A trained cost model for one target, as the cost model serialized it.
struct CostModelSnapshot {
  std::string target;
  std::string format;            // e.g. "xgboost-json"; opaque to the database.
  uint32_t feature_version = 0;  // Feature schema version the model was trained on.
  int64_t num_records = 0;       // Records it was trained on.
  std::string model;             // The serialized model.
  int64_t created_unix_ms = 0;   // 0 on save means "now".
  std::string origin;            // Database id it was first saved in; empty on save means here.
};

class Database {
 public:
  virtual ~Database() = default;

  virtual const std::string& path() const = 0;
  /// Random 32-hex-digit id created with the file; records first stored here carry it.
  virtual const std::string& database_id() const = 0;

  // --- Writes: each call is one transaction. ---

  /// Adds a workload, or leaves an existing one with the same key unchanged (filling in `flops`
  /// if it was unknown). InvalidArgument if the key is empty or its SHA-256 does not match.
  virtual Status PutWorkload(const v1::Workload& workload) = 0;

  /// Stores a batch of records in one transaction, adding their workloads and targets as
  /// needed. The trace hash is computed when empty and checked otherwise; an empty `origin` is
  /// set to this database's id. A record with the identity of a stored one (workload, target,
  /// trace hash, worker, creation time) is a duplicate and is skipped. Nothing is stored if any
  /// record is invalid.
  virtual StatusOr<InsertResult> InsertRecords(std::span<const v1::TuningRecord> records,
                                               const InsertOptions& options = {}) = 0;

  /// Creates or replaces a task's state. `status.best` is stored by reference: its `record_id`
  /// (0 for none) must name a stored record.
  virtual Status SaveTask(const v1::TaskStatus& status) = 0;

  /// Stores a cost-model snapshot and keeps only the newest `kKeptSnapshotsPerTarget` per
  /// target. Returns false if nothing was added: a snapshot with the same target, origin and time
  /// already exists, or this one is older than the kept ones.
  virtual StatusOr<bool> SaveCostModelSnapshot(const CostModelSnapshot& snapshot) = 0;

  /// Appends an entry to the merge log.
  virtual Status LogMerge(const MergeEntry& entry) = 0;

  // --- Reads. ---

  /// NotFound when no workload has `key`.
  virtual StatusOr<v1::Workload> GetWorkload(const std::string& key) = 0;
  virtual StatusOr<std::vector<WorkloadSummary>> ListWorkloads() = 0;
  /// Targets that have records of the workload `workload_key` (of any workload when empty),
  /// sorted.
  virtual StatusOr<std::vector<std::string>> ListTargets(const std::string& workload_key) = 0;
  /// NotFound when no record has row id `record_id`.
  virtual StatusOr<v1::TuningRecord> GetRecord(int64_t record_id) = 0;
  virtual StatusOr<std::vector<v1::TuningRecord>> ListRecords(const RecordFilter& filter) = 0;

  /// The best `query.limit` OK records by median; when there are none, `miss_reason` says why:
  /// no such workload, records only for other targets or devices (named), or only failures.
  virtual StatusOr<BestRecords> GetBestRecords(const BestRecordsQuery& query) = 0;
  /// Every record a task produced, in insertion order.
  virtual StatusOr<std::vector<v1::TuningRecord>> TaskRecords(const std::string& task_id) = 0;
  /// Whether a trace with `trace_hash` was measured (any status) for the workload and target.
  virtual StatusOr<bool> HasMeasured(const std::string& workload_key, const std::string& target,
                                     const std::string& trace_hash) = 0;
  /// Of `trace_hashes`, those measured (any status) for the workload and target: HasMeasured for
  /// many traces in one read (one query per 64 hashes).
  virtual StatusOr<std::set<std::string>> MeasuredTraceHashes(
      const std::string& workload_key, const std::string& target,
      const std::vector<std::string>& trace_hashes) = 0;
  virtual StatusOr<DatabaseStats> Stats() = 0;

  /// NotFound when no task has `task_id`. `best` is filled from the referenced record.
  virtual StatusOr<v1::TaskStatus> LoadTask(const std::string& task_id) = 0;
  /// Tasks in `state` (every task when nullopt), least recently updated first.
  virtual StatusOr<std::vector<v1::TaskStatus>> ListTasks(std::optional<v1::TaskState> state) = 0;

  /// The newest snapshot for `target`; NotFound when there is none.
  virtual StatusOr<CostModelSnapshot> LatestCostModelSnapshot(const std::string& target) = 0;
  /// Every stored snapshot, oldest first.
  virtual StatusOr<std::vector<CostModelSnapshot>> ListCostModelSnapshots() = 0;

  /// Convenience: inserts one record and returns its row id.
  StatusOr<int64_t> InsertRecord(const v1::TuningRecord& record);
};

inline constexpr int kKeptSnapshotsPerTarget = 4;

/// Opens the SQLite tuning database at `path`. Refused, with a one-line error naming the file
/// and leaving it unchanged: a file that is not an SQLite database or is an SQLite database of
/// another application (InvalidArgument), a damaged or truncated file (DataLoss), a file
/// written by a newer schema version (FailedPrecondition), a missing file when
/// `create_if_missing` is false (NotFound).
StatusOr<std::unique_ptr<Database>> OpenSqliteDatabase(const std::string& path,
                                                       const OpenOptions& options = {});

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_DATABASE_H_
