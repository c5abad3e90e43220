#include "common/logging.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace tuned {

static spdlog::sink_ptr SharedSink() {
  static spdlog::sink_ptr sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  return sink;
}

Status InitLogging(std::string_view level) {
  std::string name(level);
  if (name.empty()) {
    const char* env = std::getenv("TUNED_LOG");
    name = env != nullptr && *env != '\0' ? env : "warn";
  }
  spdlog::level::level_enum parsed = spdlog::level::from_str(name);
  // from_str maps unknown names to "off"; only accept "off" when asked for by name.
  if (parsed == spdlog::level::off && name != "off") {
    return InvalidArgumentError("unknown log level '" + name +
                                "' (expected trace, debug, info, warn, error or off)");
  }
  spdlog::set_level(parsed);
  spdlog::set_pattern("[%H:%M:%S.%e] [%n] [%l] %v");
  return Status::Ok();
}

std::shared_ptr<spdlog::logger> Logger(std::string_view component) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::string name(component);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = std::make_shared<spdlog::logger>(name, SharedSink());
  logger->set_level(spdlog::get_level());
  spdlog::register_logger(logger);
  return logger;
}

}  // namespace tuned
