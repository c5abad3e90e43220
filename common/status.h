#ifndef TUNED_COMMON_STATUS_H_
#define TUNED_COMMON_STATUS_H_

/// \file
/// Status and StatusOr: how every fallible function in tuned reports an error. Codes are the
/// gRPC canonical set so they map one-to-one onto grpc::StatusCode at the service edge and onto
/// exit codes in cli/. Messages are lower-case, name the input, and say what is wrong.

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tuned {

enum class StatusCode {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

/// The canonical upper-snake name of a code, e.g. "INVALID_ARGUMENT".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  /// Returns a copy whose message is `context + ": " + message()`; used to add where an error
  /// happened as it propagates ("trace instruction 3: ...").
  Status WithContext(std::string_view context) const;

  bool operator==(const Status& other) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status FailedPreconditionError(std::string message);
Status ResourceExhaustedError(std::string message);
Status OutOfRangeError(std::string message);
Status UnimplementedError(std::string message);
Status InternalError(std::string message);
Status UnavailableError(std::string message);
Status DataLossError(std::string message);
Status DeadlineExceededError(std::string message);
Status UnauthenticatedError(std::string message);
Status AbortedError(std::string message);

/// Either a value or an error Status (never an OK status without a value).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "StatusOr built from OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return CheckedValue(); }
  const T& value() const& { return const_cast<StatusOr*>(this)->CheckedValue(); }
  T&& value() && { return std::move(CheckedValue()); }
  T& operator*() & { return CheckedValue(); }
  const T& operator*() const& { return const_cast<StatusOr*>(this)->CheckedValue(); }
  T* operator->() { return &CheckedValue(); }
  const T* operator->() const { return &const_cast<StatusOr*>(this)->CheckedValue(); }

 private:
  T& CheckedValue() {
    if (!value_) std::abort();  // Reading the value of an error is a programming bug.
    return *value_;
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace tuned

#define TUNED_STATUS_CONCAT_INNER(a, b) a##b
#define TUNED_STATUS_CONCAT(a, b) TUNED_STATUS_CONCAT_INNER(a, b)

/// Returns from the current function if `expr` (a Status) is an error.
#define TUNED_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::tuned::Status tuned_status_ = (expr);        \
    if (!tuned_status_.ok()) return tuned_status_; \
  } while (0)

/// `TUNED_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a StatusOr or returns its error.
#define TUNED_ASSIGN_OR_RETURN(lhs, expr) \
  TUNED_ASSIGN_OR_RETURN_IMPL(TUNED_STATUS_CONCAT(tuned_statusor_, __LINE__), lhs, expr)
#define TUNED_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

#endif  // TUNED_COMMON_STATUS_H_
