// The exit-code convention of the command line, checked on the real `tuned` binary.

#include <string>

#include <gtest/gtest.h>

#include "tests/cli/run_tuned.h"

namespace {

using tuned::testing::CommandOutput;
using tuned::testing::RunTuned;

TEST(TunedCli, HelpExitsZeroAndListsUsage) {
  CommandOutput out = RunTuned("--help");
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_NE(out.all().find("--version"), std::string::npos) << out.all();
}

TEST(TunedCli, VersionExitsZeroAndPrintsVersion) {
  CommandOutput out = RunTuned("--version");
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.all().rfind("tuned ", 0), 0u) << out.all();
}

TEST(TunedCli, UnknownSubcommandIsUsageError) {
  CommandOutput out = RunTuned("frobnicate");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.all().find("frobnicate"), std::string::npos) << out.all();
}

TEST(TunedCli, BadLogLevelIsUsageError) {
  CommandOutput out = RunTuned("--log-level loud");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.all().find("unknown log level 'loud'"), std::string::npos) << out.all();
}

}  // namespace
