// rltrade learn: the interface PpoTrainer drives, implemented by NativeLearner (MLP
// policies on the native engine, native_learner.h), RecurrentLearner (LSTM policies,
// recurrent_learner.h) and, in builds with LibTorch, TorchLearner ([policy] backend =
// "torch", torch_learner.h). Parameters and Adam state cross this interface as named
// float32 tensors (LearnerState), the checkpoint format; no LibTorch type appears here.
// Not thread-safe.
#ifndef RLT_LEARN_LEARNER_H_
#define RLT_LEARN_LEARNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/rng.h"
#include "core/status.h"
#include "env/env.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "learn/rollout.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// Data-parallel training over a group of processes (Learner::
// SetDataParallel). Each member steps environments first_env .. first_env + num_envs - 1
// of the group's global_envs and holds their part of the rollout.
struct DataParallel {
  Collective* collective = nullptr;  // not owned
  int64_t first_env = 0;
  int64_t global_envs = 0;
  uint64_t seed = 0;  // the run's seed: the streams below derive from it
};

// The seed of one random stream of data-parallel training: a hash of the run's seed, the
// stream's kind and its coordinates (environment, step or update, epoch).
uint64_t StreamSeed(uint64_t seed, uint64_t kind, uint64_t a, uint64_t b, uint64_t c);

// A learner's parameters and Adam state, each tensor under LibTorch's parameter name and
// shape ("log_std", "pi_net.0.weight", ..., "lstm_actor.weight_ih_l0", ...), float32.
struct LearnerState {
  native::TensorFile params;               // every parameter (a checkpoint's policy.rlt)
  native::TensorFile exp_avg, exp_avg_sq;  // Adam's moments, same names; empty when adam_step == 0
  int64_t adam_step = 0;                   // Adam steps taken (0: no moments yet)
  double lr = 0;                           // the learning rate of the last update
};

// An Rng's state as 6 int64 words (4 state words, the spare normal's bits, its flag), and
// back (a DataError naming `origin` unless there are 6 words).
std::vector<int64_t> RngStateWords(const RngState& state);
Result<RngState> RngStateFromWords(const std::vector<int64_t>& words, const std::string& origin);

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

  // Parameters and Adam state (moments, step count, learning rate). ImportState() takes
  // every parameter of this learner from s.params by name (and the moments when
  // s.adam_step > 0); a missing tensor or another shape is a DataError naming `origin` and
  // the tensor, and then nothing changes.
  virtual LearnerState ExportState() const = 0;
  virtual Status ImportState(const LearnerState& s, const std::string& origin) = 0;

  // Mean of exp(log_std) (Box actions; 0 otherwise).
  virtual double MeanStd() const = 0;
  // Whether this is the torch backend (TorchLearner), whose random stream is LibTorch's.
  virtual bool torch_backend() const { return false; }
  // The state of the learner's random stream (action sampling, minibatch permutations), as
  // int64 words for checkpoints; SetRngWords() takes back what RngWords() gave (a
  // DataError naming `origin` otherwise).
  virtual std::vector<int64_t> RngWords() const = 0;
  virtual Status SetRngWords(const std::vector<int64_t>& words, const std::string& origin) = 0;
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

  // Makes this learner one member of a data-parallel group whose run equals one process's
  // run with all global_envs environments (up to the order of floating-point sums); each
  // learner documents its streams and minibatches. The learner's own rng is then unused.
  // REQUIRES: dp.collective != nullptr, dp.global_envs >= 1.
  void SetDataParallel(const DataParallel& dp) {
    RLT_CHECK(dp.collective != nullptr && dp.global_envs >= 1);
    dp_ = dp;
  }
  // The group's vector step (before each Act()) and update index (before each Update()):
  // coordinates of the per-environment random streams.
  void set_vector_step(int64_t step) { vector_step_ = step; }
  void set_update_index(int64_t update) { update_index_ = update; }
  // FNV-1a of the parameters' bytes: equal on every member after each update.
  virtual uint64_t ParamHash() const = 0;

 protected:
  const std::optional<DataParallel>& data_parallel() const { return dp_; }
  int64_t update_index() const { return update_index_; }
  // Data-parallel: one generator per environment of this member for this vector step,
  // environment e's seeded StreamSeed(seed, 1, e, vector step, 0) (n generators).
  Rng* ActStreams(int n);

 private:
  std::optional<DataParallel> dp_;
  int64_t vector_step_ = 0, update_index_ = 0;
  std::vector<Rng> act_rngs_;
};

// FNV-1a over n floats' bytes, continuing from h (start with kFnvOffset).
inline constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
uint64_t HashFloats(uint64_t h, const float* data, size_t n);

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

// RunPpoEpochs for a member of a data-parallel group (Learner::SetDataParallel), whose
// minibatches are stratified by environment. The member's rollout holds n_envs
// environments of `units` items each (steps, or a recurrent learner's sequence chunks);
// item u of local environment i is perm entry u * n_envs + i. In epoch k of update
// `update`, environment i's items are shuffled by a stream seeded StreamSeed(dp.seed, 2,
// dp.first_env + i, update, k), and minibatch j takes the j-th slice of per_env items of
// every environment (REQUIRES: per_env divides units), so each member's share of every
// minibatch is per_env * n_envs items, whichever member holds the environment. The loss is
// native::PpoLossShared with the group's sums; after backward(), sum_gradients() sums the
// gradient over the group (timed as communication), then step() clips and steps.
UpdateStats RunSharedPpoEpochs(const PpoOptions& options, const PpoLossSettings& settings,
                               const DataParallel& dp, int64_t update, int n_envs, int units,
                               int per_env, std::vector<int64_t>& perm,
                               const PpoMinibatchBuffers& buffers,
                               const std::function<int(int64_t first, int count)>& forward,
                               const std::function<void()>& backward,
                               const std::function<void()>& sum_gradients,
                               const std::function<void()>& step, UpdateTiming* timing);

// Where one named parameter lives in a native learner: its values, its Adam moments (same
// layout) and its shape. `param` is nullptr when the name is unknown.
struct NativeParamSlot {
  float* param = nullptr;
  float* exp_avg = nullptr;
  float* exp_avg_sq = nullptr;
  std::vector<int64_t> shape;
  int64_t size = 0;
};
using NativeParamResolver = std::function<NativeParamSlot(const std::string& name)>;

// The LearnerState of the parameters `names` (in that order), resolved to native slots.
LearnerState ExportSlots(const std::vector<std::string>& names, const NativeParamResolver& resolve,
                         int64_t adam_step, double lr);
// Copies s into the slots of `names` (see Learner::ImportState); all checks come first.
Status ImportSlots(const std::vector<std::string>& names, const NativeParamResolver& resolve,
                   const LearnerState& s, const std::string& origin);

}  // namespace rlt::learn

#endif  // RLT_LEARN_LEARNER_H_
