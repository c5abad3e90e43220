#include "rpc/credentials.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>

namespace tuned::rpc {
namespace {

StatusOr<std::string> ReadWholeFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError(std::string(what) + " '" + path + "' cannot be read");
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  TUNED_ASSIGN_OR_RETURN(std::string token, ReadWholeFile(path, "token file"));
  // A secret every user can read is not a secret: refuse it, as ssh does a private key. The
  // group may read it: Kubernetes gives a pod's secrets to its fsGroup that way (0440).
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && (info.st_mode & S_IRWXO) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(info.st_mode & 07777));
    return InvalidArgumentError("token file '" + path + "' is accessible by all users (mode " + mode +
                                "): chmod o-rwx it");
  }
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

}  // namespace tuned::rpc
