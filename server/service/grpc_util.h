#ifndef TUNED_SERVER_SERVICE_GRPC_UTIL_H_
#define TUNED_SERVER_SERVICE_GRPC_UTIL_H_

/// \file
/// Private to server/service: what every adaptor shares (status mapping from rpc/, the role check) and the
/// factories of the three services. Only server/service/*.cc include it; it pulls in gRPC.

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/service_type.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "rpc/grpc_status.h"
#include "server/service/access.h"

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

/// OK when authentication is off or the call's token holds `role`; UNAUTHENTICATED for a
/// missing or unknown token, PERMISSION_DENIED for a known token without the role (the message
/// names the credential and what it may not do). Constant-time token comparison.
grpc::Status Authorize(const grpc::CallbackServerContext* context, const AccessPolicy& tokens,
                       Role role);

std::unique_ptr<grpc::Service> MakeTuningService(tasks::TaskManager& tasks, AccessPolicy access);
std::unique_ptr<grpc::Service> MakeWorkerService(dispatch::Dispatcher& dispatcher,
                                                 AccessPolicy access);
std::unique_ptr<grpc::Service> MakeDatabaseService(db::RecordStore& database, AccessPolicy access);

}  // namespace tuned::server

#endif  // TUNED_SERVER_SERVICE_GRPC_UTIL_H_
