// rltrade core: text that is safe to print on a terminal.
//
// Error messages quote what they found in the input (a field, a line, a path). Inputs can
// hold binary bytes or megabytes on one line; printing them raw would echo garbage and
// control sequences to the terminal. PrintableText() keeps valid UTF-8 and printable
// ASCII as they are, writes every other byte (invalid UTF-8, control characters other than
// newline and tab) as \xNN, and cuts the text after `max_bytes` of output with a note of
// how much was left out. The command line's error printer applies it to every message.
#ifndef RLT_CORE_PRINTABLE_H_
#define RLT_CORE_PRINTABLE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace rlt {

inline constexpr size_t kMaxPrintedMessageBytes = 4000;

std::string PrintableText(std::string_view text, size_t max_bytes = kMaxPrintedMessageBytes);

}  // namespace rlt

#endif  // RLT_CORE_PRINTABLE_H_
