#ifndef TUNED_TUNING_DB_STORED_RECORD_INTERNAL_H_
#define TUNED_TUNING_DB_STORED_RECORD_INTERNAL_H_

/// \file
/// A record rebuilt from the columns of the record query, the same on every backend: id,
/// workload, target, target kind, trace, trace hash, result, config, tuner version, task id,
/// creation time, origin, kind, code-generation version. Private to tuning_db.

#include <string>
#include <string_view>

#include "common/status.h"
#include "tuned/v1/record.pb.h"

namespace tuned::db {

/// The statuses of QuarantinesTrace as an SQL list, "(3, 4, 5, 6, 7)", for both backends.
std::string QuarantineStatusesSql();

/// The miss reason when the only OK records of the pair were measured with verification off.
std::string UnverifiedOnlyReason(const std::string& workload, const std::string& target,
                                 int64_t unverified_ok);

/// Parses a serialized message stored in a row; a row that does not parse is data loss.
template <typename Message>
Status ParseStored(Message& message, const std::string& bytes, std::string_view what, int64_t row) {
  if (!message.ParseFromString(bytes)) {
    return DataLossError("stored " + std::string(what) + " of row " + std::to_string(row) +
                         " cannot be parsed");
  }
  return Status::Ok();
}

/// `row` reads column i of the current row: `Int(i)`, `Text(i)`, `Bytes(i)`.
template <typename Row>
StatusOr<v1::TuningRecord> RecordFromColumns(const Row& row) {
  v1::TuningRecord record;
  const int64_t id = row.Int(0);
  record.set_record_id(id);
  TUNED_RETURN_IF_ERROR(ParseStored(*record.mutable_workload(), row.Bytes(1), "workload", id));
  record.mutable_target()->set_target(row.Text(2));
  record.mutable_target()->set_kind(static_cast<v1::TargetKind>(row.Int(3)));
  TUNED_RETURN_IF_ERROR(ParseStored(*record.mutable_trace(), row.Bytes(4), "trace", id));
  record.set_trace_hash(row.Text(5));
  TUNED_RETURN_IF_ERROR(ParseStored(*record.mutable_result(), row.Bytes(6), "result", id));
  TUNED_RETURN_IF_ERROR(ParseStored(*record.mutable_config(), row.Bytes(7), "config", id));
  record.set_tuner_version(row.Text(8));
  record.set_task_id(row.Text(9));
  record.set_created_unix_ms(row.Int(10));
  record.set_origin(row.Text(11));
  record.set_kind(static_cast<v1::RecordKind>(row.Int(12)));
  record.set_codegen_version(static_cast<uint32_t>(row.Int(13)));
  return record;
}

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_STORED_RECORD_INTERNAL_H_
