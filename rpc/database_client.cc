#include "rpc/database_client.h"

#include <grpcpp/grpcpp.h>

#include "rpc/grpc_status.h"
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
                                                              uint32_t limit) {
  v1::BestRecordsRequest request;
  request.set_workload_key(workload_key);
  request.set_target(target);
  request.set_limit(limit);
  v1::BestRecordsResponse response;
  grpc::ClientContext context;
  PrepareCall(context, connection_, deadline_ms_);
  TUNED_RETURN_IF_ERROR(FromGrpcStatus(stub_->stub->BestRecords(&context, request, &response),
                                       "best records from " + connection_.name));
  return response;
}

StatusOr<v1::ListRecordsResponse> DatabaseClient::ListRecords(
    const v1::ListRecordsRequest& request) {
  v1::ListRecordsResponse response;
  grpc::ClientContext context;
  PrepareCall(context, connection_, deadline_ms_);
  TUNED_RETURN_IF_ERROR(FromGrpcStatus(stub_->stub->ListRecords(&context, request, &response),
                                       "records from " + connection_.name));
  return response;
}

StatusOr<std::vector<std::string>> DatabaseClient::ListTargets(const std::string& workload_key) {
  v1::ListTargetsRequest request;
  request.set_workload_key(workload_key);
  v1::ListTargetsResponse response;
  grpc::ClientContext context;
  PrepareCall(context, connection_, deadline_ms_);
  TUNED_RETURN_IF_ERROR(FromGrpcStatus(stub_->stub->ListTargets(&context, request, &response),
                                       "targets from " + connection_.name));
  return std::vector<std::string>(response.targets().begin(), response.targets().end());
}

}  // namespace tuned::rpc
