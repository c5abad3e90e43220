#include <map>
#include <string>

#include "tuning_db/record_key_internal.h"
#include "tuned/v1/record.pb.h"

namespace tuned::db {
namespace {

std::string Param(char mark, int index) { return mark + std::to_string(index); }
std::string Quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

std::string KeyConditionsSql(const std::string& alias, int first, char mark) {
  const std::string device = Param(mark, first);
  const std::string toolkit = Param(mark, first + 1);
  const std::string codegen = Param(mark, first + 2);
  const std::string protocol = Param(mark, first + 3);
  // A record stored before a field existed ('' or 0) has an unknown version, not another one;
  // so has one no device measured (WORKER_LOST, made by the server), which must keep counting
  // as measured on every device (quarantine).
  return " AND (" + device + " = '' OR " + alias + ".device_model = " + device + " OR " + alias +
         ".device_model = '')" +
         " AND (" + toolkit + " = '' OR " + alias + ".toolkit_version = " + toolkit + " OR " +
         alias + ".toolkit_version = '')" + " AND (" + codegen + " = 0 OR " + alias +
         ".codegen_version = " + codegen + " OR " + alias + ".codegen_version = 0)" + " AND (" +
         protocol + " = 0 OR " + alias + ".protocol_version = " + protocol + ")";
}

std::string RankingConditionsSql(int key_first, char mark, bool allow_unverified) {
  const std::string final_kind = std::to_string(v1::RECORD_KIND_FINAL);
  const std::string verified = allow_unverified ? "" : " AND r3.verified <> 0";
  return " AND r.kind = (SELECT MAX(r2.kind) FROM records r2 WHERE r2.workload_id = r.workload_id "
         "AND r2.target_id = r.target_id AND r2.trace_hash = r.trace_hash" +
         KeyConditionsSql("r2", key_first, mark) + ")" + " AND (r.kind = " + final_kind +
         " OR NOT EXISTS (SELECT 1 FROM records r3 WHERE r3.workload_id = " + Param(mark, 1) +
         " AND r3.target_id = " + Param(mark, 2) + " AND r3.status = 1 AND r3.kind = " +
         final_kind + verified + KeyConditionsSql("r3", key_first, mark) + "))";
}

std::string KeyMissReason(const BestRecordsQuery& query, const std::string& workload,
                          const std::vector<KeyCount>& existing) {
  std::string asked;
  if (!query.device_model.empty()) asked += " on device " + Quoted(query.device_model);
  if (!query.toolkit_version.empty()) asked += " with toolkit " + Quoted(query.toolkit_version);
  if (query.codegen_version != 0) {
    asked += " of code generation " + std::to_string(query.codegen_version);
  }
  if (query.protocol_version != 0) {
    asked += " of protocol " + std::to_string(query.protocol_version);
  }
  // Each existing key described by the fields the query asked for, counts merged.
  std::map<std::string, int64_t> described;
  for (const KeyCount& key : existing) {
    std::string text = Quoted(key.device_model);
    if (!query.toolkit_version.empty()) {
      text += ", toolkit " + Quoted(key.toolkit_version.empty() ? "unknown" : key.toolkit_version);
    }
    if (query.codegen_version != 0) {
      text += ", code generation " + std::to_string(key.codegen_version);
    }
    if (query.protocol_version != 0) {
      text += ", protocol " + std::to_string(key.protocol_version);
    }
    described[text] += key.count;
  }
  std::string reason = "no ok records of " + workload + " for target " + Quoted(query.target) +
                       asked + "; ok records exist on: ";
  bool first = true;
  for (const auto& [text, count] : described) {
    reason += (first ? "" : ", ") + text + " (" + std::to_string(count) + ")";
    first = false;
  }
  return reason;
}

}  // namespace tuned::db
