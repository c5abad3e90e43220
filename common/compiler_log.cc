#include "common/compiler_log.h"

#include <sstream>

namespace tuned {
namespace {

std::string Trimmed(const std::string& line) {
  size_t begin = line.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = line.find_last_not_of(" \t\r");
  return line.substr(begin, end - begin + 1);
}

}  // namespace

std::string FirstErrorLine(std::string_view log, std::string_view fallback) {
  std::istringstream lines{std::string(log)};
  std::string line;
  // Front ends write "file(line): error: ..." (NVRTC) or "file:line:col: error: ..." (clang);
  // ptxas and option errors "... error : ...".
  while (std::getline(lines, line)) {
    if (line.find("error:") != std::string::npos || line.find("error :") != std::string::npos) {
      return Trimmed(line);
    }
  }
  return std::string(fallback);
}

}  // namespace tuned
