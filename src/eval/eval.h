// rltrade eval: the manual of the evaluation subsystem.
//
// What it is: everything that turns a trained agent's behaviour into numbers a quant can
// trust. Today it holds the performance metrics (metrics.h) and the reader of returns
// files (returns_csv.h); later issues add the out-of-sample backtest (run a policy over
// held-out dates with the same environment and costs as training, refusing dates that
// overlap training unless asked and labelling such output in-sample) and reports (tables,
// JSON, equity curves) to this folder.
//
// What it is not: it does not train, price, or touch LibTorch. Target `rlt_eval` depends
// on rlt_core only, so the metrics are usable from any tool that has a vector of returns.
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
#include "eval/returns_csv.h"

#endif  // RLT_EVAL_EVAL_H_
