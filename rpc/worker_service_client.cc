#include "rpc/worker_service_client.h"

#include <grpcpp/grpcpp.h>

#include "rpc/grpc_status.h"
#include "tuned/v1/worker_service.grpc.pb.h"

namespace tuned::rpc {

struct WorkerServiceClient::Stub {
  std::unique_ptr<v1::WorkerService::Stub> stub;
};

WorkerServiceClient::WorkerServiceClient(Connection connection, int deadline_ms)
    : connection_(std::move(connection)),
      deadline_ms_(deadline_ms),
      stub_(new Stub{v1::WorkerService::NewStub(connection_.channel)}) {}

WorkerServiceClient::~WorkerServiceClient() = default;

StatusOr<v1::ListWorkersResponse> WorkerServiceClient::ListWorkers() {
  grpc::ClientContext context;
  PrepareCall(context, connection_, deadline_ms_);
  v1::ListWorkersResponse response;
  TUNED_RETURN_IF_ERROR(
      FromGrpcStatus(stub_->stub->ListWorkers(&context, v1::ListWorkersRequest(), &response),
                     "listing workers of " + connection_.name));
  return response;
}

}  // namespace tuned::rpc
