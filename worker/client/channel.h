#ifndef TUNED_WORKER_CLIENT_CHANNEL_H_
#define TUNED_WORKER_CLIENT_CHANNEL_H_

/// \file
/// How every tuned client reaches a server (`tuned-worker`, `tuned tune --server`,
/// `tuned workers`): one channel per process with TLS when asked, keepalive and message-size
/// limits, the token as per-call metadata, and the one grpc::Status → Status conversion of the
/// client side.

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace grpc {
class Channel;
class ClientContext;
class Status;
}  // namespace grpc

namespace tuned::worker {

struct ChannelOptions {
  /// "host:port" of the server.
  std::string address;
  /// Use TLS. The server's certificate is checked against `tls_ca_pem` (PEM roots), or the
  /// system's roots when that is empty.
  bool tls = false;
  std::string tls_ca_pem;
  /// Largest message accepted or sent, bytes.
  int max_message_bytes = 16 << 20;
};

/// What a command-line client needs to reach a server: the channel and the token.
struct ClientConfig {
  ChannelOptions channel;
  std::string token;
};

/// Builds a ClientConfig from the flags every client takes (--server, --token-file, --tls,
/// --tls-ca); a CA file implies TLS. Unreadable files are errors naming them.
StatusOr<ClientConfig> LoadClientConfig(const std::string& address, const std::string& token_file,
                                        bool tls, const std::string& tls_ca_file);

/// Creates the channel (connection happens lazily, on the first call).
std::shared_ptr<grpc::Channel> CreateClientChannel(const ChannelOptions& options);

/// Puts "authorization: Bearer <token>" on a call; nothing when `token` is empty.
void AddToken(grpc::ClientContext& context, const std::string& token);

/// The client-side conversion: same canonical code, message prefixed with `what`.
Status FromGrpcStatus(const grpc::Status& status, std::string_view what);

/// Reads a secret (token) or PEM file. A token file's content is trimmed of surrounding
/// whitespace; an empty or unreadable file is InvalidArgument naming the path.
StatusOr<std::string> ReadTokenFile(const std::string& path);
StatusOr<std::string> ReadPemFile(const std::string& path);

}  // namespace tuned::worker

#endif  // TUNED_WORKER_CLIENT_CHANNEL_H_
