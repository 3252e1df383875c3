// rltrade learn: PolicyRunner — a trained policy loaded from a checkpoint for inference.
//
// What it is: the policy (on the native engine) and the observation statistics
// (VecNormalizer) of one checkpoint directory (a run's final/ or checkpoints/step_<N>/),
// rebuilt from its options.txt (policy.* and ppo.norm_obs / clip_obs / ...) and loaded from
// policy.rlt and normalizer.rlt (or, in a build with LibTorch, a LibTorch-archive
// checkpoint's policy.pt and normalizer.pt). Act() is deterministic: the Gaussian mean
// clipped to the Box bounds, or the argmax of the logits, on observations normalised with
// the stored statistics (never updated). No optimizer, no env state.
// What it is not: a trainer (see trainer.h).
// Ownership: owns its modules. Not thread-safe.
#ifndef RLT_LEARN_INFERENCE_H_
#define RLT_LEARN_INFERENCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "env/env.h"
#include "env/vec_env.h"

namespace rlt::learn {

class PolicyRunner {
 public:
  // Loads `checkpoint_dir` for an env with `obs_dim` and `action`. Errors: not a
  // checkpoint (no FORMAT), a different obs/act shape, unreadable or corrupt files.
  static Result<std::unique_ptr<PolicyRunner>> Load(const std::string& checkpoint_dir, int obs_dim,
                                                    const env::ActionSpace& action);
  ~PolicyRunner();
  PolicyRunner(const PolicyRunner&) = delete;
  PolicyRunner& operator=(const PolicyRunner&) = delete;

  // Deterministic actions and value estimates for n observations.
  // obs: (n, obs_dim); actions: (n, act_dim); values: (n) or nullptr.
  // Recurrent policies ([policy] recurrent = "lstm") carry one LSTM state per row from
  // call to call (zeroed at load, by ResetState() and when n changes): feed the steps of an
  // episode in order and call ResetState() where a new episode starts.
  void Act(const float* obs, int n, float* actions, float* values);
  void ResetState();
  bool recurrent() const;

  // learn::EvaluatePolicy over `venv` (deterministic episodes): the episode returns in
  // finishing order. Fails when episodes < 1.
  Result<std::vector<double>> EvaluateEpisodes(env::VecEnv& venv, int episodes, uint64_t seed);

  int obs_dim() const { return obs_dim_; }
  int act_dim() const { return act_dim_; }

 private:
  struct Impl;
  PolicyRunner(std::unique_ptr<Impl> impl, int obs_dim, int act_dim);
  std::unique_ptr<Impl> impl_;
  int obs_dim_, act_dim_;
};

}  // namespace rlt::learn

#endif  // RLT_LEARN_INFERENCE_H_
