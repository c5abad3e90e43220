#ifndef TUNED_SERVER_SERVICE_SERVER_H_
#define TUNED_SERVER_SERVICE_SERVER_H_

/// \file
/// The gRPC server of `tuned serve` (and of the embedded `tuned tune`): thin callback-API
/// adaptors that turn TuningService calls into TaskManager calls, WorkerService streams into
/// Dispatcher sessions, and DatabaseService calls into RecordStore reads. The adaptors own the
/// service edge: authentication and roles (access.h), optional TLS, message-size limits, validation of every
/// incoming message (INVALID_ARGUMENT with a reason), and the Status ↔ grpc::Status mapping.
/// gRPC health checking and server reflection are enabled and need no token.

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "rpc/channel.h"
#include "server/service/access.h"

namespace grpc {
class Channel;
class Server;
class Service;
}  // namespace grpc

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

/// Default limit on one message in either direction, bytes (the clients' default too).
inline constexpr int kDefaultMaxMessageBytes = rpc::kDefaultMaxMessageBytes;

struct ServerOptions {
  /// "host:port" to listen on (port 0 picks a free one); empty: no listening port, only
  /// InProcessChannel (the embedded `tuned tune`).
  std::string listen;
  /// The credentials calls must present, by role (server/service/access.h); none: no
  /// authentication.
  AccessPolicy access;
  /// PEM certificate chain and private key; both empty: plaintext.
  std::string tls_cert_pem;
  std::string tls_key_pem;
  /// PEM CA that signs workers' client certificates: clients are asked for a certificate (and
  /// it is verified when given), and workers must give one (access.workers_need_certificate).
  std::string tls_worker_ca_pem;
  /// Largest message accepted or sent, bytes.
  int max_message_bytes = kDefaultMaxMessageBytes;
};

/// The services to expose; each is registered only when present. They must outlive the server.
struct ServerComponents {
  tasks::TaskManager* tasks = nullptr;         // TuningService
  dispatch::Dispatcher* dispatcher = nullptr;  // WorkerService
  db::RecordStore* database = nullptr;         // DatabaseService
};

class TunedServer {
 public:
  /// Builds and starts the server. Unavailable when the address cannot be bound,
  /// InvalidArgument for a bad option (half of a TLS pair, a non-positive size limit).
  static StatusOr<std::unique_ptr<TunedServer>> Start(const ServerOptions& options,
                                                      const ServerComponents& components);
  /// Shuts down (see Shutdown).
  ~TunedServer();

  /// The bound port (0 without a listening address).
  int port() const { return port_; }
  /// A channel into this server without a socket (for the embedded mode).
  std::shared_ptr<grpc::Channel> InProcessChannel();
  /// Stops accepting calls, cancels open streams after `grace_ms`, waits for every call to end.
  /// Idempotent.
  void Shutdown(int grace_ms = 1000);

 private:
  TunedServer();

  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::Service> tuning_;
  std::unique_ptr<grpc::Service> worker_;
  std::unique_ptr<grpc::Service> database_;
  int port_ = 0;
  int max_message_bytes_ = kDefaultMaxMessageBytes;
  bool shut_down_ = false;
};

}  // namespace tuned::server

#endif  // TUNED_SERVER_SERVICE_SERVER_H_
