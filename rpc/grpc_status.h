#ifndef TUNED_RPC_GRPC_STATUS_H_
#define TUNED_RPC_GRPC_STATUS_H_

/// \file
/// The one mapping between tuned::Status and grpc::Status, both directions. The codes are the
/// same canonical set, so only the message changes hands.

#include <string_view>

#include "common/status.h"

namespace grpc {
class Status;
}  // namespace grpc

namespace tuned::rpc {

/// Server side: our Status onto the wire.
grpc::Status ToGrpcStatus(const Status& status);

/// Client side: same canonical code, message prefixed with `what` ("submitting the task: ...").
Status FromGrpcStatus(const grpc::Status& status, std::string_view what);

}  // namespace tuned::rpc

#endif  // TUNED_RPC_GRPC_STATUS_H_
