#ifndef TUNED_COMMON_CHECK_H_
#define TUNED_COMMON_CHECK_H_

/// \file
/// Always-on internal invariant checks. A failed check is a bug in tuned, never bad user input
/// (that is a Status): it logs the condition and location at critical level and aborts, because
/// a tuner that runs for hours must die loudly rather than corrupt its log.

#include <sstream>
#include <string>

namespace tuned::internal {

/// Collects a streamed message and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

}  // namespace tuned::internal

#define TUNED_CHECK(cond) \
  if (cond) {             \
  } else                  \
    ::tuned::internal::CheckFailure(__FILE__, __LINE__, #cond)

#define TUNED_UNREACHABLE(msg) ::tuned::internal::CheckFailure(__FILE__, __LINE__, "unreachable") << msg

#endif  // TUNED_COMMON_CHECK_H_
