// rltrade evalrun: `rltrade eval RUN` on a run of several symbols ([data] symbols: one policy
// trained on several symbols, each traded on its own).
//
// RunSymbolsEvaluation() evaluates the policy on every symbol of the run in turn (one
// evaluation per symbol, written to RUN/eval/<name>.symbol-<SYMBOL>/ as any evaluation of
// one symbol, `eval --symbol SYMBOL` alone) and writes the equal-weight portfolio of the
// symbols' daily returns to RUN/eval/<name>/ (staged and renamed):
//   summary.json   {"run_dir", "range", "in_sample", "policy", "portfolio": "equal_weight",
//                   "symbols": [{"symbol", "eval_dir", "metrics", "benchmarks"}],
//                   "metrics": return metrics of the portfolio's daily returns,
//                   "psr": its probabilistic Sharpe ratio (against 0),
//                   "benchmarks": {"flat", "buy_and_hold"}: the same portfolio of each
//                                 symbol's benchmark,
//                   "significance": the portfolio against the benchmarks
//                                   (eval::SignificanceJson),
//                   "periods_per_year"}   (NaN -> null)
//   daily_returns.csv          date,return,buy_and_hold,flat — the portfolio
//   symbols_daily_returns.csv  date,<symbol>,... — every symbol's daily return (empty
//                              where the symbol has no session that day)
// The portfolio holds 1/N of its capital in each symbol's strategy, rebalanced daily: its
// return on a date is the mean of the returns of the symbols that have a session that
// date (a symbol without one, e.g. suspended, is left out of that day's mean).
//
// LibTorch-free. Not thread-safe (evaluation is not).
#ifndef RLT_EVALRUN_SYMBOLS_EVAL_H_
#define RLT_EVALRUN_SYMBOLS_EVAL_H_

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "evalrun/evalrun.h"

namespace rlt::evalrun {

// Evaluates one symbol (request.symbol set): RunEvaluation or a custom policy's.
using EvaluateOne = std::function<Result<EvalOutcome>(const EvalRequest&)>;

// REQUIRES: symbols.size() >= 2; request.symbol empty.
Result<EvalOutcome> RunSymbolsEvaluation(const EvalRequest& request,
                                         const std::vector<std::string>& symbols,
                                         const EvaluateOne& evaluate_one);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_SYMBOLS_EVAL_H_
