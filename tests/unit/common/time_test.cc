#include "common/time.h"

#include <gtest/gtest.h>

#include <chrono>

namespace tuned {
namespace {

TEST(TimeTest, FormatSecondsPicksTheUnitByMagnitude) {
  EXPECT_EQ(FormatSeconds(0), "-");  // No measurement.
  EXPECT_EQ(FormatSeconds(-1), "-");
  EXPECT_EQ(FormatSeconds(1.5e-5), "15.00 us");
  EXPECT_EQ(FormatSeconds(0.0123), "12.300 ms");
  EXPECT_EQ(FormatSeconds(2.5), "2.500 s");
  EXPECT_EQ(FormatSeconds(1e-3), "1.000 ms");  // Unit boundaries belong to the larger unit.
  EXPECT_EQ(FormatSeconds(1), "1.000 s");
}

TEST(TimeTest, UnixMsIsTheSystemClockInMilliseconds) {
  const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t now = UnixMs();
  const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
  EXPECT_GT(now, int64_t{1700000000000});  // After November 2023: milliseconds, not seconds.
}

}  // namespace
}  // namespace tuned
