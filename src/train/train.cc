// rltrade train: RunTraining() — config to run directory (see train.h). The parts live
// one concern per file: setup.h (config -> environments and trainer, the measured device
// and thread choices), algorithm.h (the algorithms' registry), train_loop.h (the loops),
// resume.h (the run directory's files and --resume).
#include "train/train.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "config/config.h"
#include "core/civil_time.h"
#include "dist/dist.h"
#include "learn/checkpoint.h"
#include "runlog/runlog.h"
#include "train/resume.h"
#include "train/setup.h"
#include "train/train_loop.h"

namespace rlt::train {

namespace fs = std::filesystem;
using internal::Agree;
using internal::AppendHistory;
using internal::BuildSetup;
using internal::CheckResumeChanges;
using internal::ConfigChange;
using internal::DiffConfigs;
using internal::LoopState;
using internal::MakeLoopState;
using internal::OpenResume;
using internal::ReadRecordedRanges;
using internal::ResolveAutoDevice;
using internal::ResolveAutoThreads;
using internal::Setup;
using internal::StatusFromText;
using internal::StatusText;
using internal::TrainLoop;
using internal::TrainLoopOnRanks;
using internal::UpdateOnce;
using internal::WriteRunFiles;

std::string DefaultRunDir(const std::string& config_path) {
  const std::string stem = fs::path(config_path).stem().string();
  return "runs/" + stem + "-" + FormatPathStamp(static_cast<int64_t>(std::time(nullptr)));
}

Status ValidateTraining(const TrainRequest& request) {
  RLT_ASSIGN_OR_RETURN(config::Config config, LoadConfig(request.config_path, request.overrides));
  RLT_RETURN_IF_ERROR(config.ApplyOverride("run.threads=1"));  // nothing measured
  if (const config::ConfigValue* d = config.Get("run", "device");
      d != nullptr && d->text == "auto") {
    RLT_RETURN_IF_ERROR(config.ApplyOverride("run.device=cpu"));
  }
  RLT_RETURN_IF_ERROR(config.ApplyOverride("run.seeds=1"));
  return BuildSetup(std::move(config)).status();
}

namespace {

// After the setup is built (and a resumed checkpoint loaded): the test-range check of
// every range the run has seen, the run directory created (a new run's must be absent or
// empty), its lock taken, the run files and the history line of a changed resume
// written, and the metrics log opened. RunTraining and rank 0 of RunTrainingOnRanks.
Status OpenRunDir(const fs::path& run_dir, const TrainRequest& request, bool resume,
                  const std::string& checkpoint, const std::vector<ConfigChange>& changes,
                  Setup& setup, std::optional<runlog::RunLock>& lock,
                  std::optional<runlog::MetricsLogger>& log) {
  TrainingRanges ranges = setup.ranges;
  if (resume) {
    // The resumed policy has seen everything recorded so far as well.
    RLT_ASSIGN_OR_RETURN(const TrainingRanges before, ReadRecordedRanges(run_dir));
    ranges = MergeTrainingRanges(before, setup.ranges);
    RLT_RETURN_IF_ERROR(CheckOutsideTest(setup.split, ranges));
  } else if (fs::exists(run_dir) && !fs::is_empty(run_dir)) {
    return Status::InvalidArgument("run directory " + run_dir.string() +
                                   " already exists; continue it with --resume " +
                                   run_dir.string() + " or choose another --run-dir");
  }
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) return Status::IoError("cannot create " + run_dir.string() + ": " + ec.message());
  if (!lock) {
    RLT_ASSIGN_OR_RETURN(lock, runlog::RunLock::Acquire(run_dir.string(), "rltrade train"));
  }
  if (!ranges.empty()) setup.ranges_json = TrainingRangesJson(ranges);
  RLT_RETURN_IF_ERROR(WriteRunFiles(run_dir, setup, !resume || !changes.empty()));
  if (!changes.empty()) {
    RLT_RETURN_IF_ERROR(AppendHistory(run_dir, changes, checkpoint, setup.trainer->total_steps(),
                                      request.allow_config_change));
  }
  Result<runlog::MetricsLogger> opened =
      resume ? runlog::MetricsLogger::Resume(run_dir.string(), setup.trainer->total_steps())
             : runlog::MetricsLogger::Create(run_dir.string());
  if (!opened.ok()) return opened.status();
  if (setup.eval_venv && !opened->keys().empty() &&
      std::find(opened->keys().begin(), opened->keys().end(), "eval/mean_reward") ==
          opened->keys().end()) {
    return Status::InvalidArgument(
        run_dir.string() +
        " was started without evaluation and metrics.csv has no eval/* "
        "columns; resume it with --set run.eval_every=0 or start a new run");
  }
  log.emplace(std::move(*opened));
  return Status::Ok();
}

}  // namespace

Result<TrainOutcome> RunTraining(const TrainRequest& request) {
  const bool resume = !request.resume_dir.empty();
  const fs::path run_dir =
      resume ? fs::path(request.resume_dir)
             : fs::path(request.run_dir.empty() ? DefaultRunDir(request.config_path)
                                                : request.run_dir);
  // One writer per run directory: a resume holds the lock before reading anything.
  std::optional<runlog::RunLock> lock;
  std::string checkpoint;  // resume: the checkpoint to continue from
  if (resume) RLT_RETURN_IF_ERROR(OpenResume(run_dir, lock, checkpoint));
  const std::string config_path = resume ? (run_dir / "config.toml").string() : request.config_path;
  RLT_ASSIGN_OR_RETURN(config::Config config, config::Config::LoadFile(config_path));
  const config::Config stored_config = config;
  for (const std::string& o : request.overrides) RLT_RETURN_IF_ERROR(config.ApplyOverride(o));
  ResolveConfigPaths(config);
  // Build and validate everything before touching the disk: bad input leaves no run dir.
  RLT_RETURN_IF_ERROR(ResolveAutoDevice(config, request.quiet));
  RLT_RETURN_IF_ERROR(ResolveAutoThreads(config, request.quiet));
  RLT_ASSIGN_OR_RETURN(Setup setup, BuildSetup(std::move(config)));
  std::vector<ConfigChange> changes;
  if (resume) {
    changes = DiffConfigs(stored_config, setup.config, *setup.algorithm);
    RLT_RETURN_IF_ERROR(CheckResumeChanges(changes, request.allow_config_change, run_dir));
    RLT_RETURN_IF_ERROR(learn::LoadCheckpoint(checkpoint, *setup.trainer));
  }
  std::optional<runlog::MetricsLogger> log;
  RLT_RETURN_IF_ERROR(OpenRunDir(run_dir, request, resume, checkpoint, changes, setup, lock, log));
  if (!request.quiet && resume) {
    std::fprintf(stderr, "resuming %s from %s at step %lld\n", run_dir.c_str(), checkpoint.c_str(),
                 static_cast<long long>(setup.trainer->total_steps()));
  }
  return TrainLoop(setup, run_dir, *log, request.quiet, checkpoint, request.stop_at_steps);
}

Result<TrainOutcome> RunTrainingOnRanks(const TrainRequest& request) {
  const int rank = dist::Rank(), ranks = dist::Size();
  const bool resume = !request.resume_dir.empty();
  // Rank 0 names the run directory (DefaultRunDir reads the clock) and, for a resume,
  // takes the lock and picks the checkpoint; the other ranks follow.
  const fs::path run_dir = dist::Broadcast(
      resume ? request.resume_dir
             : (request.run_dir.empty() ? DefaultRunDir(request.config_path) : request.run_dir));
  std::optional<runlog::RunLock> lock;
  std::string checkpoint;
  if (resume) {
    Status found = Status::Ok();
    if (rank == 0) found = OpenResume(run_dir, lock, checkpoint);
    RLT_RETURN_IF_ERROR(StatusFromText(dist::Broadcast(StatusText(found))));
    checkpoint = dist::Broadcast(checkpoint);
  }
  const std::string config_path = resume ? (run_dir / "config.toml").string() : request.config_path;
  RLT_ASSIGN_OR_RETURN(config::Config config, config::Config::LoadFile(config_path));
  const config::Config stored_config = config;
  for (const std::string& o : request.overrides) RLT_RETURN_IF_ERROR(config.ApplyOverride(o));
  ResolveConfigPaths(config);
  RLT_RETURN_IF_ERROR(ResolveAutoDevice(config, request.quiet || rank != 0));
  RLT_RETURN_IF_ERROR(ResolveAutoThreads(config, request.quiet || rank != 0));
  RLT_ASSIGN_OR_RETURN(Setup setup, BuildSetup(std::move(config)));
  // From here every rank holds a trainer; failures are agreed so that no rank is left
  // waiting in a collective.
  std::unique_ptr<dist::WatchedCollective> group =
      dist::WorldCollective(setup.run.rank_timeout_seconds);
  setup.group = group.get();
  RLT_RETURN_IF_ERROR(setup.trainer->EnableDataParallel(group.get()));
  std::vector<ConfigChange> changes;
  Status ready = Status::Ok();
  if (resume) {
    changes = DiffConfigs(stored_config, setup.config, *setup.algorithm);
    ready = CheckResumeChanges(changes, request.allow_config_change, run_dir);
    if (ready.ok()) ready = learn::LoadCheckpoint(checkpoint, *setup.trainer);
  }
  RLT_RETURN_IF_ERROR(Agree(group.get(), ready, "loading the checkpoint"));
  std::optional<runlog::MetricsLogger> log;
  if (rank == 0)
    ready = OpenRunDir(run_dir, request, resume, checkpoint, changes, setup, lock, log);
  RLT_RETURN_IF_ERROR(Agree(group.get(), ready, "creating the run directory"));
  if (!request.quiet && rank == 0) {
    const int envs = setup.venv->num_envs();
    std::fprintf(stderr,
                 "%s %s on %d ranks of %d environment%s each (%d environments, one policy)%s\n",
                 resume ? "resuming" : "training", run_dir.c_str(), ranks, envs,
                 envs == 1 ? "" : "s", ranks * envs, resume ? (" from " + checkpoint).c_str() : "");
  }
  return TrainLoopOnRanks(setup, run_dir, log ? &*log : nullptr, request.quiet, checkpoint);
}

struct TrainingSession::Impl {
  Setup setup;
  std::optional<runlog::MetricsLogger> log;
  fs::path scratch_dir;
  std::optional<LoopState> loop;
};

TrainingSession::TrainingSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TrainingSession::~TrainingSession() = default;

Status TrainingSession::Iterate() {
  return UpdateOnce(impl_->setup, *impl_->loop, impl_->scratch_dir, &*impl_->log, false).status();
}

int64_t TrainingSession::steps() const { return impl_->setup.trainer->total_steps(); }

PhaseSeconds TrainingSession::timing() const {
  const learn::TrainerTiming& t = impl_->setup.trainer->timing();
  PhaseSeconds p;
  p.env_step = t.env_step;
  p.inference = t.inference;
  p.gae = t.gae;
  p.update_forward = t.update_forward;
  p.backward = t.backward;
  p.optimizer = t.optimizer;
  p.logging = t.logging;
  p.communicate = t.communicate;
  return p;
}

Result<std::unique_ptr<TrainingSession>> OpenTrainingSession(
    const std::string& config_path, const std::vector<std::string>& overrides,
    const std::string& scratch_dir, Collective* group) {
  RLT_ASSIGN_OR_RETURN(config::Config config, LoadConfig(config_path, overrides));
  RLT_RETURN_IF_ERROR(ResolveAutoThreads(config, /*quiet=*/false));  // as `train` does
  auto impl = std::make_unique<TrainingSession::Impl>();
  RLT_ASSIGN_OR_RETURN(impl->setup, BuildSetup(std::move(config)));
  if (group != nullptr) {
    impl->setup.group = group;
    RLT_RETURN_IF_ERROR(impl->setup.trainer->EnableDataParallel(group));
  }
  impl->scratch_dir = scratch_dir;
  std::error_code ec;
  fs::create_directories(scratch_dir, ec);
  if (ec) return Status::IoError("cannot create " + scratch_dir + ": " + ec.message());
  RLT_ASSIGN_OR_RETURN(runlog::MetricsLogger log, runlog::MetricsLogger::Create(scratch_dir));
  impl->log.emplace(std::move(log));
  impl->loop.emplace(MakeLoopState(impl->setup));
  const Setup& s = impl->setup;
  SessionShape shape;
  shape.obs_dim = s.venv->obs_dim();
  const env::ActionSpace& space = s.venv->spec().action;
  shape.action_outputs = space.discrete ? space.n : space.dim;
  shape.pi = s.policy.pi;
  shape.vf = s.policy.vf;
  shape.lstm_hidden = s.policy.is_recurrent() ? s.policy.lstm_hidden_size : 0;
  shape.shared_lstm = s.policy.shared_lstm;
  shape.num_envs = s.venv->num_envs();
  shape.threads = s.run.threads;  // resolved by BuildSetup
  shape.device = s.run.device;
  shape.backend = s.policy.backend;
  shape.total_steps = s.run.total_steps;
  shape.checkpoint_every = s.run.checkpoint_every;
  const native::TensorFile params = s.trainer->PolicyParameters();
  for (const auto& p : params.tensors()) shape.parameters += p.numel();
  shape.ranks = group != nullptr ? group->size() : 1;
  s.algorithm->DescribeShape(shape.num_envs, shape);
  std::unique_ptr<TrainingSession> bench(new TrainingSession(std::move(impl)));
  bench->shape_ = shape;
  return bench;
}

}  // namespace rlt::train
