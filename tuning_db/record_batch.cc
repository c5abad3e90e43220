#include <map>
#include <utility>

#include "common/time.h"
#include "proto/measure_config.h"
#include "tuning_db/record_batch_internal.h"
#include "tuning_db/trace_hash.h"

namespace tuned::db {

StatusOr<InsertResult> InsertRecordBatch(std::span<const v1::TuningRecord> records,
                                         const InsertOptions& options,
                                         const std::string& database_id,
                                         RecordBatchWriter& writer) {
  // Batches usually share one workload and target: resolve each once.
  std::map<std::string, int64_t, std::less<>> workload_ids;
  std::map<std::pair<std::string, std::string>, int64_t> target_ids;
  InsertResult out;
  const int64_t now = UnixMs();
  for (size_t i = 0; i < records.size(); ++i) {
    const v1::TuningRecord& record = records[i];
    const v1::MeasureResult& result = record.result();
    auto workload_it = workload_ids.find(record.workload().key());
    if (workload_it == workload_ids.end()) {
      StatusOr<int64_t> id = writer.UpsertWorkload(record.workload());
      if (!id.ok()) return id.status().WithContext("record " + std::to_string(i));
      workload_it = workload_ids.emplace(record.workload().key(), *id).first;
    }
    auto target_key = std::make_pair(record.target().target(), result.device().model());
    auto target_it = target_ids.find(target_key);
    if (target_it == target_ids.end()) {
      TUNED_ASSIGN_OR_RETURN(int64_t id, writer.UpsertTarget(record.target(), target_key.second));
      target_it = target_ids.emplace(target_key, id).first;
    }

    RecordRow row;
    row.workload_id = workload_it->second;
    row.target_id = target_it->second;
    row.trace = record.trace().SerializeAsString();
    row.trace_hash = record.trace_hash().empty() ? TraceHash(record.trace()) : record.trace_hash();
    row.status = result.status();
    if (result.status() == v1::MEASURE_STATUS_OK) row.median_seconds = result.median_seconds();
    row.error = result.error();
    row.result = result.SerializeAsString();
    row.config = record.config().SerializeAsString();
    row.worker_id = result.worker_id();
    row.device_model = result.device().model();
    row.tuner_version = record.tuner_version();
    row.task_id = record.task_id();
    row.created_unix_ms = record.created_unix_ms();
    if (row.created_unix_ms == 0 && options.stamp_missing_time) row.created_unix_ms = now;
    row.origin = record.origin().empty() ? database_id : record.origin();
    row.verified = v1::IsVerified(record.config());
    row.kind = record.kind();
    row.toolkit_version = result.device().toolkit_version();
    row.codegen_version = record.codegen_version();
    row.protocol_version = v1::ProtocolVersion(record.config());

    TUNED_ASSIGN_OR_RETURN(int64_t inserted, writer.InsertIfNew(row));
    if (inserted != 0) {
      ++out.inserted;
      out.record_ids.push_back(inserted);
      continue;
    }
    ++out.duplicates;
    TUNED_ASSIGN_OR_RETURN(int64_t existing, writer.FindIdentity(row));
    if (existing == 0) {
      return InternalError("record " + std::to_string(i) + " was ignored but not found");
    }
    out.record_ids.push_back(existing);
  }
  return out;
}

}  // namespace tuned::db
