// rltrade learn: the LibTorch PPO update (see torch_ppo.h).
#include "learn/torch_ppo.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace rlt::learn {
namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

PpoLoss ComputePpoLoss(const EvaluateResult& eval, const Minibatch& b, const PpoLossSettings& s) {
  torch::Tensor advantages = b.advantages;
  if (s.normalize_advantage && advantages.numel() > 1) {
    advantages = (advantages - advantages.mean()) / (advantages.std(/*unbiased=*/true) + 1e-8);
  }
  const torch::Tensor log_ratio = eval.log_probs - b.old_log_probs;
  const torch::Tensor ratio = torch::exp(log_ratio);
  const torch::Tensor surrogate1 = advantages * ratio;
  const torch::Tensor surrogate2 =
      advantages * torch::clamp(ratio, 1 - s.clip_range, 1 + s.clip_range);
  PpoLoss out;
  out.policy_loss = -torch::min(surrogate1, surrogate2).mean();
  torch::Tensor values_pred = eval.values;
  if (s.clip_range_vf > 0) {
    values_pred =
        b.old_values + torch::clamp(eval.values - b.old_values, -s.clip_range_vf, s.clip_range_vf);
  }
  out.value_loss = (b.returns - values_pred).square().mean();
  out.entropy_loss = -eval.entropy.mean();
  out.loss = out.policy_loss + s.ent_coef * out.entropy_loss + s.vf_coef * out.value_loss;
  {
    torch::NoGradGuard no_grad;
    out.clip_fraction = ((ratio - 1).abs() > s.clip_range).to(torch::kFloat).mean().item<double>();
    out.approx_kl = ((ratio - 1) - log_ratio).mean().item<double>();
  }
  return out;
}

void SetLearningRate(torch::optim::Adam& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) {
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
  }
}

double ClipGradNorm(const std::vector<torch::Tensor>& params, double max_norm) {
  return torch::nn::utils::clip_grad_norm_(params, max_norm);
}

UpdateStats PpoUpdate(ActorCritic& policy, torch::optim::Adam& optimizer, RolloutBuffer& buffer,
                      const PpoOptions& o, const PpoLossSettings& settings,
                      at::Generator& generator, UpdateTiming* timing) {
  using Clock = std::chrono::steady_clock;
  const int64_t n = buffer.size();
  // Views of the rollout's arrays (no copy).
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const torch::Tensor obs = torch::from_blob(buffer.flat_obs(), {n, buffer.obs_dim()}, f32);
  const torch::Tensor actions = torch::from_blob(buffer.flat_actions(), {n, buffer.act_dim()}, f32);
  const torch::Tensor values = torch::from_blob(buffer.flat_values(), {n}, f32);
  const torch::Tensor log_probs = torch::from_blob(buffer.flat_log_probs(), {n}, f32);
  const torch::Tensor advantages = torch::from_blob(buffer.flat_advantages(), {n}, f32);
  const torch::Tensor returns = torch::from_blob(buffer.flat_returns(), {n}, f32);
  const std::vector<torch::Tensor> params = policy->parameters();
  UpdateLossLog log;
  UpdateStats stats;
  for (int epoch = 0; epoch < o.n_epochs && !stats.early_stopped; ++epoch) {
    ++stats.epochs;
    log.StartEpoch();
    const torch::Tensor perm = torch::randperm(n, generator, torch::TensorOptions(torch::kLong));
    for (int64_t start = 0; start < n; start += o.batch_size) {
      const auto t0 = Clock::now();
      const torch::Tensor idx = perm.slice(0, start, std::min(start + o.batch_size, n));
      Minibatch mb{obs.index_select(0, idx),        actions.index_select(0, idx),
                   values.index_select(0, idx),     log_probs.index_select(0, idx),
                   advantages.index_select(0, idx), returns.index_select(0, idx)};
      const EvaluateResult eval = policy->Evaluate(mb.obs, mb.actions);
      const PpoLoss loss = ComputePpoLoss(eval, mb, settings);
      log.Add(loss.policy_loss.item<double>(), loss.value_loss.item<double>(),
              loss.entropy_loss.item<double>(), loss.clip_fraction, loss.approx_kl);
      stats.loss = loss.loss.item<double>();
      const auto t1 = Clock::now();
      if (timing) timing->forward += Seconds(t0, t1);
      if (o.target_kl > 0 && loss.approx_kl > 1.5 * o.target_kl) {
        stats.early_stopped = true;
        break;
      }
      optimizer.zero_grad();
      loss.loss.backward();
      const auto t2 = Clock::now();
      ClipGradNorm(params, o.max_grad_norm);
      optimizer.step();
      ++stats.optimizer_steps;
      if (timing) {
        timing->backward += Seconds(t1, t2);
        timing->optimizer += Seconds(t2, Clock::now());
      }
    }
  }
  log.WriteMeans(&stats);
  return stats;
}

}  // namespace rlt::learn
