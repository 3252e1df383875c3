// rltrade runlog: the one owner of a training run directory's layout (runlog.h shows it):
// where its checkpoints are, which one a resume picks, and its status.json.
//
// Every command that looks into a run (train --resume, status, eval, signal, paper, the
// seeds runner) goes through these functions, so they agree on the rules:
//   - a checkpoint is complete when its FORMAT file exists (it is written last, inside a
//     staged directory that is renamed into place: learn/checkpoint.h);
//   - the newest checkpoint is the complete checkpoints/step_<N>/ with the largest N, else
//     final/ when complete; best/ (the checkpoint selected on validation, written whenever
//     the validation score improves: train/selection.h) counts as step <its best_step>
//     when that is larger than every N, or when there is neither a step_<N>/ nor final/;
//   - the checkpoint a command trades (eval, signal, paper) is best/ when it is complete,
//     else final/ (ChooseCheckpoint: --checkpoint best|final|DIR);
//   - a loadable checkpoint is the newest one whose MANIFEST verifies (status never
//     suggests a resume that would fail; train --resume reports the damage of the newest
//     one instead of silently going back to an older one).
// Thread-safe (no state).
#ifndef RLT_RUNLOG_RUN_DIR_H_
#define RLT_RUNLOG_RUN_DIR_H_

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/status.h"

namespace rlt::runlog {

inline constexpr const char* kRunStatusFile = "status.json";
// The selection record (train/selection.h): RUN/selection.json and one in every checkpoint.
inline constexpr const char* kSelectionFile = "selection.json";

// RUN/checkpoints/step_<step>, RUN/final and RUN/best.
std::filesystem::path StepCheckpointPath(const std::filesystem::path& run_dir, int64_t step);
std::filesystem::path FinalCheckpointPath(const std::filesystem::path& run_dir);
std::filesystem::path BestCheckpointPath(const std::filesystem::path& run_dir);

// The checkpoint of a run that eval, signal and paper use for `choice` (their --checkpoint):
//   ""      best/ when it is complete, else final/ (what a run without selection has);
//   "best"  best/; NotFound when the run has none (it was trained with eval_every = 0),
//           naming final/ as the alternative;
//   "final" final/;
//   DIR     that directory, as given.
// `*label` (when not null) gets "best", "final" or "DIR" for the message that says which
// checkpoint was used.
Result<std::string> ChooseCheckpoint(const std::filesystem::path& run_dir,
                                     const std::string& choice, std::string* label = nullptr);

// The newest complete checkpoint (above), or "" when there is none.
std::string NewestCheckpoint(const std::filesystem::path& run_dir);
// NewestCheckpoint() when its MANIFEST verifies, else "".
std::string LoadableCheckpoint(const std::filesystem::path& run_dir);

// RUN/status.json, written by the training loop and read by `rltrade status` and the seeds
// runner (docs/training.md lists its keys).
struct RunStatus {
  int64_t pid = 0;           // the training process
  int64_t start_time = 0;    // Unix seconds
  int64_t updated_time = 0;  // Unix seconds of this write
  int64_t total_steps = 0, steps = 0;
  double fps = 0;
  std::string last_checkpoint;  // "" before the first one
  std::string state;            // running, finished, paused, interrupted, failed
  std::string message;          // the error of a failed run, or why training stopped early
  // Selection on validation (eval_every > 0): the metric, the best score so far and its
  // step (-1 before the first finite score); not written when select_metric is "".
  std::string select_metric;
  int64_t best_step = -1;
  double best_score = 0;
};

// Writes RUN/status.json atomically (a reader never sees half a file).
Status WriteRunStatus(const std::filesystem::path& run_dir, const RunStatus& status);

// What a reader gets: the fields that hold values of the right type (a hand-edited or
// corrupt file cannot crash a reader); numbers absent or of another type read as NaN,
// texts as "".
struct RunStatusRead {
  double pid = 0, start_time = 0, updated_time = 0, total_steps = 0, steps = 0, fps = 0;
  std::string last_checkpoint, state, message;
  std::string select_metric;  // "" when the run has no selection
  double best_step = 0, best_score = 0;
  // The file as read (a JSON object), for readers that show every key it holds: a paper
  // session's journal keeps its own status.json of the same name with more keys ("kind":
  // "paper", position, PnL; paper/paper.h).
  std::string text;
};
// NotFound (naming the file, "not a run directory of this rltrade version, or training has
// not started yet") when there is no status.json; DataError for a file that is not a JSON
// object or is nested or large beyond reason.
Result<RunStatusRead> ReadRunStatus(const std::filesystem::path& run_dir);

}  // namespace rlt::runlog

#endif  // RLT_RUNLOG_RUN_DIR_H_
