// rltrade train (internal): the training loops — one update at a time with its metrics
// row, evaluation, checkpoints (after a disk-space check), status.json, progress line and
// SIGINT/SIGTERM handling — for one process (TrainLoop) and for the ranks of a
// data-parallel job (TrainLoopOnRanks). UpdateOnce is also the benchmarks' step
// (TrainingSession).
#ifndef RLT_TRAIN_TRAIN_LOOP_H_
#define RLT_TRAIN_TRAIN_LOOP_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "core/collective.h"
#include "core/proc_stats.h"
#include "core/status.h"
#include "learn/trainer.h"
#include "runlog/runlog.h"
#include "train/selection.h"
#include "train/setup.h"
#include "train/train.h"

namespace rlt::train::internal {

// The loop's state between updates: the next checkpoint/evaluation step, where the last
// checkpoint went, and the measurements of the previous update.
struct LoopState {
  std::map<std::string, std::string> extra_files;  // written into every checkpoint
  int64_t next_checkpoint = 0, next_eval = 0;
  std::string last_checkpoint;
  // The checkpoint written before a long rollout (see TrainLoop), "" when none is kept.
  std::string safety_checkpoint;
  double last_rollout_seconds = 0;
  CpuMeter cpu;
  bool sys_columns = true;  // false when resuming a run whose metrics.csv predates sys/*
  Status held_error;        // data-parallel: rank 0's logging failure, until the ranks agree
  // Evaluation on (eval_every > 0): the selection so far (train/selection.h), whether the
  // metrics log has its columns (false when resuming a run whose metrics.csv predates
  // them), and whether [run] patience has run out.
  Selection selection;
  bool selection_columns = true;
  bool stop_early = false;
};

LoopState MakeLoopState(const Setup& s);

// Evaluation on: the selection of the checkpoint the loop resumes from (`resumed_from`; ""
// for a new run), checked against RUN/best/ (a best/ that is not the one the record names
// is replaced at the next improvement, with a note), and RUN/selection.json rewritten.
Status RestoreSelection(const Setup& s, LoopState& ls, const std::filesystem::path& run_dir,
                        const std::string& resumed_from, bool quiet);

// One update (the trainer's Iterate), then its metrics row, the evaluation when due and a
// checkpoint when due or `force_checkpoint` (see train_loop.cc).
Result<learn::IterationStats> UpdateOnce(Setup& s, LoopState& ls,
                                         const std::filesystem::path& run_dir,
                                         runlog::MetricsLogger* log, bool force_checkpoint);

// Trains until [run] total_steps (or `stop_at` > 0 env steps: paused) or a signal, writing
// checkpoints, metrics and status.json under `run_dir`; `resumed_from` is the checkpoint
// the trainer was loaded from ("" for a new run).
Result<TrainOutcome> TrainLoop(Setup& s, const std::filesystem::path& run_dir,
                               runlog::MetricsLogger& log, bool quiet,
                               const std::string& resumed_from, int64_t stop_at);
// TrainLoop for one rank of a data-parallel job (s.group set); `log` is rank 0's only.
Result<TrainOutcome> TrainLoopOnRanks(Setup& s, const std::filesystem::path& run_dir,
                                      runlog::MetricsLogger* log, bool quiet,
                                      const std::string& resumed_from);

// A Status through a text message and back (the ranks' agreement travels as text).
std::string StatusText(const Status& st);
Status StatusFromText(const std::string& text);
// The first failing rank's status, on every rank of `group` (a collective).
Status Agree(Collective* group, const Status& mine, const char* what);

}  // namespace rlt::train::internal

#endif  // RLT_TRAIN_TRAIN_LOOP_H_
