#include "server/service/access.h"

#include <string_view>
#include <utility>
#include <vector>

#include "rpc/auth.h"
#include "server/service/grpc_util.h"

namespace tuned::server {
namespace {

struct Credential {
  const char* name;  // as the refusal names it
  const std::string* token;
};

std::vector<Credential> Credentials(const AccessPolicy& tokens) {
  return {{"shared", &tokens.shared},
          {"worker", &tokens.worker},
          {"client", &tokens.client},
          {"admin", &tokens.admin}};
}

bool Holds(std::string_view credential, const AccessPolicy& tokens, Role role) {
  if (credential == "shared") return true;
  switch (role) {
    case Role::kWorker:
      return credential == "worker";
    case Role::kClient:
      return credential == "client" || credential == "admin";
    case Role::kAdmin:
      return credential == "admin" || (credential == "client" && tokens.admin.empty());
  }
  return false;
}

const char* Refusal(Role role) {
  switch (role) {
    case Role::kWorker:
      return "may not register as a worker";
    case Role::kClient:
      return "may only serve jobs as a worker";
    case Role::kAdmin:
      return "may not cancel tasks (that needs the admin credential)";
  }
  return "is not allowed here";
}

}  // namespace

Status ValidateAccessPolicy(const AccessPolicy& tokens) {
  std::vector<Credential> credentials = Credentials(tokens);
  for (size_t i = 0; i < credentials.size(); ++i) {
    for (size_t j = i + 1; j < credentials.size(); ++j) {
      if (!credentials[i].token->empty() && *credentials[i].token == *credentials[j].token) {
        return InvalidArgumentError(std::string("the ") + credentials[i].name + " and " +
                                    credentials[j].name + " credentials hold the same token");
      }
    }
  }
  return Status::Ok();
}

grpc::Status Authorize(const grpc::CallbackServerContext* context, const AccessPolicy& tokens,
                       Role role) {
  if (role == Role::kWorker && tokens.workers_need_certificate) {
    std::shared_ptr<const grpc::AuthContext> auth = context->auth_context();
    if (auth == nullptr || !auth->IsPeerAuthenticated()) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "a worker must present a TLS client certificate signed by the "
                          "server's --tls-worker-ca");
    }
  }
  if (tokens.empty()) return grpc::Status::OK;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(rpc::kAuthMetadataKey);
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing token");
  }
  const std::string_view presented(it->second.data(), it->second.size());
  // Compare against every configured token, so the time taken does not say which one matched.
  const char* matched = nullptr;
  for (const Credential& credential : Credentials(tokens)) {
    if (!credential.token->empty() && rpc::TokenMatches(presented, *credential.token) &&
        matched == nullptr) {
      matched = credential.name;
    }
  }
  if (matched == nullptr) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "invalid token");
  if (!Holds(matched, tokens, role)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        std::string("a ") + matched + " credential " + Refusal(role));
  }
  return grpc::Status::OK;
}

}  // namespace tuned::server
