// The exit-code convention of the command line, checked on the real `tuned` binary.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace {

struct CommandOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

CommandOutput RunTuned(const std::string& args) {
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

TEST(TunedCli, HelpExitsZeroAndListsUsage) {
  CommandOutput out = RunTuned("--help");
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_NE(out.output.find("--version"), std::string::npos) << out.output;
}

TEST(TunedCli, VersionExitsZeroAndPrintsVersion) {
  CommandOutput out = RunTuned("--version");
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.output.rfind("tuned ", 0), 0u) << out.output;
}

TEST(TunedCli, UnknownSubcommandIsUsageError) {
  CommandOutput out = RunTuned("frobnicate");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("frobnicate"), std::string::npos) << out.output;
}

TEST(TunedCli, BadLogLevelIsUsageError) {
  CommandOutput out = RunTuned("--log-level loud");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("unknown log level 'loud'"), std::string::npos) << out.output;
}

}  // namespace
