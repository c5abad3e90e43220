#ifndef TUNED_SERVER_SERVICE_GRPC_UTIL_H_
#define TUNED_SERVER_SERVICE_GRPC_UTIL_H_

/// \file
/// Private to server/service: what every adaptor shares (status mapping from rpc/, token check) and the
/// factories of the three services. Only server/service/*.cc include it; it pulls in gRPC.

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/service_type.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "rpc/grpc_status.h"

namespace tuned::db {
class RecordStore;
}
namespace tuned::dispatch {
class Dispatcher;
}
namespace tuned::tasks {
class TaskManager;
}

namespace tuned::server {

/// OK when `token` is empty (authentication disabled) or the call carries
/// "authorization: Bearer <token>"; UNAUTHENTICATED otherwise. Constant-time comparison.
grpc::Status CheckToken(const grpc::CallbackServerContext* context, const std::string& token);

std::unique_ptr<grpc::Service> MakeTuningService(tasks::TaskManager& tasks, std::string token);
std::unique_ptr<grpc::Service> MakeWorkerService(dispatch::Dispatcher& dispatcher,
                                                 std::string token);
std::unique_ptr<grpc::Service> MakeDatabaseService(db::RecordStore& database, std::string token);

}  // namespace tuned::server

#endif  // TUNED_SERVER_SERVICE_GRPC_UTIL_H_
