#ifndef TUNED_RPC_CREDENTIALS_H_
#define TUNED_RPC_CREDENTIALS_H_

/// \file
/// The secrets on disk: the shared token and PEM files (the server's certificate and key, a
/// client's CA roots), and the client configuration built from the flags every client takes.

#include <string>

#include "common/status.h"
#include "rpc/channel.h"

namespace tuned::rpc {

/// Reads a token file, trimmed of surrounding whitespace; an empty or unreadable file, or one
/// that every user may access (any "other" permission bit), is
/// InvalidArgument naming the path. (The group may read it.)
StatusOr<std::string> ReadTokenFile(const std::string& path);

/// Reads a PEM file; one that is unreadable or holds no PEM block is InvalidArgument naming it.
StatusOr<std::string> ReadPemFile(const std::string& path);

/// A ClientConfig from --server, --token-file, --tls and --tls-ca; a CA file implies TLS.
/// Unreadable files are errors naming them.
StatusOr<ClientConfig> LoadClientConfig(const std::string& address, const std::string& token_file,
                                        bool tls, const std::string& tls_ca_file);

}  // namespace tuned::rpc

#endif  // TUNED_RPC_CREDENTIALS_H_
