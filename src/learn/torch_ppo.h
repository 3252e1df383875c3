// rltrade learn: the PPO update on LibTorch (the torch backend, [policy] backend = "torch"):
// the loss of learn/ppo.h with autograd, PyTorch's gradient clipping and torch::optim::Adam.
// Compiled with LibTorch only.
#ifndef RLT_LEARN_TORCH_PPO_H_
#define RLT_LEARN_TORCH_PPO_H_

#include <torch/optim/adam.h>
#include <torch/types.h>

#include <vector>

#include "learn/ppo.h"
#include "learn/rollout.h"
#include "learn/torch_policy.h"

namespace rlt::learn {

// One minibatch of rollout data, (B, ...) tensors.
struct Minibatch {
  torch::Tensor obs, actions, old_values, old_log_probs, advantages, returns;
};

struct PpoLoss {
  torch::Tensor loss, policy_loss, value_loss, entropy_loss;  // scalars (with autograd)
  double approx_kl = 0, clip_fraction = 0;
};

PpoLoss ComputePpoLoss(const EvaluateResult& eval, const Minibatch& batch,
                       const PpoLossSettings& settings);

void SetLearningRate(torch::optim::Adam& optimizer, double lr);

// Scales all gradients together so their global L2 norm is at most max_norm (PyTorch
// clip_grad_norm_). Returns the norm before clipping.
double ClipGradNorm(const std::vector<torch::Tensor>& params, double max_norm);

// REQUIRES: buffer holds a complete rollout with advantages computed.
UpdateStats PpoUpdate(ActorCritic& policy, torch::optim::Adam& optimizer, RolloutBuffer& buffer,
                      const PpoOptions& options, const PpoLossSettings& settings,
                      at::Generator& generator, UpdateTiming* timing);

}  // namespace rlt::learn

#endif  // RLT_LEARN_TORCH_PPO_H_
