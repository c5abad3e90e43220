#include "cli/db_command.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/db_plot.h"
#include "cli/workload_flags.h"
#include "common/time.h"
#include "common/version.h"
#include "proto/measure_config.h"
#include "compiler/ir/op_library.h"
#include "compiler/ir/tdl/definition.h"
#include "tuning_db/database.h"
#include "tuning_db/jsonl.h"
#include "tuning_db/merge.h"
#include "tuning_db/record_text.h"

namespace tuned::cli {
namespace {

using nlohmann::json;

struct DbOptions {
  std::string db_path;  // empty: DefaultDbPath()
  bool json = false;
  std::string key;        // show KEY, best SPEC
  WorkloadFlags workload_file;  // show/best --workload-file (instead of SPEC)
  std::string target;     // best --target
  std::string device;     // best --device
  std::string toolkit;    // best --toolkit
  uint32_t codegen_version = kCodegenVersion;  // best --codegen-version (0: any)
  uint32_t protocol_version = 0;               // best --protocol-version (0: any)
  int k = 5;              // best -k
  int limit = 10;         // show --limit
  int64_t record_id = 0;  // show --record
  std::string format = "jsonl";
  std::string output;  // export -o
  std::string file;    // import FILE, merge OTHER.db
  PlotRequest plot;    // plot SPEC: -o, --target, --compare, size, --x
  std::vector<std::string> compare;  // plot --compare SPEC...
};

StatusOr<std::unique_ptr<db::Database>> OpenDb(const DbOptions& options, bool create) {
  db::OpenOptions open;
  open.create_if_missing = create;
  const std::string path = DbPathOrDefault(options.db_path);
  auto opened = db::OpenDatabase(path, open);
  if (!opened.ok() && opened.status().code() == StatusCode::kNotFound && !create) {
    // The message names the database (a URL without its password).
    return NotFoundError(opened.status().message() + " (use --db PATH or set TUNED_DB)");
  }
  return opened;
}

// The workload a user's argument names, the same way for every command that takes one: a spec
// is canonicalised (so "matmul(K=64, M=64, N=64)" finds "matmul(M=64,N=64,K=64,dtype=float32)");
// text that is not a spec is taken as a key as stored. A miss names both readings.
StatusOr<std::string> ResolveWorkloadKey(db::Database& db, const std::string& text) {
  StatusOr<ir::Workload> spec = ir::ParseWorkloadSpec(text);
  if (spec.ok()) return spec->key();
  if (db.GetWorkload(text).ok()) return text;
  return NotFoundError("no workload with key '" + text + "' in database '" + db.path() +
                       "', and it is not a workload spec: " + spec.status().message());
}

// The workload of `db show` / `db best`: SPEC, or --workload-file with its --param values.
StatusOr<std::string> WorkloadKeyOf(db::Database& db, const DbOptions& options) {
  if (options.workload_file.file.empty()) {
    if (options.key.empty()) {
      return InvalidArgumentError("no workload; expected SPEC or --workload-file FILE");
    }
    if (!options.workload_file.params.empty()) {
      return InvalidArgumentError("--param is for --workload-file; a spec names its own parameters");
    }
    return ResolveWorkloadKey(db, options.key);
  }
  if (!options.key.empty()) {
    return InvalidArgumentError("SPEC and --workload-file name two workloads; expected one");
  }
  TUNED_ASSIGN_OR_RETURN(ir::Workload workload, ResolveWorkload(options.workload_file));
  return workload.key();
}

// --- Formatting. ---

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

double Gflops(double flops, double seconds) {
  return flops > 0 && seconds > 0 ? flops / seconds / 1e9 : 0;
}

std::string FormatGflops(double flops, double seconds) {
  double gflops = Gflops(flops, seconds);
  return gflops > 0 ? Printf("%.1f", gflops) : "-";
}

std::string FormatAge(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  const int64_t seconds = std::max<int64_t>(0, (UnixMs() - unix_ms) / 1000);
  if (seconds < 60) return std::to_string(seconds) + "s ago";
  if (seconds < 3600) return std::to_string(seconds / 60) + "m ago";
  if (seconds < 86400) return std::to_string(seconds / 3600) + "h ago";
  return std::to_string(seconds / 86400) + "d ago";
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (bytes < 1024 * 1024) return Printf("%.1f KiB", bytes / 1024.0);
  if (bytes < 1024LL * 1024 * 1024) return Printf("%.1f MiB", bytes / (1024.0 * 1024));
  return Printf("%.2f GiB", bytes / (1024.0 * 1024 * 1024));
}

/// Left-aligned columns separated by two spaces, with a header row.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) { rows_.push_back(std::move(headers)); }
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string Render() const {
    std::vector<size_t> widths(rows_.front().size(), 0);
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
        widths[i] = std::max(widths[i], row[i].size());
      }
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
        line += row[i];
        if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

StatusOr<json> ProtoToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  std::string text;
  auto status = google::protobuf::util::MessageToJsonString(message, &text, print);
  if (!status.ok()) return InternalError("cannot render json: " + std::string(status.message()));
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return InternalError("protobuf produced invalid json");
  return parsed;
}

StatusOr<json> RecordJson(const v1::TuningRecord& record) {
  TUNED_ASSIGN_OR_RETURN(json out, ProtoToJson(record));
  out["gflops"] = Gflops(record.workload().flops(), record.result().median_seconds());
  return out;
}

void PrintJson(const json& value) { std::printf("%s\n", value.dump(2).c_str()); }

std::string RecordRepeats(const v1::MeasureResult& result) {
  return std::to_string(result.repeat_seconds_size());
}

// Why the record was measured: a search trial, a re-measure (noise, drift), the final top-k.
std::string RecordKindLabel(v1::RecordKind kind) {
  switch (kind) {
    case v1::RECORD_KIND_REMEASURE: return "remeasure";
    case v1::RECORD_KIND_FINAL: return "final";
    default: return "search";
  }
}

// The rest of a record's key: where and how it was measured.
std::string RecordKey(const v1::TuningRecord& record) {
  const std::string toolkit = record.result().device().toolkit_version();
  return "device '" + record.result().device().model() + "', toolkit '" +
         (toolkit.empty() ? "unknown" : toolkit) + "', code generation " +
         std::to_string(record.codegen_version()) + ", protocol " +
         std::to_string(v1::ProtocolVersion(record.config()));
}

// --- Sub-commands. ---

Status RunList(const DbOptions& options) {
  TUNED_ASSIGN_OR_RETURN(auto db, OpenDb(options, /*create=*/false));
  TUNED_ASSIGN_OR_RETURN(std::vector<db::WorkloadSummary> workloads, db->ListWorkloads());
  if (options.json) {
    json out = {{"database", db->path()}, {"workloads", json::array()}};
    for (const db::WorkloadSummary& w : workloads) {
      out["workloads"].push_back(
          {{"key", w.workload.key()},
           {"key_sha256", w.workload.key_sha256()},
           {"op", w.workload.op()},
           {"flops", w.workload.flops()},
           {"records", w.num_records},
           {"ok", w.num_ok},
           {"best_median_seconds", w.best_median_seconds},
           {"best_gflops", Gflops(w.workload.flops(), w.best_median_seconds)},
           {"targets", w.targets},
           {"last_unix_ms", w.last_unix_ms}});
    }
    PrintJson(out);
    return Status::Ok();
  }
  if (workloads.empty()) {
    std::printf("no workloads in '%s'\n", db->path().c_str());
    return Status::Ok();
  }
  Table table({"KEY", "OP", "RECORDS", "OK", "BEST", "GFLOP/S", "TARGETS", "LAST"});
  for (const db::WorkloadSummary& w : workloads) {
    table.AddRow({w.workload.key(), w.workload.op(), std::to_string(w.num_records),
                  std::to_string(w.num_ok), FormatSeconds(w.best_median_seconds),
                  FormatGflops(w.workload.flops(), w.best_median_seconds),
                  std::to_string(w.targets.size()), FormatAge(w.last_unix_ms)});
  }
  std::fputs(table.Render().c_str(), stdout);
  return Status::Ok();
}

// Records of a workload, grouped by target; OK ones first by median, then failures by time.
StatusOr<std::vector<v1::TuningRecord>> WorkloadRecords(db::Database& db, const std::string& key,
                                                        int per_target) {
  std::vector<v1::TuningRecord> all;
  db::RecordFilter filter;
  filter.workload_key = key;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> page, db.ListRecords(filter));
    if (page.empty()) break;
    filter.after_id = page.back().record_id();
    for (auto& record : page) all.push_back(std::move(record));
  }
  auto rank = [](const v1::TuningRecord& r) {
    const bool ok = r.result().status() == v1::MEASURE_STATUS_OK;
    return std::make_tuple(r.target().target(), !ok, ok ? r.result().median_seconds() : 0.0,
                           r.record_id());
  };
  std::sort(all.begin(), all.end(),
            [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  std::vector<v1::TuningRecord> shown;
  std::string current;
  int count = 0;
  for (auto& record : all) {
    if (record.target().target() != current) {
      current = record.target().target();
      count = 0;
    }
    if (count++ < per_target) shown.push_back(std::move(record));
  }
  return shown;
}

Status RunShow(const DbOptions& options) {
  TUNED_ASSIGN_OR_RETURN(auto db, OpenDb(options, /*create=*/false));
  TUNED_ASSIGN_OR_RETURN(std::string key, WorkloadKeyOf(*db, options));
  StatusOr<v1::Workload> workload = db->GetWorkload(key);
  if (!workload.ok()) {
    return workload.status().WithContext("database '" + db->path() + "'");
  }
  TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> records, WorkloadRecords(*db, key, options.limit));
  TUNED_ASSIGN_OR_RETURN(std::vector<db::QuarantinedTrace> quarantined, db->ListQuarantined(key));
  // The trace shown: the one asked for, else the fastest OK record's over every target.
  std::optional<v1::TuningRecord> traced;
  if (options.record_id != 0) {
    TUNED_ASSIGN_OR_RETURN(v1::TuningRecord record, db->GetRecord(options.record_id));
    if (record.workload().key() != key) {
      return InvalidArgumentError("record " + std::to_string(options.record_id) +
                                  " is not a record of workload '" + key + "'");
    }
    traced = std::move(record);
  } else {
    auto best = std::min_element(records.begin(), records.end(), [](const auto& a, const auto& b) {
      const bool a_ok = a.result().status() == v1::MEASURE_STATUS_OK;
      const bool b_ok = b.result().status() == v1::MEASURE_STATUS_OK;
      if (a_ok != b_ok) return a_ok;
      return a.result().median_seconds() < b.result().median_seconds();
    });
    if (best != records.end()) traced = *best;
  }

  if (options.json) {
    TUNED_ASSIGN_OR_RETURN(json workload_json, ProtoToJson(*workload));
    json out = {{"workload", workload_json}, {"records", json::array()}};
    for (const auto& record : records) {
      TUNED_ASSIGN_OR_RETURN(json record_json, RecordJson(record));
      out["records"].push_back(record_json);
    }
    if (traced) {
      TUNED_ASSIGN_OR_RETURN(out["trace_record"], RecordJson(*traced));
    }
    out["quarantined"] = json::array();
    for (const db::QuarantinedTrace& q : quarantined) {
      out["quarantined"].push_back({{"target", q.target},
                                    {"trace_hash", q.trace_hash},
                                    {"status", db::MeasureStatusLabel(q.status)},
                                    {"reason", q.reason},
                                    {"record_id", q.record_id}});
    }
    PrintJson(out);
    return Status::Ok();
  }
  std::printf("workload    %s\n", workload->key().c_str());
  std::printf("sha256      %s\n", workload->key_sha256().c_str());
  std::printf("op          %s\n", workload->op().c_str());
  std::printf("flops       %.6g\n", workload->flops());
  if (!workload->definition().empty()) {
    std::printf("definition\n");
    // A user workload's definition in its own language, which `--workload-file` reads back.
    std::string definition = workload->definition();
    if (ir::IsDefinitionKey(key)) {
      StatusOr<ir::Workload> defined = ir::ParseDefinitionKey(key);
      if (defined.ok()) definition = ir::PrintDefinition(*defined);
    }
    size_t start = 0;
    while (start < definition.size()) {
      size_t end = definition.find('\n', start);
      if (end == std::string::npos) end = definition.size();
      std::printf("  %s\n", definition.substr(start, end - start).c_str());
      start = end + 1;
    }
  }
  if (records.empty()) {
    std::printf("\nno records\n");
    return Status::Ok();
  }
  std::printf("\nrecords (at most %d per target, best first)\n", options.limit);
  Table table({"ID", "TARGET", "STATUS", "KIND", "MEDIAN", "GFLOP/S", "REPEATS", "WORKER",
               "DEVICE", "AGE", "ERROR"});
  for (const auto& r : records) {
    table.AddRow({std::to_string(r.record_id()), r.target().target(),
                  db::MeasureStatusLabel(r.result().status()), RecordKindLabel(r.kind()),
                  FormatSeconds(r.result().median_seconds()),
                  FormatGflops(r.workload().flops(), r.result().median_seconds()),
                  RecordRepeats(r.result()), r.result().worker_id(), r.result().device().model(),
                  FormatAge(r.created_unix_ms()), r.result().error()});
  }
  std::fputs(table.Render().c_str(), stdout);
  if (!quarantined.empty()) {
    std::printf("\nquarantined traces (never measured again for their target)\n");
    Table quarantine({"RECORD", "TARGET", "TRACE", "STATUS", "REASON"});
    for (const db::QuarantinedTrace& q : quarantined) {
      quarantine.AddRow({std::to_string(q.record_id), q.target, q.trace_hash.substr(0, 16),
                         db::MeasureStatusLabel(q.status), q.reason});
    }
    std::fputs(quarantine.Render().c_str(), stdout);
  }
  if (traced) {
    std::printf("\ntrace of record %lld (%s, %s, hash %s)\n",
                static_cast<long long>(traced->record_id()), traced->target().target().c_str(),
                db::MeasureStatusLabel(traced->result().status()).c_str(),
                traced->trace_hash().substr(0, 16).c_str());
    std::printf("origin %s, tuner %s, task %s\n", traced->origin().c_str(),
                traced->tuner_version().c_str(),
                traced->task_id().empty() ? "-" : traced->task_id().c_str());
    std::fputs(db::FormatTrace(traced->trace()).c_str(), stdout);
  }
  return Status::Ok();
}

Status RunPlot(const DbOptions& options) {
  TUNED_ASSIGN_OR_RETURN(auto db, OpenDb(options, /*create=*/false));
  PlotRequest request = options.plot;
  TUNED_ASSIGN_OR_RETURN(std::string key, WorkloadKeyOf(*db, options));
  request.workload_keys = {key};
  for (const std::string& other : options.compare) {
    TUNED_ASSIGN_OR_RETURN(std::string other_key, ResolveWorkloadKey(*db, other));
    request.workload_keys.push_back(other_key);
  }
  return WritePlot(*db, request);
}

Status RunBest(const DbOptions& options) {
  if (options.k <= 0)
    return InvalidArgumentError("-k must be positive, got " + std::to_string(options.k));
  TUNED_ASSIGN_OR_RETURN(auto db, OpenDb(options, /*create=*/false));
  TUNED_ASSIGN_OR_RETURN(std::string key, WorkloadKeyOf(*db, options));
  std::vector<std::string> targets;
  if (!options.target.empty()) {
    targets.push_back(options.target);
  } else {
    TUNED_ASSIGN_OR_RETURN(targets, db->ListTargets(key));
  }
  db::BestRecordsQuery query;
  query.workload_key = key;
  query.device_model = options.device;
  query.toolkit_version = options.toolkit;
  query.codegen_version = options.codegen_version;
  query.protocol_version = options.protocol_version;
  query.limit = options.k;
  std::vector<std::pair<std::string, db::BestRecords>> results;
  if (targets.empty()) {  // No records at all: let the database explain.
    TUNED_ASSIGN_OR_RETURN(db::BestRecords best, db->GetBestRecords(query));
    results.emplace_back("", std::move(best));
  }
  for (const std::string& target : targets) {
    query.target = target;
    TUNED_ASSIGN_OR_RETURN(db::BestRecords best, db->GetBestRecords(query));
    results.emplace_back(target, std::move(best));
  }
  const bool found = std::any_of(results.begin(), results.end(),
                                 [](const auto& r) { return !r.second.records.empty(); });
  if (options.json) {
    json out = {{"workload_key", key}, {"results", json::array()}};
    for (const auto& [target, best] : results) {
      json entry = {
          {"target", target}, {"records", json::array()}, {"miss_reason", best.miss_reason}};
      for (const auto& record : best.records) {
        TUNED_ASSIGN_OR_RETURN(json record_json, RecordJson(record));
        entry["records"].push_back(record_json);
      }
      out["results"].push_back(entry);
    }
    PrintJson(out);
  } else {
    if (found) std::printf("workload %s\n\n", key.c_str());
    for (const auto& [target, best] : results) {
      if (best.records.empty()) {
        if (found) std::printf("target %s: %s\n\n", target.c_str(), best.miss_reason.c_str());
        continue;
      }
      std::printf("target %s\n", target.c_str());
      Table table(
          {"RANK", "ID", "KIND", "MEDIAN", "GFLOP/S", "REPEATS", "WORKER", "DEVICE", "AGE", "TRACE"});
      int rank = 1;
      for (const auto& r : best.records) {
        table.AddRow({std::to_string(rank++), std::to_string(r.record_id()), RecordKindLabel(r.kind()),
                      FormatSeconds(r.result().median_seconds()),
                      FormatGflops(r.workload().flops(), r.result().median_seconds()),
                      RecordRepeats(r.result()), r.result().worker_id(),
                      r.result().device().model(), FormatAge(r.created_unix_ms()),
                      r.trace_hash().substr(0, 12)});
      }
      std::fputs(table.Render().c_str(), stdout);
      std::printf("key of rank 1: %s\n\n", RecordKey(best.records.front()).c_str());
    }
  }
  if (!found) return NotFoundError("no best record: " + results.front().second.miss_reason);
  return Status::Ok();
}

Status RunExport(const DbOptions& options) {
  if (options.format != "jsonl") {
    return InvalidArgumentError("unknown export format '" + options.format +
                                "' (supported: jsonl)");
  }
  TUNED_ASSIGN_OR_RETURN(auto db, OpenDb(options, /*create=*/false));
  if (options.output.empty() || options.output == "-") {
    TUNED_ASSIGN_OR_RETURN(db::ExportStats stats, db::ExportJsonl(*db, std::cout));
    (void)stats;
    return Status::Ok();
  }
  std::ofstream out(options.output, std::ios::trunc);
  if (!out) return InvalidArgumentError("cannot write export file '" + options.output + "'");
  TUNED_ASSIGN_OR_RETURN(db::ExportStats stats, db::ExportJsonl(*db, out));
  if (options.json) {
    PrintJson({{"records", stats.records}, {"output", options.output}});
  } else {
    std::printf("exported %lld records to %s\n", static_cast<long long>(stats.records),
                options.output.c_str());
  }
  return Status::Ok();
}

Status RunImport(const DbOptions& options) {
  std::ifstream in(options.file);
  if (!in) return NotFoundError("cannot read import file '" + options.file + "'");
  TUNED_ASSIGN_OR_RETURN(auto db, OpenDb(options, /*create=*/true));
  TUNED_ASSIGN_OR_RETURN(db::ImportStats stats, db::ImportJsonl(*db, in, options.file));
  if (options.json) {
    PrintJson({{"lines", stats.lines},
               {"inserted", stats.inserted},
               {"duplicates", stats.duplicates},
               {"database", db->path()}});
  } else {
    std::printf("imported %lld records from %s into %s (%lld duplicates skipped)\n",
                static_cast<long long>(stats.inserted), options.file.c_str(), db->path().c_str(),
                static_cast<long long>(stats.duplicates));
  }
  return Status::Ok();
}

Status RunMerge(const DbOptions& options) {
  db::OpenOptions source_options;
  source_options.create_if_missing = false;
  TUNED_ASSIGN_OR_RETURN(auto source, db::OpenDatabase(options.file, source_options));
  TUNED_ASSIGN_OR_RETURN(auto db, OpenDb(options, /*create=*/true));
  TUNED_ASSIGN_OR_RETURN(db::MergeEntry entry, db::MergeDatabase(*db, *source));
  if (options.json) {
    PrintJson({{"source", entry.source_path},
               {"source_database_id", entry.source_database_id},
               {"workloads_added", entry.workloads_added},
               {"records_added", entry.records_added},
               {"snapshots_added", entry.snapshots_added},
               {"database", db->path()}});
  } else {
    std::printf("merged %s into %s: %lld records, %lld workloads, %lld cost models added\n",
                entry.source_path.c_str(), db->path().c_str(),
                static_cast<long long>(entry.records_added),
                static_cast<long long>(entry.workloads_added),
                static_cast<long long>(entry.snapshots_added));
  }
  return Status::Ok();
}

Status RunStats(const DbOptions& options) {
  TUNED_ASSIGN_OR_RETURN(auto db, OpenDb(options, /*create=*/false));
  TUNED_ASSIGN_OR_RETURN(db::DatabaseStats stats, db->Stats());
  if (options.json) {
    json by_status = json::object();
    for (const auto& [status, count] : stats.records_by_status) {
      by_status[db::MeasureStatusLabel(status)] = count;
    }
    json by_state = json::object();
    for (const auto& [state, count] : stats.tasks_by_state) {
      by_state[db::TaskStateLabel(state)] = count;
    }
    json targets = json::array();
    for (const auto& t : stats.targets) {
      targets.push_back({{"target", t.target},
                         {"device", t.device_description},
                         {"records", t.num_records},
                         {"ok", t.num_ok}});
    }
    json merges = json::array();
    for (const auto& m : stats.merges) {
      merges.push_back({{"source", m.source_path},
                        {"source_database_id", m.source_database_id},
                        {"records_added", m.records_added},
                        {"merged_unix_ms", m.merged_unix_ms}});
    }
    PrintJson({{"database", stats.path},
               {"database_id", stats.database_id},
               {"schema_version", stats.schema_version},
               {"file_bytes", stats.file_bytes},
               {"workloads", stats.num_workloads},
               {"targets", targets},
               {"records", stats.num_records},
               {"records_by_status", by_status},
               {"tasks", stats.num_tasks},
               {"tasks_by_state", by_state},
               {"cost_model_snapshots", stats.num_snapshots},
               {"merges", merges}});
    return Status::Ok();
  }
  auto breakdown = [](const auto& pairs, auto label) {
    std::string text;
    for (const auto& [value, count] : pairs) {
      text += (text.empty() ? "" : ", ") + label(value) + " " + std::to_string(count);
    }
    return text.empty() ? std::string() : "  (" + text + ")";
  };
  std::printf("database     %s\n", stats.path.c_str());
  std::printf("id           %s\n", stats.database_id.c_str());
  std::printf("schema       version %d\n", stats.schema_version);
  std::printf("size         %s\n", FormatBytes(stats.file_bytes).c_str());
  std::printf("workloads    %lld\n", static_cast<long long>(stats.num_workloads));
  std::printf("records      %lld%s\n", static_cast<long long>(stats.num_records),
              breakdown(stats.records_by_status, db::MeasureStatusLabel).c_str());
  std::printf("tasks        %lld%s\n", static_cast<long long>(stats.num_tasks),
              breakdown(stats.tasks_by_state, db::TaskStateLabel).c_str());
  std::printf("cost models  %lld\n", static_cast<long long>(stats.num_snapshots));
  if (!stats.targets.empty()) {
    std::printf("\n");
    Table table({"TARGET", "DEVICE", "RECORDS", "OK"});
    for (const auto& t : stats.targets) {
      table.AddRow({t.target, t.device_description.empty() ? "-" : t.device_description,
                    std::to_string(t.num_records), std::to_string(t.num_ok)});
    }
    std::fputs(table.Render().c_str(), stdout);
  }
  if (!stats.merges.empty()) {
    std::printf("\n");
    Table table({"MERGED", "FROM", "SOURCE ID", "RECORDS ADDED"});
    for (const auto& m : stats.merges) {
      table.AddRow({FormatAge(m.merged_unix_ms), m.source_path, m.source_database_id,
                    std::to_string(m.records_added)});
    }
    std::fputs(table.Render().c_str(), stdout);
  }
  return Status::Ok();
}

void AddCommonOptions(CLI::App* sub, DbOptions& options) {
  sub->add_option("--db", options.db_path, std::string("Tuning database file ") + kDbPathHelp);
  sub->add_flag("--json", options.json, "Print machine-readable JSON");
}

}  // namespace

void RegisterDbCommand(Program& program) {
  auto options = std::make_shared<DbOptions>();
  using Action = Status (*)(const DbOptions&);
  auto subs = std::make_shared<std::vector<std::pair<CLI::App*, Action>>>();
  CLI::App* db =
      program.AddCommand("db", "Inspect and manage the tuning database", [options, subs]() {
        for (const auto& [sub, action] : *subs) {
          if (sub->parsed()) return action(*options);
        }
        return InvalidArgumentError("db: a sub-command is required (see tuned db --help)");
      });
  db->require_subcommand(1);
  auto add = [&](const char* name, const char* description, Action action) {
    CLI::App* sub = db->add_subcommand(name, description);
    AddCommonOptions(sub, *options);
    subs->emplace_back(sub, action);
    return sub;
  };
  add("list", "List workloads with their record counts and best time", RunList);
  CLI::App* show = add("show", "Show a workload, its records and the best trace", RunShow);
  show->add_option("SPEC", options->key, "Workload spec (canonicalised) or stored key");
  AddWorkloadFileFlags(*show, options->workload_file);
  show->add_option("--record", options->record_id, "Print the trace of this record id");
  show->add_option("--limit", options->limit, "Records listed per target")->capture_default_str();
  CLI::App* best = add("best", "Best records of a workload per target, with miss reasons", RunBest);
  best->add_option("SPEC", options->key, "Workload spec (canonicalised) or stored key");
  AddWorkloadFileFlags(*best, options->workload_file);
  best->add_option("--target", options->target, "Target string (default: every target)");
  best->add_option("--device", options->device, "Only records measured on this device model");
  best->add_option("--toolkit", options->toolkit,
                   "Only records built with this toolkit, e.g. 'LLVM 16.0.6' (default: any)");
  best->add_option("--codegen-version", options->codegen_version,
                   "Only records of this code-generation version (default: this tuned's; 0: any)")
      ->capture_default_str();
  best->add_option("--protocol-version", options->protocol_version,
                   "Only records of this timing-protocol version (0: any)")
      ->capture_default_str();
  best->add_option("-k", options->k, "Records per target")->capture_default_str();
  CLI::App* exp = add("export", "Export every record as JSON Lines", RunExport);
  exp->add_option("--format", options->format, "Export format")->capture_default_str();
  exp->add_option("-o,--output", options->output, "Output file (default: stdout)");
  CLI::App* imp = add("import", "Import records from a JSON Lines file", RunImport);
  imp->add_option("FILE", options->file, "JSON Lines file")->required();
  CLI::App* merge = add("merge", "Merge another tuning database into this one", RunMerge);
  merge->add_option("OTHER", options->file, "Database file to merge in")->required();
  add("stats", "Counts and statistics of the database", RunStats);
  CLI::App* plot = add("plot", "Draw the tuning curves of a workload (one per task) as SVG or PNG",
                       RunPlot);
  plot->add_option("SPEC", options->key, "Workload spec (canonicalised) or stored key");
  AddWorkloadFileFlags(*plot, options->workload_file);
  plot->add_option("-o,--output", options->plot.output, "Output file, .svg or .png")->required();
  plot->add_option("--target", options->plot.targets,
                   "Only this target (repeat to compare targets; default: every target)");
  plot->add_option("--compare", options->compare, "More workloads to draw on the same axes");
  plot->add_option("--x", options->plot.x_axis, "X axis: trials or time")->capture_default_str();
  plot->add_option("--width", options->plot.width, "Width, pixels")->capture_default_str();
  plot->add_option("--height", options->plot.height, "Height, pixels")->capture_default_str();
  plot->add_option("--title", options->plot.title, "Title (default: the workload)");
}

}  // namespace tuned::cli
