// rltrade train (internal): a run's setup — everything built from a config before anything
// is written to disk (the algorithm's entry, the environments, the trainer, the evaluation
// environments, the normaliser and the training ranges) — and the settings measured
// before it ([run] device = "auto", threads = 0). Used by train.cc, the training loops
// (train_loop.h) and the benchmarks' TrainingSession; not part of train/'s interface.
#ifndef RLT_TRAIN_SETUP_H_
#define RLT_TRAIN_SETUP_H_

#include <map>
#include <memory>
#include <string>

#include "config/config.h"
#include "core/collective.h"
#include "core/status.h"
#include "env/vec_env.h"
#include "learn/policy.h"
#include "learn/trainer.h"
#include "market/date_range.h"
#include "train/algorithm.h"
#include "train/train_options.h"
#include "train/training_ranges.h"

namespace rlt::train::internal {

// Everything built from the config before anything is written to disk.
struct Setup {
  config::Config config;  // resolved: every effective value (the run's config.toml)
  RunOptions run;
  learn::PolicyOptions policy;
  std::unique_ptr<Algorithm> algorithm;  // [algo], bound and checked (train/algorithm.h)
  std::unique_ptr<env::VecEnv> venv;
  std::unique_ptr<learn::Trainer> trainer;
  std::unique_ptr<env::VecEnv> eval_venv;  // run.eval_every > 0: the evaluation envs
  EvalEnvSetup eval;
  std::string normalizer_json;  // market envs: the feature normaliser fitted on train
  std::string data_json;        // market envs: RUN_DIR/data.json (train/data_record.h)
  std::map<std::string, market::DateRange> split;  // [split] ranges
  TrainingRanges ranges;    // what this setup's training envs and normaliser use
  std::string ranges_json;  // RUN_DIR/training_ranges.json (set by RunTraining)
  // Data-parallel training under mpirun (RunTrainingOnRanks): the ranks' group, nullptr
  // alone. Rank 0 writes the run directory; every rank takes part in checkpoints.
  Collective* group = nullptr;
  bool writer() const { return group == nullptr || group->rank() == 0; }
};

// Checks the config (sections, keys, value ranges, data, the test-range and capital
// refusals, memory) and builds the setup; `config` comes back resolved in Setup::config.
Result<Setup> BuildSetup(config::Config config);

// [run] device = "auto": a short measured trial of this config on every device this build
// has; the fastest is written into the config. Other values are left alone.
Status ResolveAutoDevice(config::Config& config, bool quiet);
// [run] threads = 0: a short measured trial at 1 thread and at the cores this process may
// use; the faster count is written into the config. An explicit count is left alone.
Status ResolveAutoThreads(config::Config& config, bool quiet);

}  // namespace rlt::train::internal

#endif  // RLT_TRAIN_SETUP_H_
