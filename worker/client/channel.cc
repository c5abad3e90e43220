#include "worker/client/channel.h"

#include <grpcpp/grpcpp.h>

#include <fstream>
#include <sstream>

namespace tuned::worker {

std::shared_ptr<grpc::Channel> CreateClientChannel(const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  // Notice a vanished server on an idle stream; the server permits pings this often.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Reconnect quickly after a server restart (gRPC's default backoff grows to 120 s).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_ca_pem;
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(options.address, credentials, args);
}

void AddToken(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
}

Status FromGrpcStatus(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  return Status(static_cast<StatusCode>(static_cast<int>(status.error_code())),
                std::string(what) + ": " + status.error_message());
}

static StatusOr<std::string> ReadWholeFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError(std::string(what) + " '" + path + "' cannot be read");
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  TUNED_ASSIGN_OR_RETURN(std::string token, ReadWholeFile(path, "token file"));
  const char* kSpace = " \t\r\n";
  size_t begin = token.find_first_not_of(kSpace);
  if (begin == std::string::npos) {
    return InvalidArgumentError("token file '" + path + "' is empty");
  }
  size_t end = token.find_last_not_of(kSpace);
  return token.substr(begin, end - begin + 1);
}

StatusOr<std::string> ReadPemFile(const std::string& path) {
  TUNED_ASSIGN_OR_RETURN(std::string pem, ReadWholeFile(path, "PEM file"));
  if (pem.find("-----BEGIN") == std::string::npos) {
    return InvalidArgumentError("PEM file '" + path + "' has no PEM block");
  }
  return pem;
}

StatusOr<ClientConfig> LoadClientConfig(const std::string& address, const std::string& token_file,
                                        bool tls, const std::string& tls_ca_file) {
  ClientConfig config;
  config.channel.address = address;
  if (!token_file.empty()) {
    TUNED_ASSIGN_OR_RETURN(config.token, ReadTokenFile(token_file));
  }
  config.channel.tls = tls || !tls_ca_file.empty();
  if (!tls_ca_file.empty()) {
    TUNED_ASSIGN_OR_RETURN(config.channel.tls_ca_pem, ReadPemFile(tls_ca_file));
  }
  return config;
}

}  // namespace tuned::worker
