// rltrade learn: the MLP actor-critic policy (Stable-Baselines3's ActorCriticPolicy).
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
#ifndef RLT_LEARN_POLICY_H_
#define RLT_LEARN_POLICY_H_

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

namespace rlt::learn {

struct PolicyOptions {
  std::vector<int> pi = {64, 64};   // hidden layer widths of the policy net
  std::vector<int> vf = {64, 64};   // hidden layer widths of the value net
  std::string activation = "tanh";  // one of: tanh, relu
  double log_std_init = 0.0;        // initial log standard deviation (Box actions)
  bool ortho_init = true;           // orthogonal initialisation with SB3's gains
  // Who runs forward, backward and Adam: "native" (src/native/, no LibTorch operators;
  // every MLP actor-critic) or "torch" (LibTorch autograd, the oracle). Same semantics;
  // checkpoints load in either (learn/native_learner.h).
  std::string backend = "native";
  // Recurrent PPO (sb3-contrib RecurrentPPO): "lstm" puts an LSTM of lstm_hidden_size units
  // between the observation and each MLP tower (the actor's and, unless shared_lstm, the
  // critic's own); "none" is the MLP policy. Recurrent policies train on the native
  // engine only (native/recurrent_actor_critic.h); this module holds their parameters for
  // checkpoints.
  std::string recurrent = "none";
  int lstm_hidden_size = 256;
  bool shared_lstm = false;

  template <typename V>
  void VisitFields(V& v) {
    v("pi", &pi, "hidden layer widths of the policy net, e.g. [64, 64]");
    v("vf", &vf, "hidden layer widths of the value net, e.g. [64, 64]");
    v("activation", &activation, "hidden activation", {"tanh", "relu"});
    v("log_std_init", &log_std_init, "initial log std of the Gaussian (Box actions)");
    v("ortho_init", &ortho_init, "orthogonal init with gains sqrt(2) / 0.01 / 1");
    v("backend", &backend, "learner engine: native (own kernels) or torch (LibTorch)",
      {"native", "torch"});
    v("recurrent", &recurrent, "recurrent policy: none (MLP) or lstm (recurrent PPO)",
      {"none", "lstm"});
    v("lstm_hidden_size", &lstm_hidden_size, "LSTM units (recurrent = \"lstm\")");
    v("shared_lstm", &shared_lstm, "one LSTM for actor and critic (recurrent = \"lstm\")");
  }
  bool is_recurrent() const { return recurrent == "lstm"; }
};

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

Status ValidatePolicyOptions(const PolicyOptions& options);

// Distribution math, exposed for tests. Gaussian: summed over the last dimension.
torch::Tensor GaussianLogProb(const torch::Tensor& mean, const torch::Tensor& log_std,
                              const torch::Tensor& actions);
torch::Tensor GaussianEntropy(const torch::Tensor& log_std, int64_t batch);
torch::Tensor CategoricalLogProb(const torch::Tensor& logits, const torch::Tensor& actions);
torch::Tensor CategoricalEntropy(const torch::Tensor& logits);

}  // namespace rlt::learn

#endif  // RLT_LEARN_POLICY_H_
