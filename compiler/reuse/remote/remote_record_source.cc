#include "compiler/reuse/remote/remote_record_source.h"

#include "rpc/database_client.h"

namespace tuned::reuse {
namespace {

class RemoteRecordSource : public RecordSource {
 public:
  RemoteRecordSource(rpc::Connection connection, int deadline_ms)
      : client_(std::move(connection), deadline_ms) {}

  StatusOr<db::BestRecords> Best(const std::string& workload_key, const std::string& target,
                                 int limit, const std::string& toolkit_version, uint32_t codegen_version,
                                 uint32_t protocol_version) override {
    TUNED_ASSIGN_OR_RETURN(v1::BestRecordsResponse response,
                           client_.BestRecords(workload_key, target, uint32_t(limit),
                                               codegen_version, toolkit_version, protocol_version));
    db::BestRecords best;
    best.records.assign(response.records().begin(), response.records().end());
    best.miss_reason = response.miss_reason();
    return best;
  }

  StatusOr<std::vector<std::string>> Targets(const std::string& workload_key) override {
    return client_.ListTargets(workload_key);
  }

 private:
  rpc::DatabaseClient client_;
};

}  // namespace

std::unique_ptr<RecordSource> OpenRemoteRecordSource(rpc::Connection connection, int deadline_ms) {
  return std::make_unique<RemoteRecordSource>(std::move(connection), deadline_ms);
}

}  // namespace tuned::reuse
