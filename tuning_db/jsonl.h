#ifndef TUNED_TUNING_DB_JSONL_H_
#define TUNED_TUNING_DB_JSONL_H_

/// \file
/// JSON Lines import and export of tuning records: one self-contained `tuned.v1.TuningRecord`
/// per line in protobuf's JSON mapping (field names as in the .proto, enums by name, 64-bit
/// integers as strings), readable by any JSON tool.

#include <cstdint>
#include <istream>
#include <ostream>

#include "common/status.h"
#include "tuning_db/database.h"

namespace tuned::db {

struct ExportStats {
  int64_t records = 0;
};

struct ImportStats {
  int64_t lines = 0;       // Non-empty lines read.
  int64_t inserted = 0;    // New records stored.
  int64_t duplicates = 0;  // Records the database already had.
};

/// Writes every record of `db`, oldest first. Each line carries its workload, target, trace,
/// result, protocol, provenance (`origin`, worker, device, tuner version) and row id.
StatusOr<ExportStats> ExportJsonl(Database& db, std::ostream& out);

/// Reads records from `in` and stores them in batches. Deduplication rule: a record whose
/// (workload key, target, trace hash, worker id, created_unix_ms) is already stored is
/// skipped, so importing the same file twice adds nothing. Timestamps, `origin` and the other
/// provenance fields are kept as they are in the file; `record_id` is ignored (rows are
/// renumbered). A line that is not a valid record is an InvalidArgument error naming
/// `source_name` and the line number; batches stored before it stay stored.
StatusOr<ImportStats> ImportJsonl(Database& db, std::istream& in, const std::string& source_name);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_JSONL_H_
