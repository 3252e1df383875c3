// rltrade learn: PPO update implementation (see ppo.h).
#include "learn/ppo.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace rlt::learn {
namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

}  // namespace

void UpdateLossLog::Add(double policy_loss, double value_loss, double entropy_loss,
                        double clip_fraction, double approx_kl) {
  pg_losses_.push_back(policy_loss);
  value_losses_.push_back(value_loss);
  entropy_losses_.push_back(entropy_loss);
  clip_fractions_.push_back(clip_fraction);
  approx_kls_.push_back(approx_kl);
}

void UpdateLossLog::WriteMeans(UpdateStats* stats) const {
  stats->policy_gradient_loss = Mean(pg_losses_);
  stats->value_loss = Mean(value_losses_);
  stats->entropy_loss = Mean(entropy_losses_);
  stats->clip_fraction = Mean(clip_fractions_);
  stats->approx_kl = Mean(approx_kls_);
}

Status ValidatePpoOptions(const PpoOptions& o) {
  if (o.n_steps < 1) return Status::InvalidArgument("[algo] n_steps must be >= 1");
  if (o.batch_size < 1) return Status::InvalidArgument("[algo] batch_size must be >= 1");
  if (o.n_epochs < 1) return Status::InvalidArgument("[algo] n_epochs must be >= 1");
  if (!(o.gamma >= 0 && o.gamma <= 1))
    return Status::InvalidArgument("[algo] gamma must be in [0, 1]");
  if (!(o.gae_lambda >= 0 && o.gae_lambda <= 1)) {
    return Status::InvalidArgument("[algo] gae_lambda must be in [0, 1]");
  }
  if (!(o.max_grad_norm > 0)) return Status::InvalidArgument("[algo] max_grad_norm must be > 0");
  if (o.total_timesteps < 1) return Status::InvalidArgument("[run] total_steps must be >= 1");
  if (o.clip_obs <= 0 || o.clip_reward <= 0) {
    return Status::InvalidArgument("[algo] clip_obs and clip_reward must be > 0");
  }
  return Status::Ok();
}

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
