// rltrade learn: the memory estimates of training runs (see memory_model.h).
#include "learn/memory_model.h"

#include <vector>

namespace rlt::learn {

double PolicyParameterCount(const PolicyOptions& policy, const env::EnvSpec& spec) {
  const double obs = spec.obs_dim;
  const double actions = spec.action.discrete ? spec.action.n : 2.0 * spec.action.dim;
  double params = 0, tower_in = obs;
  if (policy.is_recurrent()) {
    const double h = policy.lstm_hidden_size;
    params += (policy.shared_lstm ? 1 : 2) * (4 * h * (obs + h) + 8 * h);
    tower_in = h;
  }
  auto tower = [&](const std::vector<int>& widths, double out) {
    double in = tower_in;
    for (int w : widths) {
      params += (in + 1) * w;
      in = w;
    }
    params += (in + 1) * out;
  };
  tower(policy.pi, actions);
  tower(policy.vf, 1);
  return params;
}

PpoMemoryEstimate EstimatePpoMemory(const PpoOptions& ppo, const PolicyOptions& policy,
                                    int64_t num_envs, const env::EnvSpec& spec) {
  const double obs = spec.obs_dim, act = spec.action.dim;
  const double envs = static_cast<double>(num_envs);
  PpoMemoryEstimate m;
  m.env_bytes = envs * env::EnvBytesEach(spec);
  m.samples = static_cast<double>(ppo.n_steps) * envs;
  m.rollout_bytes = 2.0 * m.samples * (obs + act + 6) * sizeof(float);
  double units = 0;
  for (int w : policy.pi) units += w;
  for (int w : policy.vf) units += w;
  if (policy.is_recurrent()) units += (policy.shared_lstm ? 1 : 2) * 6.0 * policy.lstm_hidden_size;
  m.parameters = PolicyParameterCount(policy, spec);
  m.network_bytes = kParameterCopies * m.parameters * sizeof(float) +
                    4.0 * static_cast<double>(ppo.batch_size) * units * sizeof(float);
  return m;
}

double EsMemoryBytes(const EsOptions& es) { return 4.0 * static_cast<double>(es.noise_table_size); }

}  // namespace rlt::learn
