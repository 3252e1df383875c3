// rltrade learn: the LibTorch actor-critic policy (Stable-Baselines3's ActorCriticPolicy), the
// module of the torch backend ([policy] backend = "torch", learn/torch_learner.h) and the
// oracle of the native engine's tests. Compiled with LibTorch only.
//
// Two separate MLPs read the (already normalised) observation: the policy net `pi` and the
// value net `vf` (SB3 net_arch = dict(pi=[64, 64], vf=[64, 64])). A linear action head on
// the pi latent gives
//   Box(dim):     the mean of a diagonal Gaussian whose log standard deviation is a free,
//                 state-independent parameter `log_std` (dim), initialised to log_std_init;
//   Discrete(n):  the logits of a categorical distribution;
// and a linear value head on the vf latent gives V(s).
// Initialisation (SB3, ortho_init=True): orthogonal weights with gain sqrt(2) in the hidden
// layers, 0.01 in the action head and 1 in the value head; all biases zero.
// Log-probabilities and entropies of the Gaussian are summed over action dimensions.
//
// Actions are float tensors (batch, act_dim) in both cases (Discrete: one float holding the
// index), the same layout as the VecEnv action buffer.
// Not thread-safe. Act() runs under c10::InferenceMode (rollouts); Evaluate() builds the
// autograd graph (updates).
#ifndef RLT_LEARN_TORCH_POLICY_H_
#define RLT_LEARN_TORCH_POLICY_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "env/env.h"
#include "learn/policy.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// Rollout output for a batch of B observations.
struct ActResult {
  torch::Tensor actions;    // (B, act_dim) float32; unclipped samples (Box) or indices
  torch::Tensor values;     // (B) float32
  torch::Tensor log_probs;  // (B) float32
};

// Update-time evaluation of stored actions (with autograd).
struct EvaluateResult {
  torch::Tensor values;     // (B)
  torch::Tensor log_probs;  // (B)
  torch::Tensor entropy;    // (B)
};

class ActorCriticImpl : public torch::nn::Module {
 public:
  // REQUIRES: obs_dim >= 1; options validated by ValidatePolicyOptions().
  ActorCriticImpl(int obs_dim, const env::ActionSpace& action_space, const PolicyOptions& options);

  // One batched forward for all environments, under InferenceMode. Samples with
  // `generator` (nullptr: the global torch generator) unless deterministic (mean/argmax).
  // obs: (B, obs_dim) float32.
  ActResult Act(const torch::Tensor& obs, torch::Generator* generator = nullptr,
                bool deterministic = false);
  // V(s) for (B, obs_dim) observations -> (B). Under InferenceMode.
  torch::Tensor PredictValues(const torch::Tensor& obs);
  // Values, log-probabilities and entropies of `actions` (B, act_dim) under the current
  // parameters, with autograd.
  EvaluateResult Evaluate(const torch::Tensor& obs, const torch::Tensor& actions);

  bool discrete() const { return discrete_; }
  int act_dim() const { return act_dim_; }
  int obs_dim() const { return obs_dim_; }
  const PolicyOptions& options() const { return options_; }
  // Box only (undefined tensor for Discrete): (act_dim) parameter.
  const torch::Tensor& log_std() const { return log_std_; }
  torch::nn::Sequential& pi_net() { return pi_net_; }
  torch::nn::Sequential& vf_net() { return vf_net_; }
  torch::nn::Linear& action_net() { return action_net_; }
  torch::nn::Linear& value_net() { return value_net_; }
  // Recurrent policies: the LSTMs (lstm_critic is empty when shared). Act, PredictValues
  // and Evaluate above are for MLP policies only (REQUIRES: !recurrent()); recurrent ones
  // run on native::RecurrentActorCritic.
  bool recurrent() const { return !lstm_actor_.is_empty(); }
  torch::nn::LSTM& lstm_actor() { return lstm_actor_; }
  torch::nn::LSTM& lstm_critic() { return lstm_critic_; }

 private:
  // Distribution parameters: Gaussian mean or categorical logits, (B, act_dim | n).
  torch::Tensor ActionHead(const torch::Tensor& obs);
  torch::Tensor Values(const torch::Tensor& obs);

  bool discrete_;
  int act_dim_;
  int obs_dim_;
  PolicyOptions options_;
  int num_outputs_;  // act_dim (Box) or n (Discrete)
  torch::nn::Sequential pi_net_{nullptr}, vf_net_{nullptr};
  torch::nn::Linear action_net_{nullptr}, value_net_{nullptr};
  torch::nn::LSTM lstm_actor_{nullptr}, lstm_critic_{nullptr};
  torch::Tensor log_std_;
};
TORCH_MODULE(ActorCritic);

// Distribution math, exposed for tests. Gaussian: summed over the last dimension.
torch::Tensor GaussianLogProb(const torch::Tensor& mean, const torch::Tensor& log_std,
                              const torch::Tensor& actions);
torch::Tensor GaussianEntropy(const torch::Tensor& log_std, int64_t batch);
torch::Tensor CategoricalLogProb(const torch::Tensor& logits, const torch::Tensor& actions);
torch::Tensor CategoricalEntropy(const torch::Tensor& logits);

// The module's parameters as a tensor file (names = named_parameters() keys), and back
// (every parameter by name and shape, else a DataError naming `origin`).
native::TensorFile PolicyToTensorFile(ActorCritic& policy);
Status LoadPolicyFromTensorFile(const native::TensorFile& file, ActorCritic& policy,
                                const std::string& origin);

}  // namespace rlt::learn

#endif  // RLT_LEARN_TORCH_POLICY_H_
