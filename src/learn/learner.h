// rltrade learn: the interface PpoTrainer drives on the native engine, implemented by
// NativeLearner (MLP policies, native_learner.h) and RecurrentLearner (LSTM policies,
// recurrent_learner.h). Both keep the LibTorch policy and optimizer as the checkpoint and
// evaluation format (CopyToTorch / CopyFromTorch).
// Not thread-safe.
#ifndef RLT_LEARN_LEARNER_H_
#define RLT_LEARN_LEARNER_H_

#include <torch/optim/adam.h>

#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "learn/rollout.h"

namespace rlt::learn {

class Learner {
 public:
  virtual ~Learner() = default;

  // Rollout step t (0 <= t < n_steps, called in order) for the n environments:
  // observations (n, obs_dim); episode_starts (n): 1 where obs is an episode's first
  // observation (recurrent learners zero that env's state first). Writes sampled actions
  // (n, act_dim), values and log-probabilities (n).
  virtual void Act(int t, const float* obs, int n, const float* episode_starts, float* actions,
                   float* values, float* log_probs) = 0;
  // V of k observations (k, obs_dim), row j belonging to environment envs[j]: recurrent
  // learners take one step from that env's current state (not changed), zeroed first where
  // reset[j] != 0 (reset may be nullptr).
  virtual void PredictValues(const float* obs, const int* envs, int k, const float* reset,
                             float* values) = 0;
  // The PPO update on the collected rollout, at learning rate lr.
  virtual UpdateStats Update(RolloutBuffer& buffer, const PpoOptions& options,
                             const PpoLossSettings& settings, double lr, UpdateTiming* timing) = 0;

  // Parameters and Adam state (moments, step count, learning rate) to / from LibTorch.
  virtual void CopyToTorch(ActorCritic& policy, torch::optim::Adam& optimizer) const = 0;
  virtual void CopyFromTorch(ActorCritic& policy, torch::optim::Adam& optimizer) = 0;

  // Mean of exp(log_std) (Box actions; 0 otherwise).
  virtual double MeanStd() const = 0;
  virtual RngState rng_state() const = 0;
  virtual void set_rng_state(const RngState& s) = 0;
  // Name of the first parameter (grads = false) or gradient of the last minibatch
  // (grads = true) holding a NaN or inf; "" when all are finite.
  virtual std::string FirstNonFinite(bool grads) const = 0;
  // Test hook: writes NaN into the first parameter tensor.
  virtual void PoisonFirstParameter() = 0;
  // The recurrent state of every environment, flat (empty for MLP learners), for
  // checkpoints; SetRecurrentStates() takes back what RecurrentStates() gave.
  virtual std::vector<float> RecurrentStates() const { return {}; }
  virtual Status SetRecurrentStates(const std::vector<float>& states) {
    return states.empty() ? Status::Ok()
                          : Status::DataError("recurrent state given to a non-recurrent policy");
  }
};

// The epoch and minibatch loop of learn::PpoUpdate shared by the native learners. Per
// epoch, `perm` (items entries) is a fresh Fisher-Yates permutation drawn from rng and cut
// into groups of per_batch items (the last may be smaller); per group:
//   forward(first, count): evaluates items perm[first, first + count) and returns the
//     number of samples b it covers, with the policy's outputs in outputs.values /
//     log_probs / entropy and the rollout's in outputs.old_* (b each);
//   the PPO loss and its gradients into outputs.d_* (native::PpoLoss); the loss terms are
//     logged as SB3 logs them; the target_kl stop ends the update before this group's step;
//   backward(): gradients of the loss; step(): clipping and Adam.
// Times forward + loss, backward and step into timing (may be nullptr).
struct PpoMinibatchBuffers {
  float *values, *log_probs, *entropy;                             // the policy's
  const float *old_values, *old_log_probs, *advantages, *returns;  // the rollout's
  float *d_values, *d_log_probs, *d_entropy;                       // loss gradients
};
UpdateStats RunPpoEpochs(const PpoOptions& options, const PpoLossSettings& settings, int64_t items,
                         int per_batch, Rng& rng, std::vector<int64_t>& perm,
                         const PpoMinibatchBuffers& buffers,
                         const std::function<int(int64_t first, int count)>& forward,
                         const std::function<void()>& backward, const std::function<void()>& step,
                         UpdateTiming* timing);

// Where one named LibTorch parameter lives in a native learner: its values, its Adam
// moments (same layout) and its shape. `param` is nullptr when the name is unknown.
struct NativeParamSlot {
  float* param = nullptr;
  float* exp_avg = nullptr;
  float* exp_avg_sq = nullptr;
  std::vector<int64_t> shape;
  int64_t size = 0;
};
using NativeParamResolver = std::function<NativeParamSlot(const std::string& name)>;

// Copies every parameter of `policy` (and, when adam_step > 0, Adam moments with that step
// count, else no state) from the native slots into LibTorch, and sets the learning rate.
void CopyNativeToTorch(const NativeParamResolver& resolve, int64_t adam_step, double lr,
                       ActorCritic& policy, torch::optim::Adam& optimizer);
// The reverse; returns the Adam step count found (0 without state) and sets *lr.
int64_t CopyTorchToNative(const NativeParamResolver& resolve, ActorCritic& policy,
                          torch::optim::Adam& optimizer, double* lr);

}  // namespace rlt::learn

#endif  // RLT_LEARN_LEARNER_H_
