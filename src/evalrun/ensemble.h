// rltrade evalrun: seed ensembles — the seeds of a multi-seed run (train/seeds.h) acting
// as one policy.
//
// A run trained with `--seeds N` is one model: eval, signal, paper, walkforward and the
// Python evaluate() act with the ENSEMBLE of its seeds unless `--seed S` picks one. Each
// step, every seed's policy (learn::PolicyRunner: its own observation statistics and, for
// recurrent policies, its own state) takes its deterministic action for the same
// observation; each action is clipped to the action space (Box bounds; a discrete index
// to [0, n)), and ActionCombiner combines them (--ensemble):
//   mean    element-wise mean of the clipped actions (accumulated in double, so N copies
//           of one action give that action exactly);
//   median  element-wise median (even N: the mean of the two middle values);
//   vote    plurality of the seeds' DECISIONS; the output is the element-wise mean of the
//           actions of the seeds that voted for the winning decision. A decision is
//             target_position (intraday): the sign of the target exposure a[0]: long when
//               a[0] > kTargetFlatBand, short when a[0] < -kTargetFlatBand, else flat;
//             original (intraday; a[0] type, a[1] amount): BUY when a[0] >= [env]
//               buy_threshold, SELL when a[0] <= sell_threshold, else HOLD;
//             discrete actions (cartpole, ...): the action index itself.
//           A tie between decisions gives the neutral action: target_position a[0] = 0
//           (flat); original a[0] = (buy_threshold + sell_threshold) / 2 (0 for the
//           default symmetric thresholds, always inside the hold band) and a[1] the mean
//           amount of the seeds of the tied decisions; a discrete action space has no
//           neutral action, so a tie gives the smallest tied index.
// Defaults (DefaultEnsembleMethod): vote for original mode (averaging a[0] across seeds
// would fabricate decisions no seed took) and for discrete actions; mean otherwise.
// Refused (naming --ensemble and what to use): mean or median of discrete actions (an
// average of action indices is no action), vote of continuous actions without decisions
// (pendulum, the options environment).
//
// EnsembleRunner: the N checkpoints loaded and combined; one Act per step.
// Not thread-safe.
#ifndef RLT_EVALRUN_ENSEMBLE_H_
#define RLT_EVALRUN_ENSEMBLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "env/env.h"

namespace rlt::learn {
class PolicyRunner;
}  // namespace rlt::learn

namespace rlt::evalrun {

// target_position: |a[0]| <= this is flat (no side) for the vote.
inline constexpr double kTargetFlatBand = 0.05;

enum class EnsembleMethod { kMean, kMedian, kVote };

// "mean" | "median" | "vote"; anything else: InvalidArgument naming --ensemble.
Result<EnsembleMethod> ParseEnsembleMethod(const std::string& text);
const char* EnsembleMethodName(EnsembleMethod method);

// What the combiner needs to know about the actions.
struct EnsembleActions {
  std::string action_mode;  // intraday: "target_position" | "original"; other envs ""
  bool discrete = false;
  int dim = 1;                   // floats per action
  int n = 0;                     // discrete: number of actions
  std::vector<float> low, high;  // Box: (dim)
  double buy_threshold = 0.3;    // original mode
  double sell_threshold = -0.3;  // original mode
};

// `space` with the intraday env's action_mode and thresholds ("" and unused otherwise).
EnsembleActions EnsembleActionsOf(const env::ActionSpace& space, const std::string& action_mode,
                                  double buy_threshold, double sell_threshold);

EnsembleMethod DefaultEnsembleMethod(const EnsembleActions& actions);
// Whether `method` makes sense for `actions`; Refused naming --ensemble and what to use.
Status CheckEnsembleMethod(EnsembleMethod method, const EnsembleActions& actions);

class ActionCombiner {
 public:
  // REQUIRES: CheckEnsembleMethod(method, actions).ok().
  ActionCombiner(EnsembleMethod method, EnsembleActions actions);
  // The decision of one (clipped) action for the vote: target_position -1 / 0 / +1 (short,
  // flat, long); original -1 / 0 / +1 (SELL, HOLD, BUY); discrete the index.
  int Decision(const float* action) const;
  // Clips `action` (dim) to the action space in place.
  void Clip(float* action) const;
  // actions: (n_seeds, dim), clipped in place; out: (dim).
  void Combine(float* actions, int n_seeds, float* out) const;
  EnsembleMethod method() const { return method_; }
  const EnsembleActions& actions() const { return actions_; }

 private:
  EnsembleMethod method_;
  EnsembleActions actions_;
};

// The N seeds' policies acting as one.
class EnsembleRunner {
 public:
  // Loads every checkpoint for an env with `obs_dim`. REQUIRES: checkpoints not empty.
  static Result<std::unique_ptr<EnsembleRunner>> Load(const std::vector<std::string>& checkpoints,
                                                      int obs_dim, const ActionCombiner& combiner);
  ~EnsembleRunner();
  EnsembleRunner(const EnsembleRunner&) = delete;
  EnsembleRunner& operator=(const EnsembleRunner&) = delete;

  // One observation (obs_dim) -> the combined action (dim); `per_seed` (n_seeds, dim)
  // receives every seed's clipped action when not null.
  void Act(const float* obs, float* action, std::vector<float>* per_seed = nullptr);
  void ResetState();
  bool recurrent() const;
  int seeds() const { return static_cast<int>(runners_.size()); }
  const ActionCombiner& combiner() const { return combiner_; }

 private:
  EnsembleRunner(std::vector<std::unique_ptr<learn::PolicyRunner>> runners,
                 const ActionCombiner& combiner);
  std::vector<std::unique_ptr<learn::PolicyRunner>> runners_;
  ActionCombiner combiner_;
  std::vector<float> scratch_;  // (n_seeds, dim)
};

// The ensemble of a multi-seed run that a command acts with.
struct EnsembleChoice {
  std::vector<uint64_t> seeds;
  std::vector<std::string> runs;  // RUN/seed_<seed>, in seed order
  std::string method;             // "" = the default for the run's actions
};

// The method an ensemble uses: `requested` (validated for `actions`) or the default.
Result<EnsembleMethod> ResolveEnsembleMethod(const std::string& requested,
                                             const EnsembleActions& actions);

// The command-line rule shared by eval, signal, paper and walkforward: --ensemble with
// --seed, or on a run without seeds.json, is refused (naming the flag and the fix); an
// unknown --ensemble value too.
Status CheckEnsembleFlags(const std::string& ensemble, bool seed_given, bool multi_seed,
                          const std::string& run_dir);

// Every seed's run files must describe the same model inputs: the same normalizer.json
// (the features every seed observes are computed once, with the first seed's). Refused
// naming the seed that differs.
Status CheckSameObservations(const std::vector<std::string>& runs);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_ENSEMBLE_H_
