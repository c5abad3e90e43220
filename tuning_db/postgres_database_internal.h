#ifndef TUNED_TUNING_DB_POSTGRES_DATABASE_INTERNAL_H_
#define TUNED_TUNING_DB_POSTGRES_DATABASE_INTERNAL_H_

/// \file
/// The PostgreSQL implementation of `Database`, shared by its two source files:
/// `postgres_database.cc` (opening, refusal of foreign schemas, writes) and
/// `postgres_queries.cc` (reads). Not part of the public API; use `OpenDatabase`.
///
/// Every call borrows one connection of the pool for its duration, so calls from several
/// threads run at once on different connections; the server serializes conflicting writes.

#include <string>

#include "tuning_db/database.h"
#include "tuning_db/postgres_task_ownership_internal.h"
#include "tuning_db/postgres_util.h"

namespace tuned::db {

class PostgresDatabase final : public Database {
 public:
  PostgresDatabase(std::string shown_url, std::unique_ptr<PgPool> pool, std::string database_id,
                   std::unique_ptr<PgTaskOwnership> ownership)
      : shown_url_(std::move(shown_url)), pool_(std::move(pool)),
        database_id_(std::move(database_id)), ownership_(std::move(ownership)) {}

  const std::string& path() const override { return shown_url_; }
  const std::string& database_id() const override { return database_id_; }
  TaskOwnership* task_ownership() override { return ownership_.get(); }

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

  Status SaveTaskOn(PgConnection& conn, const v1::TaskStatus& status);
  StatusOr<bool> SaveCostModelSnapshotOn(PgConnection& conn, const CostModelSnapshot& snapshot);
  /// Id of the workload (inserted if new); `added` tells whether it was inserted.
  StatusOr<int64_t> UpsertWorkload(PgConnection& conn, const v1::Workload& workload, bool* added);
  StatusOr<int64_t> UpsertTarget(PgConnection& conn, const v1::Target& target,
                                 const std::string& device);
  /// Row id of `key` / `target`, or 0 when absent.
  StatusOr<int64_t> WorkloadId(PgConnection& conn, const std::string& key);
  StatusOr<int64_t> TargetId(PgConnection& conn, const std::string& target);
  StatusOr<std::vector<v1::TuningRecord>> QueryRecords(PgConnection& conn, const std::string& sql,
                                                       const PgParams& params);
  StatusOr<v1::TuningRecord> GetRecordOn(PgConnection& conn, int64_t record_id);
  StatusOr<std::string> ExplainMiss(PgConnection& conn, const BestRecordsQuery& query,
                                    int64_t workload_id, int64_t target_id);
  StatusOr<std::vector<v1::TaskStatus>> QueryTasks(PgConnection& conn, const std::string& sql,
                                                   const PgParams& params);

  const std::string shown_url_;
  std::unique_ptr<PgPool> pool_;
  const std::string database_id_;
  const std::unique_ptr<PgTaskOwnership> ownership_;
};

/// The column list `QueryRecords` reads, with the joins it needs; append WHERE/ORDER BY.
inline constexpr char kPgRecordSelect[] =
    "SELECT r.id, w.workload, t.target, t.kind, r.trace, r.trace_hash, r.result, r.config, "
    "r.tuner_version, r.task_id, r.created_unix_ms, r.origin, r.kind, r.codegen_version "
    "FROM records r "
    "JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id ";

/// Opens the PostgreSQL tuning database at `url` (the public entry is `OpenDatabase`).
StatusOr<std::unique_ptr<Database>> OpenPostgresDatabase(const std::string& url,
                                                         const OpenOptions& options);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_POSTGRES_DATABASE_INTERNAL_H_
