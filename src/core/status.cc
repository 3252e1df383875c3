// rltrade core: Status formatting and the RLT_CHECK failure path.
#include "core/status.h"

namespace rlt {

std::string Status::ToString() const {
  const char* kind = "ok";
  switch (code_) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      kind = "invalid argument";
      break;
    case Code::kNotFound:
      kind = "not found";
      break;
    case Code::kIoError:
      kind = "I/O error";
      break;
    case Code::kDataError:
      kind = "data error";
      break;
    case Code::kOutOfRange:
      kind = "out of range";
      break;
    case Code::kRefused:
      kind = "refused";
      break;
  }
  return std::string(kind) + ": " + message_;
}

namespace internal {
void CheckFailed(const char* file, int line, const char* expr, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: check failed: %s%s%s\n", file, line, expr, msg.empty() ? "" : " — ",
               msg.c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace internal

}  // namespace rlt
