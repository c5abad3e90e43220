#ifndef TUNED_RPC_CHANNEL_H_
#define TUNED_RPC_CHANNEL_H_

/// \file
/// How every tuned client reaches a server (`tuned tune --server`, `tuned workers`,
/// `tuned compile --server`, `tuned-worker`): one channel per process with TLS when asked,
/// keepalive, fast reconnection and message-size limits. A Connection is that channel plus the
/// token its calls present; every service client is built from one.

#include <memory>
#include <string>

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace tuned::rpc {

/// Default limit on one message in either direction, bytes (the server's default too).
inline constexpr int kDefaultMaxMessageBytes = 16 << 20;

/// Keepalive of every connection, both ends: a ping on an idle connection this often, and the
/// peer counted gone when the answer takes longer than the timeout. Clients and the server
/// must agree, or the server refuses the clients' pings as too frequent.
inline constexpr int kKeepaliveTimeMs = 20000;
inline constexpr int kKeepaliveTimeoutMs = 10000;

struct ChannelOptions {
  /// "host:port" of the server.
  std::string address;
  /// Use TLS. The server's certificate is checked against `tls_ca_pem` (PEM roots), or the
  /// system's roots when that is empty.
  bool tls = false;
  std::string tls_ca_pem;
  /// A client certificate chain and its key (mutual TLS, a worker's); both empty: none.
  std::string tls_cert_pem;
  std::string tls_key_pem;
  /// Largest message accepted or sent, bytes.
  int max_message_bytes = kDefaultMaxMessageBytes;
};

/// What a command-line client needs to reach a server: the channel and the token.
struct ClientConfig {
  ChannelOptions channel;
  std::string token;
};

/// A channel to a server and the token presented on every call made through it.
struct Connection {
  std::shared_ptr<grpc::Channel> channel;
  /// "authorization: Bearer <token>" on every call; empty for none.
  std::string token;
  /// How error messages name the server: its address, or e.g. "in-process".
  std::string name;
};

/// Creates the channel (connection happens lazily, on the first call).
std::shared_ptr<grpc::Channel> CreateClientChannel(const ChannelOptions& options);

/// The channel of `config`, with its token, named by its address.
Connection Connect(const ClientConfig& config);

/// Readies one call on `connection`: its token, and a deadline `deadline_ms` from now.
void PrepareCall(grpc::ClientContext& context, const Connection& connection, int deadline_ms);

/// The deadline of a short call (a read, a listing) when its client is not told otherwise.
inline constexpr int kDefaultCallDeadlineMs = 10000;

}  // namespace tuned::rpc

#endif  // TUNED_RPC_CHANNEL_H_
