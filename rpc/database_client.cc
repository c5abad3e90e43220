#include "rpc/database_client.h"

#include "rpc/unary_call_internal.h"
#include "tuned/v1/database_service.grpc.pb.h"

namespace tuned::rpc {

struct DatabaseClient::Stub {
  std::unique_ptr<v1::DatabaseService::Stub> stub;
};

DatabaseClient::DatabaseClient(Connection connection, int deadline_ms)
    : connection_(std::move(connection)),
      deadline_ms_(deadline_ms),
      stub_(new Stub{v1::DatabaseService::NewStub(connection_.channel)}) {}

DatabaseClient::~DatabaseClient() = default;

StatusOr<v1::BestRecordsResponse> DatabaseClient::BestRecords(const std::string& workload_key,
                                                              const std::string& target,
                                                              uint32_t limit,
                                                              uint32_t codegen_version,
                                                              const std::string& toolkit_version,
                                                              uint32_t protocol_version) {
  v1::BestRecordsRequest request;
  request.set_workload_key(workload_key);
  request.set_target(target);
  request.set_limit(limit);
  request.set_codegen_version(codegen_version);
  request.set_toolkit_version(toolkit_version);
  request.set_protocol_version(protocol_version);
  return UnaryCall<v1::BestRecordsResponse>(*stub_->stub, &v1::DatabaseService::Stub::BestRecords,
                                            request, connection_, deadline_ms_,
                                            "best records from " + connection_.name);
}

StatusOr<v1::ListRecordsResponse> DatabaseClient::ListRecords(
    const v1::ListRecordsRequest& request) {
  return UnaryCall<v1::ListRecordsResponse>(*stub_->stub, &v1::DatabaseService::Stub::ListRecords,
                                            request, connection_, deadline_ms_,
                                            "records from " + connection_.name);
}

StatusOr<std::vector<std::string>> DatabaseClient::ListTargets(const std::string& workload_key) {
  v1::ListTargetsRequest request;
  request.set_workload_key(workload_key);
  TUNED_ASSIGN_OR_RETURN(
      v1::ListTargetsResponse response,
      UnaryCall<v1::ListTargetsResponse>(*stub_->stub, &v1::DatabaseService::Stub::ListTargets,
                                         request, connection_, deadline_ms_,
                                         "targets from " + connection_.name));
  return std::vector<std::string>(response.targets().begin(), response.targets().end());
}

}  // namespace tuned::rpc
