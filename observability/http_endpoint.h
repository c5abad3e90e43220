#ifndef TUNED_OBSERVABILITY_HTTP_ENDPOINT_H_
#define TUNED_OBSERVABILITY_HTTP_ENDPOINT_H_

/// \file
/// The HTTP listener of `--metrics-listen` (civetweb): GET routes by exact path or path prefix,
/// and the same bearer tokens as the gRPC API. A route that needs a credential answers 401
/// unless the request carries "Authorization: Bearer <one of the tokens>"; with no token
/// configured every route is open. Handlers run on civetweb's threads, several at once.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace tuned::observability {

struct HttpRequest {
  std::string path;   // decoded, without the query
  std::string query;  // after '?', undecoded; empty when none
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpRoute {
  std::string path;     // "/metrics"; with `prefix`, "/api/tasks/" matches everything below it
  bool prefix = false;
  bool needs_token = true;  // false only for what holds no data (the page's own HTML)
  HttpHandler handler;
};

struct HttpEndpointOptions {
  std::string listen;               // host:port; port 0 picks a free one
  std::vector<std::string> tokens;  // accepted bearer tokens; empty: no authentication
  std::vector<HttpRoute> routes;    // the first match wins
  int threads = 4;
};

class HttpEndpoint {
 public:
  /// Binds and starts serving. InvalidArgument for a malformed address, Unavailable when it
  /// cannot be bound.
  static StatusOr<std::unique_ptr<HttpEndpoint>> Start(HttpEndpointOptions options);
  /// Stops serving (waits for the requests in progress).
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  /// The bound port.
  int port() const { return port_; }

 private:
  struct Context;
  HttpEndpoint() = default;
  std::unique_ptr<Context> context_;
  int port_ = 0;
};

/// "host:port" split; InvalidArgument naming `flag` when there is no port or it is not a number.
Status CheckListenAddress(const std::string& address, const std::string& flag);

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_HTTP_ENDPOINT_H_
