// rltrade learn: PpoTrainer — the PPO loop over a VecEnv (SB3 OnPolicyAlgorithm.learn with
// PPO.train and an optional VecNormalize), one Iterate() per rollout + update.
//
// Iterate():
//  1. collect n_steps vector steps: per step ONE batched policy forward for all N envs
//     (observations read from the VecEnv buffer in place, or normalised into the rollout
//     buffer first when norm_obs), actions clipped to the Box bounds when sent
//     to the env (the unclipped sample is stored and scored), rewards normalised when
//     norm_reward, and for every env that was truncated (not terminated)
//     reward += gamma V(terminal_obs), one batched forward for all such envs of the step;
//  2. GAE(lambda) in plain C++ (rollout.h);
//  3. the PPO update (ppo.h) with learning_rate / clip_range / ent_coef read from their
//     schedules at SB3's progress_remaining = 1 - total_steps / total_timesteps.
// Episode statistics (rollout/ep_rew_mean, ep_len_mean) come from the VecEnv's unnormalised
// episode_returns/lengths, over the last 100 finished episodes.
//
// Ownership: borrows the VecEnv (must outlive the trainer); owns the learner (policy,
// optimizer, random stream), the normaliser and the rollout buffer. The constructor resets
// the VecEnv with `seed`; the policy's initial weights are the native engine's seeded
// initialisation (native/actor_critic.h), whichever backend trains.
// Determinism: same seed, same options and same thread counts -> same results.
// Backends ([policy] backend): "native" runs the forwards, the update and Adam on
// NativeLearner (native_learner.h; recurrent policies on RecurrentLearner); "torch" on
// TorchLearner (LibTorch, torch_learner.h; only in builds with LibTorch). Both exchange
// parameters and Adam state as a LearnerState (learner.h), which checkpoints and
// evaluation read, so a run of either backend is evaluated, resumed and converted alike.
// Not thread-safe.
#ifndef RLT_LEARN_TRAINER_H_
#define RLT_LEARN_TRAINER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "env/vec_env.h"
#include "learn/learner.h"
#include "learn/native_learner.h"
#include "learn/normalize.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "learn/rollout.h"

namespace rlt::learn {

// What one iteration reports, with SB3's log names (see Named()).
struct IterationStats {
  double ep_rew_mean = 0, ep_len_mean = 0;  // valid when episodes_seen > 0
  int64_t episodes_seen = 0;                // in the 100-episode window
  UpdateStats update;
  double explained_variance = 0;
  double std = 0;  // Box only: mean of exp(log_std)
  bool has_std = false;
  double learning_rate = 0, clip_range = 0, ent_coef = 0;
  double fps = 0;
  int64_t total_timesteps = 0, iterations = 0;
  // The rollout was cut short by the interrupt flag (set_interrupt_flag): no update ran and
  // every other field is unset.
  bool interrupted = false;
  // Algorithms other than PPO (evolution strategies, learn/es.h): their own rows, which
  // replace the train/* rows of `update` and the PPO settings in Named().
  std::vector<std::pair<std::string, double>> algo_rows;

  // ("rollout/ep_rew_mean", v), ("train/value_loss", v), ... in SB3's names; the rollout/*
  // rows only once an episode has finished, train/std only for Box actions.
  std::vector<std::pair<std::string, double>> Named() const;
};

// Seconds spent per phase, accumulated over the trainer's life. The trainer fills all but
// `logging`, which the training loop adds (metrics rows, status file, checkpoints).
struct TrainerTiming {
  double env_step = 0, inference = 0, gae = 0;
  double update_forward = 0, backward = 0, optimizer = 0;
  double logging = 0;      // metrics / status / checkpoint writing (added by the caller)
  double communicate = 0;  // data-parallel: waiting in the group's sums and gathers
};

// An action space the trainers can use: Discrete(n >= 1), or a Box whose bounds have its
// dimension. Otherwise an InvalidArgument naming the environment.
Status ValidateActionSpace(const env::EnvSpec& spec);

// What the training loop (train/train.cc) drives, one Iterate() per update: PpoTrainer
// (PPO and recurrent PPO) or EsTrainer (evolution strategies, learn/es.h). Both train the
// actor-critic of their PolicyOptions with a VecNormalizer; its parameters (a tensor file,
// LibTorch's parameter names) and the normaliser are what checkpoints, evaluation and
// every later command read.
class Trainer {
 public:
  virtual ~Trainer() = default;
  virtual Result<IterationStats> Iterate() = 0;
  virtual int64_t total_steps() const = 0;
  virtual int64_t iterations() const = 0;
  virtual const TrainerTiming& timing() const = 0;
  virtual TrainerTiming& mutable_timing() = 0;
  // The policy's parameters, float32 under LibTorch's names and shapes (policy.rlt).
  virtual native::TensorFile PolicyParameters() = 0;
  virtual const PolicyOptions& policy_options() const = 0;
  virtual VecNormalizer& normalizer() = 0;
  virtual void set_interrupt_flag(const std::atomic<int>* flag) = 0;
  // Whether Iterate() may stop at the interrupt flag part-way (then the training loop
  // writes safety checkpoints before long rollouts, train/train.cc).
  virtual bool cuts_rollouts() const = 0;
  // Makes this trainer one member of a group that trains one policy (see the trainers).
  virtual Status EnableDataParallel(Collective* group) = 0;
  virtual Collective* group() const = 0;
  // Writes this trainer's whole state as the checkpoint directory `dir`, in its
  // algorithm's format (learn/checkpoint.h), with `extra_files` (name -> content) beside
  // it; loads such a directory back into a trainer built with the same settings. Defined
  // in checkpoint.cc; a data-parallel trainer's calls are collectives of its group.
  virtual Status Save(const std::filesystem::path& dir,
                      const std::map<std::string, std::string>& extra_files) = 0;
  virtual Status Load(const std::filesystem::path& dir) = 0;
};

class PpoTrainer : public Trainer {
 public:
  // Validates the options against the env, then constructs.
  // `threads`: the run's thread count for the recurrent learner (which splits actor and
  // critic over two workers whatever the env count); 0 = venv.threads(). The MLP native
  // learner's data-parallel shards follow venv.threads().
  static Result<std::unique_ptr<PpoTrainer>> Create(env::VecEnv& venv,
                                                    const PolicyOptions& policy_options,
                                                    const PpoOptions& ppo_options, uint64_t seed,
                                                    int threads = 0);
  // REQUIRES: options valid (ValidatePolicyOptions, ValidatePpoOptions).
  PpoTrainer(env::VecEnv& venv, const PolicyOptions& policy_options, const PpoOptions& ppo_options,
             uint64_t seed, int threads = 0);
  PpoTrainer(const PpoTrainer&) = delete;
  PpoTrainer& operator=(const PpoTrainer&) = delete;

  // Collects one rollout and updates. Fails (without aborting) when a loss, a gradient or a
  // parameter is not finite; the message names the tensor and the update.
  Result<IterationStats> Iterate() override;
  // Interrupts (SIGINT/SIGTERM in `rltrade train`): the rollout reads *flag before every
  // vector step. When it is set and the rest of the rollout would take more than
  // kInterruptSeconds at the pace so far, the rollout stops there and Iterate() returns
  // stats with `interrupted` (no update; total_steps() back at the rollout's start). The
  // trainer's environments have then moved past its last update, so it must not be
  // checkpointed or iterated again (REQUIRES). A short rest is finished as usual, so a
  // signal during a short rollout still ends with a normal update. nullptr: never.
  static constexpr double kInterruptSeconds = 1.0;
  void set_interrupt_flag(const std::atomic<int>* flag) override { interrupt_ = flag; }
  bool cuts_rollouts() const override { return group_ == nullptr; }

  // Data-parallel training: makes this trainer member group->rank() of a
  // group of group->size() trainers, each with venv.num_envs() environments, that train one
  // policy. Call once, right after construction (before Iterate() or set_state()); returns
  // an error when the settings do not allow it (ValidateDataParallel). From then on:
  //  - the environments are reset as environments rank * num_envs + i of the group's run
  //    (env i seeded seed + rank * num_envs + i);
  //  - the learner draws from per-environment streams and shares minibatches, loss and
  //    gradient with the group (Learner::SetDataParallel; MLP and recurrent policies);
  //  - the observation and reward normalisers use all members' statistics;
  //  - total_steps() counts every member's steps, and the episode window and explained
  //    variance cover every member's environments (episodes ordered by step, then global
  //    environment index, as one process would see them);
  //  - every update ends by comparing the members' parameter hashes: a mismatch is an
  //    error naming the ranks;
  //  - the interrupt flag does not cut rollouts (the members would disagree on where).
  // So the group's run equals this trainer alone with group->size() * num_envs environments
  // and a LocalCollective (up to the order of floating-point sums). `group` is not owned.
  Status EnableDataParallel(Collective* group) override;
  Collective* group() const override { return group_; }
  Status Save(const std::filesystem::path& dir,
              const std::map<std::string, std::string>& extra_files) override;
  Status Load(const std::filesystem::path& dir) override;
  uint64_t seed() const { return seed_; }
  // Starts every environment afresh (seeded from `seed`: env i with seed + first env + i),
  // forgets the normaliser's per-env discounted returns, and marks every env's next
  // observation as an episode start; the policy, optimiser, statistics and counters stay.
  // A data-parallel resume on another number of ranks does this (learn/checkpoint.h).
  void RestartEnvironments(uint64_t seed);

  int64_t total_steps() const override { return total_steps_; }
  int64_t iterations() const override { return iterations_; }
  const TrainerTiming& timing() const override { return timing_; }
  TrainerTiming& mutable_timing() override { return timing_; }
  const PolicyOptions& policy_options() const override { return policy_options_; }
  const PpoOptions& ppo_options() const { return ppo_options_; }
  env::VecEnv& venv() { return venv_; }
  native::TensorFile PolicyParameters() override { return learner_->ExportState().params; }
  VecNormalizer& normalizer() override { return normalizer_; }
  // The learner: a NativeLearner (MLP policies, backend = "native"), a RecurrentLearner
  // (recurrent policies) or a TorchLearner (backend = "torch"). Its ExportState() /
  // ImportState() are the parameters and Adam state checkpoints save and restore.
  Learner* learner() { return learner_.get(); }
  // The MLP native learner (nullptr with backend = "torch" or a recurrent policy).
  NativeLearner* native_learner() { return dynamic_cast<NativeLearner*>(learner_.get()); }
  // The last rollout (valid after Iterate()).
  RolloutBuffer& rollout() { return buffer_; }

  // Everything besides the learner's and the normaliser's state that a checkpoint must carry.
  struct State {
    int64_t total_steps = 0, iterations = 0;
    std::vector<uint8_t> last_episode_starts;          // (N)
    std::vector<std::pair<double, int64_t>> episodes;  // last <= 100 (return, length)
  };
  State state() const;
  // Restores counters and episode window; the next Iterate() continues from them.
  // REQUIRES: state.last_episode_starts.size() == num_envs.
  void set_state(const State& state);

 private:
  // False when the interrupt flag cut the rollout short.
  bool CollectRollout();
  void StepOnce(int t);
  void BootstrapTruncated(float* rewards);
  void PredictValues(int n, const int* envs, const float* reset);
  IterationStats Update();
  Status CheckFinite(const IterationStats& s);
  Status CheckGroupAgrees();

  env::VecEnv& venv_;
  PolicyOptions policy_options_;
  PpoOptions ppo_options_;
  int num_envs_, obs_dim_, act_dim_;
  VecNormalizer normalizer_{nullptr};
  std::unique_ptr<Learner> learner_;
  RolloutBuffer buffer_;
  std::vector<float> env_actions_;                   // (N, act_dim) clipped actions sent to the env
  std::vector<float> last_episode_starts_;           // (N)
  std::vector<float> scratch_obs_;                   // (N, obs_dim)
  std::vector<float> scratch_values_;                // (N)
  std::vector<int> truncated_envs_;                  // (<= N)
  std::vector<uint8_t> done_scratch_;                // (N)
  std::deque<std::pair<double, int64_t>> episodes_;  // last 100 (return, length)
  int64_t total_steps_ = 0, iterations_ = 0;
  int64_t steps_at_start_ = 0;
  std::chrono::steady_clock::time_point start_time_;
  TrainerTiming timing_;
  const std::atomic<int>* interrupt_ = nullptr;
  uint64_t seed_ = 0;
  Collective* group_ = nullptr;  // data-parallel group (not owned), nullptr = alone
  // Data-parallel: episodes finished during this rollout (step, global env, return, length).
  struct FinishedEpisode {
    int64_t t, env;
    double ret;
    int64_t len;
  };
  std::vector<FinishedEpisode> finished_;
  void MergeGroupEpisodes();
  bool interrupted_ = false;  // a rollout was cut short: the state is partial
};

// The one place the learner's thread counts are set; n = the run's resolved [run] threads.
// The threading model (core/thread_pool.h): matrix products, where threads pay off, run
// on OpenBLAS's pool with n threads (OpenBLAS itself keeps products too small to split on
// one thread); once the torch plug-in is loaded (torch_plugin.h; now or later) LibTorch's
// intra-op pool (libgomp) gets 1 thread, so its element-wise ops run inline on the caller and no
// second compute pool competes with OpenBLAS's for the cores (measured on 2 cores,
// intraday_original.toml: 2,523 env steps/s against 1,924 with both pools at 2 threads). Without
// OpenBLAS (no openblas_set_num_threads symbol) LibTorch gets the n threads instead. Inter-op
// threads: 1 (when still allowed: only before any inter-op work). REQUIRES: n >= 1.
void SetComputeThreads(int n);
// OpenBLAS's thread count alone (no-op without OpenBLAS). The native learner's
// data-parallel update sets 1 (native_learner.h). REQUIRES: n >= 1.
void SetBlasThreads(int n);
// LibTorch's default CPU generator is process-wide; code that builds LibTorch modules from
// several threads at once (policies loaded by parallel tune trials) holds this mutex around
// each construction. Training no longer draws from it (the initial weights are native).
std::mutex& GlobalGeneratorMutex();

}  // namespace rlt::learn

#endif  // RLT_LEARN_TRAINER_H_
