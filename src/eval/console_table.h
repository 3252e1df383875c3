// rltrade eval: the terminal tables of evaluation summaries (`rltrade eval`, across seeds,
// `rltrade walkforward`), so they all answer "did it beat the benchmark?" the same way.
//
// BenchmarkTable(): one row per metric of the metrics table (metrics_table.h) that the
// policy's metrics object holds, labelled as the report labels it, with the policy, the
// flat and the buy-and-hold benchmark side by side; a ratio (Sharpe, Sortino, Calmar,
// PSR) from fewer than 30 daily returns ("few_observations": true in its column's metrics
// object) is marked with '*' and explained under the table. Then, from summary.json's
// "significance" (metrics_json.h), per benchmark the annualised Sharpe difference, the
// bootstrap p-value and the 95 % interval. Cells: 6 significant digits, "nan" for null.
// AnnualisationNote(): the line that says how ratios were annualised.
#ifndef RLT_EVAL_CONSOLE_TABLE_H_
#define RLT_EVAL_CONSOLE_TABLE_H_

#include <nlohmann/json.hpp>
#include <string>

namespace rlt::eval {

struct BenchmarkTableInput {
  std::string first_header = "metric";                   // e.g. "metric (IN-SAMPLE)"
  const nlohmann::ordered_json* policy = nullptr;        // metrics object. REQUIRED
  const nlohmann::ordered_json* flat = nullptr;          // metrics object, or null
  const nlohmann::ordered_json* buy_and_hold = nullptr;  // metrics object, or null
  const nlohmann::ordered_json* significance = nullptr;  // summary "significance", or null
  // {"strategy", "flat", "buy_and_hold"}: fills, shown after the round trips (or null).
  const nlohmann::ordered_json* fills = nullptr;
};

std::string BenchmarkTable(const BenchmarkTableInput& in);

// "ratios annualised with P periods per year (<why>)": why = "sessions on weekends: a
// market that trades every day", "weekday sessions: exchange days" or "--periods"; then a
// line naming the significance test.
std::string AnnualisationNote(int periods_per_year, bool overridden);

}  // namespace rlt::eval

#endif  // RLT_EVAL_CONSOLE_TABLE_H_
