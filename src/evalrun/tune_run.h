// rltrade evalrun: `rltrade tune` as a library call: a study over a config's
// hyperparameters, each trial a training run scored on the [split] validation range, or
// over an analytic function (--objective-fn) that replaces training.
//
// Training trials: trial i trains into OUT/trials/trial_<i>/
// with the config, the study's --set overrides and the trial's sampled values as --set
// overrides (its config.toml shows them), then is evaluated on [split] validation (market
// environments) or on deterministic episodes with seeds no training env used (episodic
// ones); the objective is a metric of that summary.json (default sharpe_ratio, or
// mean_return for episodic environments). A trial whose settings training refuses
// (e.g. batch_size not dividing n_steps * num_envs) is recorded as rejected with the
// reason. No trial reads the test range: after the study a copy of the best trial
// (OUT/best_run/) is evaluated once on [split] test, written to OUT/test_evaluation.json
// and reported apart, the only out-of-sample figure. OUT/best.toml is the best trial's complete
// config.
//
// Before anything runs or is written (errors are Refused: the CLI exits 2):
//  - space keys are config keys as section.key; keys that define the data or the ranges
//    ([split], [data], [env] range, id, underlying and synthetic_*) may not be tuned, nor
//    run.seeds (a trial trains one seed), nor run.total_steps with asha (the rungs are the
//    budget), nor a key also given with --set. So every trial trains on the config's
//    [split] train, is scored on its validation range, and the test range is the config's;
//  - each value a trial could be given — both ends of a range, the middle of a continuous
//    one, every choice — is checked against the config's schema: an unknown key or
//    section, or a value the key's type does not take, is refused naming the space's
//    file:line, the key, the value and training's reason (rules on combinations, such as
//    batch_size dividing the rollout, reject the trial instead);
//  - --objective must be a metric the trials' evaluation reports;
//  - flags the study would not use (--eta without asha or --prune asha, --objective or --set with
//    --objective-fn) are refused.
// A study in which no trial produced an objective is an error (DataError: exit 1) naming
// how the trials ended and the first reason; its files stay, for the reasons.
// --resume DIR: study.json and trials.jsonl are checked field by field (tune/json_file.h;
// DataError naming file:line), the config (with the recorded --set values) must be the one
// the study started with (recorded in study.json as TOML: its ranges are pinned), and the
// arguments given with --resume must equal the recorded ones (see `given`).
#ifndef RLT_EVALRUN_TUNE_RUN_H_
#define RLT_EVALRUN_TUNE_RUN_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::evalrun {

struct TuneRequest {
  std::string config_path;  // "" with objective_fn
  std::string space_path;
  std::string method = "random";
  // --prune asha: successive halving with the method's points (method asha = random with
  // it; a request's random + asha is run as method asha). "none": full budget per trial.
  std::string prune = "none";
  int trials = 16;
  std::string objective;     // metric name ("" = the default)
  std::string objective_fn;  // branin | rosenbrock | hartmann6: no training
  std::string out_dir;       // "" = runs/tune-<time>
  std::string resume_dir;
  std::vector<std::string> overrides;
  uint64_t seed = 0;
  bool quiet = false;
  std::string space_text;  // set from study.json on resume
  int parallel = 0;        // trials at once (0 = cores / [run] threads, threads 0 -> 1)
  // --method asha: reduction factor; the first rung's training steps (0 = total / eta^3).
  int eta = 3;
  int64_t min_steps = 0;
  std::vector<int64_t> rung_steps;  // set from study.json on resume
  // The arguments given on the command line ("config", "--space", "--trials", "--seed",
  // "--method", "--prune", "--objective", "--objective-fn", "--set", "--eta", "--min-steps",
  // "--out"): with --resume each must equal what the study recorded; without, flags the
  // study would not use (--eta without asha, ...) are refused.
  std::set<std::string> given;
  std::string recorded_config;  // set from study.json on resume: the study's config as TOML
};

struct TuneOutcome {
  std::string out_dir;
  std::string json;  // {"best_objective", "best_params", "trials", "method", ...}
  // The out-of-sample line and the test evaluation's table (the best trial beside the
  // benchmarks; "" when not evaluated). json then has "test_objective" and
  // "test_benchmarks" {"flat", "buy_and_hold"}: the objective's value for each.
  std::string test_report;
};

Result<TuneOutcome> RunTune(const TuneRequest& request);

// `rltrade bench tune`: the same study (a Sobol search over `space`, or over the learning
// rate in [3e-4, 3e-3] log-uniform and n_epochs in 5..20 when space_path is "") run once
// with one trial at a time and once with `parallel` at a time, in scratch directories
// under `scratch` that are removed afterwards. JSON: config, trials, parallel,
// sequential_seconds, parallel_seconds, ratio (parallel / sequential wall time),
// train_seconds_median (a trial's training loop), overhead_seconds_median (the rest of a
// trial: setup, run files, validation evaluation) and overhead_fraction_median
// (overhead / train, both from the sequential study's journal).
struct TuneBenchOptions {
  std::string config_path;
  std::string space_path;  // "" = the built-in space above
  int trials = 16;
  int parallel = 2;
  std::vector<std::string> overrides;
  std::string scratch = "runs";
};
Result<std::string> BenchTune(const TuneBenchOptions& options);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_TUNE_RUN_H_
