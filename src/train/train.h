// rltrade train: `rltrade train` as a library call — a config in, a run directory out.
//
// RunTraining() reads a TOML config (sections [run], [data], [split], [features], [env],
// [algo], [policy]; see README "Configs"), applies `--set section.key=value` overrides,
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
// --resume continues from the newest complete checkpoint of a run directory.
// SIGINT/SIGTERM finish the current update, write a checkpoint and return with exit code
// 130/143.
//
// This header is LibTorch-free so the CLI can call it without LibTorch's compile cost.
#ifndef RLT_TRAIN_TRAIN_H_
#define RLT_TRAIN_TRAIN_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::train {

struct TrainRequest {
  std::string config_path;             // CONFIG.toml (ignored with resume_dir)
  std::vector<std::string> overrides;  // "section.key=value"
  std::string run_dir;                 // "" = runs/<config name>-<UTC time>
  std::string resume_dir;              // continue this run
  bool quiet = false;                  // no progress output
};

struct TrainOutcome {
  std::string run_dir;
  int64_t total_steps = 0;
  int exit_code = 0;  // 0 done; 130 / 143 interrupted by SIGINT / SIGTERM (checkpoint saved)
};

Result<TrainOutcome> RunTraining(const TrainRequest& request);

}  // namespace rlt::train

#endif  // RLT_TRAIN_TRAIN_H_
