#include "compiler/reuse/record_source.h"

#include <utility>
#include <vector>

#include "common/version.h"

namespace tuned::reuse {

StatusOr<db::BestRecords> BestOfNewestVersions(RecordSource& source, const std::string& workload_key,
                                               const std::string& target, int limit,
                                               const std::string& toolkit_version, uint32_t protocol_version) {
  // {code generation, protocol}, most preferred first; 0 asks for any.
  std::vector<std::pair<uint32_t, uint32_t>> queries = {{kCodegenVersion, protocol_version}};
  if (protocol_version != 0) queries.push_back({kCodegenVersion, 0});
  queries.push_back({0, protocol_version});
  if (protocol_version != 0) queries.push_back({0, 0});
  std::string strictest_miss;
  for (const auto& [codegen, protocol] : queries) {
    TUNED_ASSIGN_OR_RETURN(db::BestRecords best,
                           source.Best(workload_key, target, limit, toolkit_version, codegen, protocol));
    if (!best.records.empty()) return best;
    if (strictest_miss.empty()) strictest_miss = best.miss_reason;
  }
  db::BestRecords none;
  none.miss_reason = strictest_miss;
  return none;
}

std::string OlderCodegenWarning(const v1::TuningRecord& record) {
  if (record.codegen_version() == 0 || record.codegen_version() == kCodegenVersion) return "";
  return "record " + std::to_string(record.record_id()) + " was timed under code generation " +
         std::to_string(record.codegen_version()) + ", this build's is " + std::to_string(kCodegenVersion) +
         ": tune the workload again to rank its schedules";
}

}  // namespace tuned::reuse
