// rltrade learn: evolution strategies (`[algo] name = "es"`) — OpenAI-ES
// (Salimans et al. 2017, "Evolution Strategies as a Scalable Alternative to Reinforcement
// Learning") and ARS (Mania et al. 2018, "Simple random search provides a competitive
// approach to reinforcement learning", V2-t), on the actor of the same ActorCritic PPO
// trains, so checkpoints, evaluation, backtests and paper trading read an ES run as they
// read a PPO run.
//
// One generation (Iterate()):
//  1. the population of `population` members is population/2 mirrored pairs: pair p
//     perturbs the actor's parameters theta by +sigma eps_p and -sigma eps_p. eps_p is a
//     slice of a table of `noise_table_size` standard normal floats (OpenAI's shared noise
//     table), which every process generates once from the seed (stream StreamSeed(seed,
//     20, 0, 0, 0)); the slice starts at an offset drawn from StreamSeed(seed, 22,
//     generation, p). So the noise is regenerated from shared seeds, never sent, and
//     reading it costs a memory read instead of a normal draw per parameter;
//  2. every member plays `episodes_per_member` episodes with the deterministic policy
//     (Gaussian mean clipped to the Box bounds, or the argmax of the logits), observations
//     normalised with the statistics frozen at the start of the generation; both members of
//     a pair play the same episodes (episode e of pair p seeded StreamSeed(seed, 21,
//     generation, p, e): common random numbers); a member's fitness is its mean episode
//     return (unshaped, undiscounted env rewards);
//  3. the update, from the fitnesses alone:
//     openai: centred ranks u in [-0.5, 0.5] over all population fitnesses (ties by member
//             index), g = sum_p (u+_p - u-_p) eps_p / population, and Adam (beta 0.9, 0.999,
//             epsilon 1e-8, the bias-corrected step of OpenAI's es.py) on the loss gradient
//             -g + weight_decay theta — the estimator and L2 term as OpenAI's
//             evolution-strategies-starter code computes them;
//     ars:    the top_directions pairs by max(r+, r-) (all pairs when 0), and
//             theta += learning_rate / (b sigma_R) sum (r+ - r-) eps over them, sigma_R
//             the standard deviation of their 2b returns (no update when it is 0);
//  4. observation normalisation (norm_obs): the mean and variance of every observation of
//     every member's episodes this generation are merged into the running statistics
//     (VecNormalizer's, SB3 semantics) that the next generation uses.
//
// Scale-out (EnableDataParallel): rank r of K evaluates a contiguous block of the P pairs,
// P / K each in the first generation, then shares proportional to each rank's measured
// evaluation rate in the previous one (a slower core gets fewer pairs; who evaluates a
// member never changes its result). What crosses the network per generation is each
// member's fitness and episode steps, each rank's rate and each rank's observation sums
// (2 obs_dim + 1 numbers, summed exactly in 128-bit fixed point), in one Allgather; every rank then
// regenerates the noise and applies the same update in the same order. A member's result depends
// only on (seed, generation, member), the update's sums run in member order and the observation
// sums are exact, so the K-rank run equals the one-process run bit for bit, and a checkpoint
// resumes on any number of ranks. Within a process, `threads` workers each own one environment of
// the VecEnv (its other environments are not used) and play their share of the rank's members one
// episode at a time, without synchronising per step.
//
// Only the actor (pi hidden layers and action head) is searched; the value head and log_std
// keep their initial values (ES learns no value function). Not thread-safe.
#ifndef RLT_LEARN_ES_H_
#define RLT_LEARN_ES_H_

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/collective.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "env/vec_env.h"
#include "learn/normalize.h"
#include "learn/policy.h"
#include "learn/trainer.h"
#include "native/actor_critic.h"
#include "native/tensor_file.h"

namespace rlt::learn {

struct EsOptions {
  std::string variant = "openai";  // openai | ars
  int population = 256;            // members per generation (even: population/2 mirrored pairs)
  double sigma = 0.02;             // standard deviation of the parameter perturbations
  double learning_rate = 0.01;     // Adam step size (openai) or ARS step size alpha
  double weight_decay = 0.005;     // openai: L2 coefficient added to the loss gradient
  int top_directions = 0;          // ars: pairs used per update (0 = all)
  int episodes_per_member = 1;     // episodes each member plays; fitness = their mean return
  bool norm_obs = true;            // normalise observations with statistics from all members
  double clip_obs = 10.0;          // clip normalised observations to +-this
  int max_episode_steps = 100000;  // an episode still running after this many steps ends here
  int64_t noise_table_size = 16777216;  // floats in the shared noise table (64 MB)

  template <typename V>
  void VisitFields(V& v) {
    v("variant", &variant, "openai (OpenAI-ES) or ars (augmented random search)",
      {"openai", "ars"});
    v("population", &population, "members per generation (even: mirrored pairs)");
    v("sigma", &sigma, "standard deviation of the parameter perturbations");
    v("learning_rate", &learning_rate, "Adam step size (openai) or ARS step size");
    v("weight_decay", &weight_decay, "openai: L2 coefficient on the parameters");
    v("top_directions", &top_directions, "ars: best pairs used per update (0 = all)");
    v("episodes_per_member", &episodes_per_member, "episodes per member per generation");
    v("norm_obs", &norm_obs, "normalise observations with statistics from every evaluation");
    v("clip_obs", &clip_obs, "clip normalised observations to +-this");
    v("max_episode_steps", &max_episode_steps, "steps after which an episode is cut");
    v("noise_table_size", &noise_table_size,
      "standard normal floats in the shared noise table (> the actor's parameter count)");
  }
};

// `place(key)` names where the key was set in messages ("cfg.toml:12: [algo] sigma");
// nullptr: "[algo] sigma".
Status ValidateEsOptions(const EsOptions& options,
                         const std::function<std::string(const std::string&)>& place = nullptr);

// Centred ranks: fitness i of n gets rank(i) / (n - 1) - 0.5, where rank orders by fitness
// and then by index (so ties are broken deterministically). n = 1 gives 0.
std::vector<double> CentredRanks(const std::vector<double>& fitness);

// The shared noise table: `size` standard normal floats from the stream
// StreamSeed(seed, 20, 0, 0, 0).
std::vector<float> EsNoiseTable(uint64_t seed, int64_t size);
// Where pair `pair`'s perturbation of n floats starts in a table of table_size floats.
// REQUIRES: table_size >= n.
int64_t EsNoiseOffset(uint64_t seed, int64_t generation, int64_t pair, int64_t n,
                      int64_t table_size);

class EsTrainer : public Trainer {
 public:
  // Validates the options, the env's action space and the policy (MLP only), then builds.
  // The actor starts from the native initialisation seeded with `seed` (as PPO's);
  // `threads` evaluation workers (capped at venv.num_envs()).
  static Result<std::unique_ptr<EsTrainer>> Create(env::VecEnv& venv,
                                                   const PolicyOptions& policy_options,
                                                   const EsOptions& options, uint64_t seed,
                                                   int threads);
  EsTrainer(const EsTrainer&) = delete;
  EsTrainer& operator=(const EsTrainer&) = delete;

  Result<IterationStats> Iterate() override;
  int64_t total_steps() const override { return total_steps_; }
  int64_t iterations() const override { return generation_; }
  const TrainerTiming& timing() const override { return timing_; }
  TrainerTiming& mutable_timing() override { return timing_; }
  // Every parameter of the actor-critic with the actor's current values (value head and
  // log_std at their initial values).
  native::TensorFile PolicyParameters() override;
  VecNormalizer& normalizer() override { return normalizer_; }
  // A generation is never cut short: a signal takes effect after it.
  void set_interrupt_flag(const std::atomic<int>*) override {}
  bool cuts_rollouts() const override { return false; }
  // Call before the first Iterate(). REQUIRES: every member calls it with its group.
  Status EnableDataParallel(Collective* group) override;
  Collective* group() const override { return group_; }
  Status Save(const std::filesystem::path& dir,
              const std::map<std::string, std::string>& extra_files) override;
  Status Load(const std::filesystem::path& dir) override;

  const EsOptions& options() const { return options_; }
  const PolicyOptions& policy_options() const override { return policy_options_; }
  env::VecEnv& venv() { return venv_; }
  uint64_t seed() const { return seed_; }
  // The searched parameters (the actor), in this trainer's layout (each layer's weight
  // transposed to (in, out), then its bias).
  const std::vector<float>& theta() const { return theta_; }
  // The last generation's fitnesses, by member (pair p: members 2p (+) and 2p+1 (-)).
  const std::vector<double>& fitness() const { return fitness_; }

  // Everything a checkpoint needs besides the policy parameters and the normaliser: the
  // counters, Adam's moments and theta, as bytes; LoadState() takes them back
  // (checkpoint.h).
  std::string SaveState() const;
  Status LoadState(std::string_view bytes, const std::string& what);
  // Takes every parameter from `file` (a checkpoint's policy parameters; a missing tensor or
  // another shape is a DataError naming `origin`); the actor becomes theta.
  Status LoadPolicyParameters(const native::TensorFile& file, const std::string& origin);

 private:
  EsTrainer(env::VecEnv& venv, const PolicyOptions& policy_options, const EsOptions& options,
            uint64_t seed, int threads);
  struct Layer {
    int in, out;
    size_t offset;  // of the (in, out) weight; the bias follows
  };
  // Plays member m's episodes (this generation) on env `slot`; writes its fitness, steps
  // and observation sums. `params`, `scratch`: per-worker buffers.
  void PlayMember(int slot, int64_t member, std::vector<float>& params, std::vector<float>& scratch,
                  double* env_seconds, double* forward_seconds);
  // The first pair of each rank's block, and `pairs` at the end (ranks + 1 entries).
  std::vector<int64_t> PairBounds(int64_t pairs, int ranks) const;
  void Forward(const float* params, const float* obs, float* action, float* scratch) const;
  void Update();
  // theta from the native network's actor.
  void ThetaFromNet();

  env::VecEnv& venv_;
  PolicyOptions policy_options_;
  EsOptions options_;
  uint64_t seed_;
  int obs_dim_, act_dim_, outputs_;
  bool discrete_;
  std::vector<float> low_, high_;
  bool relu_;
  std::vector<Layer> layers_;
  int width_ = 1;  // the widest layer's outputs
  std::vector<float> theta_;
  std::vector<float> noise_;  // the shared noise table (built by the first Iterate())
  ObsScale obs_scale_;        // this generation's observation normalisation
  std::vector<double> adam_m_, adam_v_;
  int64_t adam_t_ = 0;
  native::ActorCritic net_;  // the whole actor-critic; its actor is copied from theta on demand
  VecNormalizer normalizer_{nullptr};
  WorkerPool pool_;
  Collective* group_ = nullptr;
  LocalCollective alone_;
  int64_t generation_ = 0, total_steps_ = 0;
  TrainerTiming timing_;
  // Last generation, by member over the whole population.
  std::vector<double> fitness_;
  std::vector<int64_t> steps_;
  std::vector<double> obs_sums_;    // (population, 2 obs_dim + 1): sums, squares, count
  std::vector<double> rank_rates_;  // pairs per second each rank evaluated last generation
  double last_grad_norm_ = 0, last_update_norm_ = 0;
};

}  // namespace rlt::learn

#endif  // RLT_LEARN_ES_H_
