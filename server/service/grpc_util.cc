#include "server/service/grpc_util.h"

#include <string_view>

#include "server/service/server.h"

namespace tuned::server {

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(static_cast<int>(status.code())),
                      status.message());
}

grpc::Status CheckToken(const grpc::CallbackServerContext* context, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(kAuthMetadataKey);
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing token");
  }
  std::string_view presented(it->second.data(), it->second.size());
  constexpr std::string_view kBearer = "Bearer ";
  if (presented.starts_with(kBearer)) presented.remove_prefix(kBearer.size());
  // Constant time in the token's content: every byte is compared whatever the first mismatch.
  unsigned diff = presented.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i) {
    diff |= unsigned(uint8_t(token[i]) ^ uint8_t(i < presented.size() ? presented[i] : 0));
  }
  if (diff != 0) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "invalid token");
  return grpc::Status::OK;
}

}  // namespace tuned::server
