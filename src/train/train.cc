// rltrade train: RunTraining() — config to run directory (see train.h).
#include "train/train.h"

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/collective.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "core/options.h"
#include "core/proc_stats.h"
#include "core/thread_pool.h"
#include "dist/dist.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "learn/checkpoint.h"
#include "learn/es.h"
#include "learn/evaluate.h"
#include "learn/trainer.h"
#include "market/date_range.h"
#include "market/market.h"
#include "runlog/manifest.h"
#include "runlog/run_dir.h"
#include "runlog/runlog.h"
#include "train/train_options.h"
#include "train/training_ranges.h"

namespace rlt::train {
namespace {

namespace fs = std::filesystem;

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

// Everything built from the config before anything is written to disk.
struct Setup {
  config::Config config;
  RunOptions run;
  learn::PpoOptions ppo;
  learn::PolicyOptions policy;
  // [algo] name = "es": evolution strategies (learn/es.h) with these options; `ppo` then
  // keeps its defaults and is not used.
  bool es = false;
  learn::EsOptions es_options;
  std::unique_ptr<env::VecEnv> venv;
  std::unique_ptr<learn::Trainer> trainer;
  std::unique_ptr<env::VecEnv> eval_venv;  // run.eval_every > 0: the evaluation envs
  EvalEnvSetup eval;
  std::string normalizer_json;  // market envs: the feature normaliser fitted on train
  std::map<std::string, market::DateRange> split;  // [split] ranges
  TrainingRanges ranges;    // what this setup's training envs and normaliser use
  std::string ranges_json;  // RUN_DIR/training_ranges.json (set by RunTraining)
  // Data-parallel training under mpirun (RunTrainingOnRanks): the ranks' group, nullptr
  // alone. Rank 0 writes the run directory; every rank takes part in checkpoints.
  Collective* group = nullptr;
  bool writer() const { return group == nullptr || group->rank() == 0; }
};

// Data-parallel: a Status as text for the other ranks, and back (code kept).
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
void WarnIfOversubscribed(int threads) {
  static std::atomic<bool> warned{false};
  const int cores = AvailableCores();
  if (threads <= cores || warned.exchange(true)) return;
  std::fprintf(stderr,
               "warning: [run] threads = %d exceeds the %d cores this process may use; env "
               "workers, LibTorch and OpenBLAS will oversubscribe them (set run.threads <= %d, "
               "or 0 for all of them)\n",
               threads, cores, cores);
}

// Memory estimated before anything big is built, from one probe env's spec:
//  - environments: per env ~kEnvObjectBytes for the object and its state (the intraday env
//    holds its options, a copy of the eligible session list and its portfolio; the market
//    data and features are shared), plus the VecEnv's per-env arrays: observations and
//    terminal observations (2 x obs_dim floats), actions, info and terminal info
//    (2 x info_dim doubles), rewards and flags;
//  - the rollout buffer: per sample (n_steps x num_envs) obs_dim + act_dim + 6 floats
//    (reward, value, log-prob, episode start, advantage, return); the update gathers
//    shuffled minibatches of the same data (counted once more);
//  - the network (NetworkParameters, kParameterCopies below), before LibTorch allocates it
//    (policy.pi = [100000, 100000] would otherwise abort inside the allocator).
// Refused above 80% of MemAvailable, naming the keys to lower.
constexpr double kEnvObjectBytes = 4096;

// Parameters of the policy's network: the LSTMs (4H (in + H) weights + 8H biases each,
// one when shared) and the two MLP towers with their heads (the action outputs, log std
// included, and the value).
double NetworkParameters(const learn::PolicyOptions& policy, const env::EnvSpec& spec) {
  const double obs = spec.obs_dim;
  const double actions = spec.action.discrete ? spec.action.n : 2.0 * spec.action.dim;
  double params = 0, tower_in = obs;
  if (policy.is_recurrent()) {
    const double h = policy.lstm_hidden_size;
    params += (policy.shared_lstm ? 1 : 2) * (4 * h * (obs + h) + 8 * h);
    tower_in = h;
  }
  auto tower = [&](const std::vector<int>& widths, double out) {
    double in = tower_in;
    for (int w : widths) {
      params += (in + 1) * w;
      in = w;
    }
    params += (in + 1) * out;
  };
  tower(policy.pi, actions);
  tower(policy.vf, 1);
  return params;
}

// The network: every parameter held ~8 times (the LibTorch module and its gradients, the
// native engine's copy, gradients and Adam's two moments, the checkpoint staging copy), plus
// the activations of a minibatch (forward and backward of every hidden unit, 4 floats each).
constexpr double kParameterCopies = 8;

Status CheckMemory(const learn::PpoOptions& ppo, const learn::PolicyOptions& policy,
                   int64_t num_envs, const env::EnvSpec& spec, int64_t available) {
  const double obs = spec.obs_dim, act = spec.action.dim;
  const double info = static_cast<double>(spec.info_names.size());
  const double envs = static_cast<double>(num_envs);
  const double env_bytes =
      envs * (kEnvObjectBytes + (2 * obs + act + 2) * sizeof(float) + 2 * info * sizeof(double));
  const double samples = static_cast<double>(ppo.n_steps) * envs;
  const double rollout_bytes = 2.0 * samples * (obs + act + 6) * sizeof(float);
  double units = 0;
  for (int w : policy.pi) units += w;
  for (int w : policy.vf) units += w;
  if (policy.is_recurrent()) units += (policy.shared_lstm ? 1 : 2) * 6.0 * policy.lstm_hidden_size;
  const double params = NetworkParameters(policy, spec);
  const double network_bytes = kParameterCopies * params * sizeof(float) +
                               4.0 * static_cast<double>(ppo.batch_size) * units * sizeof(float);
  const double bytes = env_bytes + rollout_bytes + network_bytes;
  if (available <= 0 || bytes <= 0.8 * static_cast<double>(available)) return Status::Ok();
  char text[900];
  std::snprintf(text, sizeof text,
                "training would need about %.2f GB (environments: env.num_envs %lld x ~%.0f "
                "bytes = %.2f GB; rollout: algo.n_steps %d x env.num_envs %lld = %.0f samples "
                "of %.0f observation + %.0f action floats, x2 for the update = %.2f GB; "
                "network: %.3g parameters from policy.pi, policy.vf%s, held ~%.0f times, and "
                "algo.batch_size %d activations = %.2f GB) but only %.2f GB is available "
                "(MemAvailable); lower %s",
                bytes / 1e9, static_cast<long long>(num_envs), env_bytes / envs, env_bytes / 1e9,
                ppo.n_steps, static_cast<long long>(num_envs), samples, obs, act,
                rollout_bytes / 1e9, params,
                policy.is_recurrent() ? " and policy.lstm_hidden_size" : "", kParameterCopies,
                ppo.batch_size, network_bytes / 1e9, static_cast<double>(available) / 1e9,
                network_bytes > env_bytes + rollout_bytes
                    ? "the layer widths (policy.pi, policy.vf, policy.lstm_hidden_size)"
                    : "env.num_envs or algo.n_steps");
  return Status::InvalidArgument(text);
}

// ES holds the shared noise table (noise_table_size floats) in every process; the rest
// (one environment per thread, the actor) is small.
Status CheckEsMemory(const config::Config& config, const learn::EsOptions& es, int64_t available) {
  const double bytes = 4.0 * static_cast<double>(es.noise_table_size);
  if (available <= 0 || bytes <= 0.8 * static_cast<double>(available)) return Status::Ok();
  const config::ConfigValue* v = config.Get("algo", "noise_table_size");
  return Status::InvalidArgument(fmt::format(
      "{}[algo] noise_table_size = {}: the noise table needs {:.0f} MB but only {:.0f} MB is "
      "available; lower noise_table_size",
      v != nullptr ? config::MessagePlace(v->source) + ": " : std::string(), es.noise_table_size,
      bytes / 1e6, static_cast<double>(available) / 1e6));
}

// "file:line: [section] key" when the config sets the key, else "[section] key".
std::string KeyPlace(const config::Config& config, const std::string& section,
                     const std::string& key) {
  const config::ConfigValue* v = config.Get(section, key);
  return (v != nullptr ? config::MessagePlace(v->source) + ": " : std::string()) + "[" + section +
         "] " + key;
}

// The values a schedule takes over a run of `total_updates` updates (sampled at 201
// points, both ends included: linear and warmup-cosine schedules reach their extremes
// there or at the end of the warm-up, which the dense sampling brackets).
std::pair<double, double> ScheduleRange(const learn::Schedule& schedule, int64_t total_updates) {
  double lo = 0, hi = 0;
  for (int k = 0; k <= 200; ++k) {
    learn::TrainingProgress p;
    p.progress_remaining = 1.0 - k / 200.0;
    p.total_updates = std::max<int64_t>(1, total_updates);
    p.update = 1 + (p.total_updates - 1) * k / 200;
    const double v = schedule.Value(p);
    lo = k == 0 ? v : std::min(lo, v);
    hi = k == 0 ? v : std::max(hi, v);
  }
  return {lo, hi};
}

// The valid ranges of [run], [algo] and [policy] values, checked at config
// time so that a bad value is reported with its file:line and leaves no run directory.
// Non-finite numbers are refused by the options binder itself (core/options.h).
Status CheckRanges(const config::Config& config, const RunOptions& run,
                   const learn::PpoOptions& ppo, const learn::PolicyOptions& policy,
                   int64_t num_envs) {
  std::vector<std::string> errors;
  auto fail = [&](const std::string& section, const std::string& key, const std::string& value,
                  const std::string& rule) {
    errors.push_back(KeyPlace(config, section, key) + " = " + value + ": " + rule);
  };
  const int max_threads = std::max(16, 4 * HardwareThreads());
  if (run.threads < 0 || run.threads > max_threads) {
    fail("run", "threads", std::to_string(run.threads),
         fmt::format("must be in [0, {}] (0 = the cores this process may use; at most 4x the "
                     "machine's {} hardware threads)",
                     max_threads, HardwareThreads()));
  }
  if (run.total_steps < 1) {
    fail("run", "total_steps", std::to_string(run.total_steps),
         "must be >= 1 (env steps to train for)");
  }
  if (run.checkpoint_every < 0) {
    fail("run", "checkpoint_every", std::to_string(run.checkpoint_every),
         "must be >= 0 (env steps between checkpoints; 0 = final only)");
  }
  const int64_t per_update = static_cast<int64_t>(ppo.n_steps) * num_envs;
  const int64_t updates = per_update > 0 ? run.total_steps / per_update : 1;
  struct ScheduleRule {
    const char* key;
    const learn::Schedule* schedule;
    double lo, hi;  // values must lie in [lo, hi]
    bool positive;  // a constant must be > 0 (a schedule may reach 0 at an end)
    const char* what;
  };
  const ScheduleRule rules[] = {
      {"learning_rate", &ppo.learning_rate, 0, 1, true, "Adam step size"},
      {"clip_range", &ppo.clip_range, 0, 10, true, "policy ratio clip"},
      {"ent_coef", &ppo.ent_coef, 0, 100, false, "entropy coefficient"},
  };
  for (const ScheduleRule& r : rules) {
    const auto [lo, hi] = ScheduleRange(*r.schedule, updates);
    const bool constant = r.schedule->kind() == learn::Schedule::Kind::kConstant;
    const bool bad_zero = r.positive && hi <= 0;
    if (lo < r.lo || hi > r.hi || bad_zero) {
      fail("algo", r.key, r.schedule->ToString(),
           fmt::format("{} must stay in {}{}, {}] over the run{} (here it spans [{}, {}])", r.what,
                       r.positive && constant ? "(" : "[", r.lo, r.hi,
                       r.positive ? "; a constant must be > 0" : "", lo, hi));
    }
  }
  if (!(ppo.vf_coef >= 0 && ppo.vf_coef <= 100)) {
    fail("algo", "vf_coef", rlt::FormatValue(ppo.vf_coef), "must be in [0, 100]");
  }
  if (!(policy.log_std_init >= -20 && policy.log_std_init <= 5)) {
    fail("policy", "log_std_init", rlt::FormatValue(policy.log_std_init),
         "must be in [-20, 5] (the initial std exp(log_std_init) in [2e-9, 148])");
  }
  // A batch_size at or above the rollout is one minibatch of the whole rollout (SB3).
  if (ppo.batch_size >= 1 && ppo.batch_size < per_update && per_update % ppo.batch_size != 0) {
    int64_t below = ppo.batch_size;
    while (per_update % below != 0) --below;
    int64_t above = ppo.batch_size;
    while (per_update % above != 0) ++above;
    fail("algo", "batch_size", std::to_string(ppo.batch_size),
         fmt::format("must divide algo.n_steps x env.num_envs = {} x {} = {} (every minibatch "
                     "the same size); the nearest valid values are {} and {}",
                     ppo.n_steps, num_envs, per_update, below, above));
  }
  if (policy.is_recurrent()) {  // learn/recurrent_learner.h: whole sequences per minibatch
    const int L = ppo.sequence_length;
    if (L < 1 || L > ppo.n_steps || ppo.n_steps % L != 0) {
      fail("algo", "sequence_length", std::to_string(L),
           fmt::format("must divide algo.n_steps = {} (recurrent PPO trains on whole chunks of "
                       "each environment's rollout)",
                       ppo.n_steps));
    } else if (ppo.batch_size % L != 0) {
      fail("algo", "batch_size", std::to_string(ppo.batch_size),
           fmt::format("must be a multiple of algo.sequence_length = {} (a recurrent minibatch "
                       "is whole sequences); e.g. {}",
                       L, std::max(1, ppo.batch_size / L) * L));
    }
  }
  return config::JoinErrors(errors);
}

Result<Setup> BuildSetup(config::Config config) {
  Setup s;
  RLT_RETURN_IF_ERROR(
      config.CheckSections({"run", "data", "split", "features", "env", "algo", "policy"}));
  RLT_RETURN_IF_ERROR(config.Bind("run", s.run));
  if (const config::ConfigValue* name = config.Get("algo", "name"); name != nullptr) {
    if (name->text != "ppo" && name->text != "es") {
      return Status::InvalidArgument(KeyPlace(config, "algo", "name") + " = \"" + name->text +
                                     "\": expected \"ppo\" (the default) or \"es\" (evolution "
                                     "strategies: OpenAI-ES or ARS, see docs/training.md)");
    }
    s.es = name->text == "es";
  }
  if (s.es) {
    RLT_RETURN_IF_ERROR(config.Bind("algo", s.es_options, {"name", "total_timesteps"}));
    RLT_RETURN_IF_ERROR(learn::ValidateEsOptions(
        s.es_options, [&](const std::string& key) { return KeyPlace(config, "algo", key); }));
  } else {
    RLT_RETURN_IF_ERROR(config.Bind("algo", s.ppo, {"name", "total_timesteps"}));
  }
  if (config.Get("algo", "total_timesteps") != nullptr) {
    return Status::InvalidArgument(config.Get("algo", "total_timesteps")->source +
                                   ": [algo] total_timesteps is set by [run] total_steps");
  }
  s.ppo.total_timesteps = s.run.total_steps;
  RLT_RETURN_IF_ERROR(config.Bind("policy", s.policy));
  if (s.run.seeds != 1) {
    return Status::InvalidArgument(
        "[run] seeds = " + std::to_string(s.run.seeds) +
        ": one training run trains one seed; several seeds are trained by `rltrade train` "
        "(each into RUN/seed_<seed>/)");
  }
  if (!(s.run.rank_timeout_seconds >= 1 && s.run.rank_timeout_seconds <= 86400)) {
    return Status::InvalidArgument(
        "[run] rank_timeout_seconds = " + rlt::FormatValue(s.run.rank_timeout_seconds) +
        ": expected 1 to 86400 seconds (how long a rank under mpirun waits for the others)");
  }
  if (s.run.eval_every < 0) {
    return Status::InvalidArgument("[run] eval_every must be >= 0 (0 = no evaluation)");
  }
  RLT_ASSIGN_OR_RETURN(EnvSetup env_setup, BuildEnvSetup(config));
  // ES: [algo] holds ES keys, so only the [run] and [policy] rules apply (PPO's defaults
  // pass the others).
  RLT_RETURN_IF_ERROR(CheckRanges(config, s.run, s.ppo, s.policy, env_setup.num_envs));
  // Honesty: whatever set the training range ([env] range, --set, a fold's
  // split), the dates training will see must not touch [split] test.
  RLT_ASSIGN_OR_RETURN(s.ranges, TrainingRangesOf(env_setup));
  RLT_RETURN_IF_ERROR(CheckOutsideTest(env_setup.split, s.ranges));
  RLT_RETURN_IF_ERROR(CheckCapitalBuysOneLot(env_setup));
  s.split = env_setup.split;
  if (s.run.eval_every > 0) {
    RLT_ASSIGN_OR_RETURN(s.eval, BuildEvalEnvSetup(env_setup, s.run));
  }
  if (s.run.device != "cpu") {
    return Status::InvalidArgument("[run] device = \"" + s.run.device +
                                   "\": this build trains on \"cpu\" (\"auto\" measures and "
                                   "picks; it is resolved before setup)");
  }
  // threads = 0: the cores this process is given. The resolved count is what the saved
  // config.toml records (config.SetSection below), so a resume uses the same count and
  // stays bit-identical even on a machine with other cores.
  const int threads = ResolveThreads(s.run.threads);
  s.run.threads = threads;
  WarnIfOversubscribed(threads);
  learn::SetComputeThreads(threads);
  // ES plays one episode at a time per worker: one environment per thread ([env]
  // num_envs is not used; learn/es.h).
  const int num_envs = s.es ? threads : env_setup.num_envs;
  if (s.es) {
    RLT_RETURN_IF_ERROR(CheckEsMemory(config, s.es_options, AvailableMemoryBytes()));
  } else {
    // One probe env gives the spec the memory estimate needs, before num_envs are built.
    RLT_ASSIGN_OR_RETURN(auto probe, env::MakeEnvs(env_setup.id, env_setup.context, 1));
    RLT_RETURN_IF_ERROR(CheckMemory(s.ppo, s.policy, env_setup.num_envs, probe.front()->spec(),
                                    AvailableMemoryBytes()));
  }
  RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs(env_setup.id, env_setup.context, num_envs));
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
  std::vector<std::pair<std::string, std::string>> algo_rows;
  if (s.es) {
    RLT_ASSIGN_OR_RETURN(
        s.trainer, learn::EsTrainer::Create(*s.venv, s.policy, s.es_options, s.run.seed, threads));
    algo_rows.emplace_back("name", "es");
    for (const auto& row : DescribeOptions(s.es_options))
      algo_rows.emplace_back(row.key, row.value);
  } else {
    RLT_ASSIGN_OR_RETURN(s.trainer,
                         learn::PpoTrainer::Create(*s.venv, s.policy, s.ppo, s.run.seed, threads));
    // [algo] as resolved, minus total_timesteps: the run length lives in [run] total_steps.
    for (const auto& row : DescribeOptions(s.ppo)) {
      if (row.key != "total_timesteps") algo_rows.emplace_back(row.key, row.value);
    }
  }
  config.SetSection("run", s.run);
  config.SetSectionValues("algo", algo_rows);
  config.SetSection("policy", s.policy);
  ResolveEnvSection(config, env_setup);
  if (env_setup.context.market) {
    s.normalizer_json = JsonText(env_setup.context.market->normalizer.ToJson(), 2) + "\n";
  }
  s.config = std::move(config);
  return s;
}

}  // namespace

std::string DefaultRunDir(const std::string& config_path) {
  const std::string stem = fs::path(config_path).stem().string();
  return "runs/" + stem + "-" + FormatPathStamp(static_cast<int64_t>(std::time(nullptr)));
}

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

// First multiple of `every` above `steps` (INT64_MAX when every == 0).
int64_t NextMultiple(int64_t steps, int64_t every) {
  return every > 0 ? (steps / every + 1) * every : INT64_MAX;
}

// The loop's state between updates: the next checkpoint/evaluation step, where the last
// checkpoint went, and the meter behind sys/cpu_percent.
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
};

// A full disk must not abort inside LibTorch's writer (its zip writer reports a failed
// write by throwing from a destructor, which terminates the process): before writing a
// checkpoint, the free space of the run directory's file system (statvfs f_bavail) must hold
// the previous checkpoint's measured size (or, for the first, 4 x the parameter bytes:
// weights + Adam's two moments + slack) plus 256 KiB.
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

LoopState MakeLoopState(const Setup& s) {
  LoopState ls;
  // Each checkpoint carries the resolved config and, for market envs, the normaliser.
  ls.extra_files = {{"config.toml", s.config.ToToml()}};
  if (!s.normalizer_json.empty()) ls.extra_files["normalizer.json"] = s.normalizer_json;
  if (!s.ranges_json.empty()) ls.extra_files[kTrainingRangesFile] = s.ranges_json;
  ls.next_checkpoint = NextMultiple(s.trainer->total_steps(), s.run.checkpoint_every);
  ls.next_eval = NextMultiple(s.trainer->total_steps(), s.run.eval_every);
  return ls;
}

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
      eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    }
    AppendEvalRows(s.eval, eval ? &*eval : nullptr, rows);
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
    return runlog::WriteRunStatus(run_dir_, status_);
  }

 private:
  fs::path run_dir_;
  runlog::RunStatus status_;
  bool written_ = false;
  std::chrono::steady_clock::time_point last_write_;
};

std::string ProgressExtra(CpuMeter& meter) {
  char text[96];
  std::snprintf(text, sizeof text, "cpu %.0f%% | rss %.0f MB", meter.PercentSinceLast(),
                static_cast<double>(ResidentBytes()) / 1e6);
  return text;
}

Result<TrainOutcome> TrainLoop(Setup& s, const fs::path& run_dir, runlog::MetricsLogger& log,
                               bool quiet, const std::string& resumed_from, int64_t stop_at) {
  runlog::ProgressOptions popt;
  if (quiet) popt.mode = runlog::ProgressOptions::Mode::kQuiet;
  runlog::ProgressReporter progress(popt);
  LoopState ls = MakeLoopState(s);
  ls.last_checkpoint = resumed_from;
  ls.sys_columns = log.keys().empty() || std::find(log.keys().begin(), log.keys().end(),
                                                   "sys/cpu_percent") != log.keys().end();
  const auto loop_start = std::chrono::steady_clock::now();
  CpuMeter progress_meter;  // the progress line's CPU figure
  StatusFile status_file(run_dir, s);
  std::optional<SignalScope> signals(std::in_place);
  TrainOutcome out;
  out.run_dir = run_dir.string();
  Status status = status_file.Write(s.trainer->total_steps(), 0, ls.last_checkpoint, "running", "",
                                    /*force=*/true);
  double fps = 0;
  s.trainer->set_interrupt_flag(&g_signal);
  const int64_t target =
      stop_at > 0 ? std::min<int64_t>(stop_at, s.run.total_steps) : s.run.total_steps;
  while (status.ok() && s.trainer->total_steps() < target) {
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
  out.paused = status.ok() && out.exit_code == 0 && s.trainer->total_steps() < s.run.total_steps;
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
  const Status written = status_file.Write(s.trainer->total_steps(), fps, ls.last_checkpoint, state,
                                           status.message(), /*force=*/true);
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
  ls.sys_columns =
      log == nullptr || log->keys().empty() ||
      std::find(log->keys().begin(), log->keys().end(), "sys/cpu_percent") != log->keys().end();
  const auto loop_start = std::chrono::steady_clock::now();
  CpuMeter progress_meter;
  std::optional<StatusFile> status_file;
  if (s.writer()) status_file.emplace(run_dir, s);
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
  while (status.ok() && s.trainer->total_steps() < s.run.total_steps) {
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
  if (status_file) {  // best effort, as in TrainLoop
    const Status written = status_file->Write(s.trainer->total_steps(), fps, ls.last_checkpoint,
                                              state, status.message(), /*force=*/true);
    if (status.ok()) status = written;
  }
  RLT_RETURN_IF_ERROR(status);
  out.total_steps = s.trainer->total_steps();
  out.checkpoint = ls.last_checkpoint;
  out.loop_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  return out;
}

// [run] device = "auto": a short measured trial of this config on every device this build
// has, then the fastest is written into the config. Availability alone never decides.
Status ResolveAutoDevice(config::Config& config, bool quiet) {
  const auto* device = config.Get("run", "device");
  if (device == nullptr || device->text != "auto") return Status::Ok();
  config::Config trial_config = config;
  RLT_RETURN_IF_ERROR(trial_config.ApplyOverride("run.device=cpu"));
  RLT_ASSIGN_OR_RETURN(Setup trial, BuildSetup(std::move(trial_config)));
  // At least two updates and 0.5 s; the first update (warm-up) is not counted.
  RLT_RETURN_IF_ERROR(trial.trainer->Iterate().status());
  const int64_t steps0 = trial.trainer->total_steps();
  const auto t0 = std::chrono::steady_clock::now();
  double seconds = 0;
  do {
    RLT_RETURN_IF_ERROR(trial.trainer->Iterate().status());
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (seconds < 0.5);
  const double cpu_rate = static_cast<double>(trial.trainer->total_steps() - steps0) / seconds;
  if (!quiet) {
    std::fprintf(stderr,
                 "device auto: cpu %.0f env steps/s (measured over %.2f s of this config's "
                 "training loop)\n"
                 "device auto: cuda not tried: %s\n"
                 "device auto: picked cpu\n",
                 cpu_rate, seconds,
                 !learn::TorchBackendBuilt() ? "this build has no LibTorch (cpu only)"
                 : learn::CudaAvailable()
                     ? "this build trains on cpu only"
                     : "this LibTorch build has no CUDA device (torch::cuda::is_available() is "
                       "false)");
  }
  return config.ApplyOverride("run.device=cpu");
}

// env steps/s of a trial setup's training loop: one warm-up update (not counted), then
// updates until at least 0.5 s have passed. *seconds = the measured time.
Result<double> TrialRate(Setup& trial, double* seconds) {
  RLT_RETURN_IF_ERROR(trial.trainer->Iterate().status());
  const int64_t steps0 = trial.trainer->total_steps();
  const auto t0 = std::chrono::steady_clock::now();
  do {
    RLT_RETURN_IF_ERROR(trial.trainer->Iterate().status());
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (*seconds < 0.5);
  return static_cast<double>(trial.trainer->total_steps() - steps0) / *seconds;
}

// [run] threads = 0: at most the cores this process is given (ResolveThreads). When that
// is more than one, a short measured trial of this config at 1 thread and at that count
// picks the faster, printed like the device choice: small networks often run fastest on
// one thread (handing a product of a few microseconds to a second core costs more than
// it saves, and on a machine others are loading the second core may not be free), large
// ones gain. The pick is written into the config, so the run's config.toml records it and
// a resume reuses it (bit-identical). An explicit count is never changed.
Status ResolveAutoThreads(config::Config& config, bool quiet) {
  const auto* threads = config.Get("run", "threads");
  if (threads != nullptr && threads->text != "0") return Status::Ok();
  const int cores = ResolveThreads(0);
  if (cores <= 1) return config.ApplyOverride("run.threads=1");
  int best = 1;
  double best_rate = -1;
  std::string measured;
  for (const int t : {1, cores}) {
    config::Config trial_config = config;
    RLT_RETURN_IF_ERROR(trial_config.ApplyOverride("run.threads=" + std::to_string(t)));
    RLT_ASSIGN_OR_RETURN(Setup trial, BuildSetup(std::move(trial_config)));
    double seconds = 0;
    RLT_ASSIGN_OR_RETURN(const double rate, TrialRate(trial, &seconds));
    char line[160];
    std::snprintf(line, sizeof line,
                  "threads auto: %d thread%s %.0f env steps/s (measured over %.2f s)\n", t,
                  t == 1 ? "" : "s", rate, seconds);
    measured += line;
    if (rate > best_rate) {
      best_rate = rate;
      best = t;
    }
  }
  if (!quiet) {
    std::fprintf(stderr, "%sthreads auto: picked %d of the %d cores this process may use\n",
                 measured.c_str(), best, cores);
  }
  return config.ApplyOverride("run.threads=" + std::to_string(best));
}

// The run's setup files, covered by RUN_DIR/MANIFEST (metrics and status grow while
// training and are not).
std::vector<std::string> RunFiles() {
  return {"config.toml", "normalizer.json", kTrainingRangesFile};
}

// Removes what killed writers left behind (staged checkpoints, temporary files).
// REQUIRES: the run's lock is held.
void RemoveStaleRunTemps(const fs::path& run_dir) {
  for (const fs::path& dir : {run_dir, run_dir / "checkpoints", run_dir / "eval"}) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) runlog::RemoveStaleTemps(dir.string());
  }
}

// The newest complete checkpoint (runlog/run_dir.h); NotFound when there is none.
Result<std::string> ResumeCheckpoint(const fs::path& run_dir) {
  std::string checkpoint = runlog::NewestCheckpoint(run_dir);
  if (checkpoint.empty()) {
    return Status::NotFound(run_dir.string() +
                            " has no complete checkpoint to resume from (checkpoints/step_<N>/ "
                            "or final/ with a FORMAT file); start a new run instead");
  }
  return checkpoint;
}

Result<TrainingRanges> ReadRecordedRanges(const fs::path& run_dir) {
  const fs::path path = run_dir / kTrainingRangesFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) return TrainingRanges{};
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path.string()));
  return ParseTrainingRanges(text, path.string());
}

// config.toml, normalizer.json, training_ranges.json, then MANIFEST over them (last).
Status WriteRunFiles(const fs::path& run_dir, const Setup& s, bool write_config) {
  if (write_config) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((run_dir / "config.toml").string(), s.config.ToToml()));
  }
  if (!s.normalizer_json.empty()) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((run_dir / "normalizer.json").string(), s.normalizer_json));
  }
  if (!s.ranges_json.empty()) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((run_dir / kTrainingRangesFile).string(), s.ranges_json));
  }
  std::vector<std::string> present;
  for (const std::string& name : RunFiles()) {
    if (fs::exists(run_dir / name)) present.push_back(name);
  }
  return runlog::WriteManifestOf(run_dir.string(), present);
}

struct ConfigChange {
  std::string key;       // "section.key"
  std::string from, to;  // "" = absent
  bool allowed = false;
};

// Settings a resume may change without --allow-config-change: the run's length, thread
// count, checkpoint/evaluation cadence and the policy backend (the same policy either way).
bool AlwaysAllowedOnResume(const std::string& key) {
  static const char* const kAllowed[] = {"run.total_steps", "run.threads", "run.checkpoint_every",
                                         "run.eval_every", "policy.backend"};
  for (const char* k : kAllowed) {
    if (key == k) return true;
  }
  return false;
}

std::map<std::string, std::string> FlatConfig(const config::Config& c) {
  std::map<std::string, std::string> out;
  for (const std::string& name : c.SectionNames()) {
    for (const auto& [key, value] : c.Find(name)->entries) out[name + "." + key] = value.text;
  }
  return out;
}

// "section.key" -> default value text of every options struct a run's config records:
// [run], [algo], [policy], [data], [features] and the [env] options of `env_id`.
std::map<std::string, std::string> DefaultValues(const std::string& env_id) {
  std::map<std::string, std::string> out;
  auto add = [&out](const std::string& section, const auto& rows) {
    for (const auto& row : rows) out[section + "." + row.key] = row.value;
  };
  add("run", DescribeOptions(RunOptions()));
  add("algo", DescribeOptions(learn::PpoOptions()));
  add("policy", DescribeOptions(learn::PolicyOptions()));
  add("data", DescribeOptions(DataOptions()));
  add("features", DescribeOptions(FeatureOptions()));
  Result<std::vector<std::pair<std::string, std::string>>> env_rows =
      env::EnvOptionValues(env_id, {});
  if (env_rows.ok()) {
    for (const auto& [key, value] : *env_rows) out["env." + key] = value;
  }
  return out;
}

// A key the stored config lacks but `now` has at its default is no change: config.toml
// records every effective value, and a run written before a key was recorded (or existed)
// ran with its default.
std::vector<ConfigChange> DiffConfigs(const config::Config& stored, const config::Config& now) {
  const auto a = FlatConfig(stored), b = FlatConfig(now);
  const config::ConfigValue* id = now.Get("env", "id");
  const auto defaults = DefaultValues(id != nullptr ? id->text : "");
  std::vector<ConfigChange> changes;
  auto add = [&changes](const std::string& key, const std::string& from, const std::string& to) {
    changes.push_back({key, from, to, AlwaysAllowedOnResume(key)});
  };
  for (const auto& [key, value] : a) {
    const auto it = b.find(key);
    if (it == b.end()) {
      add(key, value, "");
    } else if (it->second != value) {
      add(key, value, it->second);
    }
  }
  for (const auto& [key, value] : b) {
    const auto d = defaults.find(key);
    if (!a.count(key) && (d == defaults.end() || d->second != value)) add(key, "", value);
  }
  return changes;
}

Status CheckResumeChanges(const std::vector<ConfigChange>& changes, bool allow,
                          const fs::path& run_dir) {
  std::string refused;
  for (const ConfigChange& c : changes) {
    if (c.allowed || allow) continue;
    refused += (refused.empty() ? "" : ", ") + c.key + " (" + (c.from.empty() ? "unset" : c.from) +
               " -> " + (c.to.empty() ? "unset" : c.to) + ")";
  }
  if (refused.empty()) return Status::Ok();
  return Status::Refused(
      "--resume " + run_dir.string() +
      " with settings that differ from the run's config.toml: " + refused +
      ". A resumed run must continue the same experiment; only run.total_steps, run.threads, "
      "run.checkpoint_every, run.eval_every and policy.backend may change freely. Pass "
      "--allow-config-change to resume anyway (the change is recorded in history.jsonl), or "
      "start a new run");
}

// One JSON line per resume that changed settings: RUN_DIR/history.jsonl.
Status AppendHistory(const fs::path& run_dir, const std::vector<ConfigChange>& changes,
                     const std::string& checkpoint, int64_t step, bool flag) {
  nlohmann::ordered_json j;
  j["time"] = static_cast<int64_t>(std::time(nullptr));
  j["event"] = "resume";
  j["step"] = step;
  j["checkpoint"] = checkpoint;
  j["allow_config_change"] = flag;
  j["changes"] = nlohmann::ordered_json::array();
  for (const ConfigChange& c : changes) {
    j["changes"].push_back({{"key", c.key}, {"from", c.from}, {"to", c.to}});
  }
  const std::string path = (run_dir / "history.jsonl").string();
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << JsonText(j) << "\n";
  out.close();
  if (!out) return Status::IoError("cannot append to " + path + " (disk full?)");
  return Status::Ok();
}

}  // namespace

Status ValidateTraining(const TrainRequest& request) {
  RLT_ASSIGN_OR_RETURN(config::Config config, config::Config::LoadFile(request.config_path));
  for (const std::string& o : request.overrides) RLT_RETURN_IF_ERROR(config.ApplyOverride(o));
  RLT_RETURN_IF_ERROR(config.ApplyOverride("run.threads=1"));  // nothing measured
  if (const config::ConfigValue* d = config.Get("run", "device");
      d != nullptr && d->text == "auto") {
    RLT_RETURN_IF_ERROR(config.ApplyOverride("run.device=cpu"));
  }
  RLT_RETURN_IF_ERROR(config.ApplyOverride("run.seeds=1"));
  return BuildSetup(std::move(config)).status();
}

// A resume's first steps, before anything is read: RUN must exist; its lock is taken (one
// writer per run directory), leftover staging directories of a killed process removed, the
// newest complete checkpoint picked and the run's MANIFEST verified.
Status OpenResume(const fs::path& run_dir, std::optional<runlog::RunLock>& lock,
                  std::string& checkpoint) {
  if (!fs::is_directory(run_dir)) {
    return Status::NotFound(run_dir.string() +
                            " does not exist: no complete checkpoint to resume from; start a "
                            "new run instead");
  }
  RLT_ASSIGN_OR_RETURN(lock, runlog::RunLock::Acquire(run_dir.string(), "rltrade train"));
  RemoveStaleRunTemps(run_dir);
  RLT_ASSIGN_OR_RETURN(checkpoint, ResumeCheckpoint(run_dir));
  return runlog::VerifyManifestFiles(run_dir.string(), RunFiles());
}

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
  // Build and validate everything before touching the disk: bad input leaves no run dir.
  RLT_RETURN_IF_ERROR(ResolveAutoDevice(config, request.quiet));
  RLT_RETURN_IF_ERROR(ResolveAutoThreads(config, request.quiet));
  RLT_ASSIGN_OR_RETURN(Setup setup, BuildSetup(std::move(config)));
  std::vector<ConfigChange> changes;
  if (resume) {
    changes = DiffConfigs(stored_config, setup.config);
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
    changes = DiffConfigs(stored_config, setup.config);
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
  RLT_ASSIGN_OR_RETURN(config::Config config, config::Config::LoadFile(config_path));
  for (const std::string& o : overrides) RLT_RETURN_IF_ERROR(config.ApplyOverride(o));
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
  shape.n_steps = s.ppo.n_steps;
  shape.num_envs = s.venv->num_envs();
  shape.n_epochs = s.ppo.n_epochs;
  shape.threads = s.run.threads;  // resolved by BuildSetup
  shape.device = s.run.device;
  shape.backend = s.policy.backend;
  shape.total_steps = s.run.total_steps;
  shape.checkpoint_every = s.run.checkpoint_every;
  shape.batch_size = s.ppo.batch_size;
  const native::TensorFile params = s.trainer->PolicyParameters();
  for (const auto& p : params.tensors()) shape.parameters += p.numel();
  shape.norm_obs = s.ppo.norm_obs;
  shape.norm_reward = s.ppo.norm_reward;
  shape.ranks = group != nullptr ? group->size() : 1;
  if (s.es) {
    shape.algo = "es";
    shape.population = s.es_options.population;
  }
  std::unique_ptr<TrainingSession> bench(new TrainingSession(std::move(impl)));
  bench->shape_ = shape;
  return bench;
}

}  // namespace rlt::train
