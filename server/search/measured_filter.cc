#include "server/search/measured_filter.h"

#include "common/version.h"
#include "tuning_db/database.h"

namespace tuned::search {

MeasuredFilter::MeasuredFilter(const SearchContext& context)
    : workload_key_(context.workload ? context.workload->key() : ""),
      target_(context.target),
      database_(context.database) {
  // Measured means measured by the code generation that builds it now, with the task's
  // protocol, on the task's device when it is known (the toolkit is the worker's, not known
  // before dispatch).
  key_.codegen_version = kCodegenVersion;
  key_.protocol_version = context.protocol_version;
  key_.device_model = context.device_model;
}

StatusOr<std::vector<bool>> MeasuredFilter::Fresh(const std::vector<std::string>& hashes) {
  std::vector<std::string> ask;
  for (const std::string& hash : hashes) {
    if (!Taken(hash)) ask.push_back(hash);
  }
  if (database_ != nullptr && !ask.empty()) {
    ++database_reads_;
    TUNED_ASSIGN_OR_RETURN(std::set<std::string> measured,
                           database_->MeasuredTraceHashes(workload_key_, target_, ask, key_));
    for (const std::string& hash : measured) Take(hash);
  }
  std::vector<bool> fresh;
  fresh.reserve(hashes.size());
  std::set<std::string> seen;  // a hash listed twice is fresh once
  for (const std::string& hash : hashes) fresh.push_back(!Taken(hash) && seen.insert(hash).second);
  return fresh;
}

}  // namespace tuned::search
