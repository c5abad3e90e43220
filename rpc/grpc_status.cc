#include "rpc/grpc_status.h"

#include <grpcpp/grpcpp.h>

#include <string>

namespace tuned::rpc {

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(static_cast<int>(status.code())),
                      status.message());
}

Status FromGrpcStatus(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  return Status(static_cast<StatusCode>(static_cast<int>(status.error_code())),
                std::string(what) + ": " + status.error_message());
}

}  // namespace tuned::rpc
