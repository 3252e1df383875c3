// rltrade train: `rltrade train` as a library call — a config in, a run directory out.
//
// RunTraining() reads a TOML config (sections [run], [data], [split], [features], [env],
// [algo], [policy]; see docs/training.md "Configs"), applies `--set section.key=value` overrides,
// builds the environments (and, for market environments, the dataset: bars, causal
// features, a normaliser fitted on the [split] train range only), and trains PPO,
// writing a run directory:
//   config.toml            the resolved config (every effective value, defaults included)
//   metrics.csv / .jsonl   one row per update, SB3's metric names (eval/* when evaluating)
//   events.out.tfevents.*  the same scalars for TensorBoard
//   normalizer.json        market envs: the feature normaliser fitted on [split] train
//   checkpoints/step_<N>/  every run.checkpoint_every env steps (complete, atomic)
// With run.eval_every > 0 the current policy is also evaluated deterministically on a
// separate VecEnv every eval_every env steps (after the update that reaches it, like
// checkpoints), and the metrics gain eval/* columns (see EvalEnvSetup in train_options.h).
//   final/                 the checkpoint at the end of training
//   best/, selection.json  eval_every > 0: the checkpoint of the best validation score and
//                          the record of every evaluation (train/selection.h); [run]
//                          patience stops training early
//   training_ranges.json   market envs: every range and session training saw
//                          (train/training_ranges.h); eval checks against it
//   MANIFEST               CRC-32C of config.toml, normalizer.json, training_ranges.json
//   history.jsonl          one line per --resume that changed settings
//   .lock                  flock held by the writer (train, eval) while it runs
// A training range that overlaps [split] test is refused (Status::Refused, exit 2).
// --resume continues from the newest complete checkpoint of a run directory (its
// MANIFEST and the run's are verified first; leftover staging directories of a killed
// process are removed). A second writer of the same run directory is refused.
// SIGINT/SIGTERM finish the current update, write a checkpoint and return with exit code
// 130/143.
// Threads: several RunTraining calls (on different run directories) may run at once in
// threads of one process, as `rltrade tune --parallel` does, when they use the same
// [run] threads (LibTorch's and OpenBLAS's thread counts are process-wide): weight
// initialisation holds learn::GlobalGeneratorMutex(), the signal handlers are shared (a
// signal stops every loop), and each run's result equals the run alone (tested).
//
// This header is LibTorch-free so the CLI can call it without LibTorch's compile cost.
#ifndef RLT_TRAIN_TRAIN_H_
#define RLT_TRAIN_TRAIN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/status.h"

namespace rlt::train {

struct TrainRequest {
  std::string config_path;             // CONFIG.toml (ignored with resume_dir)
  std::vector<std::string> overrides;  // "section.key=value"
  std::string run_dir;                 // "" = runs/<config name>-<UTC time>
  std::string resume_dir;              // continue this run
  bool quiet = false;                  // no progress output
  // --resume with settings that differ from the run's config.toml beyond run.total_steps,
  // run.threads, run.checkpoint_every, run.eval_every, run.patience and policy.backend is refused
  // (Status::Refused) unless this is set; every change is appended to history.jsonl.
  bool allow_config_change = false;
  // Seeds (train/seeds.h; RunTrainCommand): seeds > 0 overrides [run] seeds; `seed`
  // picks one seed of a multi-seed RUN for --resume. RunTraining itself trains one seed
  // and refuses [run] seeds > 1.
  int seeds = 0;
  std::optional<uint64_t> seed;
  // > 0: at most this many seeds train at once (`train --parallel P`); 0: as many as the
  // cores allow (train/seeds.h).
  int parallel = 0;
  // > 0: stop after the update that reaches this many env steps (when that is before
  // [run] total_steps), write a checkpoint of that step and return with `paused` set; a
  // later --resume continues exactly as if training had not stopped (the learning-rate and
  // clip schedules run over [run] total_steps either way). Successive halving
  // (`rltrade tune --method asha`) trains its rungs this way.
  int64_t stop_at_steps = 0;
};

struct TrainOutcome {
  std::string run_dir;
  int64_t total_steps = 0;
  int exit_code = 0;  // 0 done; 130 / 143 interrupted by SIGINT / SIGTERM (checkpoint saved)
  // Wall seconds in the training loop (updates, their logging and checkpoints, the final
  // checkpoint), without the setup before it: `rltrade tune` reports the rest of a trial's
  // time as its overhead.
  double loop_seconds = 0;
  bool paused = false;     // stopped at stop_at_steps, before [run] total_steps
  std::string checkpoint;  // the last checkpoint written (final/, or step_<N>/ when paused)
  // Why training stopped before [run] total_steps with patience run out ("" otherwise).
  std::string stop_reason;
  // Evaluation on: the best validation score, its step (-1: none) and the evaluations done.
  double best_score = 0;
  int64_t best_step = -1;
  int64_t evaluations = 0;
};

Result<TrainOutcome> RunTraining(const TrainRequest& request);

// RunTraining as one rank of `mpirun -np K rltrade train CONFIG`: the K
// ranks train one policy data-parallel (learn::PpoTrainer::EnableDataParallel), each with
// [env] num_envs environments, so the run is one process's run with K x num_envs
// environments and the same seed (its per-environment random streams; up to the order of
// floating-point sums). Rank 0 writes the run directory (config.toml, metrics, status,
// TensorBoard) exactly as RunTraining does; checkpoints are written by rank 0 with every
// rank's environment state (learn/checkpoint.h), so `--resume` under mpirun with the same K
// continues bit for bit, and with another K (or without mpirun) keeps the policy,
// optimiser and normalisers and restarts the environments. Every rank calls it; errors are
// agreed so that all ranks return together. A rank that dies or hangs for more than
// [run] rank_timeout_seconds ends the job (dist::WorldCollective).
Result<TrainOutcome> RunTrainingOnRanks(const TrainRequest& request);

// runs/<config file stem>-<UTC time>: the run directory when none is given.
std::string DefaultRunDir(const std::string& config_path);

// Everything RunTraining checks before it writes anything (config keys and values, data,
// the test-range and capital refusals, the network), without writing: a new run's config
// (request.config_path + overrides) built with [run] threads = 1 and device "auto" read as
// "cpu", so nothing is measured. Multi-seed runs validate once with this before starting.
Status ValidateTraining(const TrainRequest& request);

// ---- A training session without a run directory ----------------------------------
// The loop of `rltrade train`, one update at a time, for callers that measure or drive it
// themselves: the benchmarks of perf/ (`rltrade bench train`, `bench threads`) are built
// on it; the benchmark API itself lives in perf/train_bench.h.

// Seconds per phase of the training loop, accumulated since the benchmark was built.
struct PhaseSeconds {
  double env_step = 0, inference = 0, gae = 0;
  double update_forward = 0, backward = 0, optimizer = 0;
  double logging = 0;      // metrics rows, status file, checkpoints
  double communicate = 0;  // data-parallel: waiting in the ranks' sums and gathers
};

// What the FLOP count of an update needs to know about the config.
struct SessionShape {
  int obs_dim = 0;
  int action_outputs = 0;   // logits (Discrete n) or Gaussian means (Box dim)
  std::vector<int> pi, vf;  // hidden widths of the policy and value nets
  int lstm_hidden = 0;      // recurrent policies: LSTM units (0 = MLP policy)
  bool shared_lstm = false;
  int64_t n_steps = 0, num_envs = 0;
  int n_epochs = 0;
  int threads = 0;
  std::string device;
  std::string backend;      // [policy] backend: "native" or "torch"
  int64_t total_steps = 0;  // [run] total_steps of the config
  int64_t checkpoint_every = 0;
  int64_t batch_size = 0;  // [algo] batch_size
  int64_t parameters = 0;  // the policy's parameters (floats)
  bool norm_obs = false, norm_reward = false;
  int ranks = 1;             // data-parallel group size (OpenTrainingSession's group)
  std::string algo = "ppo";  // [algo] name (train/algorithm.h); PPO's fields above are
                             // unset for algorithms other than PPO
  int64_t population = 0;    // es: members per generation
  // Filled by the algorithm's entry (train/algorithm.h):
  int64_t steps_per_update = 0;  // env steps one Iterate() takes, over all ranks
  bool dense_update = true;      // the update is dense layers' forward and backward (PPO)
  std::string update_note;       // what the phases mean when it is not
  std::string workload;          // what each rank steps: "16 envs", "population 256"
};

// The real training loop of a config, one update at a time, without a run directory:
// everything `rltrade train CONFIG --set ...` builds (same setup code, same thread
// settings), with metrics, status and checkpoints written under `scratch_dir` exactly as a
// run would write them. Not thread-safe; one at a time per process (torch global state).
class TrainingSession {
 public:
  ~TrainingSession();
  // One update as in `rltrade train`: rollout, PPO update, evaluation when due, a metrics
  // row, checkpoint when due.
  Status Iterate();
  int64_t steps() const;  // env steps done
  PhaseSeconds timing() const;
  const SessionShape& shape() const { return shape_; }

 private:
  friend Result<std::unique_ptr<TrainingSession>> OpenTrainingSession(
      const std::string&, const std::vector<std::string>&, const std::string&, Collective*);
  struct Impl;
  explicit TrainingSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  SessionShape shape_;
};

// Opens a TrainingSession of CONFIG + overrides; `scratch_dir` is created (the caller
// removes it). [run] device = "auto" is not allowed here (callers pick devices).
// With `group`, the session is one member of a data-parallel group
// (learn::PpoTrainer::EnableDataParallel): every member opens it and iterates in step.
Result<std::unique_ptr<TrainingSession>> OpenTrainingSession(
    const std::string& config_path, const std::vector<std::string>& overrides,
    const std::string& scratch_dir, Collective* group = nullptr);

}  // namespace rlt::train

#endif  // RLT_TRAIN_TRAIN_H_
