#ifndef TUNED_TUNING_DB_RECORD_STORE_H_
#define TUNED_TUNING_DB_RECORD_STORE_H_

/// \file
/// The records half of the tuning log: workloads and every measured record, written by the
/// server's tasks, read by the search (what was measured, the best so far), the compiler (the
/// best record of a workload and target) and `tuned db`. Implemented by the SQLite database
/// (database.h); its users depend on this interface only.

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "tuned/v1/record.pb.h"

namespace tuned::db {

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

/// Where and how a record was measured, beyond its workload and target: the rest of the key a
/// lookup or "was it measured?" matches. An empty or 0 field matches any record. A record that
/// predates a field (schema 4: toolkit '' and code generation 0) matches any value of it: its
/// version is unknown, not different.
struct MeasurementKey {
  std::string device_model;       // e.g. "AMD EPYC 7B13", "NVIDIA H200".
  std::string toolkit_version;    // e.g. "LLVM 16.0.6" (the worker's DeviceInfo).
  uint32_t codegen_version = 0;   // kCodegenVersion (common/version.h) of what tuned builds now.
  uint32_t protocol_version = 0;  // MeasureConfig.protocol_version.
};

struct BestRecordsQuery {
  std::string workload_key;
  std::string target;
  std::string device_model;  // Empty matches any device.
  int limit = 1;             // At most this many records, best first.
  /// Also rank records measured with verification off (`verify: false`); off by default, so
  /// an unchecked output never becomes a best record unless the caller asks.
  bool allow_unverified = false;
  std::string toolkit_version;    // Empty matches any toolkit (MeasurementKey).
  uint32_t codegen_version = 0;   // 0 matches any code generation.
  uint32_t protocol_version = 0;  // 0 matches any timing protocol.

  MeasurementKey Key() const {
    return {device_model, toolkit_version, codegen_version, protocol_version};
  }
};

struct BestRecords {
  std::vector<v1::TuningRecord> records;  // OK records, fastest median first.
  std::string miss_reason;                // Why `records` is empty; empty when it is not.
  // Search trials of the workload on the target: its records of kind SEARCH, of any status,
  // device and version (re-measures and finals are not trials). What a resumed run has spent.
  int64_t trials = 0;
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

/// A trace never sent for measurement again for its workload and target: a record of it
/// crashed, hung, gave a wrong result or lost its worker on every lease (QuarantinesTrace).
struct QuarantinedTrace {
  std::string workload_key;
  std::string target;
  std::string trace_hash;
  v1::MeasureStatus status = v1::MEASURE_STATUS_UNSPECIFIED;
  std::string reason;  // the record's error
  int64_t record_id = 0;
  int64_t created_unix_ms = 0;
};

/// The statuses whose record quarantines its trace: RUNTIME_ERROR, TIMEOUT, BUILD_TIMEOUT,
/// WRONG_RESULT and WORKER_LOST. (Every stored trace is already never proposed again by the
/// search, measured_filter.h; these are the ones listed as harmful.)
inline constexpr v1::MeasureStatus kQuarantineStatuses[] = {
    v1::MEASURE_STATUS_RUNTIME_ERROR, v1::MEASURE_STATUS_TIMEOUT, v1::MEASURE_STATUS_WRONG_RESULT,
    v1::MEASURE_STATUS_WORKER_LOST, v1::MEASURE_STATUS_BUILD_TIMEOUT};
inline bool QuarantinesTrace(v1::MeasureStatus status) {
  for (v1::MeasureStatus harmful : kQuarantineStatuses) {
    if (status == harmful) return true;
  }
  return false;
}

/// One timing of a worker's calibration kernel, as the server stored it.
struct WorkerCalibration {
  std::string worker_id;
  std::string device_model;
  double median_seconds = 0;
  double repeat_cv = 0;
  double drift = 0;      // (median - baseline) / baseline: the worker's first median, or its last drifted one
  bool drifted = false;  // |drift| was beyond the threshold: the batch was re-measured
  int64_t created_unix_ms = 0;
};

class RecordStore {
 public:
  virtual ~RecordStore() = default;

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

  /// Counts one lease of the trace that ended with its worker gone (dropped stream, silence)
  /// and returns the trace's losses so far, over every task and server restart.
  virtual StatusOr<int> CountWorkerLoss(const std::string& workload_key, const std::string& target,
                                        const std::string& trace_hash,
                                        const std::string& reason) = 0;

  // --- Reads. ---

  /// Losses CountWorkerLoss counted for the trace; 0 when none.
  virtual StatusOr<int> WorkerLosses(const std::string& workload_key, const std::string& target,
                                     const std::string& trace_hash) = 0;
  /// The quarantined traces (of the workload `workload_key`, of every workload when empty),
  /// in record order.
  virtual StatusOr<std::vector<QuarantinedTrace>> ListQuarantined(
      const std::string& workload_key) = 0;

  /// NotFound when no workload has `key`.
  virtual StatusOr<v1::Workload> GetWorkload(const std::string& key) = 0;
  virtual StatusOr<std::vector<WorkloadSummary>> ListWorkloads() = 0;
  /// Targets that have records of the workload `workload_key` (of any workload when empty),
  /// sorted.
  virtual StatusOr<std::vector<std::string>> ListTargets(const std::string& workload_key) = 0;
  /// NotFound when no record has row id `record_id`.
  virtual StatusOr<v1::TuningRecord> GetRecord(int64_t record_id) = 0;
  virtual StatusOr<std::vector<v1::TuningRecord>> ListRecords(const RecordFilter& filter) = 0;
  /// The best `query.limit` OK records by median, of the records of its key; when there are
  /// none, `miss_reason` says why: no such workload, records only for other targets, devices or
  /// versions (named), or only failures. Ranking (docs/tuning_db.md): per trace only the
  /// records of its latest kind count (a re-measure replaces the figure it re-measured), and
  /// where FINAL records exist only they rank.
  virtual StatusOr<BestRecords> GetBestRecords(const BestRecordsQuery& query) = 0;
  /// Every record a task produced, in insertion order.
  virtual StatusOr<std::vector<v1::TuningRecord>> TaskRecords(const std::string& task_id) = 0;
  /// Whether a trace with `trace_hash` was measured (any status) for the workload, target and
  /// `key` (every record of the pair when `key` is empty).
  virtual StatusOr<bool> HasMeasured(const std::string& workload_key, const std::string& target,
                                     const std::string& trace_hash,
                                     const MeasurementKey& key = {}) = 0;
  /// Of `trace_hashes`, those measured (any status) for the workload, target and `key`:
  /// HasMeasured for many traces in one read (one query per 64 hashes).
  virtual StatusOr<std::set<std::string>> MeasuredTraceHashes(
      const std::string& workload_key, const std::string& target,
      const std::vector<std::string>& trace_hashes, const MeasurementKey& key = {}) = 0;

  /// Stores one calibration figure of a worker (drift detection, docs/server.md).
  virtual Status InsertCalibration(const WorkerCalibration& calibration) = 0;
  /// The worker's calibration figures, oldest first (at most `limit`, the newest).
  virtual StatusOr<std::vector<WorkerCalibration>> ListCalibrations(const std::string& worker_id,
                                                                    int limit) = 0;

  /// Convenience: inserts one record and returns its row id.
  StatusOr<int64_t> InsertRecord(const v1::TuningRecord& record);
};

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_RECORD_STORE_H_
