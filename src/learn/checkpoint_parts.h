// rltrade learn: the parts of a PPO checkpoint as plain values, and their tensor files.
//
// The files of a checkpoint (learn/checkpoint.h) other than the environments' state are
// tensor files (native/tensor_file.h), readable without LibTorch:
//   policy.rlt      every parameter, float32, under LibTorch's names and shapes
//                   ("log_std", "pi_net.0.weight", ..., "value_net.bias";
//                   recurrent: "lstm_actor.weight_ih_l0", ...)
//   optimizer.rlt   Adam: "step" (int64 scalar: steps taken), "lr" (float64 scalar: the
//                   last update's learning rate) and, when step > 0, "exp_avg.<name>" and
//                   "exp_avg_sq.<name>" (float32, the parameter's shape) for every parameter
//   normalizer.rlt  "obs_mean", "obs_var" (float64 (obs_dim)), "obs_count", "ret_mean",
//                   "ret_var", "ret_count" (float64 scalars), "returns" (float64
//                   (num_envs): each environment's discounted return)
//   state.rlt       "counters" (int64 (2): total steps, updates), "last_episode_starts"
//                   (int64 (num_envs)), "episode_returns" (float64 (k)) and
//                   "episode_lengths" (int64 (k)): the last k <= 100 episodes, oldest
//                   first; "rng" (int64 (w)): the learner's random stream, and "rng_kind"
//                   (int64 scalar: 1 = the native learners' xoshiro256++ words, 2 = the
//                   torch backend's generator bytes); "recurrent_states" (float32: every
//                   environment's LSTM states, recurrent policies only)
// Thread-compatible.
#ifndef RLT_LEARN_CHECKPOINT_PARTS_H_
#define RLT_LEARN_CHECKPOINT_PARTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "learn/learner.h"
#include "learn/normalize.h"
#include "learn/trainer.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// The random stream kinds of state.rlt's "rng_kind".
inline constexpr int64_t kRngNative = 1, kRngTorch = 2;

struct PpoCheckpointParts {
  LearnerState learner;
  NormalizerStats normalizer;
  PpoTrainer::State trainer;
  int64_t rng_kind = kRngNative;
  std::vector<int64_t> rng;
  std::vector<float> recurrent_states;
};

native::TensorFile OptimizerToTensorFile(const LearnerState& s);
// Fills s's adam_step, lr and moments (names and shapes as s.params'). DataError naming
// `origin` for a missing or malformed tensor.
Status OptimizerFromTensorFile(const native::TensorFile& file, const std::string& origin,
                               LearnerState* s);
native::TensorFile NormalizerToTensorFile(const NormalizerStats& s);
Result<NormalizerStats> NormalizerFromTensorFile(const native::TensorFile& file,
                                                 const std::string& origin);
native::TensorFile StateToTensorFile(const PpoCheckpointParts& parts);
// Fills parts' trainer state, rng and recurrent states.
Status StateFromTensorFile(const native::TensorFile& file, const std::string& origin,
                           PpoCheckpointParts* parts);

}  // namespace rlt::learn

#endif  // RLT_LEARN_CHECKPOINT_PARTS_H_
