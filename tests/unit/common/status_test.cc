#include "common/status.h"

#include <memory>

#include <gtest/gtest.h>

namespace tuned {
namespace {

StatusOr<int> ParsePositive(int value) {
  if (value <= 0) return InvalidArgumentError("value " + std::to_string(value) + " is not positive");
  return value;
}

StatusOr<int> DoubleIt(int value) {
  TUNED_ASSIGN_OR_RETURN(int parsed, ParsePositive(value));
  return 2 * parsed;
}

Status CheckBoth(int a, int b) {
  TUNED_RETURN_IF_ERROR(ParsePositive(a).status());
  TUNED_RETURN_IF_ERROR(ParsePositive(b).status());
  return Status::Ok();
}

TEST(Status, DefaultIsOk) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.ToString(), "OK");
}

TEST(Status, ErrorCarriesCodeAndMessage) {
  Status status = NotFoundError("workload 'x' not in database");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(), "NOT_FOUND: workload 'x' not in database");
}

TEST(Status, WithContextPrefixesMessageAndKeepsCode) {
  Status status = InvalidArgumentError("factor 0").WithContext("trace instruction 3 (split)");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "trace instruction 3 (split): factor 0");
  EXPECT_TRUE(Status::Ok().WithContext("ignored").ok());
}

TEST(Status, CodesMatchGrpcCanonicalNumbers) {
  EXPECT_EQ(static_cast<int>(StatusCode::kInvalidArgument), 3);
  EXPECT_EQ(static_cast<int>(StatusCode::kUnauthenticated), 16);
  EXPECT_EQ(StatusCodeName(StatusCode::kDataLoss), "DATA_LOSS");
}

TEST(StatusOr, HoldsValueOrError) {
  StatusOr<int> good = DoubleIt(21);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  StatusOr<int> bad = DoubleIt(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "value -1 is not positive");
}

TEST(StatusOr, OkStatusWithoutValueBecomesInternalError) {
  StatusOr<int> odd = Status::Ok();
  EXPECT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().code(), StatusCode::kInternal);
}

TEST(StatusOr, HoldsMoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> owned = std::make_unique<int>(7);
  ASSERT_TRUE(owned.ok());
  std::unique_ptr<int> taken = std::move(owned).value();
  EXPECT_EQ(*taken, 7);
}

TEST(Status, ReturnIfErrorStopsAtFirstError) {
  EXPECT_TRUE(CheckBoth(1, 2).ok());
  EXPECT_EQ(CheckBoth(1, -2).message(), "value -2 is not positive");
  EXPECT_EQ(CheckBoth(-1, -2).message(), "value -1 is not positive");
}

TEST(StatusDeathTest, ReadingValueOfErrorAborts) {
  StatusOr<int> bad = InvalidArgumentError("x");
  EXPECT_DEATH({ (void)bad.value(); }, "");
}

}  // namespace
}  // namespace tuned
