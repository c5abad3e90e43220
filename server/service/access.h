#ifndef TUNED_SERVER_SERVICE_ACCESS_H_
#define TUNED_SERVER_SERVICE_ACCESS_H_

/// \file
/// Who may call what. Every credential is a bearer token, and the token a call presents decides
/// its roles:
///   - the shared token (`--token-file`) holds every role: one secret for a small setup;
///   - a worker token (`--worker-token-file`) may only serve jobs (WorkerService.Connect), so a
///     leaked worker secret cannot submit tasks or read the log;
///   - a client token (`--client-token-file`) may submit, follow and read tasks, records and
///     workers, but never register as a worker, so it cannot write timings into the log;
///   - an admin token (`--admin-token-file`) may do what a client may, and cancel tasks. Without
///     an admin token, clients may cancel.
/// With `--tls-worker-ca`, a worker must also present a TLS client certificate signed by that CA
/// (mutual TLS): a stolen worker token alone does not let a machine join.
/// With no token at all, authentication is off (loopback and tests; `tuned serve` refuses it
/// off loopback unless told `--insecure`).

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tuned::server {

enum class Role : uint8_t { kWorker, kClient, kAdmin };

struct AccessPolicy {
  std::string shared;
  std::string worker;
  std::string client;
  std::string admin;
  /// Workers must present a client certificate the server's TLS layer verified.
  bool workers_need_certificate = false;

  /// No token configured (a certificate requirement alone still applies to workers).
  bool empty() const { return shared.empty() && worker.empty() && client.empty() && admin.empty(); }
};

/// InvalidArgument when two roles share one token (the role of a call would be ambiguous).
Status ValidateAccessPolicy(const AccessPolicy& tokens);

/// The check itself, on a call, is Authorize (server/service/grpc_util.h).

}  // namespace tuned::server

#endif  // TUNED_SERVER_SERVICE_ACCESS_H_
