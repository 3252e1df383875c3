// rltrade learn: EvaluatePolicy() — run a policy deterministically on a separate VecEnv and
// report episode statistics (Stable-Baselines3's evaluate_policy, as used by EvalCallback).
//
// What it does: resets `venv` with `seed` (env i is seeded seed + i, so every evaluation
// with the same seed sees the same episodes and differences come from the policy alone),
// then steps all envs together with the policy's deterministic action (Gaussian mean
// clipped to the Box bounds, or the argmax of the logits) on observations normalised with
// the training statistics (NormalizeObs only: the statistics are never updated) until
// `episodes` episodes have finished. As in SB3, env i contributes (episodes + i) / N
// episodes, so short episodes are not over-represented; its later episodes are ignored.
// Rewards and lengths are the VecEnv's unnormalised episode totals.
//
// What it is not: a backtest (no trade log or risk metrics: see eval/), and not a source of
// randomness: it draws nothing from any generator, so training's random streams (the
// learner's, the training VecEnv's) are untouched.
//
// Ownership: borrows everything. Not thread-safe.
#ifndef RLT_LEARN_EVALUATE_H_
#define RLT_LEARN_EVALUATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "env/vec_env.h"
#include "learn/normalize.h"
#include "learn/policy.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// A policy's deterministic actions (Gaussian mean clipped to the Box bounds, or the
// argmax) for n already-normalised observations, on the native engine: MLP policies run a
// native::ActorCritic, recurrent ones a native::RecurrentActorCritic carrying one LSTM
// state per row across calls, zeroed where episode_starts (n, may be nullptr) is set and
// whenever n changes. The parameters are copied once, at construction.
class DeterministicActor {
 public:
  // `params`: every parameter of the policy of `options` by name (Trainer::
  // PolicyParameters(), a checkpoint's policy.rlt); a missing tensor or another shape is a
  // DataError naming `origin`.
  static Result<std::unique_ptr<DeterministicActor>> Create(const native::TensorFile& params,
                                                            int obs_dim,
                                                            const env::ActionSpace& space,
                                                            const PolicyOptions& options,
                                                            const std::string& origin);
  ~DeterministicActor();
  DeterministicActor(const DeterministicActor&) = delete;
  DeterministicActor& operator=(const DeterministicActor&) = delete;

  // actions (n, act_dim); values (n) unless nullptr.
  void Act(const float* obs, int n, const float* episode_starts, float* actions, float* values);
  // Zeroes every row's recurrent state (no-op for MLP policies).
  void ResetState();
  bool recurrent() const { return recurrent_ != nullptr; }
  int act_dim() const { return act_dim_; }

 private:
  struct Recurrent;
  struct Mlp;
  explicit DeterministicActor(const env::ActionSpace& space);
  env::ActionSpace space_;
  int act_dim_ = 1;
  std::unique_ptr<Recurrent> recurrent_;
  std::unique_ptr<Mlp> mlp_;
};

struct EvalStats {
  std::vector<double> episode_rewards;   // (episodes) unnormalised totals, in finishing order
  std::vector<int64_t> episode_lengths;  // (episodes)
  double mean_reward = 0;                // eval/mean_reward
  double std_reward = 0;                 // eval/std_reward (population std, as np.std)
  double mean_ep_length = 0;             // eval/mean_ep_length
  // Envs whose spec().info_names holds "net_worth": the mean over episodes of its value at
  // each episode's last step (eval/final_net_worth). NaN otherwise.
  bool has_net_worth = false;
  double mean_final_net_worth = 0;
  // Envs whose info holds "net_worth" and "session_date" (market envs): env 0's first
  // episode cut into sessions, each session's net worth at its end over its start minus 1
  // (the start of the first is the reset's net worth), as `rltrade eval` aggregates a
  // walk (evalrun/backtest.h). A session ends at the step after which the info's
  // session_date differs from the one before it, or the episode ends. Empty otherwise.
  std::vector<double> session_returns;  // (sessions)
};

// Runs `episodes` deterministic episodes (see the file comment) of `actor`, which is
// ResetState() first. REQUIRES: actor and normalizer built for venv's obs_dim and action
// space. Fails (InvalidArgument) when episodes < 1.
Result<EvalStats> EvaluatePolicy(DeterministicActor& actor, const VecNormalizer& normalizer,
                                 env::VecEnv& venv, int episodes, uint64_t seed);
// The same for a policy given by its parameters and options (DeterministicActor::Create's
// errors, e.g. a tensor missing from `params`, are returned).
Result<EvalStats> EvaluatePolicy(const native::TensorFile& params, const PolicyOptions& options,
                                 const VecNormalizer& normalizer, env::VecEnv& venv, int episodes,
                                 uint64_t seed);

}  // namespace rlt::learn

#endif  // RLT_LEARN_EVALUATE_H_
