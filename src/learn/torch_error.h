// rltrade learn: LibTorch's exception text without its stack trace.
//
// c10::Error::what() appends a C++ backtrace of dozens of frames; a user needs the first
// line. Used where a LibTorch call's failure becomes a Status.
#ifndef RLT_LEARN_TORCH_ERROR_H_
#define RLT_LEARN_TORCH_ERROR_H_

#include <c10/util/Exception.h>

#include <exception>
#include <string>

namespace rlt::learn {

// The message of `e` without a backtrace: c10::Error's what_without_backtrace(), cut at
// its first line break; other exceptions' what().
inline std::string TorchErrorMessage(const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10 != nullptr ? c10->what_without_backtrace() : e.what();
  const size_t newline = text.find('\n');
  if (c10 != nullptr && newline != std::string::npos) text.resize(newline);
  return text;
}

}  // namespace rlt::learn

#endif  // RLT_LEARN_TORCH_ERROR_H_
