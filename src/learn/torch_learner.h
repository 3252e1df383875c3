// rltrade learn: the torch backend of PpoTrainer ([policy] backend = "torch").
//
// TorchLearner runs the rollout forwards, the PPO update and Adam on LibTorch: the
// ActorCritic module (torch_policy.h), autograd and torch::optim::Adam (torch_ppo.h). It is
// the oracle the native learner is checked against and the backend `bench train --backends
// native,torch` compares. It starts from the parameters it is given (PpoTrainer passes the
// native engine's seeded initialisation, so both backends start from the same weights for a
// seed), samples actions and draws minibatch permutations with its own LibTorch generator
// (seeded with the run's seed; its state is checkpointed), and exchanges parameters and
// Adam state as a LearnerState (learner.h), like the native learners.
// Compiled with LibTorch only (RLT_WITH_TORCH=ON). Not thread-safe.
#ifndef RLT_LEARN_TORCH_LEARNER_H_
#define RLT_LEARN_TORCH_LEARNER_H_

#include <torch/optim/adam.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "env/env.h"
#include "learn/learner.h"
#include "learn/torch_policy.h"

namespace rlt::learn {

class TorchLearner : public Learner {
 public:
  // REQUIRES: ValidatePolicyOptions(options), !options.is_recurrent(), `initial` holds every
  // parameter of the module with its shape.
  TorchLearner(int obs_dim, const env::ActionSpace& space, const PolicyOptions& options,
               const LearnerState& initial, uint64_t seed);

  void Act(int t, const float* obs, int n, const float* episode_starts, float* actions,
           float* values, float* log_probs) override;
  void PredictValues(const float* obs, const int* envs, int k, const float* reset,
                     float* values) override;
  UpdateStats Update(RolloutBuffer& buffer, const PpoOptions& options,
                     const PpoLossSettings& settings, double lr, UpdateTiming* timing) override;
  LearnerState ExportState() const override;
  Status ImportState(const LearnerState& s, const std::string& origin) override;
  double MeanStd() const override;
  bool torch_backend() const override { return true; }
  // The generator's state bytes, 8 to a word after a leading byte count.
  std::vector<int64_t> RngWords() const override;
  Status SetRngWords(const std::vector<int64_t>& words, const std::string& origin) override;
  std::string FirstNonFinite(bool grads) const override;
  void PoisonFirstParameter() override;
  uint64_t ParamHash() const override;

  ActorCritic& policy() { return policy_; }
  torch::optim::Adam& optimizer() { return *optimizer_; }
  at::Generator& generator() { return generator_; }

 private:
  int obs_dim_;
  ActorCritic policy_{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer_;
  at::Generator generator_;
};

// A LearnerState from a LibTorch policy and optimizer (Adam moments keyed as LibTorch keys
// them), and into them: ImportTorchState checks every name and shape first (a DataError
// naming `origin`), then copies.
LearnerState ExportTorchState(ActorCritic& policy, torch::optim::Adam& optimizer);
Status ImportTorchState(const LearnerState& s, ActorCritic& policy, torch::optim::Adam& optimizer,
                        const std::string& origin);

// A TorchLearner starting from `initial` (the plug-in's TorchApi::make_learner).
std::unique_ptr<Learner> MakeTorchLearner(int obs_dim, const env::ActionSpace& space,
                                          const PolicyOptions& options, const LearnerState& initial,
                                          uint64_t seed);
// LibTorch's intra-op thread count, and inter-op 1 while that is still allowed (only before
// any inter-op work); TorchApi::set_threads.
void SetTorchThreads(int intra_op);

}  // namespace rlt::learn

#endif  // RLT_LEARN_TORCH_LEARNER_H_
