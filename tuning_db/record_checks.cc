#include "tuning_db/record_checks.h"

#include <cmath>
#include <string>

#include "common/sha256.h"
#include "tuning_db/trace_hash.h"

namespace tuned::db {

Status CheckWorkload(const v1::Workload& workload) {
  if (workload.key().empty()) return InvalidArgumentError("workload has an empty key");
  if (!workload.key_sha256().empty() && workload.key_sha256() != Sha256Hex(workload.key())) {
    return InvalidArgumentError("workload '" + workload.key() +
                                "': key_sha256 is not the SHA-256 of its key");
  }
  return Status::Ok();
}

Status CheckRecord(const v1::TuningRecord& record, size_t index) {
  const std::string where = "record " + std::to_string(index);
  if (Status workload = CheckWorkload(record.workload()); !workload.ok()) {
    return workload.WithContext(where);
  }
  if (!record.has_trace()) return InvalidArgumentError(where + ": has no trace");
  if (record.target().target().empty()) return InvalidArgumentError(where + ": has no target");
  if (!record.trace_hash().empty() && record.trace_hash() != TraceHash(record.trace())) {
    return InvalidArgumentError(where + ": trace_hash does not match its trace");
  }
  const v1::MeasureResult& result = record.result();
  if (result.status() == v1::MEASURE_STATUS_UNSPECIFIED) {
    return InvalidArgumentError(where + ": result status is unspecified");
  }
  if (result.status() == v1::MEASURE_STATUS_OK &&
      !(result.median_seconds() > 0 && std::isfinite(result.median_seconds()))) {
    return InvalidArgumentError(where + ": an OK result needs a positive median_seconds");
  }
  return Status::Ok();
}

}  // namespace tuned::db
