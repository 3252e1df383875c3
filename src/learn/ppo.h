// rltrade learn: the PPO update (Stable-Baselines3's PPO.train), its options and losses.
//
// For n_epochs epochs, a fresh random permutation of all n_steps * n_envs samples is cut
// into minibatches of batch_size (the last one may be smaller). Per minibatch:
//   A      = (A - mean A) / (std A + 1e-8)    unbiased std; skipped for one sample or when
//                                             normalize_advantage is false
//   r      = exp(log_prob - old_log_prob)
//   L_pg   = -mean(min(A r, A clamp(r, 1 - clip, 1 + clip)))
//   V'     = V  or  old_V + clamp(V - old_V, -clip_vf, clip_vf)   (clip_range_vf > 0)
//   L_vf   = mean((returns - V')^2)                                 (MSE, no 1/2)
//   L_ent  = -mean(entropy)
//   loss   = L_pg + ent_coef L_ent + vf_coef L_vf
//   approx_kl = mean((r - 1) - log r), clip_fraction = mean(|r - 1| > clip)
// If target_kl > 0 and approx_kl > 1.5 target_kl, training stops BEFORE this minibatch's
// optimizer step (SB3). Otherwise: backward, global-norm gradient clipping to
// max_grad_norm, Adam step (eps 1e-5, lr set per update from the schedule).
#ifndef RLT_LEARN_PPO_H_
#define RLT_LEARN_PPO_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "learn/schedule.h"
#include "native/ppo_loss.h"

namespace rlt::learn {

// SB3 PPO names and defaults, plus the VecNormalize switches and the run length that
// the schedules need (SB3 passes it to learn()).
struct PpoOptions {
  Schedule learning_rate = 3e-4;  // number, linear(a, b) or warmup_cosine(peak, W, f)
  int n_steps = 2048;             // vector steps per rollout (per env)
  int batch_size = 64;            // minibatch size
  int n_epochs = 10;              // passes over each rollout
  double gamma = 0.99;            // discount
  double gae_lambda = 0.95;       // GAE lambda
  Schedule clip_range = 0.2;      // policy ratio clip
  double clip_range_vf = 0.0;     // value clip; <= 0: none (SB3 None)
  bool normalize_advantage = true;
  Schedule ent_coef = 0.0;            // entropy coefficient
  double vf_coef = 0.5;               // value loss coefficient
  double max_grad_norm = 0.5;         // global gradient norm clip
  double target_kl = 0.0;             // early stop threshold; <= 0: none (SB3 None)
  bool norm_obs = false;              // VecNormalize observation normalisation
  bool norm_reward = false;           // VecNormalize reward normalisation
  double clip_obs = 10.0;             // VecNormalize clip_obs
  double clip_reward = 10.0;          // VecNormalize clip_reward
  int64_t total_timesteps = 1000000;  // run length: schedules' progress is steps / this
  int sequence_length = 16;           // recurrent policies: steps per training sequence

  template <typename V>
  void VisitFields(V& v) {
    v("learning_rate", &learning_rate, "Adam step size (number or schedule)");
    v("n_steps", &n_steps, "vector steps per rollout");
    v("batch_size", &batch_size, "minibatch size");
    v("n_epochs", &n_epochs, "passes over each rollout");
    v("gamma", &gamma, "discount factor");
    v("gae_lambda", &gae_lambda, "GAE lambda");
    v("clip_range", &clip_range, "policy ratio clip (number or schedule)");
    v("clip_range_vf", &clip_range_vf, "value clip; <= 0 disables");
    v("normalize_advantage", &normalize_advantage, "normalise advantages per minibatch");
    v("ent_coef", &ent_coef, "entropy coefficient (number or schedule)");
    v("vf_coef", &vf_coef, "value loss coefficient");
    v("max_grad_norm", &max_grad_norm, "global gradient norm clip");
    v("target_kl", &target_kl, "stop the update when approx_kl > 1.5 target_kl; <= 0 disables");
    v("norm_obs", &norm_obs, "normalise observations with running statistics");
    v("norm_reward", &norm_reward, "scale rewards by the running std of the return");
    v("clip_obs", &clip_obs, "clip normalised observations to +-this");
    v("clip_reward", &clip_reward, "clip normalised rewards to +-this");
    v("total_timesteps", &total_timesteps, "run length in env steps (for schedules)");
    v("sequence_length", &sequence_length,
      "recurrent policies: steps per training sequence (divides n_steps)");
  }
};

Status ValidatePpoOptions(const PpoOptions& options);

// One update's loss settings (the clip range and entropy coefficient at this point of
// their schedules): the native engine's own struct, shared by every learner.
using PpoLossSettings = native::PpoLossSettings;

// Averages SB3 logs after train(): losses and clip fraction over every minibatch seen
// (including one that triggered the KL stop); approx_kl over the last epoch's minibatches;
// `loss` is the last minibatch's total loss.
struct UpdateStats {
  double policy_gradient_loss = 0, value_loss = 0, entropy_loss = 0;
  double approx_kl = 0, clip_fraction = 0, loss = 0;
  int epochs = 0;  // epochs started (SB3 counts _n_updates the same way)
  int64_t optimizer_steps = 0;
  bool early_stopped = false;  // target_kl ended the update
};

// The per-minibatch loss terms of one update, averaged into UpdateStats as SB3 logs them
// (approx_kl over the last epoch's minibatches only). Shared by both learner backends.
class UpdateLossLog {
 public:
  void StartEpoch() { approx_kls_.clear(); }
  void Add(double policy_loss, double value_loss, double entropy_loss, double clip_fraction,
           double approx_kl);
  // Writes the means into stats (0 where nothing was added).
  void WriteMeans(UpdateStats* stats) const;

 private:
  std::vector<double> pg_losses_, value_losses_, entropy_losses_, clip_fractions_, approx_kls_;
};

// Seconds spent, accumulated across calls.
struct UpdateTiming {
  double forward = 0, backward = 0, optimizer = 0;
  double communicate = 0;  // data-parallel: waiting in the gradient and loss sums
};

}  // namespace rlt::learn

#endif  // RLT_LEARN_PPO_H_
