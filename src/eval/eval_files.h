// rltrade eval: the one reader of the files an evaluation writes (eval/outputs.h).
//
// What it is: parsers for summary.json, equity.csv, daily_returns.csv and trades.csv,
// each in one place, used by the report (report.cc), walk-forward (which concatenates the
// folds' daily returns) and anything else that reads an evaluation directory. Every
// error names the file and line and says what was expected.
// What it is not: a writer (evalrun/ writes these files) and not a metrics computation.
// Numbers: an empty cell or "nan" (any case) is NaN; anything else must parse completely.
#ifndef RLT_EVAL_EVAL_FILES_H_
#define RLT_EVAL_EVAL_FILES_H_

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::eval {

struct EquityRow {
  std::string timestamp, session_date;
  double close, position, net_worth, buy_and_hold;
};

// One row of daily_returns.csv. `cells` keeps the three numeric cells verbatim (return,
// buy_and_hold, flat), so files can be concatenated byte for byte.
struct DailyReturnRow {
  std::string date;
  double strategy, buy_and_hold, flat;
  std::array<std::string, 3> cells;
};

struct TradeRow {
  std::string time, side;
  double quantity, price, cost, position_after;
};

struct EvalFiles {
  nlohmann::json summary;
  std::vector<EquityRow> equity;
  std::vector<DailyReturnRow> daily;
  std::vector<TradeRow> trades;
};

// `dir`/summary.json: a JSON object, or an error naming the file.
Result<nlohmann::json> ReadSummaryJson(const std::string& dir);
// One file each, by path.
Result<std::vector<EquityRow>> ReadEquityCsv(const std::string& path);
Result<std::vector<DailyReturnRow>> ReadDailyReturnsCsv(const std::string& path);
Result<std::vector<TradeRow>> ReadTradesCsv(const std::string& path);
// All four files of an evaluation directory.
Result<EvalFiles> ReadEvalFiles(const std::string& dir);

}  // namespace rlt::eval

#endif  // RLT_EVAL_EVAL_FILES_H_
