// rltrade learn: how much memory a training run will hold, estimated before anything big
// is built (so that `policy.pi = [100000, 100000]` is refused with the keys to lower
// instead of aborting inside the allocator).
//
// PPO (EstimatePpoMemory), from one probe environment's spec:
//  - environments: env::EnvBytesEach (env/vec_env.h) each;
//  - the rollout buffer: per sample (n_steps x num_envs) obs_dim + act_dim + 6 floats
//    (reward, value, log-prob, episode start, advantage, return); the update gathers
//    shuffled minibatches of the same data (counted once more);
//  - the network: every parameter held ~kParameterCopies times (the learner's parameters,
//    gradients and Adam's two moments, the torch backend's module and its gradients, the
//    checkpoint staging copy), plus the activations of a minibatch (forward and backward of
//    every hidden unit, 4 floats each).
// Evolution strategies (EsMemoryBytes): the shared noise table, noise_table_size floats in
// every process; the rest (one environment per thread, the actor) is small.
#ifndef RLT_LEARN_MEMORY_MODEL_H_
#define RLT_LEARN_MEMORY_MODEL_H_

#include <cstdint>

#include "env/env.h"
#include "env/vec_env.h"
#include "learn/es.h"
#include "learn/policy.h"
#include "learn/ppo.h"

namespace rlt::learn {

inline constexpr double kParameterCopies = 8;

// Parameters of the policy's network: the LSTMs (4H (in + H) weights + 8H biases each,
// one when shared) and the two MLP towers with their heads (the action outputs, log std
// included, and the value).
double PolicyParameterCount(const PolicyOptions& policy, const env::EnvSpec& spec);

// A PPO run's memory by part, in bytes (see above).
struct PpoMemoryEstimate {
  double env_bytes = 0;      // every environment and its VecEnv arrays
  double samples = 0;        // rollout samples: n_steps x num_envs
  double rollout_bytes = 0;  // the rollout buffer and the update's minibatch copies
  double parameters = 0;     // PolicyParameterCount
  double network_bytes = 0;  // parameter copies and minibatch activations
  double total() const { return env_bytes + rollout_bytes + network_bytes; }
};
PpoMemoryEstimate EstimatePpoMemory(const PpoOptions& ppo, const PolicyOptions& policy,
                                    int64_t num_envs, const env::EnvSpec& spec);

// Evolution strategies: the noise table's bytes.
double EsMemoryBytes(const EsOptions& es);

}  // namespace rlt::learn

#endif  // RLT_LEARN_MEMORY_MODEL_H_
