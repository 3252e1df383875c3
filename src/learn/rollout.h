// rltrade learn: rollout storage and GAE(lambda) (Stable-Baselines3 RolloutBuffer).
//
// All arrays are float32 vectors allocated once (plain C++, no LibTorch), (n_steps, n_envs, ...),
// row t holding vector step t for all environments; scalar loops (GAE) run in plain C++ over their
// storage. episode_starts[t][i] = 1 when obs[t][i] is the first observation of an episode
// (SB3's _last_episode_starts, i.e. the previous step ended env i's episode).
// Not thread-safe; the trainer owns one.
#ifndef RLT_LEARN_ROLLOUT_H_
#define RLT_LEARN_ROLLOUT_H_

#include <cstdint>
#include <vector>

#include "core/collective.h"

namespace rlt::learn {

// GAE(lambda) exactly as SB3 RolloutBuffer.compute_returns_and_advantage:
//   for t = T-1 .. 0:
//     next_non_terminal = 1 - (t == T-1 ? last_dones : episode_starts[t+1])
//     next_value        = t == T-1 ? last_values : values[t+1]
//     delta             = rewards[t] + gamma next_value next_non_terminal - values[t]
//     gae               = delta + gamma lambda next_non_terminal gae
//     advantages[t] = gae;   returns[t] = advantages[t] + values[t]
// Arrays are (T, N) row-major; last_*: (N). Truncation bootstrapping is already folded
// into `rewards` by the collector (reward += gamma V(terminal_obs)).
void ComputeGae(int n_steps, int n_envs, const float* rewards, const float* values,
                const float* episode_starts, const float* last_values, const float* last_dones,
                float gamma, float gae_lambda, float* advantages, float* returns);

class RolloutBuffer {
 public:
  RolloutBuffer(int n_steps, int n_envs, int obs_dim, int act_dim);
  RolloutBuffer(const RolloutBuffer&) = delete;
  RolloutBuffer& operator=(const RolloutBuffer&) = delete;

  int n_steps() const { return n_steps_; }
  int n_envs() const { return n_envs_; }
  int64_t size() const { return static_cast<int64_t>(n_steps_) * n_envs_; }

  // Row pointers into step t. REQUIRES: 0 <= t < n_steps.
  float* obs(int t) { return obs_.data() + static_cast<int64_t>(t) * n_envs_ * obs_dim_; }
  float* actions(int t) { return actions_.data() + static_cast<int64_t>(t) * n_envs_ * act_dim_; }
  float* rewards(int t) { return rewards_.data() + static_cast<int64_t>(t) * n_envs_; }
  float* episode_starts(int t) {
    return episode_starts_.data() + static_cast<int64_t>(t) * n_envs_;
  }
  float* values(int t) { return values_.data() + static_cast<int64_t>(t) * n_envs_; }
  float* log_probs(int t) { return log_probs_.data() + static_cast<int64_t>(t) * n_envs_; }
  int obs_dim() const { return obs_dim_; }
  int act_dim() const { return act_dim_; }

  // Fills advantages and returns. last_values, last_dones: (n_envs).
  void ComputeReturnsAndAdvantage(const float* last_values, const float* last_dones, float gamma,
                                  float gae_lambda);

  // The whole arrays, flat: (n_steps * n_envs, obs_dim | act_dim) or (n_steps * n_envs),
  // for minibatch gathering.
  float* flat_obs() { return obs_.data(); }
  float* flat_actions() { return actions_.data(); }
  float* flat_values() { return values_.data(); }
  float* flat_log_probs() { return log_probs_.data(); }
  float* flat_advantages() { return advantages_.data(); }
  float* flat_returns() { return returns_.data(); }

 private:
  int n_steps_, n_envs_, obs_dim_, act_dim_;
  std::vector<float> obs_;             // (n_steps, n_envs, obs_dim)
  std::vector<float> actions_;         // (n_steps, n_envs, act_dim)
  std::vector<float> rewards_;         // (n_steps, n_envs)
  std::vector<float> episode_starts_;  // (n_steps, n_envs)
  std::vector<float> values_;          // (n_steps, n_envs)
  std::vector<float> log_probs_;       // (n_steps, n_envs)
  std::vector<float> advantages_;      // (n_steps, n_envs)
  std::vector<float> returns_;         // (n_steps, n_envs)
};

// SB3 explained_variance: 1 - Var[y_true - y_pred] / Var[y_true] (NaN when Var[y_true] = 0).
double ExplainedVariance(const float* y_pred, const float* y_true, int64_t n);
// The same over the rows of every member of `group` (two passes, each one sum).
double ExplainedVarianceShared(const float* y_pred, const float* y_true, int64_t n,
                               Collective& group);

}  // namespace rlt::learn

#endif  // RLT_LEARN_ROLLOUT_H_
