// rltrade runlog: what a training run writes besides checkpoints.
//
// A run directory looks like this (the CLI's --run-dir):
//
//   runs/intraday_ppo-2026-05-01-09.30.00/
//     config.toml                     the resolved config the run trained with
//     status.json                     running / finished / interrupted / failed, steps
//     metrics.csv                     step,loss,ep_rew_mean,...   (MetricsLogger)
//     metrics.jsonl                   {"step":2048,"loss":0.5,...} (MetricsLogger)
//     events.out.tfevents.<t>.<host>  TensorBoard scalars          (EventFileWriter)
//     checkpoints/step_<N>/ ...       checkpoints, each written by StagingDir with its
//     final/ ...                      MANIFEST (learn/checkpoint.h lists their files)
//     best/ ...                       eval_every > 0: the best validation score's checkpoint
//     selection.json                  its record (train/selection.h; run_dir.h)
//
// The pieces:
//  - tensorboard.h  EventFileWriter: TensorBoard event files (TFRecord + hand-encoded
//                   Event protobufs, our own CRC32C). No TensorFlow, no protobuf library.
//  - metrics.h      MetricsLogger: one row per Log(step, {{key, value}, ...}) to CSV, JSONL
//                   and TensorBoard; columns fixed by the first Log; every line is written
//                   immediately; Resume(run_dir, step) continues an interrupted run
//                   without duplicate steps.
//  - progress.h     ProgressReporter: a rate-limited progress line on stderr ('\r' on a
//                   terminal, plain lines every 10 s otherwise, nothing when quiet).
//  - atomic_dir.h   StagingDir and WriteFileAtomic: write under a temporary name, fsync,
//                   rename — a crash never leaves a half-written checkpoint or file.
//  - manifest.h     MANIFEST (size + CRC-32C per file, verified before use), RunLock (one
//                   writer per run directory, flock) and RemoveStaleTemps.
//  - run_dir.h      the one owner of the layout above: checkpoint paths, the newest and
//                   the loadable checkpoint, status.json written and read.
//
// Typical training loop:
//
//   RLT_ASSIGN_OR_RETURN(auto metrics,
//       resume ? runlog::MetricsLogger::Resume(run_dir, ckpt_step)
//              : runlog::MetricsLogger::Create(run_dir));
//   runlog::ProgressReporter progress;  // options: mode (auto/terminal/plain/quiet)
//   for (...) {
//     ...
//     RLT_RETURN_IF_ERROR(metrics.Log(step, {{"loss", loss}, {"ep_rew_mean", rew}}));
//     progress.Update(step, total_steps, fps, rew);
//     if (save) {
//       RLT_ASSIGN_OR_RETURN(auto staging, runlog::StagingDir::Create(ckpt_dir));
//       ... write files into staging.path() ...
//       RLT_RETURN_IF_ERROR(staging.Commit());
//     }
//   }
//   progress.Finish();
//
// Errors: I/O failures are Status values naming the path, the system's reason and a hint;
// misuse (a new metric key after the first Log, decreasing steps) aborts via RLT_CHECK.
// Dependencies: rlt_core; fmt and nlohmann_json privately. No LibTorch.
#ifndef RLT_RUNLOG_RUNLOG_H_
#define RLT_RUNLOG_RUNLOG_H_

#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"
#include "runlog/metrics.h"
#include "runlog/progress.h"
#include "runlog/tensorboard.h"

#endif  // RLT_RUNLOG_RUNLOG_H_
