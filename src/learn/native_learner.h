// rltrade learn: the native backend of PpoTrainer ([policy] backend = "native").
//
// NativeLearner runs the rollout forwards and the PPO update on native::ActorCritic,
// native::PpoLoss and native::Adam (src/native/, no LibTorch), with exactly the semantics
// of the LibTorch path (torch_policy.h, torch_ppo.h; checked against LibTorch autograd in
// native_oracle_test.cc). It starts from native::ActorCritic's own seeded initialisation
// (SB3's orthogonal scheme, our RNG); the torch backend copies those same initial weights,
// so both backends start from the same policy for a seed. Parameters and Adam state go to
// and from checkpoints as a LearnerState (learner.h).
// Differences from the torch path, by design: actions are sampled and minibatch
// permutations drawn with its own rlt::Rng (checkpointed), not torch's generator, so the
// two backends follow different (equally distributed) random streams.
// Threads: with `threads` > 1 the update is data-parallel. Each minibatch's rows are cut
// into `threads` contiguous shards (WorkerPool::Slice); worker w gathers and evaluates its
// shard into its own workspace, the loss and its per-sample gradients are computed once
// over the whole minibatch (advantage normalisation and the means need all rows), worker w
// backpropagates its shard into its own gradient array, and the arrays are summed in
// worker order before clipping and Adam. One hand-off per phase, no locks; the result
// depends on the thread count (the order of float additions), never on timing, so a run
// resumed with its recorded thread count stays bit-identical. With one thread the update
// is the plain serial one. The learner's WorkerPool sleeps while the environments step
// (core/thread_pool.h), and OpenBLAS is set to one thread (SetComputeThreads' count is for
// LibTorch runs): the shards are the parallelism, and concurrent callers would otherwise
// queue on OpenBLAS's own pool.
// Not thread-safe.
#ifndef RLT_LEARN_NATIVE_LEARNER_H_
#define RLT_LEARN_NATIVE_LEARNER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/rng.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "env/env.h"
#include "learn/learner.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "learn/rollout.h"
#include "native/actor_critic.h"
#include "native/adam.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// Whether the native engine implements this policy (every MLP actor-critic does).
bool NativeSupports(const PolicyOptions& options);

// The native network of an MLP policy.
native::ActorCriticSpec NativeSpec(int obs_dim, const env::ActionSpace& space,
                                   const PolicyOptions& options);
// That network with the parameters of `params` (by name; a missing tensor or another
// shape is a DataError naming `origin`). REQUIRES: NativeSupports(options).
Result<std::unique_ptr<native::ActorCritic>> NativeNetFromParameters(
    const native::TensorFile& params, int obs_dim, const env::ActionSpace& space,
    const PolicyOptions& options, const std::string& origin);

class NativeLearner : public Learner {
 public:
  // Parameters initialised by native::ActorCritic from `seed`. REQUIRES:
  // NativeSupports(options).
  NativeLearner(int obs_dim, const env::ActionSpace& space, const PolicyOptions& options,
                uint64_t seed, int threads = 1);
  NativeLearner(const NativeLearner&) = delete;
  NativeLearner& operator=(const NativeLearner&) = delete;

  // One forward for n observations (n, obs_dim): sampled actions (n, act_dim), values and
  // log-probabilities (n).
  void Act(const float* obs, int n, float* actions, float* values, float* log_probs);
  void PredictValues(const float* obs, int n, float* values);

  // Learner: the above (t, episode starts and env indices do not matter to an MLP).
  void Act(int, const float* obs, int n, const float*, float* actions, float* values,
           float* log_probs) override {
    Act(obs, n, actions, values, log_probs);
  }
  void PredictValues(const float* obs, const int*, int k, const float*, float* values) override {
    PredictValues(obs, k, values);
  }

  // learn::PpoUpdate with the native engine: same epochs, minibatches, loss, KL stop,
  // clipping and Adam (at learning rate lr).
  UpdateStats Update(RolloutBuffer& buffer, const PpoOptions& options,
                     const PpoLossSettings& settings, double lr, UpdateTiming* timing) override;

  LearnerState ExportState() const override;
  Status ImportState(const LearnerState& s, const std::string& origin) override;

  // As a member of a data-parallel group (Learner::SetDataParallel), per-environment random
  // streams make it so that the group's run equals one process's run with all global_envs
  // environments and the same settings (up to the order of floating-point sums):
  //  - the action of global environment e at global vector step s is drawn from a stream
  //    seeded StreamSeed(seed, 1, e, s, 0) (set_vector_step() before each Act());
  //  - minibatches are stratified by environment: in epoch k of update u, environment e's
  //    n_steps samples are shuffled by a stream seeded StreamSeed(seed, 2, e, u, k)
  //    (set_update_index() before Update()), and minibatch j takes the j-th slice of
  //    batch_size / global_envs samples of every environment, so each member's share of
  //    every minibatch is the same size (REQUIRES: global_envs divides batch_size and
  //    batch_size / global_envs divides n_steps; ValidateDataParallel);
  //  - the loss's advantage statistics, loss terms and approx-KL are sums over the group
  //    (native::PpoLossShared), and the gradient is summed with one flat SumFloats per
  //    minibatch before clipping and Adam, which every member then applies identically.
  // The learner's own rng_ is not used.
  uint64_t ParamHash() const override;

  native::ActorCritic& net() { return net_; }
  const std::vector<float>& grads() const { return grads_; }
  double MeanStd() const override;
  RngState rng_state() const { return rng_.state(); }
  std::vector<int64_t> RngWords() const override { return RngStateWords(rng_.state()); }
  Status SetRngWords(const std::vector<int64_t>& words, const std::string& origin) override;
  std::string FirstNonFinite(bool grads) const override;
  void PoisonFirstParameter() override;

 private:
  NativeParamResolver Resolver() const;
  std::vector<std::string> ParamNames() const;
  // Copies minibatch rows [lo, hi) (minibatch starting at `start` of the permutation).
  void Gather(int64_t start, int lo, int hi, const float* obs, const float* actions,
              const float* old_values, const float* old_log_probs, const float* advantages,
              const float* returns);
  // threads > 1: gather + Evaluate per shard into values_, log_probs_, entropy_.
  void ParallelForward(int64_t start, int b, const float* obs, const float* actions,
                       const float* old_values, const float* old_log_probs, const float* advantages,
                       const float* returns);
  // threads > 1: Backward per shard, summed into grads_ (and sum_squares_ per range).
  void ParallelBackward(int b);
  // threads > 1: gradient clipping and the Adam step, on parameter ranges.
  void ParallelStep(double max_grad_norm);
  // The gathered-minibatch buffers for minibatches of up to `rows` rows.
  void SizeMinibatch(size_t rows);

  native::ActorCritic net_;
  native::Adam adam_;
  Rng rng_;
  std::vector<float> grads_;          // (num_params) gradients of the last minibatch
  std::unique_ptr<WorkerPool> pool_;  // threads > 1: the data-parallel update
  // Per worker: workspace and gradients (worker 0 uses ws_ / grads_ when alone).
  std::vector<native::ActorCriticWorkspace> shard_ws_;
  std::vector<std::vector<float>> shard_grads_;
  std::vector<double> sum_squares_;  // per worker: its parameter range's squared gradients
  native::ActorCriticWorkspace ws_;
  // Gathered minibatch, (batch_size, ...).
  std::vector<float> mb_obs_, mb_actions_, mb_values_, mb_log_probs_, mb_advantages_, mb_returns_;
  std::vector<float> values_, log_probs_, entropy_, d_values_, d_log_probs_, d_entropy_;
  std::vector<int64_t> perm_;
  int last_batch_ = 0;  // rows of the minibatch being processed
};

// Whether options and environment counts allow data-parallel training with `members`
// processes of `num_envs` environments each; the message names the setting to change.
Status ValidateDataParallel(const PpoOptions& options, const PolicyOptions& policy, int num_envs,
                            int members);

}  // namespace rlt::learn

#endif  // RLT_LEARN_NATIVE_LEARNER_H_
