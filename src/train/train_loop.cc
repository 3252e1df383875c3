// rltrade train: the training loops (see train_loop.h).
#include "train/train_loop.h"

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/file_io.h"
#include "dist/dist.h"
#include "learn/checkpoint.h"
#include "learn/evaluate.h"
#include "runlog/run_dir.h"

namespace rlt::train::internal {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_signal{0};
extern "C" void OnSignal(int sig) { g_signal.store(sig); }

// SIGINT/SIGTERM handlers for the training loops of this process. Several loops may run at
// once (parallel tune trials in threads): the first to start clears the flag and installs
// the handlers, the last to finish restores the previous ones, and a signal stops them all.
class SignalScope {
 public:
  SignalScope() {
    std::lock_guard<std::mutex> lock(Mutex());
    if (Count()++ == 0) {
      g_signal.store(0);
      OldInt() = std::signal(SIGINT, OnSignal);
      OldTerm() = std::signal(SIGTERM, OnSignal);
    }
  }
  ~SignalScope() {
    std::lock_guard<std::mutex> lock(Mutex());
    if (--Count() == 0) {
      std::signal(SIGINT, OldInt());
      std::signal(SIGTERM, OldTerm());
    }
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  using Handler = void (*)(int);
  static std::mutex& Mutex() {
    static std::mutex mu;
    return mu;
  }
  static int& Count() {
    static int count = 0;
    return count;
  }
  static Handler& OldInt() {
    static Handler h = SIG_DFL;
    return h;
  }
  static Handler& OldTerm() {
    static Handler h = SIG_DFL;
    return h;
  }
};

}  // namespace

std::string StatusText(const Status& st) {
  return st.ok() ? std::string() : std::to_string(static_cast<int>(st.code())) + ":" + st.message();
}
Status StatusFromText(const std::string& text) {
  if (text.empty()) return Status::Ok();
  const size_t colon = text.find(':');
  return Status::FromCode(std::atoi(text.substr(0, colon).c_str()), text.substr(colon + 1));
}

// Data-parallel: every rank's status; the lowest failing rank's on every rank (so all
// ranks stop together and none waits in a collective the others left).
Status Agree(Collective* group, const Status& mine, const char* what) {
  if (group == nullptr) return mine;
  for (const std::string& text : group->Allgather(StatusText(mine), what)) {
    if (!text.empty()) return StatusFromText(text);
  }
  return Status::Ok();
}

// Printed once per process (the --device auto trial builds a second setup).
namespace {

// One row per update with a fixed set of columns: rollout/* are NaN until the first
// episode has finished (so the CSV header never changes).
std::vector<std::pair<std::string, double>> MetricRows(const learn::IterationStats& st) {
  std::vector<std::pair<std::string, double>> rows = st.Named();
  if (st.episodes_seen == 0) {
    rows.insert(rows.begin(), {{"rollout/ep_rew_mean", NAN}, {"rollout/ep_len_mean", NAN}});
  }
  return rows;
}

// The eval/* columns (SB3's EvalCallback names), listed in every row when evaluation is on
// so the CSV header never changes: NaN at updates without an evaluation (stats == nullptr).
void AppendEvalRows(const EvalEnvSetup& eval, const learn::EvalStats* stats,
                    std::vector<std::pair<std::string, double>>& rows) {
  rows.emplace_back("eval/mean_reward", stats ? stats->mean_reward : NAN);
  if (!eval.market) rows.emplace_back("eval/std_reward", stats ? stats->std_reward : NAN);
  rows.emplace_back("eval/mean_ep_length", stats ? stats->mean_ep_length : NAN);
  if (eval.market) {
    rows.emplace_back("eval/final_net_worth", stats ? stats->mean_final_net_worth : NAN);
  }
}

// The selection's columns (the validation curve and the selected point): eval/sharpe_ratio
// (market envs), eval/score (the select_metric's value), eval/best_score and eval/best_step
// as they stand after this evaluation; NaN at updates without one.
void AppendSelectionRows(const EvalEnvSetup& eval, const Selection& sel, bool evaluated,
                         std::vector<std::pair<std::string, double>>& rows) {
  const SelectionPoint* p = evaluated ? &sel.curve.back() : nullptr;
  if (eval.market) rows.emplace_back("eval/sharpe_ratio", p ? p->sharpe_ratio : NAN);
  rows.emplace_back("eval/score", p ? p->score : NAN);
  rows.emplace_back("eval/best_score", p && sel.has_best() ? sel.best_score : NAN);
  rows.emplace_back("eval/best_step",
                    p && sel.has_best() ? static_cast<double>(sel.best_step) : NAN);
}

// First multiple of `every` above `steps` (INT64_MAX when every == 0).
int64_t NextMultiple(int64_t steps, int64_t every) {
  return every > 0 ? (steps / every + 1) * every : INT64_MAX;
}

// A full disk is refused before a checkpoint is staged, with the message that says what to
// do (a staged directory that cannot be completed is removed, but the run would stop on an
// unexplained write error): before writing a checkpoint, the free space of the run directory's file
// system (statvfs f_bavail) must hold the previous checkpoint's measured size (or, for the first, 4
// x the parameter bytes: weights + Adam's two moments + slack) plus 256 KiB.
Status CheckDiskSpace(const fs::path& dir, const std::string& last_checkpoint, Setup& s) {
  double needed = 0;
  std::error_code ec;
  if (!last_checkpoint.empty()) {
    for (const auto& e : fs::directory_iterator(last_checkpoint, ec)) {
      if (e.is_regular_file(ec)) needed += static_cast<double>(e.file_size(ec));
    }
  }
  if (needed <= 0) {
    const native::TensorFile params = s.trainer->PolicyParameters();
    for (const auto& p : params.tensors()) {
      needed += 4.0 * static_cast<double>(p.numel()) * sizeof(float);
    }
  }
  needed = 1.1 * needed + 256 * 1024;
  struct statvfs fsinfo {};
  fs::path probe = dir;
  while (!probe.empty() && !fs::exists(probe, ec)) probe = probe.parent_path();
  if (::statvfs(probe.empty() ? "." : probe.c_str(), &fsinfo) != 0) return Status::Ok();
  const double free_bytes =
      static_cast<double>(fsinfo.f_bavail) * static_cast<double>(fsinfo.f_frsize);
  if (free_bytes >= needed) return Status::Ok();
  char text[160];
  std::snprintf(text, sizeof text, " needs about %.1f MB but only %.1f MB is free", needed / 1e6,
                free_bytes / 1e6);
  return Status::IoError(
      "disk full: checkpoint " + dir.string() + text + "; free space or choose another --run-dir" +
      (last_checkpoint.empty() ? std::string()
                               : " (the previous checkpoint " + last_checkpoint + " is intact)"));
}

}  // namespace

LoopState MakeLoopState(const Setup& s) {
  LoopState ls;
  // Each checkpoint carries the resolved config and, for market envs, the normaliser.
  ls.extra_files = {{"config.toml", s.config.ToToml()}};
  if (!s.normalizer_json.empty()) ls.extra_files["normalizer.json"] = s.normalizer_json;
  if (!s.ranges_json.empty()) ls.extra_files[kTrainingRangesFile] = s.ranges_json;
  if (!s.data_json.empty()) ls.extra_files[kDataRecordFile] = s.data_json;
  ls.next_checkpoint = NextMultiple(s.trainer->total_steps(), s.run.checkpoint_every);
  ls.next_eval = NextMultiple(s.trainer->total_steps(), s.run.eval_every);
  ls.selection.metric = s.run.select_metric;
  if (s.eval_venv) ls.extra_files[runlog::kSelectionFile] = ls.selection.ToJson();
  return ls;
}

namespace {

// The step RUN/best/ was selected at, or -1 (absent, incomplete or unreadable).
int64_t BestOnDisk(const fs::path& run_dir) {
  const fs::path best = runlog::BestCheckpointPath(run_dir);
  std::error_code ec;
  if (!fs::exists(best / "FORMAT", ec)) return -1;
  Result<Selection> sel = Selection::Read(best.string());
  return sel.ok() ? sel->best_step : -1;
}

}  // namespace

Status RestoreSelection(const Setup& s, LoopState& ls, const fs::path& run_dir,
                        const std::string& resumed_from, bool quiet) {
  if (!s.eval_venv) return Status::Ok();
  auto note = [quiet](const std::string& text) {
    if (!quiet) std::fprintf(stderr, "note: %s\n", text.c_str());
  };
  if (!resumed_from.empty()) {
    Result<Selection> sel = Selection::Read(resumed_from);
    if (!sel.ok() && sel.status().code() != Status::Code::kNotFound) return sel.status();
    if (!sel.ok()) {
      note(resumed_from +
           " has no selection record (evaluation was off, or an older run); "
           "selection on validation starts at this step");
    } else if (sel->metric != s.run.select_metric) {
      note("[run] select_metric changed from " + sel->metric + " to " + s.run.select_metric +
           "; selection starts afresh at this step");
    } else {
      ls.selection = std::move(*sel);
    }
  }
  if (ls.selection.has_best() && BestOnDisk(run_dir) != ls.selection.best_step) {
    note(runlog::BestCheckpointPath(run_dir).string() + " is not the checkpoint of step " +
         std::to_string(ls.selection.best_step) + " that " + resumed_from +
         " records as the best; it is replaced at the next validation improvement");
    ls.selection.best_step = -1;
    ls.selection.best_score = NAN;
  }
  ls.extra_files[runlog::kSelectionFile] = ls.selection.ToJson();
  ls.stop_early = ls.selection.Exhausted(s.run.patience);
  if (!s.writer()) return Status::Ok();
  return WriteFileAtomic((run_dir / runlog::kSelectionFile).string(), ls.selection.ToJson());
}

namespace {

// Writes a checkpoint after the disk-space check; records it as the last checkpoint.
// Data-parallel: a collective (rank 0 checks the space and writes; learn/checkpoint.h).
Status WriteCheckpoint(const fs::path& dir, Setup& s, LoopState& ls) {
  RLT_RETURN_IF_ERROR(Agree(s.group,
                            s.writer() ? CheckDiskSpace(dir, ls.last_checkpoint, s) : Status::Ok(),
                            "the checkpoint's disk check"));
  Status st = learn::SaveCheckpoint(dir, *s.trainer, ls.extra_files);
  if (!st.ok()) {
    return Status::IoError(
        st.message() + (ls.last_checkpoint.empty()
                            ? std::string()
                            : " (the previous checkpoint " + ls.last_checkpoint + " is intact)"));
  }
  ls.last_checkpoint = dir.string();
  return Status::Ok();
}

// After an evaluation: the selection records it, every later checkpoint carries the record,
// RUN/selection.json is rewritten (the writer), and patience is checked. True when the score
// improved (best/ is then due).
Result<bool> SelectOn(Setup& s, LoopState& ls, const fs::path& run_dir,
                      const learn::EvalStats& eval) {
  const bool improved = ls.selection.Observe(
      s.trainer->total_steps(), SelectionScore(s.run.select_metric, eval), ValidationSharpe(eval));
  const std::string record = ls.selection.ToJson();
  ls.extra_files[runlog::kSelectionFile] = record;
  ls.stop_early = ls.selection.Exhausted(s.run.patience);
  if (s.writer()) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((run_dir / runlog::kSelectionFile).string(), record));
  }
  return improved;
}

}  // namespace

// One update of the training loop: rollout + PPO update, evaluation when due, one metrics
// row (with sys/cpu_percent and sys/rss_bytes), a checkpoint when due or `force_checkpoint`.
// The time after the trainer's update is added to the trainer's timing().logging, minus the
// evaluation (which counts as "other").
Result<learn::IterationStats> UpdateOnce(Setup& s, LoopState& ls, const fs::path& run_dir,
                                         runlog::MetricsLogger* log, bool force_checkpoint) {
  Result<learn::IterationStats> st = s.trainer->Iterate();
  if (st.ok() && st->interrupted) return st;  // nothing to log or checkpoint
  if (!st.ok()) {
    return Status::DataError(st.status().message() + " (training stopped; " +
                             (ls.last_checkpoint.empty()
                                  ? std::string("no checkpoint had been written yet")
                                  : "the last good checkpoint " + ls.last_checkpoint + " is kept") +
                             ")");
  }
  const auto t0 = std::chrono::steady_clock::now();
  double eval_seconds = 0;
  std::vector<std::pair<std::string, double>> rows = MetricRows(*st);
  bool improved = false;
  if (s.eval_venv) {
    std::optional<learn::EvalStats> eval;
    if (s.trainer->total_steps() >= ls.next_eval) {
      const auto e0 = std::chrono::steady_clock::now();
      Result<learn::EvalStats> r = learn::EvaluatePolicy(
          s.trainer->PolicyParameters(), s.trainer->policy_options(), s.trainer->normalizer(),
          *s.eval_venv, s.eval.episodes, s.eval.seed);
      if (!r.ok()) return r.status();
      eval = std::move(*r);
      ls.next_eval = NextMultiple(s.trainer->total_steps(), s.run.eval_every);
      RLT_ASSIGN_OR_RETURN(improved, SelectOn(s, ls, run_dir, *eval));
      eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    }
    AppendEvalRows(s.eval, eval ? &*eval : nullptr, rows);
    if (ls.selection_columns) AppendSelectionRows(s.eval, ls.selection, eval.has_value(), rows);
  }
  if (ls.sys_columns) {
    rows.emplace_back("sys/cpu_percent", ls.cpu.PercentSinceLast());
    rows.emplace_back("sys/rss_bytes", static_cast<double>(ResidentBytes()));
  }
  // Data-parallel: only rank 0 logs, and a failure is held back until the ranks agree
  // after the update (the others are about to join this update's checkpoint).
  if (log != nullptr) {
    Status logged = log->Log(s.trainer->total_steps(), rows);
    if (s.group == nullptr) RLT_RETURN_IF_ERROR(logged);
    if (!logged.ok() && ls.held_error.ok()) ls.held_error = logged;
  }
  // The best validation score so far: best/ is this update's checkpoint (staged and renamed
  // over the previous best/, with its MANIFEST and selection.json).
  if (improved) RLT_RETURN_IF_ERROR(WriteCheckpoint(runlog::BestCheckpointPath(run_dir), s, ls));
  if (s.trainer->total_steps() >= ls.next_checkpoint || force_checkpoint) {
    const fs::path dir = runlog::StepCheckpointPath(run_dir, s.trainer->total_steps());
    RLT_RETURN_IF_ERROR(WriteCheckpoint(dir, s, ls));
    while (ls.next_checkpoint <= s.trainer->total_steps()) {
      ls.next_checkpoint += s.run.checkpoint_every;
    }
  }
  s.trainer->mutable_timing().logging +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - eval_seconds;
  return st;
}

namespace {

// RUN_DIR/status.json (runlog/run_dir.h), read by `rltrade status` and the seeds runner.
class StatusFile {
 public:
  StatusFile(const fs::path& run_dir, const Setup& s) : run_dir_(run_dir) {
    status_.pid = static_cast<int64_t>(::getpid());
    status_.start_time = static_cast<int64_t>(std::time(nullptr));
    status_.total_steps = s.run.total_steps;
  }
  // Writes at most once per second unless `force` (checkpoints, the end).
  Status Write(int64_t steps, double fps, const std::string& last_checkpoint,
               const std::string& state, const std::string& message, bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && written_ && now - last_write_ < std::chrono::seconds(1)) return Status::Ok();
    written_ = true;
    last_write_ = now;
    status_.updated_time = static_cast<int64_t>(std::time(nullptr));
    status_.steps = steps;
    status_.fps = fps;
    status_.last_checkpoint = last_checkpoint;
    status_.state = state;
    status_.message = message;
    if (selection_ != nullptr) {
      status_.select_metric = selection_->metric;
      status_.best_step = selection_->best_step;
      status_.best_score = selection_->best_score;
    }
    return runlog::WriteRunStatus(run_dir_, status_);
  }
  // Evaluation on: the selection whose best score every write reports.
  void Watch(const Selection* selection) { selection_ = selection; }

 private:
  fs::path run_dir_;
  runlog::RunStatus status_;
  bool written_ = false;
  std::chrono::steady_clock::time_point last_write_;
  const Selection* selection_ = nullptr;
};

// The end of a loop: what the outcome says about the selection, and the console line of a
// run that patience stopped.
void FinishSelection(const Setup& s, const LoopState& ls, bool quiet, TrainOutcome& out) {
  if (!s.eval_venv) return;
  out.best_score = ls.selection.best_score;
  out.best_step = ls.selection.best_step;
  out.evaluations = ls.selection.evaluations();
  if (!ls.stop_early) return;
  out.stop_reason = ls.selection.StopReason(s.run.patience) + " (at step " +
                    std::to_string(s.trainer->total_steps()) + " of " +
                    std::to_string(s.run.total_steps) + ")";
  if (!quiet) std::fprintf(stderr, "%s\n", out.stop_reason.c_str());
}

// Whether a resumed metrics log has `key` among its columns (a fresh log takes any).
bool HasColumn(const runlog::MetricsLogger* log, const char* key) {
  return log == nullptr || log->keys().empty() ||
         std::find(log->keys().begin(), log->keys().end(), key) != log->keys().end();
}

std::string ProgressExtra(CpuMeter& meter) {
  char text[96];
  std::snprintf(text, sizeof text, "cpu %.0f%% | rss %.0f MB", meter.PercentSinceLast(),
                static_cast<double>(ResidentBytes()) / 1e6);
  return text;
}

}  // namespace

Result<TrainOutcome> TrainLoop(Setup& s, const fs::path& run_dir, runlog::MetricsLogger& log,
                               bool quiet, const std::string& resumed_from, int64_t stop_at) {
  runlog::ProgressOptions popt;
  if (quiet) popt.mode = runlog::ProgressOptions::Mode::kQuiet;
  runlog::ProgressReporter progress(popt);
  LoopState ls = MakeLoopState(s);
  ls.last_checkpoint = resumed_from;
  ls.sys_columns = HasColumn(&log, "sys/cpu_percent");
  ls.selection_columns = HasColumn(&log, "eval/score");
  RLT_RETURN_IF_ERROR(RestoreSelection(s, ls, run_dir, resumed_from, quiet));
  const auto loop_start = std::chrono::steady_clock::now();
  CpuMeter progress_meter;  // the progress line's CPU figure
  StatusFile status_file(run_dir, s);
  if (s.eval_venv) status_file.Watch(&ls.selection);
  std::optional<SignalScope> signals(std::in_place);
  TrainOutcome out;
  out.run_dir = run_dir.string();
  Status status = status_file.Write(s.trainer->total_steps(), 0, ls.last_checkpoint, "running", "",
                                    /*force=*/true);
  double fps = 0;
  s.trainer->set_interrupt_flag(&g_signal);
  const int64_t target =
      stop_at > 0 ? std::min<int64_t>(stop_at, s.run.total_steps) : s.run.total_steps;
  while (status.ok() && !ls.stop_early && s.trainer->total_steps() < target) {
    // A signal stops a long rollout within PpoTrainer::kInterruptSeconds, discarding it
    // (learn/trainer.h). So that no finished update is lost with it, a rollout expected to
    // take longer than that (the previous one did) starts from a checkpoint of the state
    // it starts from; the previous such safety checkpoint is then removed (scheduled ones
    // are kept).
    if (s.trainer->cuts_rollouts() &&
        ls.last_rollout_seconds > learn::PpoTrainer::kInterruptSeconds &&
        s.trainer->iterations() > 0) {
      const fs::path dir = runlog::StepCheckpointPath(run_dir, s.trainer->total_steps());
      if (ls.last_checkpoint != dir.string()) {
        const std::string previous = ls.safety_checkpoint;
        status = WriteCheckpoint(dir, s, ls);
        if (!status.ok()) break;
        ls.safety_checkpoint = dir.string();
        std::error_code ec;
        if (!previous.empty()) fs::remove_all(previous, ec);
      }
    }
    const learn::TrainerTiming before = s.trainer->timing();
    const std::string checkpoint_before = ls.last_checkpoint;
    Result<learn::IterationStats> st = UpdateOnce(s, ls, run_dir, &log, g_signal.load() != 0);
    if (!st.ok()) {
      status = st.status();
      break;
    }
    if (st->interrupted) {  // the partial rollout is gone; the last checkpoint stands
      out.exit_code = 128 + g_signal.load();
      break;
    }
    ls.last_rollout_seconds = (s.trainer->timing().env_step - before.env_step) +
                              (s.trainer->timing().inference - before.inference);
    if (ls.last_checkpoint != checkpoint_before && !ls.safety_checkpoint.empty()) {
      std::error_code ec;  // a scheduled checkpoint supersedes the safety one
      fs::remove_all(ls.safety_checkpoint, ec);
      ls.safety_checkpoint.clear();
    }
    fps = st->fps;
    progress.Update(s.trainer->total_steps(), s.run.total_steps, st->fps,
                    st->episodes_seen > 0 ? st->ep_rew_mean : NAN, ProgressExtra(progress_meter));
    const auto t0 = std::chrono::steady_clock::now();
    status = status_file.Write(s.trainer->total_steps(), fps, ls.last_checkpoint, "running", "",
                               ls.last_checkpoint != checkpoint_before);
    s.trainer->mutable_timing().logging +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int sig = g_signal.load();
    if (sig != 0 && status.ok()) {
      // A signal during the update: UpdateOnce checkpointed only if it arrived before the
      // call; make sure this update's checkpoint exists.
      if (ls.last_checkpoint == checkpoint_before) {
        const fs::path dir = runlog::StepCheckpointPath(run_dir, s.trainer->total_steps());
        status = WriteCheckpoint(dir, s, ls);
      }
      out.exit_code = 128 + sig;
      break;
    }
  }
  s.trainer->set_interrupt_flag(nullptr);
  progress.Finish();
  signals.reset();
  out.paused = status.ok() && out.exit_code == 0 && !ls.stop_early &&
               s.trainer->total_steps() < s.run.total_steps;
  FinishSelection(s, ls, quiet, out);
  if (out.paused) {
    // Stopped at stop_at_steps: a checkpoint of this step (unless the last update wrote
    // it) to resume from or evaluate.
    const fs::path dir = runlog::StepCheckpointPath(run_dir, s.trainer->total_steps());
    if (ls.last_checkpoint != dir.string()) status = WriteCheckpoint(dir, s, ls);
    if (status.ok() && !ls.safety_checkpoint.empty() && ls.safety_checkpoint != dir.string()) {
      std::error_code ec;
      fs::remove_all(ls.safety_checkpoint, ec);
    }
  } else if (status.ok() && out.exit_code == 0) {
    status = WriteCheckpoint(runlog::FinalCheckpointPath(run_dir), s, ls);
    if (status.ok() && !ls.safety_checkpoint.empty()) {
      std::error_code ec;  // final/ supersedes it
      fs::remove_all(ls.safety_checkpoint, ec);
    }
  }
  const std::string state = !status.ok()         ? "failed"
                            : out.exit_code != 0 ? "interrupted"
                            : out.paused         ? "paused"
                                                 : "finished";
  // Best effort: the status file must not hide the error that ended the run.
  const Status written =
      status_file.Write(s.trainer->total_steps(), fps, ls.last_checkpoint, state,
                        status.ok() ? out.stop_reason : status.message(), /*force=*/true);
  if (!status.ok()) return status;
  RLT_RETURN_IF_ERROR(written);
  out.total_steps = s.trainer->total_steps();
  out.checkpoint = ls.last_checkpoint;
  out.loop_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  return out;
}

// The training loop of a data-parallel rank (RunTrainingOnRanks): TrainLoop without its
// safety checkpoints (a data-parallel rollout is never cut short, so a signal takes effect
// at the end of the update), with one agreement per update (the first rank's error and
// whether any rank got a signal: mpirun forwards SIGINT/SIGTERM to every rank, not at the
// same instant), and with rank 0 alone writing metrics, status.json and progress.
Result<TrainOutcome> TrainLoopOnRanks(Setup& s, const fs::path& run_dir, runlog::MetricsLogger* log,
                                      bool quiet, const std::string& resumed_from) {
  runlog::ProgressOptions popt;
  if (quiet || !s.writer()) popt.mode = runlog::ProgressOptions::Mode::kQuiet;
  runlog::ProgressReporter progress(popt);
  LoopState ls = MakeLoopState(s);
  ls.last_checkpoint = resumed_from;
  ls.sys_columns = HasColumn(log, "sys/cpu_percent");
  ls.selection_columns = HasColumn(log, "eval/score");
  RLT_RETURN_IF_ERROR(Agree(s.group,
                            RestoreSelection(s, ls, run_dir, resumed_from, quiet || !s.writer()),
                            "reading the selection record"));
  const auto loop_start = std::chrono::steady_clock::now();
  CpuMeter progress_meter;
  std::optional<StatusFile> status_file;
  if (s.writer()) status_file.emplace(run_dir, s);
  if (status_file && s.eval_venv) status_file->Watch(&ls.selection);
  std::optional<SignalScope> signals(std::in_place);
  TrainOutcome out;
  out.run_dir = run_dir.string();
  double fps = 0;
  Status status = Agree(s.group,
                        status_file ? status_file->Write(s.trainer->total_steps(), 0,
                                                         ls.last_checkpoint, "running", "", true)
                                    : Status::Ok(),
                        "the start of training");
  auto* watched = dynamic_cast<dist::WatchedCollective*>(s.group);
  while (status.ok() && !ls.stop_early && s.trainer->total_steps() < s.run.total_steps) {
    if (watched != nullptr) {  // named by the timeout message
      watched->set_context(fmt::format(
          "update {} (step {}); the last checkpoint, {}, stays loadable with "
          "rltrade train --resume {}",
          s.trainer->iterations() + 1, s.trainer->total_steps(),
          ls.last_checkpoint.empty() ? "none yet" : ls.last_checkpoint, run_dir.string()));
    }
    Result<learn::IterationStats> st = UpdateOnce(s, ls, run_dir, log, false);
    Status mine = st.ok() ? ls.held_error : st.status();
    if (mine.ok()) {
      fps = st->fps;
      progress.Update(s.trainer->total_steps(), s.run.total_steps, st->fps,
                      st->episodes_seen > 0 ? st->ep_rew_mean : NAN, ProgressExtra(progress_meter));
      if (status_file) {
        mine = status_file->Write(s.trainer->total_steps(), fps, ls.last_checkpoint, "running", "",
                                  false);
      }
    }
    int sig = 0;
    for (const std::string& text : s.group->Allgather(
             std::to_string(g_signal.load()) + "|" + StatusText(mine), "the end of an update")) {
      const size_t bar = text.find('|');
      if (sig == 0) sig = std::atoi(text.substr(0, bar).c_str());
      if (status.ok()) status = StatusFromText(text.substr(bar + 1));
    }
    if (!status.ok()) break;
    if (sig != 0) {
      const fs::path dir = runlog::StepCheckpointPath(run_dir, s.trainer->total_steps());
      if (ls.last_checkpoint != dir.string()) status = WriteCheckpoint(dir, s, ls);
      out.exit_code = 128 + sig;
      break;
    }
  }
  progress.Finish();
  signals.reset();
  if (status.ok() && out.exit_code == 0)
    status = WriteCheckpoint(runlog::FinalCheckpointPath(run_dir), s, ls);
  const std::string state = !status.ok()         ? "failed"
                            : out.exit_code != 0 ? "interrupted"
                                                 : "finished";
  FinishSelection(s, ls, quiet || !s.writer(), out);
  if (status_file) {  // best effort, as in TrainLoop
    const Status written =
        status_file->Write(s.trainer->total_steps(), fps, ls.last_checkpoint, state,
                           status.ok() ? out.stop_reason : status.message(), /*force=*/true);
    if (status.ok()) status = written;
  }
  RLT_RETURN_IF_ERROR(status);
  out.total_steps = s.trainer->total_steps();
  out.checkpoint = ls.last_checkpoint;
  out.loop_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  return out;
}

}  // namespace rlt::train::internal
