// rltrade mine: rank candidate signals on the training range without look-ahead.
//
// What it is: the engine behind `rltrade mine` (docs/mining.md). Candidates come in as
// plain data — per symbol its Bars (sessions assigned) and one column of values per
// candidate, NaN where undefined — so the engine does not know where they came from.
//
// The rule, for one signal x and a sign s = ±1, with thresholds q_lo <= q_hi:
//   at the close of bar t: raw_t = +1 if x_t <= q_lo, −1 if x_t >= q_hi, else 0 (0 when both
//   hold, and 0 when x_t is NaN); the position s·raw_t is entered at bar t+1's open and
//   held for one bar; every position is flat at each session's close (the last bar's
//   decision is not traded). A position held over bar j earns o_{j+1}/o_j − 1, on the
//   session's last bar c_j/o_j − 1 (unit notional), less cost_rate × |change of position|
//   at every change, the flatten at the close included. A session's P&L is the sum over
//   its bars. The thresholds are the lower_q and upper_q quantiles (linear interpolation
//   between order statistics, numpy's default) of x over every bar of the fitting
//   sessions where x is finite.
//
// Scoring: the training sessions of every symbol are pooled as (symbol, session) units.
// The training dates are split into `folds` contiguous blocks (a date's units of every
// symbol are in the same block); for each block the thresholds are fitted on the other
// training dates minus the `embargo` dates right after the block, and the block's score is
// the mean (or per-unit Sharpe) of its units' P&L. Purging removes nothing more: every
// position is flat at each session's close, so no trade of one unit overlaps another. The
// CV score is the mean of the block scores; of the two signs the better one is kept
// (ties: +1). Signals are ranked by CV score; a greedy filter walks the ranking and drops a
// signal whose |Pearson correlation| (training bars where both are finite) with an already
// kept one exceeds max_corr; it joins the cluster of the first such kept signal. Final
// thresholds are fitted on the whole training range; the kept signals' training P&L is
// tested with the Deflated Sharpe Ratio (mine/dsr.h).
//
// Thread safety: pure functions of their arguments.
#ifndef RLT_MINE_MINE_H_
#define RLT_MINE_MINE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "market/bars.h"
#include "market/date_range.h"

namespace rlt::mine {

struct MineOptions {
  double lower_q = 0.3;         // quantile of the long threshold, 0 < lower_q < upper_q < 1
  double upper_q = 0.7;         // quantile of the short threshold
  double cost_rate = 0.0005;    // proportional cost per unit of position change
  int folds = 5;                // contiguous blocks of training dates, >= 2
  int embargo = 1;              // training dates after a block left out of its fit, >= 0
  std::string metric = "mean";  // "mean" daily P&L or per-day "sharpe"
  double max_corr = 0.95;       // correlation filter, in (0, 1]
  double dsr_threshold = 0.95;  // a kept signal survives at DSR >= this, in (0, 1)
  int threads = 1;              // signals scored on this many threads (results do not depend on it)
  // Simulated-annealing tuning of the rule (docs/mining.md "Tuning"): the `tune_top` best
  // kept signals get their quantiles, smoothing and strength tuned on the training folds'
  // CV score; every configuration evaluated counts as a trial in the deflation. 0 = off.
  int tune_top = 0;
  int tune_iterations = 200;  // evaluations per tuned signal, >= 1
  uint64_t tune_seed = 1;
  market::DateRange train;  // required (bounded or not)
  bool has_validation = false;
  market::DateRange validation;  // when has_validation
  // How messages name a key ("lower_q" -> "--lower-q"); a key not listed is named as is.
  std::map<std::string, std::string> key_names;
  std::string Key(const std::string& key) const {
    const auto it = key_names.find(key);
    return it == key_names.end() ? key : it->second;
  }
};

// Checks the options' ranges; messages name the key (MineOptions::Key).
Status ValidateMineOptions(const MineOptions& options);

// One symbol: its bars and the candidates' values on them, values[signal][bar].
struct SymbolColumns {
  const market::Bars* bars = nullptr;
  std::vector<std::vector<double>> values;
};

struct MineInput {
  std::vector<std::string> names;  // one per candidate
  std::vector<uint8_t> regime;     // 1 for a binary / small-integer regime flag
  std::vector<SymbolColumns> symbols;
  // The user named the candidates: a constant one is an error instead of being excluded.
  bool named = false;
};

struct SignalResult {
  std::string name;
  bool regime = false;
  bool constant = false;  // constant (or never finite) on the training range: excluded
  int sign = 1;
  double cv_score = 0;                      // of the chosen sign
  double cv_score_other = 0;                // of the other sign
  std::vector<double> fold_scores;          // of the chosen sign, one per fold
  double q_lo = 0, q_hi = 0;                // final thresholds (whole training range)
  double train_mean = 0, train_sharpe = 0;  // per-unit P&L, chosen sign, final thresholds
  int rank = 0;                             // 1-based among non-constant signals; 0 if constant
  bool kept = false;
  std::string cluster;      // the kept signal it correlates with ("" if kept)
  double cluster_corr = 0;  // |corr| with that signal
  double dsr = 0, sr0 = 0;  // Deflated Sharpe Ratio of the training P&L
  // Tuning (MineOptions::tune_top): the rule's parameters found on the training folds,
  // their CV score, the evaluations made, the training Sharpe and DSR with them.
  bool tuned = false;
  double tuned_lower_q = 0, tuned_upper_q = 0;
  int tuned_smoothing = 1, tuned_strength = 1;
  double tuned_cv_score = 0, tuned_train_sharpe = 0, tuned_dsr = 0;
  int64_t tune_evaluations = 0;
  // Validation out of sample (NaN without a validation range).
  double val_mean = 0, val_sharpe = 0, val_total = 0;
  int64_t val_units = 0;
};

struct MineResult {
  std::vector<SignalResult> signals;           // input order
  std::vector<int> ranked;                     // indices of non-constant signals, best first
  std::vector<int> kept;                       // indices of kept signals, best first
  std::vector<std::vector<double>> kept_corr;  // (kept, kept) Pearson correlations
  std::vector<int32_t> fold_first, fold_last;  // each fold's first and last date
  int64_t train_dates = 0, train_units = 0, validation_units = 0;
  int64_t trials = 0;               // N: (signal, sign) pairs tried, plus tuning's evaluations
  double sharpe_variance = 0;       // variance of their per-unit Sharpe ratios (reported)
  double null_sharpe_variance = 0;  // V: a skill-less trial's, 1 / (T − 1) (dsr.h)
  double sr0 = 0;                   // expected maximum Sharpe of N skill-less trials
  int survivors = 0;                // kept signals with DSR >= dsr_threshold
  double expected_false = 0;        // expected false discoveries under the null (see .cc)
};

Result<MineResult> Mine(const MineInput& input, const MineOptions& options);

// ---- building blocks (exposed for the tests) ----

// Fold f (0-based) of `folds` over n_dates sorted training dates holds the date indices
// [FoldBegin(f), FoldBegin(f + 1)), FoldBegin(f) = f · n_dates / folds (integer division).
int64_t FoldBegin(int64_t n_dates, int folds, int f);
// Whether fold f's thresholds are fitted on date index d: d is outside the fold and not
// one of the `embargo` dates right after it.
bool FitsOn(int64_t d, int64_t n_dates, int folds, int f, int embargo);

// The q-quantile of values[0..n) by linear interpolation; reorders `values`. NaN for n = 0.
double Quantile(double* values, int64_t n, double q);

// Both thresholds at once (q_lo < q_hi): the same values as two Quantile calls, with the
// lower one searched only among the values below the upper one. Reorders `values`.
void Quantiles(double* values, int64_t n, double q_lo, double q_hi, double* lo, double* hi);

// The rule's P&L of one session [begin, end) of `bars` for sign +1 as gross and cost
// parts: the session's P&L for sign s is s·gross − cost.
struct UnitPnl {
  double gross = 0, cost = 0;
};
UnitPnl SessionPnl(const market::Bars& bars, const double* x, int32_t begin, int32_t end,
                   double q_lo, double q_hi, double cost_rate);

// The rule with tuning's parameters: x is first smoothed by an EMA of span `smoothing`
// (α = 2/(span + 1), from the first finite value on; 1 = x itself), and a side is taken
// only when the smoothed signal has been beyond its threshold for `strength` bars in a row
// within the session (1 = the plain rule).
struct RuleParams {
  double lower_q = 0.3, upper_q = 0.7;
  int smoothing = 1, strength = 1;
};
std::vector<double> SmoothSignal(const std::vector<double>& x, int span);
UnitPnl RuleSessionPnl(const market::Bars& bars, const double* x, int32_t begin, int32_t end,
                       double q_lo, double q_hi, int strength, double cost_rate);

// Pearson correlation of x and y over the indices where both are finite; NaN with fewer
// than 2 such indices or zero variance.
double PairwiseCorrelation(const double* x, const double* y, int64_t n);

}  // namespace rlt::mine

#endif  // RLT_MINE_MINE_H_
