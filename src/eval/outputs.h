// rltrade eval: the files an evaluation writes, as a contract between the backtest that
// writes them (`rltrade eval`) and the report that reads them (`rltrade report`).
//
// RUN_DIR/eval/<range>/ (written to a temporary directory, renamed when complete):
//   summary.json      {"run_dir", "range": {"name", "first", "last"}, "in_sample": bool,
//                      "policy": "trained"|"flat"|"buy-and-hold"|"rule:NAME",
//                      "periods_per_year": P (annualises the ratios; eval/significance.h),
//                      "metrics": {sharpe_ratio, sortino_ratio, downside_risk, annual_return,
//                                  annual_volatility, max_drawdown, max_drawdown_duration,
//                                  calmar_ratio, cum_returns_final, win_rate, observations,
//                                  psr, psr_observations, num_trades, average_trade_pnl,
//                                  profit_factor, turnover, exposure, costs_paid,
//                                  few_observations (bool: fewer than 30 sessions)},
//                      "pnl": {"strategy"|"flat"|"buy_and_hold": {net, costs, gross}}
//                                  (money; gross = net + costs),
//                      "benchmarks": {"flat": {same metric keys}, "buy_and_hold": {...}},
//                      "significance": {"test", "null_hypothesis", "resamples", "seed",
//                                  "confidence", "block_length_rule", "flat": {
//                                  sharpe_difference, p_value, ci_low, ci_high,
//                                  mean_block_length, observations, few_observations},
//                                  "buy_and_hold": {...}} (metrics_json.h),
//                      "settings": {key: value, ...}}   (NaN -> null)
//   equity.csv        per bar: timestamp,session_date,bar,close,position,cash,net_worth,
//                      buy_and_hold_net_worth
//   daily_returns.csv per session: date,return,buy_and_hold,flat
//   trades.csv        per fill: time,side,quantity,price,cost,position_after,cash_after
//                      (side BUY|SELL; flattening trades at the close included)
//   report.html       a single self-contained page (inline SVG, no network)
//   costs.csv         with `eval --costs`, per cost level: cost_bps,cost_rate,total_return,
//                      annual_return,sharpe_ratio,max_drawdown,turnover,costs_paid,net_pnl,
//                      gross_pnl,fills; costs.json the same levels and the break-even cost
// Timestamps are ISO 8601 with the exchange's UTC offset; dates YYYY-MM-DD.
#ifndef RLT_EVAL_OUTPUTS_H_
#define RLT_EVAL_OUTPUTS_H_

namespace rlt::eval {

inline constexpr const char* kSummaryFile = "summary.json";
inline constexpr const char* kEquityFile = "equity.csv";
inline constexpr const char* kDailyReturnsFile = "daily_returns.csv";
inline constexpr const char* kTradesFile = "trades.csv";
// `rltrade eval --costs`: one row per cost level, and the break-even cost.
inline constexpr const char* kCostsCsvFile = "costs.csv";
inline constexpr const char* kCostsJsonFile = "costs.json";
inline constexpr const char* kReportFile = "report.html";

inline constexpr const char* kEquityHeader =
    "timestamp,session_date,bar,close,position,cash,net_worth,buy_and_hold_net_worth";
inline constexpr const char* kDailyReturnsHeader = "date,return,buy_and_hold,flat";
inline constexpr const char* kTradesHeader =
    "time,side,quantity,price,cost,position_after,cash_after";

}  // namespace rlt::eval

#endif  // RLT_EVAL_OUTPUTS_H_
