// rltrade learn: the native backend of PpoTrainer ([policy] backend = "native").
//
// NativeLearner runs the rollout forwards and the PPO update on native::ActorCritic,
// native::PpoLoss and native::Adam (src/native/, no LibTorch operators), with exactly the
// semantics of the LibTorch path (policy.h, ppo.h; checked against LibTorch autograd in
// native_oracle_test.cc). LibTorch's ActorCritic and Adam stay the trainer's checkpoint
// and evaluation format: the learner starts from the torch module's initial parameters
// (so both backends start from the same weights for a seed) and copies parameters and
// Adam state to / from the torch objects whenever the trainer hands them out
// (PpoTrainer::policy(), optimizer()) or loads a checkpoint, so `eval`, `signal` and
// `--resume` work whichever backend trained.
// Differences from the torch path, by design: actions are sampled and minibatch
// permutations drawn with its own rlt::Rng (checkpointed), not torch's generator, so the
// two backends follow different (equally distributed) random streams.
// Not thread-safe.
#ifndef RLT_LEARN_NATIVE_LEARNER_H_
#define RLT_LEARN_NATIVE_LEARNER_H_

#include <torch/optim/adam.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.h"
#include "env/env.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "learn/rollout.h"
#include "native/actor_critic.h"
#include "native/adam.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// Whether the native engine implements this policy (every MLP actor-critic does).
bool NativeSupports(const PolicyOptions& options);

class NativeLearner {
 public:
  // Copies `policy`'s current parameters. REQUIRES: NativeSupports(options).
  NativeLearner(ActorCritic& policy, int obs_dim, const env::ActionSpace& space,
                const PolicyOptions& options, uint64_t seed);
  NativeLearner(const NativeLearner&) = delete;
  NativeLearner& operator=(const NativeLearner&) = delete;

  // One forward for n observations (n, obs_dim): sampled actions (n, act_dim), values and
  // log-probabilities (n).
  void Act(const float* obs, int n, float* actions, float* values, float* log_probs);
  void PredictValues(const float* obs, int n, float* values);

  // learn::PpoUpdate with the native engine: same epochs, minibatches, loss, KL stop,
  // clipping and Adam (at learning rate lr).
  UpdateStats Update(RolloutBuffer& buffer, const PpoOptions& options,
                     const PpoLossSettings& settings, double lr, UpdateTiming* timing);

  // Parameters and Adam state (moments, step count, learning rate) to / from LibTorch.
  void CopyToTorch(ActorCritic& policy, torch::optim::Adam& optimizer) const;
  void CopyFromTorch(ActorCritic& policy, torch::optim::Adam& optimizer);

  native::ActorCritic& net() { return net_; }
  const std::vector<float>& grads() const { return grads_; }
  // Mean of exp(log_std) (Box only).
  double MeanStd() const;
  RngState rng_state() const { return rng_.state(); }
  void set_rng_state(const RngState& s) { rng_.set_state(s); }

 private:
  native::ActorCritic net_;
  native::Adam adam_;
  Rng rng_;
  std::vector<float> grads_;  // (num_params) gradients of the last minibatch
  native::ActorCriticWorkspace ws_;
  // Gathered minibatch, (batch_size, ...).
  std::vector<float> mb_obs_, mb_actions_, mb_values_, mb_log_probs_, mb_advantages_, mb_returns_;
  std::vector<float> values_, log_probs_, entropy_, d_values_, d_log_probs_, d_entropy_;
  std::vector<int64_t> perm_;
};

// The policy's parameters as a native tensor file (names = named_parameters() keys), and
// back. The file format needs no LibTorch (native/tensor_file.h); checkpoints carry it as
// policy.rlt next to policy.pt.
native::TensorFile PolicyToTensorFile(ActorCritic& policy);
Status LoadPolicyFromTensorFile(const native::TensorFile& file, ActorCritic& policy,
                                const std::string& origin);

}  // namespace rlt::learn

#endif  // RLT_LEARN_NATIVE_LEARNER_H_
