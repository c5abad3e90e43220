#ifndef TUNED_RPC_WORKER_SERVICE_CLIENT_H_
#define TUNED_RPC_WORKER_SERVICE_CLIENT_H_

/// \file
/// A client of WorkerService's unary calls (tuned/v1/worker_service.proto): the server's view
/// of its workers. The workers' own Connect stream is worker/client/worker_client.h.

#include <memory>

#include "common/status.h"
#include "rpc/channel.h"
#include "tuned/v1/worker_service.pb.h"

namespace tuned::rpc {

class WorkerServiceClient {
 public:
  explicit WorkerServiceClient(Connection connection, int deadline_ms = kDefaultCallDeadlineMs);
  ~WorkerServiceClient();
  WorkerServiceClient(const WorkerServiceClient&) = delete;
  WorkerServiceClient& operator=(const WorkerServiceClient&) = delete;

  /// ListWorkers: the connected workers and the job counts.
  StatusOr<v1::ListWorkersResponse> ListWorkers();

 private:
  struct Stub;
  const Connection connection_;
  const int deadline_ms_;
  std::unique_ptr<Stub> stub_;
};

}  // namespace tuned::rpc

#endif  // TUNED_RPC_WORKER_SERVICE_CLIENT_H_
