#ifndef TUNED_COMMON_LOGGING_H_
#define TUNED_COMMON_LOGGING_H_

/// \file
/// Logging setup over spdlog. Every component logs through its own named logger ("server",
/// "worker", "db", ...) so each line carries a component tag; all loggers share one stderr sink
/// and one level.

#include <memory>
#include <string_view>

#include <spdlog/spdlog.h>

#include "common/status.h"

namespace tuned {

/// Sets the global level from `level` ("trace", "debug", "info", "warn", "error", "off"); an
/// empty `level` falls back to the TUNED_LOG environment variable, then to "warn".
Status InitLogging(std::string_view level);

/// The logger of one component, created on first use with the shared sink and level.
std::shared_ptr<spdlog::logger> Logger(std::string_view component);

}  // namespace tuned

#endif  // TUNED_COMMON_LOGGING_H_
