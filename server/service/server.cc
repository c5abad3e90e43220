#include "server/service/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <chrono>

#include "common/logging.h"
#include "rpc/channel.h"
#include "server/service/grpc_util.h"

namespace tuned::server {

StatusOr<std::unique_ptr<TunedServer>> TunedServer::Start(const ServerOptions& options,
                                                          const ServerComponents& components) {
  if (options.tls_cert_pem.empty() != options.tls_key_pem.empty()) {
    return InvalidArgumentError("TLS needs both a certificate and a private key");
  }
  TUNED_RETURN_IF_ERROR(ValidateAccessPolicy(options.access));
  if (!options.tls_worker_ca_pem.empty() && options.tls_cert_pem.empty()) {
    return InvalidArgumentError("a worker CA needs TLS (a server certificate and key)");
  }
  AccessPolicy access = options.access;
  access.workers_need_certificate = !options.tls_worker_ca_pem.empty();
  if (options.max_message_bytes <= 0) {
    return InvalidArgumentError("max message size must be positive");
  }
  std::unique_ptr<TunedServer> server(new TunedServer());
  server->max_message_bytes_ = options.max_message_bytes;

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  if (!options.listen.empty()) {
    std::shared_ptr<grpc::ServerCredentials> credentials;
    if (options.tls_cert_pem.empty()) {
      credentials = grpc::InsecureServerCredentials();
    } else {
      grpc::SslServerCredentialsOptions ssl;
      ssl.pem_key_cert_pairs.push_back({options.tls_key_pem, options.tls_cert_pem});
      if (!options.tls_worker_ca_pem.empty()) {
        // Optional for clients, verified when presented; Authorize requires it of workers.
        ssl.pem_root_certs = options.tls_worker_ca_pem;
        ssl.client_certificate_request = GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
      }
      credentials = grpc::SslServerCredentials(ssl);
    }
    builder.AddListeningPort(options.listen, credentials, &server->port_);
  }
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // Workers keep their stream open for hours: accept their keepalive pings, and ping idle
  // connections so a vanished peer is noticed even without heartbeats.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, rpc::kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, rpc::kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);

  if (components.tasks != nullptr) {
    server->tuning_ = MakeTuningService(*components.tasks, access);
    builder.RegisterService(server->tuning_.get());
  }
  if (components.dispatcher != nullptr) {
    server->worker_ = MakeWorkerService(*components.dispatcher, access);
    builder.RegisterService(server->worker_.get());
  }
  if (components.database != nullptr) {
    server->database_ = MakeDatabaseService(*components.database, access);
    builder.RegisterService(server->database_.get());
  }
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || (!options.listen.empty() && server->port_ == 0)) {
    return UnavailableError("cannot listen on '" + options.listen + "'");
  }
  if (grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService()) {
    health->SetServingStatus(true);
  }
  Logger("server")->info("server started listen='{}' port={} tls={} auth={}", options.listen,
                         server->port_, !options.tls_cert_pem.empty(), !options.access.empty());
  return server;
}

TunedServer::TunedServer() = default;

TunedServer::~TunedServer() { Shutdown(); }

std::shared_ptr<grpc::Channel> TunedServer::InProcessChannel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_message_bytes_);
  args.SetMaxSendMessageSize(max_message_bytes_);
  return server_->InProcessChannel(args);
}

void TunedServer::Shutdown(int grace_ms) {
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  if (grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService()) {
    health->SetServingStatus(false);
  }
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(grace_ms));
  server_->Wait();
  Logger("server")->info("server stopped");
}

}  // namespace tuned::server
