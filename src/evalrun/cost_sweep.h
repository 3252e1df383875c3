// rltrade evalrun (internal): the cost table of `eval --costs` — one row per cost level,
// the break-even cost — as costs.csv, costs.json and the terminal table, from the levels'
// figures. Shared by one evaluation (evalrun.cc, one walk per level) and the equal-weight
// portfolio of several symbols (symbols_eval.cc).
#ifndef RLT_EVALRUN_COST_SWEEP_H_
#define RLT_EVALRUN_COST_SWEEP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rlt::evalrun {

// costs_daily_returns.csv: date, then each level's daily return ("0", "1", ... the levels
// in basis points as given), so a portfolio can be formed per level.
inline constexpr const char* kCostsDailyFile = "costs_daily_returns.csv";

struct CostLevel {
  double bps = 0;
  double total_return = 0, annual_return = 0, sharpe_ratio = 0, max_drawdown = 0;
  double turnover = 0, costs_paid = 0, net_pnl = 0;
  int64_t fills = 0;
};

struct CostSweep {
  std::string csv, json, table, daily_csv;
};

// The files and table of `levels` (increasing bps). `measure` says in costs.json what the
// figures are (e.g. the note on a portfolio's P&L columns); "" for one evaluation.
CostSweep FormatCostSweep(const std::vector<CostLevel>& levels, const std::string& measure = "");

// The terminal line of the break-even cost.
std::string BreakEvenText(const std::vector<CostLevel>& levels);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_COST_SWEEP_H_
