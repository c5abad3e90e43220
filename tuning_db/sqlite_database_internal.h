#ifndef TUNED_TUNING_DB_SQLITE_DATABASE_INTERNAL_H_
#define TUNED_TUNING_DB_SQLITE_DATABASE_INTERNAL_H_

/// \file
/// The SQLite implementation of `Database`, shared by its two source files:
/// `sqlite_database.cc` (opening, refusal of foreign files, writes) and `sqlite_queries.cc`
/// (reads). Not part of the public API; use `OpenSqliteDatabase`.

#include <map>
#include <mutex>
#include <string>

#include "tuning_db/database.h"
#include "tuning_db/sqlite_util.h"

namespace tuned::db {

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(std::string path, SqliteConnection conn, std::string database_id)
      : path_(std::move(path)), conn_(std::move(conn)), database_id_(std::move(database_id)) {}

  const std::string& path() const override { return path_; }
  const std::string& database_id() const override { return database_id_; }

  Status PutWorkload(const v1::Workload& workload) override;
  StatusOr<InsertResult> InsertRecords(std::span<const v1::TuningRecord> records,
                                       const InsertOptions& options) override;
  Status SaveTask(const v1::TaskStatus& status) override;
  StatusOr<bool> SaveCostModelSnapshot(const CostModelSnapshot& snapshot) override;
  Status LogMerge(const MergeEntry& entry) override;

  StatusOr<v1::Workload> GetWorkload(const std::string& key) override;
  StatusOr<std::vector<WorkloadSummary>> ListWorkloads() override;
  StatusOr<std::vector<std::string>> ListTargets(const std::string& workload_key) override;
  StatusOr<v1::TuningRecord> GetRecord(int64_t record_id) override;
  StatusOr<std::vector<v1::TuningRecord>> ListRecords(const RecordFilter& filter) override;
  StatusOr<BestRecords> GetBestRecords(const BestRecordsQuery& query) override;
  StatusOr<std::vector<v1::TuningRecord>> TaskRecords(const std::string& task_id) override;
  StatusOr<bool> HasMeasured(const std::string& workload_key, const std::string& target,
                             const std::string& trace_hash, const MeasurementKey& key) override;
  StatusOr<std::set<std::string>> MeasuredTraceHashes(
      const std::string& workload_key, const std::string& target,
      const std::vector<std::string>& trace_hashes, const MeasurementKey& key) override;
  Status InsertCalibration(const WorkerCalibration& calibration) override;
  StatusOr<std::vector<WorkerCalibration>> ListCalibrations(const std::string& worker_id,
                                                            int limit) override;
  StatusOr<DatabaseStats> Stats() override;
  StatusOr<int> CountWorkerLoss(const std::string& workload_key, const std::string& target,
                                const std::string& trace_hash, const std::string& reason) override;
  StatusOr<int> WorkerLosses(const std::string& workload_key, const std::string& target,
                             const std::string& trace_hash) override;
  StatusOr<std::vector<QuarantinedTrace>> ListQuarantined(const std::string& workload_key) override;
  StatusOr<v1::TaskStatus> LoadTask(const std::string& task_id) override;
  StatusOr<std::vector<v1::TaskStatus>> ListTasks(std::optional<v1::TaskState> state) override;
  StatusOr<CostModelSnapshot> LatestCostModelSnapshot(const std::string& target) override;
  StatusOr<std::vector<CostModelSnapshot>> ListCostModelSnapshots() override;

 private:
  class BatchWriter;  // InsertRecords' statements for InsertRecordBatch.

  /// A prepared statement for `sql`, reset and reused across calls (hot queries stay cheap).
  /// Callers hold `mutex_` and must not use two handles of the same text at once.
  StatusOr<CachedStatement> Cached(const std::string& sql);
  /// Id of the workload (inserted if new); `added` tells whether it was inserted.
  StatusOr<int64_t> UpsertWorkloadLocked(const v1::Workload& workload, bool* added);
  StatusOr<int64_t> UpsertTargetLocked(const v1::Target& target, const std::string& device);
  /// Row id of `key` / `target`, or 0 when absent.
  StatusOr<int64_t> WorkloadIdLocked(const std::string& key);
  StatusOr<int64_t> TargetIdLocked(const std::string& target);
  StatusOr<std::vector<v1::TuningRecord>> QueryRecordsLocked(Statement& stmt);
  StatusOr<v1::TuningRecord> GetRecordLocked(int64_t record_id);
  StatusOr<std::string> ExplainMissLocked(const BestRecordsQuery& query, int64_t workload_id,
                                          int64_t target_id);
  StatusOr<v1::TaskStatus> TaskFromRowLocked(Statement& stmt);

  const std::string path_;
  SqliteConnection conn_;
  const std::string database_id_;
  std::mutex mutex_;
  std::map<std::string, Statement, std::less<>> statements_;
};

/// The column list `QueryRecordsLocked` reads, with the joins it needs; append WHERE/ORDER BY.
inline constexpr char kRecordSelect[] =
    "SELECT r.id, w.workload, t.target, t.kind, r.trace, r.trace_hash, r.result, r.config, "
    "r.tuner_version, r.task_id, r.created_unix_ms, r.origin, r.kind, r.codegen_version "
    "FROM records r "
    "JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id ";

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_SQLITE_DATABASE_INTERNAL_H_
