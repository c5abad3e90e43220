#ifndef TUNED_TUNING_DB_RECORD_BATCH_INTERNAL_H_
#define TUNED_TUNING_DB_RECORD_BATCH_INTERNAL_H_

/// \file
/// The one loop behind every backend's `InsertRecords`: per record of a batch, its workload and
/// target resolved once per batch, its identity completed (trace hash, creation time, origin),
/// the row inserted unless a record with that identity is stored, and the row ids collected.
/// The backend supplies the statements, inside its write transaction. Private to tuning_db.

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "common/status.h"
#include "tuning_db/record_store.h"

namespace tuned::db {

/// One row of the `records` table, in its column order.
struct RecordRow {
  int64_t workload_id = 0;
  int64_t target_id = 0;
  std::string trace;  // Serialized v1::Trace.
  std::string trace_hash;
  int64_t status = 0;
  std::optional<double> median_seconds;  // Set only for OK records.
  std::string error;
  std::string result;  // Serialized v1::MeasureResult.
  std::string config;  // Serialized v1::MeasureConfig.
  std::string worker_id;
  std::string device_model;
  std::string tuner_version;
  std::string task_id;
  int64_t created_unix_ms = 0;
  std::string origin;
  bool verified = true;  // outputs were checked against the reference (v1::IsVerified)
  int64_t kind = 0;      // v1::RecordKind
  std::string toolkit_version;
  int64_t codegen_version = 0;
  int64_t protocol_version = 1;
};

/// The statements of one backend, run inside the transaction of its InsertRecords.
class RecordBatchWriter {
 public:
  virtual ~RecordBatchWriter() = default;
  /// Id of the workload, inserted if new.
  virtual StatusOr<int64_t> UpsertWorkload(const v1::Workload& workload) = 0;
  /// Id of the target, inserted if new (its kind and device filled in when they were unknown).
  virtual StatusOr<int64_t> UpsertTarget(const v1::Target& target, const std::string& device) = 0;
  /// Inserts `row` unless a record with its identity (workload, target, trace hash, worker,
  /// creation time) is stored: the new row id, or 0 for such a duplicate.
  virtual StatusOr<int64_t> InsertIfNew(const RecordRow& row) = 0;
  /// The row id of the stored record with `row`'s identity, or 0 when there is none.
  virtual StatusOr<int64_t> FindIdentity(const RecordRow& row) = 0;
};

/// Stores `records` (already checked with CheckRecord) through `writer`; `database_id` is the
/// origin of records that have none.
StatusOr<InsertResult> InsertRecordBatch(std::span<const v1::TuningRecord> records,
                                         const InsertOptions& options,
                                         const std::string& database_id,
                                         RecordBatchWriter& writer);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_RECORD_BATCH_INTERNAL_H_
