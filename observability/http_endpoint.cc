#include "observability/http_endpoint.h"

#include <civetweb.h>

#include <cstdio>
#include <mutex>

#include "common/logging.h"
#include "rpc/auth.h"

namespace tuned::observability {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    default: return "Internal Server Error";
  }
}

void Send(mg_connection* connection, const HttpResponse& response) {
  mg_printf(connection,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n%s"
            "Connection: close\r\n\r\n",
            response.status, Reason(response.status), response.content_type.c_str(),
            response.body.size(),
            response.status == 401 ? "WWW-Authenticate: Bearer realm=\"tuned\"\r\n" : "");
  mg_write(connection, response.body.data(), response.body.size());
}

}  // namespace

struct HttpEndpoint::Context {
  HttpEndpointOptions options;
  mg_context* server = nullptr;

  bool Authorized(mg_connection* connection) const {
    if (options.tokens.empty()) return true;
    const char* header = mg_get_header(connection, "Authorization");
    if (header == nullptr) return false;
    bool matched = false;  // every token compared: the time does not say which one matched
    for (const std::string& token : options.tokens) matched |= rpc::TokenMatches(header, token);
    return matched;
  }

  int Handle(mg_connection* connection) const {
    const mg_request_info* info = mg_get_request_info(connection);
    HttpRequest request;
    request.path = info->local_uri ? info->local_uri : "/";
    request.query = info->query_string ? info->query_string : "";
    if (std::string(info->request_method) != "GET") {
      Send(connection, {405, "text/plain; charset=utf-8", "only GET is served\n"});
      return 405;
    }
    for (const HttpRoute& route : options.routes) {
      const bool match = route.prefix ? request.path.starts_with(route.path)
                                      : request.path == route.path;
      if (!match) continue;
      if (route.needs_token && !Authorized(connection)) {
        Send(connection, {401, "text/plain; charset=utf-8",
                          "this server wants a bearer token (Authorization: Bearer <token>)\n"});
        return 401;
      }
      HttpResponse response;
      try {
        response = route.handler(request);
      } catch (const std::exception& error) {
        response = {500, "text/plain; charset=utf-8", std::string(error.what()) + "\n"};
      }
      Send(connection, response);
      return response.status;
    }
    Send(connection, {404, "text/plain; charset=utf-8", "no such page: " + request.path + "\n"});
    return 404;
  }
};

Status CheckListenAddress(const std::string& address, const std::string& flag) {
  const size_t colon = address.rfind(':');
  const std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
  if (colon == 0 || port.empty() || port.find_first_not_of("0123456789") != std::string::npos ||
      port.size() > 5 || std::stoi(port) > 65535) {
    return InvalidArgumentError(flag + " '" + address + "' is not host:port");
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(HttpEndpointOptions options) {
  TUNED_RETURN_IF_ERROR(CheckListenAddress(options.listen, "listen address"));
  static std::once_flag library_started;
  std::call_once(library_started, [] { mg_init_library(0); });

  std::unique_ptr<HttpEndpoint> endpoint(new HttpEndpoint());
  endpoint->context_ = std::make_unique<Context>();
  Context* context = endpoint->context_.get();
  context->options = std::move(options);
  // civetweb writes "host:port" for IPv4; an IPv6 "[::1]:port" it takes as it is.
  const std::string ports = context->options.listen;
  const std::string threads = std::to_string(std::max(context->options.threads, 1));
  const char* civet_options[] = {"listening_ports", ports.c_str(), "num_threads", threads.c_str(),
                                 "request_timeout_ms", "10000", nullptr};
  mg_callbacks callbacks = {};
  callbacks.begin_request = [](mg_connection* connection) {
    const auto* self = static_cast<const Context*>(mg_get_user_data(mg_get_context(connection)));
    return self->Handle(connection);
  };
  callbacks.log_message = [](const mg_connection*, const char* message) {
    Logger("http")->warn("{}", message);
    return 1;
  };
  context->server = mg_start(&callbacks, context, civet_options);
  if (context->server == nullptr) {
    return UnavailableError("cannot listen on '" + context->options.listen +
                            "' for HTTP (address in use or not local?)");
  }
  mg_server_port bound[4] = {};
  const int count = mg_get_server_ports(context->server, 4, bound);
  if (count < 1) return InternalError("civetweb started without a listening port");
  endpoint->port_ = bound[0].port;
  return endpoint;
}

HttpEndpoint::~HttpEndpoint() {
  if (context_ && context_->server) mg_stop(context_->server);
}

}  // namespace tuned::observability
