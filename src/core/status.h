// rltrade core: error handling.
//
// Two kinds of failure, kept apart (docs/ARCHITECTURE.md, "The invariants"):
//  - Bugs (broken invariants, violated preconditions) abort through RLT_CHECK with the
//    file, line and a message. They are never caught.
//  - Expected failures (bad data, bad config, bad checkpoint, I/O) are returned as a
//    Status or a Result<T> carrying a message a user can act on: where (file:line,
//    column), what was expected, and what to do.
// Nothing here throws.
#ifndef RLT_CORE_STATUS_H_
#define RLT_CORE_STATUS_H_

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace rlt {

// A success or an error with a human-readable message. Cheap to copy on success.
// [[nodiscard]]: ignoring a returned Status or Result is a compile warning (an error with
// RLT_WERROR); write `(void)` with a comment where dropping one is deliberate.
class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,
    kNotFound,
    kIoError,
    kDataError,
    kOutOfRange,
    kRefused,  // a request refused as unsafe (training on test dates, a changed resume)
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status IoError(std::string msg) { return {Code::kIoError, std::move(msg)}; }
  static Status DataError(std::string msg) { return {Code::kDataError, std::move(msg)}; }
  static Status OutOfRange(std::string msg) { return {Code::kOutOfRange, std::move(msg)}; }
  // The CLI exits 2 (usage error) for these.
  static Status Refused(std::string msg) { return {Code::kRefused, std::move(msg)}; }
  // A Status sent between processes (MPI ranks) as its code number and message; a number
  // that is no Code is an IoError.
  static Status FromCode(int code, std::string msg) {
    if (code == static_cast<int>(Code::kOk)) return Ok();
    if (code < 0 || code > static_cast<int>(Code::kRefused)) return IoError(std::move(msg));
    return {static_cast<Code>(code), std::move(msg)};
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok" or "<kind>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or an error Status. REQUIRES: ok() before value().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) {
      std::fprintf(stderr, "Result constructed from an OK status without a value\n");
      std::abort();
    }
  }
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    CheckOk();
    return *value_;
  }
  const T& value() const& {
    CheckOk();
    return *value_;
  }
  T&& value() && {
    CheckOk();
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void CheckOk() const {
    if (!status_.ok()) {
      std::fprintf(stderr, "Result::value() on error: %s\n", status_.ToString().c_str());
      std::abort();
    }
  }
  Status status_;
  std::optional<T> value_;
};

namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* expr, const std::string& msg);
}  // namespace internal

}  // namespace rlt

// Aborts with file:line when `cond` is false. For bugs only, never for user input.
#define RLT_CHECK(cond)                                                       \
  do {                                                                        \
    if (!(cond)) ::rlt::internal::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)
#define RLT_CHECK_MSG(cond, msg)                                                 \
  do {                                                                           \
    if (!(cond)) ::rlt::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
#ifndef NDEBUG
#define RLT_DCHECK(cond) RLT_CHECK(cond)
#else
#define RLT_DCHECK(cond) \
  do {                   \
  } while (0)
#endif

// Propagates an error Status from an expression returning Status.
#define RLT_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::rlt::Status rlt_status_ = (expr);        \
    if (!rlt_status_.ok()) return rlt_status_; \
  } while (0)

#define RLT_CONCAT_INNER_(a, b) a##b
#define RLT_CONCAT_(a, b) RLT_CONCAT_INNER_(a, b)
// `RLT_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result or returns its error.
#define RLT_ASSIGN_OR_RETURN(lhs, expr)                 \
  auto RLT_CONCAT_(rlt_result_, __LINE__) = (expr);     \
  if (!RLT_CONCAT_(rlt_result_, __LINE__).ok())         \
    return RLT_CONCAT_(rlt_result_, __LINE__).status(); \
  lhs = std::move(RLT_CONCAT_(rlt_result_, __LINE__)).value()

#endif  // RLT_CORE_STATUS_H_
