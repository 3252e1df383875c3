// rltrade learn: PPO options and the loss log shared by the learners (see ppo.h).
#include "learn/ppo.h"

#include <vector>

namespace rlt::learn {
namespace {

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

}  // namespace rlt::learn
