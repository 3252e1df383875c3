// rltrade train: selection of a checkpoint on [split] validation (or, for episodic envs, on
// the evaluation episodes), never on [split] test.
//
// With [run] eval_every > 0 every periodic evaluation (train_options.h EvalEnvSetup) gives a
// score: the value of [run] select_metric on that evaluation. Every metric is better when
// higher (max_drawdown is the signed drawdown, <= 0, so higher is shallower); a score that
// is not finite (the Sharpe ratio of a policy that never trades) never counts as an
// improvement. An evaluation whose score exceeds the best so far (strictly: a tie keeps the
// earlier checkpoint) is an improvement: the training loop then writes the checkpoint
// RUN/best/ (runlog/run_dir.h). [run] patience > 0 stops training after that many
// evaluations in a row without an improvement (final/ is still written); the count starts
// with the first finite score, so a policy that has not traded yet is never stopped.
//
// Market envs (intraday, options): the evaluation walks [split] validation once; its
// session returns (learn::EvalStats::session_returns) give sharpe_ratio (the default),
// sortino_ratio, total_return, annual_return, calmar_ratio and max_drawdown, with
// eval/metrics.h's definitions (252 sessions a year), the same numbers `rltrade eval
// --range validation` prints for that checkpoint. Every env: episode_return, the mean
// unnormalised episode return of the evaluation (eval/mean_reward); episodic envs (cartpole,
// pendulum, ...) have only that one, and a config that leaves select_metric at its default
// selects on it there.
//
// The record (Selection) is JSON: RUN/selection.json (the run so far), and a copy inside
// every checkpoint as it stood when the checkpoint was written, which is what --resume
// continues from (so the best score and the patience count are those of the resumed step).
#ifndef RLT_TRAIN_SELECTION_H_
#define RLT_TRAIN_SELECTION_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "learn/evaluate.h"
#include "train/train_options.h"

namespace rlt::train {

// The metrics [run] select_metric accepts, and the market-only ones among them.
inline constexpr const char* kDefaultSelectMetric = "sharpe_ratio";
inline constexpr const char* kEpisodeReturnMetric = "episode_return";
const std::vector<std::string>& MarketSelectMetrics();

// The select_metric a run uses: run.select_metric, except that an episodic env (`market`
// false) whose config does not set the key selects on episode_return. Errors (naming the
// key's file:line): a market-only metric set for an episodic env; patience < 0; patience > 0
// with eval_every = 0.
Result<std::string> ResolveSelectMetric(const config::Config& config, const RunOptions& run,
                                        bool market);

// The score of one evaluation under `metric` (NaN when undefined).
double SelectionScore(const std::string& metric, const learn::EvalStats& stats);
// The annualised Sharpe ratio of the evaluation's sessions (NaN for episodic envs).
double ValidationSharpe(const learn::EvalStats& stats);

struct SelectionPoint {
  int64_t step = 0;
  double score = NAN;
  double sharpe_ratio = NAN;  // annualised; NaN for episodic envs
};

struct Selection {
  std::string metric;
  int64_t best_step = -1;  // -1: no finite score yet
  double best_score = NAN;
  int64_t since_best = 0;             // evaluations since the best one (0 until a finite score)
  std::vector<SelectionPoint> curve;  // every evaluation, in order

  bool has_best() const { return best_step >= 0; }
  int64_t evaluations() const { return static_cast<int64_t>(curve.size()); }
  // Records an evaluation; true when it improves on the best score.
  bool Observe(int64_t step, double score, double sharpe_ratio);
  // True when `patience` > 0 evaluations in a row have not improved.
  bool Exhausted(int patience) const { return patience > 0 && since_best >= patience; }
  // Why training stopped early (for the console and status.json).
  std::string StopReason(int patience) const;
  // The sample variance of the curve's per-session Sharpe ratios (annualised / sqrt(252)),
  // finite ones only; NaN with fewer than two.
  double SharpeVariancePerPeriod() const;

  std::string ToJson() const;
  // `origin` names the file in errors.
  static Result<Selection> FromJson(const std::string& text, const std::string& origin);
  // RUN/selection.json or a checkpoint's copy; NotFound when `dir` has none.
  static Result<Selection> Read(const std::string& dir);
};

}  // namespace rlt::train

#endif  // RLT_TRAIN_SELECTION_H_
