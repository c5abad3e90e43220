#include "common/logging.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace tuned {
namespace {

TEST(InitLogging, AcceptsKnownLevels) {
  ASSERT_TRUE(InitLogging("debug").ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);
  ASSERT_TRUE(InitLogging("off").ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::off);
}

TEST(InitLogging, RejectsUnknownLevelNamingIt) {
  Status status = InitLogging("loud");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("'loud'"), std::string::npos);
}

TEST(InitLogging, FallsBackToEnvironment) {
  ASSERT_EQ(setenv("TUNED_LOG", "error", 1), 0);
  ASSERT_TRUE(InitLogging("").ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::err);
  unsetenv("TUNED_LOG");
  ASSERT_TRUE(InitLogging("").ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::warn);
}

TEST(Logger, ComponentLoggersAreNamedAndShared) {
  auto a = Logger("worker");
  auto b = Logger("worker");
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->name(), "worker");
  EXPECT_NE(Logger("server").get(), a.get());
}

}  // namespace
}  // namespace tuned
