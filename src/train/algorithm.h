// rltrade train: the training algorithms, one registry entry each (as env/registry.h is
// for environments), chosen by `[algo] name`.
//
// An entry owns everything about its algorithm that the training code would otherwise
// branch on: it binds and validates its [algo] keys (messages name file:line), says how
// many environments its trainer steps and how much memory it will hold (checked before
// anything big is built), creates its learn::Trainer (which saves and loads its own
// checkpoint state, learn/trainer.h), writes its resolved [algo] section for the run's
// config.toml and its defaults for --resume's diff, and describes itself to the
// benchmarks (SessionShape). train.cc, perf/ and learn/checkpoint.cc hold no
// per-algorithm branch. Adding an algorithm is one entry in algorithm.cc and its trainer in
// learn/.
//
// Entries:
//   ppo            PPO (learn::PpoTrainer); with `[policy] recurrent = "lstm"` the
//                  recurrent learner (recurrent PPO), as before
//   recurrent_ppo  recurrent PPO by name (SB3-contrib's RecurrentPPO): PPO's keys, and an
//                  MLP policy is refused
//   es             evolution strategies, OpenAI-ES or ARS (learn::EsTrainer, learn/es.h)
#ifndef RLT_TRAIN_ALGORITHM_H_
#define RLT_TRAIN_ALGORITHM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "env/env.h"
#include "env/vec_env.h"
#include "learn/policy.h"
#include "learn/trainer.h"
#include "train/train.h"
#include "train/train_options.h"

namespace rlt::train {

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  virtual std::string name() const = 0;

  // Binds [algo] (every key but name and total_timesteps) and checks what the keys alone
  // decide. `total_steps` is [run] total_steps, the run's length.
  virtual Status Bind(const config::Config& config, int64_t total_steps) = 0;
  // Checks what depends on the run, the policy and the environment count: errors name
  // each key's place, all of them at once (config::JoinErrors).
  virtual Status Check(const config::Config& config, const RunOptions& run,
                       const learn::PolicyOptions& policy, int64_t num_envs) const = 0;
  // The environments the trainer steps: [env] num_envs, or one per thread (ES).
  virtual int NumEnvs(int configured, int threads) const = 0;
  // Refused when the run would need more than 80% of `available` bytes (<= 0: unknown),
  // naming the keys to lower. `spec` is one probe environment's.
  virtual Status CheckMemory(const config::Config& config, const learn::PolicyOptions& policy,
                             const env::EnvSpec& spec, int64_t num_envs,
                             int64_t available) const = 0;
  virtual Result<std::unique_ptr<learn::Trainer>> CreateTrainer(env::VecEnv& venv,
                                                                const learn::PolicyOptions& policy,
                                                                uint64_t seed,
                                                                int threads) const = 0;
  // [algo] as the run's config.toml records it (every effective value; total_timesteps is
  // [run] total_steps and not repeated).
  virtual std::vector<std::pair<std::string, std::string>> ResolvedRows() const = 0;
  // The keys' defaults, as ResolvedRows of an unset [algo] would give them.
  virtual std::vector<std::pair<std::string, std::string>> DefaultRows() const = 0;
  // Fills the algorithm's part of a benchmark's shape (algo, steps_per_update,
  // dense_update, update_note, workload and the PPO fields).
  virtual void DescribeShape(int64_t num_envs, SessionShape& shape) const = 0;
};

struct AlgorithmEntry {
  const char* name;
  const char* summary;  // one line, for messages and docs
  std::unique_ptr<Algorithm> (*make)();
  // Under mpirun the ranks sum a gradient per minibatch (what `bench mpi` models), rather
  // than exchanging results once per update.
  bool minibatch_allreduce;
  const char* exchange;  // what the ranks exchange, for messages
};

// Every algorithm, in the order messages list them (ppo first: the default).
const std::vector<AlgorithmEntry>& Algorithms();

// The entry `[algo] name` selects ("ppo" when unset); an unknown name is an error naming
// its place and every registered name.
Result<const AlgorithmEntry*> FindAlgorithm(const config::Config& config);
// FindAlgorithm's algorithm, unbound.
Result<std::unique_ptr<Algorithm>> MakeAlgorithm(const config::Config& config);

}  // namespace rlt::train

#endif  // RLT_TRAIN_ALGORITHM_H_
