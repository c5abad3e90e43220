#include "rpc/worker_service_client.h"

#include "rpc/unary_call_internal.h"
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
  return UnaryCall<v1::ListWorkersResponse>(
      *stub_->stub, &v1::WorkerService::Stub::ListWorkers, v1::ListWorkersRequest(), connection_,
      deadline_ms_, "listing workers of " + connection_.name);
}

}  // namespace tuned::rpc
