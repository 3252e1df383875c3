// rltrade learn: the native learner of recurrent (LSTM) PPO ([policy] recurrent = "lstm"),
// sb3-contrib RecurrentPPO's semantics on native::RecurrentActorCritic.
//
// Rollout: each environment carries its LSTM states (h, c) from step to step; where an
// episode starts the state is zeroed before the step. The state entering every chunk of
// sequence_length steps is stored with the rollout.
// Update: the rollout is cut into sequences, one per (environment, chunk) — n_envs *
// n_steps / sequence_length of them. Each epoch shuffles the sequences; a minibatch is
// batch_size / sequence_length whole sequences, evaluated from their stored initial states
// with episode starts inside a sequence resetting the state there, so training computes
// exactly the function the rollout sampled from (before the first update of the epoch).
// Every step is real (no padding): advantages are normalised over the minibatch's steps.
// Loss, KL stop, gradient clipping (global norm over all parameters) and Adam are PPO's
// (ppo.h); Adam runs per parameter group with one step count.
// Bootstrapping: a time-limit truncation adds gamma V(terminal obs) taken one step from the
// env's state after its last step; the last values of the rollout start from the current
// states (zeroed where an episode just ended).
// Threads: with threads >= 2 the actor (LSTM, policy tower) and critic (LSTM, value tower)
// run on two workers at once in the rollout and in the update (separate LSTMs; a shared
// LSTM runs serially). The towers share no parameters, so results do not depend on the
// thread count. Threads beyond 2 are not used.
// Data-parallel (Learner::SetDataParallel): environment e's actions at global
// vector step s come from a stream seeded StreamSeed(seed, 1, e, s, 0), and each minibatch
// takes the same number of chunks from every environment (RunSharedPpoEpochs over the
// chunks, REQUIRES ValidateDataParallel), with the loss sums and one flat gradient sum over
// every parameter group shared by the group; each member keeps its environments' LSTM
// states. So K members of N environments train what one process with K * N environments
// trains in data-parallel mode, up to the order of floating-point sums.
// Differences from sb3-contrib: fixed-length chunks with stored states instead of
// episode-split padded sequences (same gradient per step, no padding to mask).
// Not thread-safe.
#ifndef RLT_LEARN_RECURRENT_LEARNER_H_
#define RLT_LEARN_RECURRENT_LEARNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "env/env.h"
#include "learn/learner.h"
#include "native/adam.h"
#include "native/recurrent_actor_critic.h"

namespace rlt::learn {

// Checks that a recurrent policy's sequences fit the rollout: sequence_length >= 1 divides
// n_steps and batch_size is a multiple of it. Messages name the keys and valid values.
Status ValidateRecurrentPpo(const PolicyOptions& policy, const PpoOptions& ppo);

native::RecurrentSpec MakeRecurrentSpec(int obs_dim, const env::ActionSpace& space,
                                        const PolicyOptions& options);

// The full names of the network's parameters ("lstm_actor.weight_ih_l0", ..., the MLP's).
std::vector<std::string> RecurrentParamNames(const native::RecurrentActorCritic& net);
// The recurrent network of `options` with the parameters of `params` (by full name; a
// missing tensor or another shape is a DataError naming `origin`), for inference.
// REQUIRES: options.is_recurrent().
Result<std::unique_ptr<native::RecurrentActorCritic>> RecurrentNetFromParameters(
    const native::TensorFile& params, int obs_dim, const env::ActionSpace& space,
    const PolicyOptions& options, const std::string& origin);

class RecurrentLearner : public Learner {
 public:
  // Parameters initialised by native::RecurrentActorCritic from `seed`. REQUIRES:
  // options.is_recurrent(), ValidateRecurrentPpo.
  RecurrentLearner(int obs_dim, const env::ActionSpace& space, const PolicyOptions& options,
                   const PpoOptions& ppo, int num_envs, uint64_t seed, int threads);

  void Act(int t, const float* obs, int n, const float* episode_starts, float* actions,
           float* values, float* log_probs) override;
  void PredictValues(const float* obs, const int* envs, int k, const float* reset,
                     float* values) override;
  UpdateStats Update(RolloutBuffer& buffer, const PpoOptions& options,
                     const PpoLossSettings& settings, double lr, UpdateTiming* timing) override;
  LearnerState ExportState() const override;
  Status ImportState(const LearnerState& s, const std::string& origin) override;
  double MeanStd() const override;
  std::vector<int64_t> RngWords() const override { return RngStateWords(rng_.state()); }
  Status SetRngWords(const std::vector<int64_t>& words, const std::string& origin) override;
  std::string FirstNonFinite(bool grads) const override;
  void PoisonFirstParameter() override;
  std::vector<float> RecurrentStates() const override;
  Status SetRecurrentStates(const std::vector<float>& states) override;

  uint64_t ParamHash() const override;

  native::RecurrentActorCritic& net() { return net_; }

 private:
  NativeParamResolver Resolver() const;
  // Gathers minibatch sequences perm_[first, first + m) into the mb_* arrays.
  void Gather(RolloutBuffer& buffer, int64_t first, int m);
  void ClipAndStep(double max_grad_norm);

  native::RecurrentActorCritic net_;
  std::vector<native::Adam> adam_;  // per group
  Rng rng_;
  std::unique_ptr<WorkerPool> pool_;  // threads >= 2: actor and critic at once
  int num_envs_, n_steps_, seq_len_, hidden_;
  native::RecurrentState state_;                     // (num_envs) current states
  std::vector<native::RecurrentState> chunk_state_;  // per chunk: states entering it
  // Gradients of the last minibatch: every group's end to end, group g at
  // [group_offset_[g], group_offset_[g + 1]) (grad_ptrs_[g] points there).
  std::vector<float> grads_;
  std::vector<int64_t> group_offset_;
  std::vector<float*> grad_ptrs_;
  native::RecurrentWorkspace ws_;
  // Gathered minibatch: obs (T, M, obs_dim), starts (T, M), initial states (M, H) ...
  std::vector<float> mb_obs_, mb_starts_, mb_actions_, mb_values_, mb_log_probs_, mb_advantages_,
      mb_returns_;
  std::vector<float> mb_h_pi_, mb_c_pi_, mb_h_vf_, mb_c_vf_;
  std::vector<float> values_, log_probs_, entropy_, d_values_, d_log_probs_, d_entropy_;
  std::vector<float> scratch_h_, scratch_c_;
  std::vector<double> group_sum_squares_;
  std::vector<int64_t> perm_;
};

}  // namespace rlt::learn

#endif  // RLT_LEARN_RECURRENT_LEARNER_H_
