// rltrade core tests: checks that a Status or Result is the expected error.
//
// An error-path test that checks only `!s.ok()` passes on any error, including the wrong one
// (a missing file instead of the bad key it meant to test). IsError checks the code and a
// fragment of the message, the part that names what is at fault (the key, file:line, field
// or value), and on failure prints the code and the message it got:
//
//   EXPECT_TRUE(IsError(s, Status::Code::kInvalidArgument, "'n_steps'"));
//
// Header-only, test-only: included by *_test.cc files. It lives in core/ rather than
// testing/ because testing/ may include no other folder (docs/ARCHITECTURE.md).
#ifndef RLT_CORE_STATUS_TEST_UTIL_H_
#define RLT_CORE_STATUS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "core/status.h"

namespace rlt {

// "kInvalidArgument", ... as spelled in Status::Code.
inline const char* StatusCodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "kOk";
    case Status::Code::kInvalidArgument:
      return "kInvalidArgument";
    case Status::Code::kNotFound:
      return "kNotFound";
    case Status::Code::kIoError:
      return "kIoError";
    case Status::Code::kDataError:
      return "kDataError";
    case Status::Code::kOutOfRange:
      return "kOutOfRange";
    case Status::Code::kRefused:
      return "kRefused";
  }
  return "(not a Status::Code)";
}

// Success when `s` is an error with `code` whose message contains `fragment` (not empty).
inline ::testing::AssertionResult IsError(const Status& s, Status::Code code,
                                          std::string_view fragment) {
  if (fragment.empty()) {
    return ::testing::AssertionFailure()
           << "IsError needs a message fragment that names what is at fault";
  }
  if (!s.ok() && s.code() == code && s.message().find(fragment) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  auto failure = ::testing::AssertionFailure();
  failure << "expected " << StatusCodeName(code) << " with a message containing \"" << fragment
          << "\"\n     got ";
  if (s.ok()) {
    failure << "ok";
  } else {
    failure << StatusCodeName(s.code()) << ": " << s.message();
  }
  return failure;
}

template <typename T>
::testing::AssertionResult IsError(const Result<T>& r, Status::Code code,
                                   std::string_view fragment) {
  return IsError(r.status(), code, fragment);
}

}  // namespace rlt

#endif  // RLT_CORE_STATUS_TEST_UTIL_H_
