#ifndef TUNED_RPC_UNARY_CALL_INTERNAL_H_
#define TUNED_RPC_UNARY_CALL_INTERNAL_H_

/// \file
/// The one shape of a unary call made by the service clients: a context with the connection's
/// token and a deadline, the call on the generated stub, and the reply or the mapped status
/// (its message prefixed with what was being done). Private to `rpc/`.

#include <grpcpp/grpcpp.h>

#include <functional>
#include <string_view>

#include "common/status.h"
#include "rpc/channel.h"
#include "rpc/grpc_status.h"

namespace tuned::rpc {

/// Calls `method` (a member of a generated `Stub`, e.g. `&v1::TuningService::Stub::GetTask`).
/// `wait_for_ready` waits for a server that is (re)starting instead of failing at once.
template <typename Response, typename StubT, typename Method, typename Request>
StatusOr<Response> UnaryCall(StubT& stub, Method method, const Request& request,
                             const Connection& connection, int deadline_ms, std::string_view what,
                             bool wait_for_ready = false) {
  grpc::ClientContext context;
  PrepareCall(context, connection, deadline_ms);
  if (wait_for_ready) context.set_wait_for_ready(true);
  Response response;
  TUNED_RETURN_IF_ERROR(
      FromGrpcStatus(std::invoke(method, stub, &context, request, &response), what));
  return response;
}

}  // namespace tuned::rpc

#endif  // TUNED_RPC_UNARY_CALL_INTERNAL_H_
