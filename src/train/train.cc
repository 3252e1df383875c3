// rltrade train: RunTraining() — config to run directory (see train.h).
#include "train/train.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/thread_pool.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "learn/checkpoint.h"
#include "learn/evaluate.h"
#include "learn/trainer.h"
#include "market/market.h"
#include "runlog/runlog.h"
#include "train/train_options.h"

namespace rlt::train {
namespace {

namespace fs = std::filesystem;

std::atomic<int> g_signal{0};
extern "C" void OnSignal(int sig) { g_signal.store(sig); }

// Everything built from the config before anything is written to disk.
struct Setup {
  config::Config config;
  RunOptions run;
  learn::PpoOptions ppo;
  learn::PolicyOptions policy;
  std::unique_ptr<env::VecEnv> venv;
  std::unique_ptr<learn::PpoTrainer> trainer;
  std::unique_ptr<env::VecEnv> eval_venv;  // run.eval_every > 0: the evaluation envs
  EvalEnvSetup eval;
  std::string normalizer_json;  // market envs: the feature normaliser fitted on train
};

Result<Setup> BuildSetup(config::Config config) {
  Setup s;
  RLT_RETURN_IF_ERROR(
      config.CheckSections({"run", "data", "split", "features", "env", "algo", "policy"}));
  RLT_RETURN_IF_ERROR(config.Bind("run", s.run));
  RLT_RETURN_IF_ERROR(config.Bind("algo", s.ppo, {"total_timesteps"}));
  if (config.Get("algo", "total_timesteps") != nullptr) {
    return Status::InvalidArgument(config.Get("algo", "total_timesteps")->source +
                                   ": [algo] total_timesteps is set by [run] total_steps");
  }
  s.ppo.total_timesteps = s.run.total_steps;
  RLT_RETURN_IF_ERROR(config.Bind("policy", s.policy));
  if (s.run.eval_every < 0) {
    return Status::InvalidArgument("[run] eval_every must be >= 0 (0 = no evaluation)");
  }
  RLT_ASSIGN_OR_RETURN(EnvSetup env_setup, BuildEnvSetup(config));
  if (s.run.eval_every > 0) {
    RLT_ASSIGN_OR_RETURN(s.eval, BuildEvalEnvSetup(env_setup, s.run));
  }
  const int threads = s.run.threads > 0 ? s.run.threads : HardwareThreads();
  learn::SetComputeThreads(threads);
  RLT_ASSIGN_OR_RETURN(auto envs,
                       env::MakeEnvs(env_setup.id, env_setup.context, env_setup.num_envs));
  s.venv = std::make_unique<env::VecEnv>(std::move(envs), threads);
  if (s.run.eval_every > 0) {
    Result<std::vector<std::unique_ptr<env::Env>>> eval_envs =
        env::MakeEnvs(env_setup.id, s.eval.context, s.eval.num_envs);
    if (!eval_envs.ok()) {
      return Status::InvalidArgument("evaluation environment (run.eval_every > 0): " +
                                     eval_envs.status().message());
    }
    s.eval_venv = std::make_unique<env::VecEnv>(std::move(*eval_envs), threads);
  }
  RLT_ASSIGN_OR_RETURN(s.trainer, learn::PpoTrainer::Create(*s.venv, s.policy, s.ppo, s.run.seed));
  config.SetSection("run", s.run);
  // [algo] as resolved, minus total_timesteps: the run length lives in [run] total_steps.
  std::vector<std::pair<std::string, std::string>> algo_rows;
  for (const auto& row : DescribeOptions(s.ppo)) {
    if (row.key != "total_timesteps") algo_rows.emplace_back(row.key, row.value);
  }
  config.SetSectionValues("algo", algo_rows);
  config.SetSection("policy", s.policy);
  ResolveEnvSection(config, env_setup);
  if (env_setup.context.market) {
    s.normalizer_json = env_setup.context.market->normalizer.ToJson().dump(2) + "\n";
  }
  s.config = std::move(config);
  return s;
}

std::string DefaultRunDir(const std::string& config_path) {
  const std::string stem = fs::path(config_path).stem().string();
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  std::string stamp = FormatTime(now);  // "YYYY-MM-DD HH:MM:SS" (UTC)
  for (char& c : stamp) c = (c == ' ' ? '-' : (c == ':' ? '.' : c));
  return "runs/" + stem + "-" + stamp;
}

// The newest checkpoint directory that is complete (has its FORMAT file), or "".
std::string NewestCheckpoint(const fs::path& run_dir) {
  std::string best;
  int64_t best_step = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) != 0 || !fs::exists(entry.path() / "FORMAT")) continue;
    char* end = nullptr;
    const long long step = std::strtoll(name.c_str() + 5, &end, 10);
    if (*end != '\0') continue;
    if (step > best_step) {
      best_step = step;
      best = entry.path().string();
    }
  }
  return best;
}

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

// First multiple of `every` above `steps` (INT64_MAX when every == 0).
int64_t NextMultiple(int64_t steps, int64_t every) {
  return every > 0 ? (steps / every + 1) * every : INT64_MAX;
}

Result<TrainOutcome> TrainLoop(Setup& s, const fs::path& run_dir, runlog::MetricsLogger& log,
                               bool quiet) {
  runlog::ProgressOptions popt;
  if (quiet) popt.mode = runlog::ProgressOptions::Mode::kQuiet;
  runlog::ProgressReporter progress(popt);
  // Each checkpoint carries the resolved config and, for market envs, the normaliser.
  std::map<std::string, std::string> extra_files = {{"config.toml", s.config.ToToml()}};
  if (!s.normalizer_json.empty()) extra_files["normalizer.json"] = s.normalizer_json;
  int64_t next_checkpoint = NextMultiple(s.trainer->total_steps(), s.run.checkpoint_every);
  int64_t next_eval = NextMultiple(s.trainer->total_steps(), s.run.eval_every);
  g_signal.store(0);
  auto old_int = std::signal(SIGINT, OnSignal);
  auto old_term = std::signal(SIGTERM, OnSignal);
  TrainOutcome out;
  out.run_dir = run_dir.string();
  Status status;
  while (s.trainer->total_steps() < s.run.total_steps) {
    Result<learn::IterationStats> st = s.trainer->Iterate();
    if (!st.ok()) {
      status = Status::DataError(st.status().message() + " (the last good checkpoint is kept)");
      break;
    }
    std::vector<std::pair<std::string, double>> rows = MetricRows(*st);
    if (s.eval_venv) {
      std::optional<learn::EvalStats> eval;
      if (s.trainer->total_steps() >= next_eval) {
        Result<learn::EvalStats> r =
            learn::EvaluatePolicy(s.trainer->policy(), s.trainer->normalizer(), *s.eval_venv,
                                  s.eval.episodes, s.eval.seed);
        if (!r.ok()) {
          status = r.status();
          break;
        }
        eval = std::move(*r);
        next_eval = NextMultiple(s.trainer->total_steps(), s.run.eval_every);
      }
      AppendEvalRows(s.eval, eval ? &*eval : nullptr, rows);
    }
    status = log.Log(s.trainer->total_steps(), rows);
    if (!status.ok()) break;
    progress.Update(s.trainer->total_steps(), s.run.total_steps, st->fps,
                    st->episodes_seen > 0 ? st->ep_rew_mean : NAN);
    const int sig = g_signal.load();
    if (s.trainer->total_steps() >= next_checkpoint || sig != 0) {
      const fs::path dir =
          run_dir / "checkpoints" / ("step_" + std::to_string(s.trainer->total_steps()));
      status = learn::SaveCheckpoint(dir, *s.trainer, extra_files);
      if (!status.ok()) break;
      while (next_checkpoint <= s.trainer->total_steps()) next_checkpoint += s.run.checkpoint_every;
    }
    if (sig != 0) {
      out.exit_code = 128 + sig;
      break;
    }
  }
  progress.Finish();
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (!status.ok()) return status;
  if (out.exit_code == 0) {
    RLT_RETURN_IF_ERROR(learn::SaveCheckpoint(run_dir / "final", *s.trainer, extra_files));
  }
  out.total_steps = s.trainer->total_steps();
  return out;
}

}  // namespace

Result<TrainOutcome> RunTraining(const TrainRequest& request) {
  const bool resume = !request.resume_dir.empty();
  const fs::path run_dir =
      resume ? fs::path(request.resume_dir)
             : fs::path(request.run_dir.empty() ? DefaultRunDir(request.config_path)
                                                : request.run_dir);
  const std::string config_path = resume ? (run_dir / "config.toml").string() : request.config_path;
  RLT_ASSIGN_OR_RETURN(config::Config config, config::Config::LoadFile(config_path));
  for (const std::string& o : request.overrides) RLT_RETURN_IF_ERROR(config.ApplyOverride(o));
  // Build and validate everything before touching the disk: bad input leaves no run dir.
  RLT_ASSIGN_OR_RETURN(Setup setup, BuildSetup(std::move(config)));
  std::string checkpoint;
  if (resume) {
    checkpoint = NewestCheckpoint(run_dir);
    if (checkpoint.empty() && fs::exists(run_dir / "final" / "FORMAT")) {
      checkpoint = (run_dir / "final").string();
    }
    if (checkpoint.empty()) {
      return Status::NotFound(run_dir.string() +
                              " has no complete checkpoint to resume from (checkpoints/step_<N>/ "
                              "with a FORMAT file); start a new run instead");
    }
    RLT_RETURN_IF_ERROR(learn::LoadCheckpoint(checkpoint, *setup.trainer));
  } else if (fs::exists(run_dir) && !fs::is_empty(run_dir)) {
    return Status::InvalidArgument("run directory " + run_dir.string() +
                                   " already exists; continue it with --resume " +
                                   run_dir.string() + " or choose another --run-dir");
  }
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) return Status::IoError("cannot create " + run_dir.string() + ": " + ec.message());
  RLT_RETURN_IF_ERROR(
      runlog::WriteFileAtomic((run_dir / "config.toml").string(), setup.config.ToToml()));
  if (!setup.normalizer_json.empty()) {
    RLT_RETURN_IF_ERROR(
        runlog::WriteFileAtomic((run_dir / "normalizer.json").string(), setup.normalizer_json));
  }
  Result<runlog::MetricsLogger> log =
      resume ? runlog::MetricsLogger::Resume(run_dir.string(), setup.trainer->total_steps())
             : runlog::MetricsLogger::Create(run_dir.string());
  if (!log.ok()) return log.status();
  if (setup.eval_venv && !log->keys().empty() &&
      std::find(log->keys().begin(), log->keys().end(), "eval/mean_reward") == log->keys().end()) {
    return Status::InvalidArgument(
        run_dir.string() +
        " was started without evaluation and metrics.csv has no eval/* "
        "columns; resume it with --set run.eval_every=0 or start a new run");
  }
  if (!request.quiet && resume) {
    std::fprintf(stderr, "resuming %s from %s at step %lld\n", run_dir.c_str(), checkpoint.c_str(),
                 static_cast<long long>(setup.trainer->total_steps()));
  }
  return TrainLoop(setup, run_dir, *log, request.quiet);
}

}  // namespace rlt::train
