#include "rpc/channel.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "rpc/auth.h"

namespace tuned::rpc {

std::shared_ptr<grpc::Channel> CreateClientChannel(const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  // Notice a vanished server on an idle stream; the server permits pings this often.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Reconnect quickly after a server restart (gRPC's default backoff grows to 120 s).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_ca_pem;
    ssl.pem_cert_chain = options.tls_cert_pem;
    ssl.pem_private_key = options.tls_key_pem;
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(options.address, credentials, args);
}

Connection Connect(const ClientConfig& config) {
  return {CreateClientChannel(config.channel), config.token, config.channel.address};
}

void PrepareCall(grpc::ClientContext& context, const Connection& connection, int deadline_ms) {
  AddToken(context, connection.token);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
}

}  // namespace tuned::rpc
