// rltrade eval: reading an evaluation directory's files (see eval_files.h).
#include "eval/eval_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/csv_line.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "eval/outputs.h"

namespace rlt::eval {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// The data rows of a CSV file with exactly `header`, each split on commas, with their
// line numbers.
Result<Rows> ReadCsv(const std::string& path, const std::string& header,
                     std::vector<int>* line_numbers) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot open '{}': run `rltrade eval` first", path));
  Rows rows;
  std::string line;
  const size_t columns = std::count(header.begin(), header.end(), ',') + 1;
  int number = 0;
  for (; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1) {
      if (line != header) {
        return Status::DataError(
            fmt::format("{}:1: expected the header '{}', found '{:.80}'", path, header, line));
      }
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> fields;
    if (!SplitCsvLine(line, &fields)) {
      return Status::DataError(
          fmt::format("{}:{}: a quoted field is never closed; repair the line", path, number));
    }
    if (fields.size() != columns) {
      return Status::DataError(
          fmt::format("{}:{}: expected {} comma-separated fields ({}), found {}", path, number,
                      columns, header, fields.size()));
    }
    rows.push_back(std::move(fields));
    line_numbers->push_back(number);
  }
  if (in.bad()) return Status::IoError(fmt::format("cannot read '{}'", path));
  if (number == 0)
    return Status::DataError(fmt::format("{}: empty file, expected the header '{}'", path, header));
  return rows;
}

bool ParseNumber(const std::string& text, double* out) {
  if (text.empty() || text == "nan" || text == "NaN" || text == "NAN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0';
}

// Parses the numeric columns `cols` of every row (row-major into `out`).
Status ParseColumns(const std::string& path, const Rows& rows, const std::vector<int>& lines,
                    const std::vector<int>& cols, std::vector<std::vector<double>>* out) {
  out->assign(rows.size(), std::vector<double>(cols.size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < cols.size(); ++c) {
      if (!ParseNumber(rows[r][cols[c]], &(*out)[r][c])) {
        return Status::DataError(fmt::format("{}:{}: column {}: expected a number, found '{:.40}'",
                                             path, lines[r], cols[c] + 1, rows[r][cols[c]]));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<nlohmann::json> ReadSummaryJson(const std::string& dir) {
  const std::string path = dir + "/" + kSummaryFile;
  Result<std::string> text = ReadFile(path);
  if (!text.ok() && text.status().code() == Status::Code::kNotFound) {
    return Status::NotFound(fmt::format("cannot open '{}': run `rltrade eval` first", path));
  }
  if (!text.ok()) return text.status();
  Result<nlohmann::json> summary = ParseJson<nlohmann::json>(*text, path);
  if (!summary.ok()) return Status::DataError(summary.status().message());
  if (!summary->is_object()) {
    return Status::DataError(fmt::format("{}: not a JSON object (see eval/outputs.h)", path));
  }
  return summary;
}

Result<std::vector<EquityRow>> ReadEquityCsv(const std::string& path) {
  std::vector<int> lines;
  RLT_ASSIGN_OR_RETURN(Rows rows, ReadCsv(path, kEquityHeader, &lines));
  std::vector<std::vector<double>> num;
  RLT_RETURN_IF_ERROR(ParseColumns(path, rows, lines, {3, 4, 6, 7}, &num));
  std::vector<EquityRow> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    out.push_back({rows[i][0], rows[i][1], num[i][0], num[i][1], num[i][2], num[i][3]});
  }
  return out;
}

Result<std::vector<DailyReturnRow>> ReadDailyReturnsCsv(const std::string& path) {
  std::vector<int> lines;
  RLT_ASSIGN_OR_RETURN(Rows rows, ReadCsv(path, kDailyReturnsHeader, &lines));
  std::vector<std::vector<double>> num;
  RLT_RETURN_IF_ERROR(ParseColumns(path, rows, lines, {1, 2, 3}, &num));
  std::vector<DailyReturnRow> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    out.push_back(
        {rows[i][0], num[i][0], num[i][1], num[i][2], {rows[i][1], rows[i][2], rows[i][3]}});
  }
  return out;
}

Result<std::vector<TradeRow>> ReadTradesCsv(const std::string& path) {
  std::vector<int> lines;
  RLT_ASSIGN_OR_RETURN(Rows rows, ReadCsv(path, kTradesHeader, &lines));
  std::vector<std::vector<double>> num;
  RLT_RETURN_IF_ERROR(ParseColumns(path, rows, lines, {2, 3, 4, 5}, &num));
  std::vector<TradeRow> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    out.push_back({rows[i][0], rows[i][1], num[i][0], num[i][1], num[i][2], num[i][3]});
  }
  return out;
}

Result<EvalFiles> ReadEvalFiles(const std::string& dir) {
  EvalFiles files;
  RLT_ASSIGN_OR_RETURN(files.summary, ReadSummaryJson(dir));
  RLT_ASSIGN_OR_RETURN(files.equity, ReadEquityCsv(dir + "/" + kEquityFile));
  RLT_ASSIGN_OR_RETURN(files.daily, ReadDailyReturnsCsv(dir + "/" + kDailyReturnsFile));
  RLT_ASSIGN_OR_RETURN(files.trades, ReadTradesCsv(dir + "/" + kTradesFile));
  return files;
}

}  // namespace rlt::eval
