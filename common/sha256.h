#ifndef TUNED_COMMON_SHA256_H_
#define TUNED_COMMON_SHA256_H_

/// \file
/// SHA-256 of a byte string as 64 lower-case hex digits (through OpenSSL's libcrypto). Used for
/// workload keys and trace hashes, which must be stable across machines and versions.

#include <string>
#include <string_view>

namespace tuned {

std::string Sha256Hex(std::string_view data);

}  // namespace tuned

#endif  // TUNED_COMMON_SHA256_H_
