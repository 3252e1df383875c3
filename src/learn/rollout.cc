// rltrade learn: RolloutBuffer and GAE implementation (see rollout.h).
#include "learn/rollout.h"

#include <limits>

namespace rlt::learn {

void ComputeGae(int n_steps, int n_envs, const float* rewards, const float* values,
                const float* episode_starts, const float* last_values, const float* last_dones,
                float gamma, float gae_lambda, float* advantages, float* returns) {
  for (int i = 0; i < n_envs; ++i) {
    float gae = 0.0f;
    for (int t = n_steps - 1; t >= 0; --t) {
      const int64_t k = static_cast<int64_t>(t) * n_envs + i;
      const bool last = t == n_steps - 1;
      const float next_non_terminal = 1.0f - (last ? last_dones[i] : episode_starts[k + n_envs]);
      const float next_value = last ? last_values[i] : values[k + n_envs];
      const float delta = rewards[k] + gamma * next_value * next_non_terminal - values[k];
      gae = delta + gamma * gae_lambda * next_non_terminal * gae;
      advantages[k] = gae;
      returns[k] = gae + values[k];
    }
  }
}

RolloutBuffer::RolloutBuffer(int n_steps, int n_envs, int obs_dim, int act_dim)
    : n_steps_(n_steps), n_envs_(n_envs), obs_dim_(obs_dim), act_dim_(act_dim) {
  const size_t rows = static_cast<size_t>(n_steps) * n_envs;
  obs_.assign(rows * obs_dim, 0.0f);
  actions_.assign(rows * act_dim, 0.0f);
  rewards_.assign(rows, 0.0f);
  episode_starts_.assign(rows, 0.0f);
  values_.assign(rows, 0.0f);
  log_probs_.assign(rows, 0.0f);
  advantages_.assign(rows, 0.0f);
  returns_.assign(rows, 0.0f);
}

void RolloutBuffer::ComputeReturnsAndAdvantage(const float* last_values, const float* last_dones,
                                               float gamma, float gae_lambda) {
  ComputeGae(n_steps_, n_envs_, rewards_.data(), values_.data(), episode_starts_.data(),
             last_values, last_dones, gamma, gae_lambda, advantages_.data(), returns_.data());
}

double ExplainedVariance(const float* y_pred, const float* y_true, int64_t n) {
  if (n < 1) return std::numeric_limits<double>::quiet_NaN();
  double mean_true = 0, mean_diff = 0;
  for (int64_t k = 0; k < n; ++k) {
    mean_true += y_true[k];
    mean_diff += static_cast<double>(y_true[k]) - y_pred[k];
  }
  mean_true /= n;
  mean_diff /= n;
  double var_true = 0, var_diff = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double a = y_true[k] - mean_true;
    const double b = static_cast<double>(y_true[k]) - y_pred[k] - mean_diff;
    var_true += a * a;
    var_diff += b * b;
  }
  if (var_true == 0) return std::numeric_limits<double>::quiet_NaN();
  return 1.0 - var_diff / var_true;
}

double ExplainedVarianceShared(const float* y_pred, const float* y_true, int64_t n,
                               Collective& group) {
  double sums[3] = {static_cast<double>(n), 0.0, 0.0};
  for (int64_t k = 0; k < n; ++k) {
    sums[1] += y_true[k];
    sums[2] += static_cast<double>(y_true[k]) - y_pred[k];
  }
  group.SumDoubles(sums, 3, "the explained variance");
  if (sums[0] < 1) return std::numeric_limits<double>::quiet_NaN();
  const double mean_true = sums[1] / sums[0], mean_diff = sums[2] / sums[0];
  double vars[2] = {0.0, 0.0};
  for (int64_t k = 0; k < n; ++k) {
    const double a = y_true[k] - mean_true;
    const double b = static_cast<double>(y_true[k]) - y_pred[k] - mean_diff;
    vars[0] += a * a;
    vars[1] += b * b;
  }
  group.SumDoubles(vars, 2, "the explained variance");
  if (vars[0] == 0) return std::numeric_limits<double>::quiet_NaN();
  return 1.0 - vars[1] / vars[0];
}

}  // namespace rlt::learn
