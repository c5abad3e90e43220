#include "tuning_db/jsonl.h"

#include <google/protobuf/util/json_util.h>

#include <string>
#include <vector>

namespace tuned::db {
namespace {

constexpr int kPageSize = 1000;
constexpr size_t kImportBatch = 500;

Status StoreBatch(Database& db, std::vector<v1::TuningRecord>& batch, ImportStats& stats) {
  if (batch.empty()) return Status::Ok();
  InsertOptions options;
  options.stamp_missing_time = false;
  TUNED_ASSIGN_OR_RETURN(InsertResult result, db.InsertRecords(batch, options));
  stats.inserted += result.inserted;
  stats.duplicates += result.duplicates;
  batch.clear();
  return Status::Ok();
}

}  // namespace

StatusOr<ExportStats> ExportJsonl(Database& db, std::ostream& out) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.add_whitespace = false;
  ExportStats stats;
  RecordFilter filter;
  filter.limit = kPageSize;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> page, db.ListRecords(filter));
    if (page.empty()) break;
    for (const v1::TuningRecord& record : page) {
      std::string line;
      auto status = google::protobuf::util::MessageToJsonString(record, &line, options);
      if (!status.ok()) {
        return InternalError("cannot render record " + std::to_string(record.record_id()) +
                             " as json: " + std::string(status.message()));
      }
      out << line << '\n';
      ++stats.records;
    }
    filter.after_id = page.back().record_id();
  }
  out.flush();
  if (!out) return UnavailableError("cannot write the export: output stream failed");
  return stats;
}

StatusOr<ImportStats> ImportJsonl(Database& db, std::istream& in, const std::string& source_name) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // Files from newer versions may carry more fields.
  ImportStats stats;
  std::vector<v1::TuningRecord> batch;
  int64_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++stats.lines;
    v1::TuningRecord record;
    auto status = google::protobuf::util::JsonStringToMessage(line, &record, options);
    const std::string where = source_name + ":" + std::to_string(line_number);
    if (!status.ok()) {
      return InvalidArgumentError(where +
                                  ": not a tuning record: " + std::string(status.message()));
    }
    if (record.workload().key().empty()) {
      return InvalidArgumentError(where + ": record has no workload key");
    }
    record.set_record_id(0);
    batch.push_back(std::move(record));
    if (batch.size() >= kImportBatch) {
      Status stored = StoreBatch(db, batch, stats);
      if (!stored.ok()) return stored.WithContext(where);
    }
  }
  if (in.bad()) return UnavailableError("cannot read '" + source_name + "'");
  Status stored = StoreBatch(db, batch, stats);
  if (!stored.ok()) return stored.WithContext(source_name);
  return stats;
}

}  // namespace tuned::db
