#ifndef TUNED_RPC_AUTH_H_
#define TUNED_RPC_AUTH_H_

/// \file
/// The shared token on the wire, both sides: clients put "authorization: Bearer <token>" on
/// every call, the server compares it in constant time.

#include <string>
#include <string_view>

namespace grpc {
class ClientContext;
}  // namespace grpc

namespace tuned::rpc {

/// Metadata key the token travels under, as "Bearer <token>".
inline constexpr char kAuthMetadataKey[] = "authorization";

/// Puts the token on a call; nothing when `token` is empty.
void AddToken(grpc::ClientContext& context, const std::string& token);

/// Whether the metadata value a client sent carries `token` ("Bearer " optional). Takes the
/// same time whatever the position of the first differing byte.
bool TokenMatches(std::string_view presented, const std::string& token);

}  // namespace tuned::rpc

#endif  // TUNED_RPC_AUTH_H_
