#include "server/service/grpc_util.h"

#include <string_view>

#include "rpc/auth.h"

namespace tuned::server {

grpc::Status CheckToken(const grpc::CallbackServerContext* context, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(rpc::kAuthMetadataKey);
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing token");
  }
  if (!rpc::TokenMatches(std::string_view(it->second.data(), it->second.size()), token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "invalid token");
  }
  return grpc::Status::OK;
}

}  // namespace tuned::server
