// rltrade cli: reading a bar CSV given on the command line (--input, --timezone, --symbol,
// --on-bad-rows, --session), shared by the commands that take one (indicator, features,
// mine).
#ifndef RLT_CLI_INPUT_BARS_H_
#define RLT_CLI_INPUT_BARS_H_

#include <string>

#include "core/status.h"
#include "market/csv.h"

namespace rlt::cli {

// Reads the input bars. With on_bad_rows == "drop", bad rows are dropped and listed on
// stderr (how many, and each one); the default "fail" stops before anything is written.
// Naive timestamps read in a zone that was not given explicitly are noted on stderr.
// `session` is --session's HH:MM-HH:MM ("" = all hours). Error: no bars (for `symbol`).
Result<market::MarketData> ReadInputBars(const std::string& path, const std::string& timezone,
                                         bool timezone_given, const std::string& symbol,
                                         const std::string& on_bad_rows,
                                         const std::string& session = "");

}  // namespace rlt::cli

#endif  // RLT_CLI_INPUT_BARS_H_
