// rltrade core: text that is safe to print on a terminal.
//
// Error messages quote what they found in the input (a field, a line, a path). Inputs can
// hold binary bytes or megabytes on one line; printing them raw would echo garbage and
// control sequences to the terminal. PrintableText() keeps valid UTF-8 and printable
// ASCII as they are, writes every other byte (invalid UTF-8, control characters other than
// newline and tab) as \xNN, and cuts the text after `max_bytes` of output with a note of
// how much was left out. The command line's error printer applies it to every message.
//
// It also keeps the broker credential off the terminal: the value of
// RLTRADE_BROKER_TOKEN (when set, 4 bytes or longer) is replaced by "[redacted]" wherever
// it appears, and so is any piece of it of 8 bytes or more that starts where the token
// starts (what is left of it when a quote was cut short). Whatever a message quotes — a
// line of a file that holds the environment, a broker's echo — the token is not printed.
#ifndef RLT_CORE_PRINTABLE_H_
#define RLT_CORE_PRINTABLE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rlt {

inline constexpr size_t kMaxPrintedMessageBytes = 4000;

// The environment variable holding the broker credential (paper/tcp_broker.h).
inline constexpr const char* kBrokerTokenVariable = "RLTRADE_BROKER_TOKEN";

// `text` with the broker credential replaced (see above); as it is when none is set.
std::string RedactCredential(std::string_view text);

// Whether the column names of a file's first line may be quoted in a message: each at
// most 40 bytes of letters, digits, spaces and the punctuation column names use
// (_ - . ( ) / % # & + [ ]); a lone name at most 24 bytes of letters, spaces and '_'. The
// first line of a file that is not a table (a key, /etc/shadow, an environment dump)
// fails this, and readers describe it instead of echoing it.
bool LooksLikeColumnNames(const std::vector<std::string>& names);

// "columns: a, b, c" for a comma-separated first line that LooksLikeColumnNames, else
// "the first line, N bytes in M comma-separated field(s), does not look like a CSV header
// and is not shown". Names are trimmed of spaces, tabs and double quotes.
std::string DescribeHeaderLine(std::string_view line);

std::string PrintableText(std::string_view text, size_t max_bytes = kMaxPrintedMessageBytes);

}  // namespace rlt

#endif  // RLT_CORE_PRINTABLE_H_
