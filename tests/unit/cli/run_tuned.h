#ifndef TUNED_TESTS_UNIT_CLI_RUN_TUNED_H_
#define TUNED_TESTS_UNIT_CLI_RUN_TUNED_H_

// Runs the real `tuned` binary (TUNED_BINARY) with arguments and collects what it prints.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tuned::testing {

struct CommandOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline CommandOutput RunTuned(const std::string& args) {
  std::string command = std::string(TUNED_BINARY) + " " + args + " 2>&1";
  CommandOutput result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace tuned::testing

#endif  // TUNED_TESTS_UNIT_CLI_RUN_TUNED_H_
