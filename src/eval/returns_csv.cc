// rltrade eval: the returns-file reader (format in returns_csv.h).
#include "eval/returns_csv.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/file_io.h"
#include "core/printable.h"

namespace rlt::eval {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsNanWord(std::string_view s) {
  return s.size() == 3 && std::tolower(static_cast<unsigned char>(s[0])) == 'n' &&
         std::tolower(static_cast<unsigned char>(s[1])) == 'a' &&
         std::tolower(static_cast<unsigned char>(s[2])) == 'n';
}

Status CellError(const std::string& where, std::string_view cell, const std::string& why) {
  std::string fix =
      "write the period's simple return as a decimal fraction (0.01 for +1 %), or leave the "
      "cell empty (or write nan) for a missing period";
  if (!cell.empty() && cell.back() == '%') fix = "write percentages as fractions: 1% is 0.01";
  return Status::DataError(where + ": column 1 'return': " + why + " '" + std::string(cell) +
                           "'. Fix: " + fix + ".");
}

// Parses one data cell into *out; NaN for a missing period.
Status ParseCell(std::string_view cell, const std::string& where, double* out) {
  cell = Trim(cell);
  if (cell.empty() || IsNanWord(cell)) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return Status::Ok();
  }
  const char* first = cell.data();
  if (*first == '+') ++first;  // from_chars rejects a leading '+'.
  double value = 0.0;
  const auto [end, ec] = std::from_chars(first, cell.data() + cell.size(), value);
  if (ec != std::errc() || end != cell.data() + cell.size()) {
    return CellError(where, cell, "expected a number, found");
  }
  if (!std::isfinite(value)) return CellError(where, cell, "expected a finite number, found");
  if (value < kMinReturn || value > kMaxReturn) {
    return CellError(where, cell,
                     "expected a simple return in [-1, 1e6] (-1 = everything lost; a position "
                     "cannot lose more, and 1e6 = +100,000,000% in one period is no market's), "
                     "found");
  }
  *out = value;
  return Status::Ok();
}

// The comma-separated cells of a line (no quoting: returns files hold numbers and dates).
std::vector<std::string_view> SplitCells(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t begin = 0;
  for (;;) {
    const size_t comma = line.find(',', begin);
    cells.push_back(line.substr(begin, comma == std::string_view::npos ? comma : comma - begin));
    if (comma == std::string_view::npos) return cells;
    begin = comma + 1;
  }
}

}  // namespace

Result<std::vector<double>> ParseReturnsCsv(std::string_view text, const std::string& source) {
  std::vector<double> returns;
  bool have_header = false;
  std::vector<std::string_view> header;
  int column = -1;  // the `return` column
  int line_no = 0;
  size_t pos = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;  // UTF-8 byte order mark: skipped
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() == '#') continue;
    const std::string where = source + ":" + std::to_string(line_no);
    if (!have_header) {
      if (Trim(line).empty()) continue;  // blank lines before the header.
      header = SplitCells(line);
      for (size_t c = 0; c < header.size(); ++c) {
        if (Trim(header[c]) == "return") column = static_cast<int>(c);
      }
      if (column < 0) {
        // The first line of a file that is no table is described, not echoed.
        return Status::DataError(where + ": expected the header 'return', found " +
                                 DescribeHeaderLine(line) +
                                 ". Fix: make the first line `return` and put one return "
                                 "per line below it (or name the returns column `return`, as "
                                 "an evaluation's daily_returns.csv does).");
      }
      have_header = true;
      continue;
    }
    if (pos >= text.size() && Trim(line).empty()) break;  // the final newline.
    const std::vector<std::string_view> cells = SplitCells(line);
    if (header.size() == 1 && cells.size() > 1) {
      return Status::DataError(where + ": column 2: found a second column in '" +
                               std::string(line) +
                               "'. Fix: a returns file has one column, `return`; remove the "
                               "other columns.");
    }
    if (cells.size() != header.size()) {
      return Status::DataError(where + ": found " + std::to_string(cells.size()) + " columns in '" +
                               std::string(line) + "', the header has " +
                               std::to_string(header.size()) +
                               ". Fix: give every row the header's columns.");
    }
    line = cells[column];
    if (pos >= text.size() && Trim(line).empty()) break;  // the final newline.
    double value = 0.0;
    RLT_RETURN_IF_ERROR(ParseCell(line, where, &value));
    returns.push_back(value);
  }
  if (!have_header) {
    return Status::DataError(source +
                             ": no header line. Fix: make the first line `return` and put one "
                             "return per line below it.");
  }
  return returns;
}

Result<std::vector<double>> ReadReturnsCsv(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return Annotate(text.status(), "",
                    ". Fix: check the path and that it is a readable returns file.");
  }
  return ParseReturnsCsv(*text, path);
}

}  // namespace rlt::eval
