// rltrade eval: the manual of the evaluation subsystem.
//
// What it is: everything that turns a trained agent's behaviour into numbers a quant can
// trust, computed from files and return series:
//   metrics.h       return-series metrics (empyrical definitions), trade metrics, PSR
//   metrics_table.h the one table of every reported metric (JSON key, label, kind): the
//                   JSON files, the report and `rltrade metrics` all iterate it
//   metrics_json.h  metrics as JSON, written from that table, and the significance block
//   significance.h  did the policy beat a benchmark: the paired stationary bootstrap of a
//                   Sharpe difference, its block length, periods per year of a series of
//                   session dates, the few-observations flag
//   console_table.h the terminal tables: the policy beside the benchmarks
//   returns_csv.h   the reader of per-period returns files (`rltrade metrics --returns`)
//   outputs.h       the files an evaluation directory holds (summary.json, equity.csv,
//                   daily_returns.csv, trades.csv, report.html): the contract between the
//                   backtest that writes them and the report that reads them
//   report.h        the self-contained HTML report of an evaluation directory
// The backtest itself (walking held-out sessions with a trained policy in the training
// environment, refusing in-sample ranges) lives one layer up in evalrun/, because it needs
// the environments and the learner; this folder only sees its outputs.
//
// What it is not: it does not train, step environments, price, or touch LibTorch. Target
// `rlt_eval` depends on rlt_core (and runlog for atomic writes), so the metrics are usable
// from any tool that has a vector of returns.
//
// Conventions (metrics.h has the details):
//  - Input is a series of per-period simple returns (fractions: 0.01 = +1 %), one per
//    session for daily data. NaN marks a missing period.
//  - Definitions follow empyrical (quantopian/empyrical, empyrical/stats.py) exactly,
//    including its edge cases (empty input, fewer than two rows, zero deviation), and
//    are tested against its published values (tests/fixtures/empyrical_mixed.csv).
//  - Nothing here fails on data: metrics that are undefined come back as NaN (or ±inf
//    where empyrical gives ±inf). Bad files are reported through Status with file:line.
//
// Example:
//   std::vector<double> daily = ...;
//   rlt::eval::ReturnMetrics m = rlt::eval::ComputeReturnMetrics(daily);
//   std::printf("Sharpe %.2f, max drawdown %.1f%%, PSR %.3f\n",
//               m.sharpe_ratio, 100 * m.max_drawdown, m.psr);
#ifndef RLT_EVAL_EVAL_H_
#define RLT_EVAL_EVAL_H_

#include "eval/metrics.h"
#include "eval/metrics_table.h"
#include "eval/returns_csv.h"

#endif  // RLT_EVAL_EVAL_H_
