// rltrade eval: reading a returns file.
//
// The format (docs/evaluation.md, "rltrade metrics"): a one-column CSV whose first
// non-comment line is the header `return`, then one per-period simple return per line as a fraction
// (0.01 = +1 %). An empty cell or `nan` (any case) is a missing period and becomes NaN;
// lines starting with `#` are comments; a trailing '\r' (Windows line ends) is ignored.
// An empty last line is the file's final newline, not a period: write `nan` for a
// missing last period.
// A return must lie in [kMinReturn, kMaxReturn] = [-1, 1e6]: below -1 (more than
// everything lost) is impossible for a simple return, and above 1e6 no market's.
// A UTF-8 byte order mark before the header is skipped (the rule of every text reader).
// A file of several columns is read when exactly one of them is named `return` (an
// evaluation's or paper session's daily_returns.csv: date,return,buy_and_hold,flat); every
// row must then have the header's columns, and the other columns are not read.
// Anything else — text, percentages, infinities, a second column under a lone `return`
// header, a row of another width — is an error naming file:line, what was found and how
// to fix it.
#ifndef RLT_EVAL_RETURNS_CSV_H_
#define RLT_EVAL_RETURNS_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rlt::eval {

inline constexpr double kMinReturn = -1.0;
inline constexpr double kMaxReturn = 1e6;

// Parses returns from CSV text; `source` names the text in error messages (a path).
Result<std::vector<double>> ParseReturnsCsv(std::string_view text, const std::string& source);

// Reads and parses the file at `path`. IoError if it cannot be read.
Result<std::vector<double>> ReadReturnsCsv(const std::string& path);

}  // namespace rlt::eval

#endif  // RLT_EVAL_RETURNS_CSV_H_
