// rltrade evalrun: the cost table's files (see cost_sweep.h).
#include "evalrun/cost_sweep.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "eval/metrics_json.h"
#include "evalrun/backtest.h"
#include "evalrun/evalrun.h"

namespace rlt::evalrun {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kCostsCsvHeader =
    "cost_bps,cost_rate,total_return,annual_return,sharpe_ratio,max_drawdown,turnover,costs_paid,"
    "net_pnl,gross_pnl,fills";

BreakEven BreakEvenOf(const std::vector<CostLevel>& levels) {
  std::vector<double> bps, net;
  for (const CostLevel& l : levels) bps.push_back(l.bps), net.push_back(l.total_return);
  return BreakEvenCost(bps, net);
}

}  // namespace

std::string BreakEvenText(const std::vector<CostLevel>& levels) {
  const BreakEven b = BreakEvenOf(levels);
  const std::string what = "break-even cost (total net return crosses 0, linear interpolation)";
  if (b.kind == "crossed") return fmt::format("{}: {:.4g} bps\n", what, b.bps);
  if (b.kind == "above_largest") {
    return fmt::format("{}: above the largest level ({:g} bps): positive at every level\n", what,
                       levels.back().bps);
  }
  if (levels.front().bps == 0) return what + ": below 0 bps: not positive even without costs\n";
  return fmt::format("{}: at or below the smallest level ({:g} bps): not positive there\n", what,
                     levels.front().bps);
}

CostSweep FormatCostSweep(const std::vector<CostLevel>& levels, const std::string& measure) {
  CostSweep out;
  out.csv = std::string(kCostsCsvHeader) + "\n";
  out.table = fmt::format("{:>10} {:>12} {:>12} {:>8} {:>12} {:>10} {:>12} {:>14} {:>14} {:>6}\n",
                          "cost (bps)", "total return", "annual ret.", "Sharpe", "max drawdown",
                          "turnover", "costs paid", "net P&L", "gross P&L", "fills");
  Json rows = Json::array();
  for (const CostLevel& l : levels) {
    const double rate = l.bps / 10000.0;
    const double gross = l.net_pnl + l.costs_paid;
    Json row;
    row["cost_bps"] = l.bps;
    row["cost_rate"] = rate;
    row["cum_returns_final"] = l.total_return;
    row["annual_return"] = l.annual_return;
    row["sharpe_ratio"] = l.sharpe_ratio;
    row["max_drawdown"] = l.max_drawdown;
    row["turnover"] = l.turnover;
    row["costs_paid"] = l.costs_paid;
    row["pnl"] = {{"net", l.net_pnl}, {"costs", l.costs_paid}, {"gross", gross}};
    row["fills"] = l.fills;
    rows.push_back(row);
    out.csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", Num(l.bps), Num(rate),
                           Num(l.total_return), Num(l.annual_return), Num(l.sharpe_ratio),
                           Num(l.max_drawdown), Num(l.turnover), Num(l.costs_paid), Num(l.net_pnl),
                           Num(gross), l.fills);
    out.table += fmt::format(
        "{:>10g} {:>11.4f}% {:>11.4f}% {:>8.3f} {:>11.4f}% {:>10.4g} {:>12.2f} {:>14.2f} "
        "{:>14.2f} {:>6}\n",
        l.bps, 100 * l.total_return, 100 * l.annual_return, l.sharpe_ratio, 100 * l.max_drawdown,
        l.turnover, l.costs_paid, l.net_pnl, gross, l.fills);
  }
  const BreakEven be = BreakEvenOf(levels);
  Json j;
  j["measure"] = "total net return over the range (metrics.cum_returns_final)";
  if (!measure.empty()) j["portfolio"] = measure;
  j["cost_rate"] = "cost_bps / 10000; the other [env] keys as the run's or --set";
  j["levels"] = rows;
  j["break_even"] = {{"result", be.kind},
                     {"bps", be.bps},
                     {"rule",
                      "linear interpolation between the two levels that bracket the first "
                      "change from > 0 to <= 0"}};
  eval::NullNonFinite(j);
  out.json = JsonText(j, 2) + "\n";
  out.table = "Net return by cost level (cost_rate = bps / 10,000; one walk per level)\n" +
              out.table + BreakEvenText(levels);
  return out;
}

}  // namespace rlt::evalrun
