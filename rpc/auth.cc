#include "rpc/auth.h"

#include <grpcpp/grpcpp.h>

#include <cstdint>

namespace tuned::rpc {
namespace {

constexpr std::string_view kBearer = "Bearer ";

}  // namespace

void AddToken(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata(kAuthMetadataKey, std::string(kBearer) + token);
}

bool TokenMatches(std::string_view presented, const std::string& token) {
  if (presented.starts_with(kBearer)) presented.remove_prefix(kBearer.size());
  // Constant time in the token's content: every byte is compared whatever the first mismatch.
  unsigned diff = presented.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i) {
    diff |= unsigned(uint8_t(token[i]) ^ uint8_t(i < presented.size() ? presented[i] : 0));
  }
  return diff == 0;
}

}  // namespace tuned::rpc
