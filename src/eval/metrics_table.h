// rltrade eval: the one table of every metric an evaluation reports.
//
// Each row names a metric once: its JSON key (a contract: summary.json, `rltrade metrics
// --json`), the label the HTML report shows, a short note for the terminal table, how to
// format it, and how to read its value from a StrategyMetrics. The JSON writers
// (metrics_json.h), the report's metrics table (report.cc) and `rltrade metrics` all
// iterate this table, so adding a metric is one row here plus its computation.
//
// Rows marked `from_returns` depend only on the return series (ReturnMetrics) and are all
// that `rltrade metrics` and walk-forward summaries have; the others need the backtest's
// trades and positions.
#ifndef RLT_EVAL_METRICS_TABLE_H_
#define RLT_EVAL_METRICS_TABLE_H_

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "eval/metrics.h"

namespace rlt::eval {

// Everything a backtest's metrics are computed from, computed once.
struct StrategyMetrics {
  ReturnMetrics returns{};
  TradeMetrics trades{};  // over round trips (flat -> flat); zero trades when unknown
  double turnover = std::numeric_limits<double>::quiet_NaN();
  double exposure = std::numeric_limits<double>::quiet_NaN();
  double costs_paid = std::numeric_limits<double>::quiet_NaN();
};

// session_returns: one simple return per session; round_trip_pnls: PnL of each closed
// round trip; exposures: position as a fraction of equity per bar; costs_paid: total.
StrategyMetrics ComputeStrategyMetrics(std::span<const double> session_returns,
                                       std::span<const double> round_trip_pnls,
                                       std::span<const double> exposures, double costs_paid,
                                       const MetricsOptions& options = {});

enum class MetricKind {
  kRatio,    // a plain number (4 decimals)
  kPercent,  // a fraction shown as a percentage
  kInteger,  // a count; written to JSON as an integer
  kMoney,    // an amount in the account currency
};

struct MetricInfo {
  const char* key;    // JSON key, e.g. "sharpe_ratio"
  const char* label;  // report label, e.g. "Sharpe ratio"
  const char* note;   // terminal note, e.g. "annualised, sample std" ("" for none)
  MetricKind kind;
  bool from_returns;  // depends on the return series only
  double (*value)(const StrategyMetrics&);
};

// Every metric, in the order the JSON files and tables list them.
const std::vector<MetricInfo>& MetricTable();

}  // namespace rlt::eval

#endif  // RLT_EVAL_METRICS_TABLE_H_
