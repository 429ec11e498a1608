#pragma once
// Errors as values (STYLE item 4). Libraries return Status / Result<T>; only
// app/ turns them into messages and exit codes.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sl {

// The exit-code families of docs/cli.md map onto these codes in app/.
enum class ErrorCode {
  kOk = 0,
  kInvalidInput,  // malformed program, trace file or database: exit 1
  kUsage,         // bad command line: exit 2
  kRuntime,       // no GPU, CUDA/NCCL/CUPTI failures, I/O errors: exit 3
  kNotFound,      // a run, instruction or file that does not exist: exit 1
};

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// Success. A free function, not a static member: `s.ok()` on a Status
// compiled, and was always true.
inline Status ok_status() { return {}; }
inline Status invalid_input(std::string message) { return {ErrorCode::kInvalidInput, std::move(message)}; }
inline Status usage_error(std::string message) { return {ErrorCode::kUsage, std::move(message)}; }
inline Status runtime_error(std::string message) { return {ErrorCode::kRuntime, std::move(message)}; }
inline Status not_found(std::string message) { return {ErrorCode::kNotFound, std::move(message)}; }

// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}              // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {       // NOLINT(google-explicit-constructor)
    assert(!status_.is_ok() && "a Result built from a Status must carry an error");
  }

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }

  T& value() & { assert(value_); return *value_; }
  const T& value() const& { assert(value_); return *value_; }
  T&& value() && { assert(value_); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace sl

// Propagate an error Status from an expression that yields Status.
#define SL_RETURN_IF_ERROR(expr)            \
  do {                                      \
    ::sl::Status _sl_status = (expr);       \
    if (!_sl_status.is_ok()) return _sl_status; \
  } while (0)

#define SL_CONCAT_INNER(a, b) a##b
#define SL_CONCAT(a, b) SL_CONCAT_INNER(a, b)
// Bind the value of a Result expression or return its error.
#define SL_ASSIGN_OR_RETURN(lhs, expr) SL_ASSIGN_OR_RETURN_IMPL(SL_CONCAT(_sl_result_, __LINE__), lhs, expr)
#define SL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.is_ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
