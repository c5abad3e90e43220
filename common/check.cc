#include "common/check.h"

#include <cstdlib>

#include <spdlog/spdlog.h>

namespace tuned::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  stream_ << file << ":" << line << ": check failed: " << condition << " ";
}

CheckFailure::~CheckFailure() {
  spdlog::critical("{}", stream_.str());
  spdlog::shutdown();
  std::abort();
}

}  // namespace tuned::internal
