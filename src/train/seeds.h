// rltrade train: runs of several seeds — one number is not a result.
//
// `rltrade train CONFIG --seeds N` (or [run] seeds = N) trains seeds run.seed, run.seed+1,
// …, run.seed+N−1 of the same config into RUN/seed_<seed>/, each a complete run directory
// (what `rltrade train CONFIG --set run.seed=<seed>` writes), and lists them in
// RUN/seeds.json:
//   {"format": 1, "seeds": [0, 1, 2], "runs": ["seed_0", "seed_1", "seed_2"],
//    "config": "<CONFIG as given>", "overrides": ["section.key=value", ...]}
// written before the first seed starts (so `status` works while they train).
//
// Seeds train in parallel where cores allow, each in its own rltrade process (the same
// executable, `train CONFIG --set run.seed=S --set run.seeds=1 --run-dir RUN/seed_S`):
// with [run] threads = 0, min(N, cores) processes at once with CoresPerProcess threads
// each (2 cores: 2 seeds at a time, 1 thread each — the native learner's fastest setting
// for small networks); with threads = T > 0, max(1, cores / T) processes of T threads.
// `train --parallel P` (TrainRequest::parallel) caps the processes at P (with threads = 0
// the cores are then shared among fewer processes).
// Each process's output goes to RUN/logs/seed_<seed>.log. Everything is validated once
// before anything is written (a bad config leaves no RUN behind), so a seed fails only
// for reasons of its own (disk full, a kill); its log's last lines are printed and the
// other seeds finish.
//
// SIGINT / SIGTERM: no new seed starts, running seeds get the signal, checkpoint and stop;
// `rltrade train --resume RUN` then resumes every seed that has not finished (from its
// newest checkpoint; a seed that never wrote one starts again), and `--resume RUN --seed S`
// one of them.
//
// Commands that take one trained policy (signal, paper, eval --seed, resume --seed) take
// either a seed's directory or RUN with --seed S (ResolveSeedRun).
//
// LibTorch-free.
#ifndef RLT_TRAIN_SEEDS_H_
#define RLT_TRAIN_SEEDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "train/train.h"

namespace rlt::train {

inline constexpr const char* kSeedsFile = "seeds.json";
inline constexpr int kMaxSeeds = 1000;

// "seed_<seed>".
std::string SeedDirName(uint64_t seed);

struct SeedsIndex {
  std::vector<uint64_t> seeds;
  std::string config_path;             // CONFIG as given to train
  std::vector<std::string> overrides;  // --set values given to train
  // RUN/seed_<seed> for every seed, in order.
  std::vector<std::string> SeedRuns(const std::string& run_dir) const;
};

// RUN/seeds.json, or nullopt when RUN has none (a single-seed run). Errors: unreadable or
// malformed file (naming it and what was expected).
Result<std::optional<SeedsIndex>> ReadSeedsIndex(const std::string& run_dir);

// The run directory of one trained policy: `run_dir` itself when it has no seeds.json
// and no seed is given; RUN/seed_<seed> when it has and `seed` is one of its seeds.
// Errors name the seeds: RUN with seeds but no --seed, a seed RUN does not hold, --seed on a
// single-seed run.
Result<std::string> ResolveSeedRun(const std::string& run_dir, std::optional<uint64_t> seed);

// The seeds a training request asks for: request.seeds when > 0, else the config's
// [run] seeds (after request.overrides), default 1. Errors: unreadable config, seeds
// outside [1, kMaxSeeds].
Result<int> RequestedSeeds(const TrainRequest& request);

// `rltrade train` with seeds: RunTraining for one seed, RUN/seed_<seed>/ runs (above) for
// several, and --resume of a multi-seed RUN (every unfinished seed, or request.seed).
// `executable`: the rltrade binary that child processes run (/proc/self/exe).
Result<TrainOutcome> RunTrainCommand(const TrainRequest& request, const std::string& executable);

// `mpirun -np K rltrade train CONFIG --seeds N` (dist/dist.h): seed i of the N trains on
// rank i mod K (as a child process of that rank, like RunTrainCommand's seeds); rank 0
// checks the request and creates RUN, seeds.json and its lock first; every rank returns
// the job's outcome (the first failure, the summed steps). One seed trains one policy
// data-parallel over the ranks instead (RunTrainingOnRanks), and a resume of a
// single-seed run continues data-parallel; resuming a multi-seed run under mpirun is
// refused (resume it without mpirun). A collective: every rank must call it.
Result<TrainOutcome> RunSeedsOnRanks(const TrainRequest& request, const std::string& executable);

}  // namespace rlt::train

#endif  // RLT_TRAIN_SEEDS_H_
