// rltrade evalrun: `rltrade walkforward` as a library call — K train/test folds over a
// config's sessions, each a normal run directory, and their out-of-sample returns
// concatenated.
//
// Windows (over the S session dates of the config's market data, train::SessionDates):
//  - the first train window has N sessions (train_days; default S / 2, rounded down);
//  - test windows have M sessions each (test_days; default (S − N) / K, rounded down) and
//    follow one another: fold k (k = 1..K) tests sessions [N + (k−1)·M, N + k·M);
//  - fold k trains on every session before its test window (expanding, the default) or
//    on the last N sessions before it (rolling; needs train_days).
//  Sessions after the last test window (when (S − N) is not a multiple of K) are unused.
//  K < 1, N < 1, M < 1 or N + K·M > S is an error naming S and what was asked, before
//  anything is written.
//
// Folds are numbered 1..K everywhere: directories, summary.json "fold", the fold column of
// the CSV files, notes and the printed "fold k/K" (FoldWindow vectors stay 0-based:
// windows[k − 1] is fold k).
// Each fold is OUT/fold_<k>/, trained by train::RunTraining with the config, the caller's
// overrides and `split.train=...`, `split.test=...`; a [split] validation range that
// overlaps the fold's train or test window is removed (the fold then trains from
// OUT/fold_<k>.config.toml, the config without it), and run.eval_every > 0 with a
// validation range becomes run.eval_every = 0 (both reported in `notes`). Each fold is
// then evaluated on its test range (evalrun::RunEvaluation, RUN_DIR/eval/test/).
//
// OUT/walkforward/ (staged and renamed, runlog::StagingDir):
//   summary.json       {"config", "mode": "expanding"|"rolling", "sessions", "train_days",
//                       "test_days", "num_folds", "notes": [...],
//                       "range": {"first", "last"} (the concatenated out-of-sample dates),
//                       "periods_per_year": eval::PeriodsPerYearOf the config's sessions,
//                       "metrics": {return metrics of the concatenated strategy series},
//                       "benchmarks": {"flat": {...}, "buy_and_hold": {...}},
//                       "significance": {the concatenated series against the benchmarks},
//                       "folds": [{"fold", "run_dir", "train": {"first", "last",
//                                  "sessions"}, "test": {...}, "metrics": {the fold's
//                                  eval summary metrics}, "benchmarks": {...},
//                                  "significance": {...}}]} (NaN -> null)
//                      Return metrics are eval::ComputeReturnMetrics: sharpe_ratio,
//                      sortino_ratio, downside_risk, annual_return, annual_volatility,
//                      max_drawdown, max_drawdown_duration, calmar_ratio,
//                      cum_returns_final, win_rate, observations, psr, psr_observations.
//   daily_returns.csv  date,return,buy_and_hold,flat,fold — the folds' daily_returns.csv
//                      rows in time order (cells copied verbatim)
//   equity.csv         date,net_worth,buy_and_hold,fold — growth of 1 compounded from the
//                      daily returns (a NaN return counts as 0 %, as in the metrics)
//   report.html        the concatenated out-of-sample result (eval::WriteWalkforwardReport):
//                      metrics against flat and buy-and-hold, the growth of 1 with each
//                      fold's test window shaded and labelled "fold k", and a per-fold table
//
// This header is LibTorch-free. Not thread-safe (training and evaluation are not).
#ifndef RLT_EVALRUN_WALKFORWARD_H_
#define RLT_EVALRUN_WALKFORWARD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::evalrun {

inline constexpr const char* kWalkforwardDailyHeader = "date,return,buy_and_hold,flat,fold";
inline constexpr const char* kWalkforwardEquityHeader = "date,net_worth,buy_and_hold,fold";

struct WalkforwardRequest {
  std::string config_path;             // CONFIG.toml
  std::vector<std::string> overrides;  // "section.key=value", applied to every fold
  int folds = 0;                       // K >= 1
  int train_days = 0;                  // N; 0 = half of the sessions
  int test_days = 0;                   // M; 0 = the rest split evenly into K windows
  bool rolling = false;                // train on the last N sessions (needs train_days)
  std::string out_dir;                 // "" = runs/<config stem>-walkforward-<UTC time>
  bool quiet = false;                  // no training progress / fold messages
  // Seeds per fold (train/seeds.h): 0 = the config's [run] seeds (default 1). With N > 1
  // each fold is a multi-seed run OUT/fold_<k>/seed_<seed>/ trained by child processes of
  // `executable` (the rltrade binary), evaluated across seeds (evalrun/seeds_eval.h), and
  // the concatenated series is the seed average's; each fold's entry gains
  // "across_seeds" and "deflated_sharpe", and summary.json "seeds".
  int seeds = 0;
  std::string executable;
  // With seeds > 1 each fold's ensemble of its seeds (evalrun/ensemble.h; --ensemble: mean |
  // median | vote, "" = the default for the action mode) is evaluated beside the seed
  // average: each fold's entry gains "ensemble" {"method", "eval_dir", "metrics",
  // "significance"}, summary.json "ensemble" {"method", "metrics", "significance"} of the
  // folds' ensembles' daily returns concatenated, written to
  // OUT/walkforward/ensemble_daily_returns.csv (date,return,buy_and_hold,flat,fold).
  std::string ensemble;
};

// One fold's windows, as session indices [begin, end) and dates (yyyymmdd).
struct FoldWindow {
  int train_begin = 0, train_end = 0;
  int test_begin = 0, test_end = 0;
  int32_t train_first = 0, train_last = 0;
  int32_t test_first = 0, test_last = 0;
};

// The windows of K folds over `sessions` (see above). Errors name S and what was asked.
Result<std::vector<FoldWindow>> PlanFolds(const std::vector<int32_t>& sessions, int folds,
                                          int train_days, int test_days, bool rolling);

struct WalkforwardOutcome {
  std::string out_dir;                 // OUT
  std::string summary_dir;             // OUT/walkforward
  std::vector<std::string> fold_dirs;  // OUT/fold_1 .. OUT/fold_K
  std::vector<FoldWindow> windows;
  std::vector<std::string> notes;  // changes made to the config for the folds
  std::string summary_json;        // the bytes of summary.json
  std::string table;               // human-readable summary for the terminal
  // 0 done; 130 / 143 when a fold's training was interrupted by SIGINT / SIGTERM (the
  // walk-forward stops there; OUT/walkforward is not written).
  int exit_code = 0;
};

Result<WalkforwardOutcome> RunWalkforward(const WalkforwardRequest& request);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_WALKFORWARD_H_
