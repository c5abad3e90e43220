#ifndef TUNED_TESTS_SUPPORT_EXPECT_ERROR_H_
#define TUNED_TESTS_SUPPORT_EXPECT_ERROR_H_

/// \file
/// EXPECT_ERROR(expr, substring): `expr` (a Status or StatusOr) failed with a message that
/// contains `substring`.

#include <gtest/gtest.h>

#include <string>

#include "common/status.h"

namespace tuned::testing {

inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const StatusOr<T>& s) { return s.status(); }

}  // namespace tuned::testing

#define EXPECT_ERROR(expr, substring)                                                       \
  do {                                                                                      \
    auto result_ = (expr);                                                                  \
    ASSERT_FALSE(result_.ok()) << #expr << " succeeded";                                    \
    EXPECT_NE(::tuned::testing::StatusOf(result_).message().find(substring), std::string::npos) \
        << ::tuned::testing::StatusOf(result_).message();                                   \
  } while (0)

#endif  // TUNED_TESTS_SUPPORT_EXPECT_ERROR_H_
