// rltrade evalrun: `rltrade eval RUN` on a multi-seed run (train/seeds.h).
//
// RunSeedsEvaluation() evaluates every seed's run (RunEvaluation on RUN/seed_<seed>, which
// writes RUN/seed_<seed>/eval/<name>/ as for any run) and writes the result across seeds to
// RUN/eval/<name>/ (staged and renamed; <name> as the seeds' own output directories):
//   summary.json   {"run_dir", "range", "in_sample", "policy",
//                   "seeds": N, "runs": [{"seed", "eval_dir", "metrics"}],
//                   "across_seeds": {metric: {"mean", "std" (sample, n − 1; null for one
//                                    seed), "min", "max"}} for every metric of the seeds'
//                                    summaries,
//                   "metrics": {return metrics of the seed-averaged daily returns: the
//                               equal-weight portfolio of the N seeds' strategies},
//                   "psr": PSR of the seed-averaged daily returns (against 0),
//                   "deflated_sharpe": DSR of the best seed's Sharpe ratio given `trials`
//                                      trials (default N) and the variance of the seeds'
//                                      Sharpe ratios (eval::DeflatedSharpeRatio),
//                   "deflated_sharpe_detail": {"trials", "best_seed", "sharpe_ratio" (its
//                                      annualised SR), "sr0_annualised", "observations",
//                                      "skewness", "kurtosis"},
//                   "benchmarks": {"flat", "buy_and_hold"} (the same for every seed),
//                   "periods_per_year": the seeds' (they evaluated the same data),
//                   "significance": the seed-averaged daily returns against the benchmarks
//                                   (eval::SignificanceJson)}
//                  (NaN -> null). Episodic envs (cartpole, pendulum) have no daily returns:
//                  across_seeds of mean_return / std_return only, no metrics/psr/DSR.
//   daily_returns.csv  date,return,buy_and_hold,flat — the seed average (eval/outputs.h)
//   seeds_daily_returns.csv  date,seed_<s>,... — every seed's daily return
//   report.html    the across-seed table, the DSR, and every seed's equity curve with the
//                  seed average and the benchmarks (eval::WriteSeedsReport)
// The ENSEMBLE of the seeds (evalrun/ensemble.h) is evaluated as its own policy beside them,
// first, so a method that does not fit the actions is refused before anything is written
// (--policy trained; every environment but options, episodic ones over the seeds'
// episodes: "ensemble" then has mean_return, std_return, episodes and no daily returns
// file): RunEnsembleEvaluation writes its full evaluation to
// RUN/eval/<name>.ensemble-<method>/ (summary.json with "ensemble", equity.csv,
// daily_returns.csv, trades.csv, report.html; costs.csv/costs.json with --costs, which then
// sweeps the ensemble only), and RUN/eval/<name>/ adds
//   summary.json "ensemble": {"method", "seeds", "eval_dir", "metrics", "psr", "fills",
//                             "pnl", "significance"}
//   ensemble_daily_returns.csv  date,return,buy_and_hold,flat — the ensemble's
// and the table a row per seed, the seed average and the ensemble.
//
// LibTorch-free. Not thread-safe (evaluation is not).
#ifndef RLT_EVALRUN_SEEDS_EVAL_H_
#define RLT_EVALRUN_SEEDS_EVAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "evalrun/evalrun.h"

namespace rlt::evalrun {

struct SeedsEvalRequest {
  EvalRequest eval;  // eval.run_dir: RUN holding seeds.json
  std::vector<uint64_t> seeds;
  int trials = 0;        // DSR trials; 0 = the number of seeds
  std::string ensemble;  // --ensemble: mean | median | vote; "" = the default for the actions
};

Result<EvalOutcome> RunSeedsEvaluation(const SeedsEvalRequest& request);

// The ensemble of request.seeds as one policy (request.eval as for one run; run_dir RUN),
// written to RUN/eval/<name>.ensemble-<method>/ under RUN's lock.
Result<EvalOutcome> RunEnsembleEvaluation(const SeedsEvalRequest& request);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_SEEDS_EVAL_H_
