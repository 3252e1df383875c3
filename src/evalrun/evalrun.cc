// rltrade evalrun: RunEvaluation() — a run directory to RUN_DIR/eval/<range>/ (see
// evalrun.h; the files follow eval/outputs.h).
#include "evalrun/evalrun.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "core/options.h"
#include "core/rng.h"
#include "env/envs/chain_hedging_env.h"
#include "env/envs/intraday.h"
#include "env/envs/intraday_rules.h"
#include "env/envs/options_portfolio.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "eval/console_table.h"
#include "eval/metrics.h"
#include "eval/metrics_json.h"
#include "eval/metrics_table.h"
#include "eval/outputs.h"
#include "eval/report.h"
#include "eval/significance.h"
#include "evalrun/backtest.h"
#include "evalrun/cost_sweep.h"
#include "evalrun/ensemble.h"
#include "evalrun/symbols_eval.h"
#include "learn/inference.h"
#include "market/date_range.h"
#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"
#include "runlog/run_dir.h"
#include "train/selection.h"
#include "train/train_options.h"
#include "train/training_ranges.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct LoadedRun {
  config::Config config;
  train::EnvSetup setup;
  train::RunOptions run;
  std::optional<runlog::RunLock> lock;  // held while eval writes into the run directory
  // What training saw (RUN_DIR/training_ranges.json, merged with the evaluated
  // checkpoint's copy); nullopt when the run has no record.
  std::optional<train::TrainingRanges> trained;
};

// The run's record of what training saw, merged with `checkpoint`'s copy (a checkpoint of
// another run may have seen other dates). nullopt when neither has one.
Result<std::optional<train::TrainingRanges>> LoadTrainingRanges(const fs::path& run_dir,
                                                                const std::string& checkpoint) {
  std::optional<train::TrainingRanges> out;
  for (const fs::path& path :
       {run_dir / train::kTrainingRangesFile,
        checkpoint.empty() ? fs::path() : fs::path(checkpoint) / train::kTrainingRangesFile}) {
    if (path.empty() || !fs::exists(path)) continue;
    RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
    RLT_ASSIGN_OR_RETURN(train::TrainingRanges r, train::ParseTrainingRanges(text, path.string()));
    out = out ? train::MergeTrainingRanges(*out, r) : r;
  }
  return out;
}

std::string OverlapOf(const std::optional<train::TrainingRanges>& trained,
                      const market::DateRange& dates) {
  if (trained) return train::DescribeOverlap(*trained, dates);
  return "an unknown range (the run has no " + std::string(train::kTrainingRangesFile) +
         "; it was written by an older rltrade)";
}

Result<LoadedRun> LoadRun(const EvalRequest& request) {
  const fs::path run_dir(request.run_dir);
  if (!fs::exists(run_dir / "config.toml")) {
    return Status::NotFound(request.run_dir +
                            " is not a run directory (no config.toml); pass a directory "
                            "written by `rltrade train`");
  }
  LoadedRun r;
  // One writer per run directory (eval writes RUN_DIR/eval/<range>/); then the run's files
  // are checked against its MANIFEST before any is parsed.
  RLT_ASSIGN_OR_RETURN(r.lock, runlog::RunLock::Acquire(request.run_dir, "rltrade eval"));
  std::error_code ec;
  if (fs::is_directory(run_dir / "eval", ec)) runlog::RemoveStaleTemps((run_dir / "eval").string());
  RLT_RETURN_IF_ERROR(VerifyRunFiles(request.run_dir));
  // An ensemble's checkpoint is a keyword resolved per seed (the seeds share the run's
  // training ranges).
  RLT_ASSIGN_OR_RETURN(
      r.trained,
      LoadTrainingRanges(run_dir, request.ensemble_runs.empty() ? request.checkpoint : ""));
  RLT_ASSIGN_OR_RETURN(r.config, train::LoadConfig((run_dir / "config.toml").string()));
  RLT_RETURN_IF_ERROR(r.config.Bind("run", r.run));
  train::EnvSetupOverrides overrides;
  overrides.data_file = request.data_file;
  RLT_ASSIGN_OR_RETURN(const std::optional<train::DataRecord> record,
                       train::LoadRunDataRecord(request.run_dir));
  if (record) overrides.record = &*record;
  overrides.record_check.allow_data_change = request.allow_data_change;
  overrides.record_check.allow_mismatch = request.allow_mismatch;
  overrides.symbol = request.symbol;
  features::Normalizer normalizer;
  if (fs::exists(run_dir / "normalizer.json")) {
    RLT_ASSIGN_OR_RETURN(normalizer, features::Normalizer::LoadFile(
                                         (run_dir / "normalizer.json").string(), request.symbol));
    overrides.normalizer = &normalizer;
  }
  RLT_ASSIGN_OR_RETURN(r.setup, train::BuildEnvSetup(r.config, overrides));
  if (r.setup.context.market && overrides.normalizer == nullptr) {
    return Status::NotFound(request.run_dir +
                            "/normalizer.json is missing: a market run's evaluation applies the "
                            "normaliser fitted in training and never refits one");
  }
  return r;
}

struct ResolvedRange {
  std::string name;   // directory name under eval/
  std::string label;  // as the user named it
  market::DateRange dates;
  bool in_sample = false;
};

Result<ResolvedRange> ResolveRange(const EvalRequest& request,
                                   const std::map<std::string, market::DateRange>& split,
                                   const std::optional<train::TrainingRanges>& trained) {
  ResolvedRange r;
  r.label = request.range;
  if (request.range.find(':') != std::string::npos) {
    RLT_ASSIGN_OR_RETURN(r.dates, market::DateRange::Parse(request.range));
    r.name = request.range;
    for (char& c : r.name) c = c == ':' ? '_' : c;
  } else {
    const auto it = split.find(request.range);
    if (it == split.end()) {
      std::string names;
      for (const auto& [name, range] : split) names += " " + name;
      return Status::InvalidArgument("--range " + request.range + ": the run's [split] has no '" +
                                     request.range + "' (it has:" + names +
                                     "); give one of them or START:END (YYYY-MM-DD:YYYY-MM-DD)");
    }
    r.dates = it->second;
    r.name = request.range;
  }
  // Against what training saw (training_ranges.json), never only against [split] train.
  const std::string overlap = OverlapOf(trained, r.dates);
  if (!overlap.empty()) {
    if (!request.allow_in_sample) {
      return InSampleRefusal("range " + r.label, r.dates.ToString(), overlap,
                             "choose --range test or dates outside training");
    }
    r.in_sample = true;
  }
  return r;
}

Result<env::IntradayOptions> IntradayOptionsOf(const env::EnvContext& context) {
  env::IntradayOptions o;
  RLT_RETURN_IF_ERROR(SetOptions(o, context.settings, "[env]"));
  return o;
}

struct EnvBundle {
  std::unique_ptr<env::VecEnv> venv;
  env::IntradayOptions options;
};

// `extra`: [env] settings replacing the setup's (the cost levels of --costs).
Result<EnvBundle> MakeBacktestEnv(const train::EnvSetup& setup, const market::DateRange& range,
                                  const std::map<std::string, std::string>& extra = {}) {
  env::EnvContext context = setup.context;
  for (const auto& [key, value] : extra) context.settings[key] = value;
  context.settings["range"] = range.first == 0 && range.last == 0 ? "" : range.ToString();
  context.settings["sequential"] = "true";
  EnvBundle b;
  RLT_ASSIGN_OR_RETURN(b.options, IntradayOptionsOf(context));
  RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs(setup.id, context, 1));
  b.venv = std::make_unique<env::VecEnv>(std::move(envs), 1);
  return b;
}

// Writes a target exposure as an action of the env's action mode. Original mode:
// The random policy's stream (--policy random).
constexpr uint64_t kRandomPolicySeed = 0x52414e444f4dULL;

// > 0 buys with amount 1, < 0 sells with amount 1, 0 holds.
void ExposureAction(float exposure, bool target_mode, float* action) {
  action[0] = exposure;
  if (!target_mode) action[1] = 1.0f;
}

// The checkpoint every seed of an ensemble acts with: request.checkpoint (best, final or
// "") chosen in each seed's run (runlog::ChooseCheckpoint).
Result<std::vector<std::string>> EnsembleCheckpoints(const EvalRequest& request) {
  std::vector<std::string> checkpoints;
  for (const std::string& run : request.ensemble_runs) {
    RLT_ASSIGN_OR_RETURN(const std::string dir, runlog::ChooseCheckpoint(run, request.checkpoint));
    checkpoints.push_back(dir);
  }
  return checkpoints;
}

// The seed ensemble of request.ensemble_runs as an intraday policy; `*method` gets the
// method it combines with.
Result<ActionFn> MakeEnsemblePolicy(const EvalRequest& request, const env::MarketDataset& data,
                                    const env::VecEnv& venv, const env::IntradayOptions& options,
                                    std::string* method) {
  const EnsembleActions actions = EnsembleActionsOf(venv.spec().action, options.action_mode,
                                                    options.buy_threshold, options.sell_threshold);
  RLT_ASSIGN_OR_RETURN(const EnsembleMethod m, ResolveEnsembleMethod(request.ensemble, actions));
  if (method != nullptr) *method = EnsembleMethodName(m);
  RLT_ASSIGN_OR_RETURN(const std::vector<std::string> checkpoints, EnsembleCheckpoints(request));
  RLT_ASSIGN_OR_RETURN(
      std::unique_ptr<EnsembleRunner> runner,
      EnsembleRunner::Load(checkpoints, venv.obs_dim(), ActionCombiner(m, actions)));
  std::shared_ptr<EnsembleRunner> shared(std::move(runner));
  const market::Bars* session_bars = &data.bars;
  auto last_session = std::make_shared<int64_t>(-1);
  return ActionFn(
      [shared, session_bars, last_session](const float* obs, const double* info, float* a) {
        const int64_t session = session_bars->session[static_cast<int64_t>(info[env::kInfoBar])];
        if (shared->recurrent() && session != *last_session) shared->ResetState();
        *last_session = session;
        shared->Act(obs, a);
      });
}

Result<ActionFn> MakePolicy(const EvalRequest& request, const std::string& policy,
                            const env::MarketDataset& data, const env::VecEnv& venv,
                            const env::IntradayOptions& options,
                            std::string* ensemble_method = nullptr) {
  const bool target = options.action_mode == "target_position";
  if (policy == "flat") {
    return ActionFn([target](const float*, const double*, float* a) {
      // Target mode: exposure 0. Original mode: a0 = 0 is inside the hold band.
      ExposureAction(0.0f, target, a);
    });
  }
  if (policy == "buy-and-hold") {
    const market::Bars* bars = &data.bars;
    return ActionFn([target, bars](const float*, const double* info, float* a) {
      const int64_t t = static_cast<int64_t>(info[env::kInfoBar]);
      const bool first = bars->bar_in_session[t] == 0;
      ExposureAction(target || first ? 1.0f : 0.0f, target, a);
    });
  }
  if (policy == "random") {
    // What no learning earns: actions drawn uniformly from the action space (each Box
    // dimension within its bounds), from a fixed stream so the baseline is reproducible.
    const env::ActionSpace space = venv.spec().action;
    auto rng = std::make_shared<Rng>(kRandomPolicySeed);
    return ActionFn([space, rng](const float*, const double*, float* a) {
      if (space.discrete) {
        a[0] = static_cast<float>(rng->UniformInt(static_cast<uint64_t>(space.n)));
        return;
      }
      for (int k = 0; k < space.dim; ++k) {
        a[k] = static_cast<float>(rng->Uniform(space.low[k], space.high[k]));
      }
    });
  }
  if (policy.rfind("rule:", 0) == 0) {
    RLT_ASSIGN_OR_RETURN(env::IntradayRule rule, env::FindIntradayRule(policy.substr(5)));
    const market::Bars* bars = &data.bars;
    return ActionFn([target, bars, rule](const float*, const double* info, float* a) {
      ExposureAction(rule(*bars, static_cast<int64_t>(info[env::kInfoBar])), target, a);
    });
  }
  if (policy != "trained") {
    return Status::InvalidArgument("--policy " + policy +
                                   ": expected trained, flat, buy-and-hold, random or rule:NAME");
  }
  if (!request.ensemble_runs.empty()) {
    return MakeEnsemblePolicy(request, data, venv, options, ensemble_method);
  }
  const std::string dir = request.checkpoint.empty()
                              ? runlog::FinalCheckpointPath(request.run_dir).string()
                              : request.checkpoint;
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<learn::PolicyRunner> runner,
                       learn::PolicyRunner::Load(dir, venv.obs_dim(), venv.spec().action));
  std::shared_ptr<learn::PolicyRunner> shared(std::move(runner));
  // A recurrent policy's state starts afresh with each session, as its training episodes
  // did (one session each by default).
  const market::Bars* session_bars = &data.bars;
  auto last_session = std::make_shared<int64_t>(-1);
  return ActionFn(
      [shared, session_bars, last_session](const float* obs, const double* info, float* a) {
        const int64_t session = session_bars->session[static_cast<int64_t>(info[env::kInfoBar])];
        if (shared->recurrent() && session != *last_session) shared->ResetState();
        *last_session = session;
        shared->Act(obs, 1, a, nullptr);
      });
}

// The [data] options the evaluation used: the run's, or --data's file read with the run's
// timezone, symbol, on_bad_rows and session.
train::DataOptions EffectiveData(const train::EnvSetup& setup, const EvalRequest& request) {
  train::DataOptions d = setup.data;
  if (!request.data_file.empty()) {
    d.source = "file";
    d.file = request.data_file;
  }
  return d;
}

// "data.*" rows of the keys that apply to the data's source (eval::DataSettingApplies:
// a file run shows no synthetic generator settings, and the reverse), then the config's
// [features] and [split], [env], [run] seed and total_steps.
Json SettingsJson(const config::Config& config, const env::EnvContext& context,
                  const train::DataOptions& data, const EvalRequest& request) {
  Json j;
  for (const auto& row : DescribeOptions(data)) {
    if (eval::DataSettingApplies(data.source, row.key)) j["data." + row.key] = row.value;
  }
  for (const char* section : {"features", "split"}) {
    if (const config::Section* s = config.Find(section)) {
      for (const auto& [key, value] : s->entries) j[std::string(section) + "." + key] = value.text;
    }
  }
  if (const config::ConfigValue* id = config.Get("env", "id")) j["env.id"] = id->text;
  for (const auto& [key, value] : context.settings) j["env." + key] = value;
  for (const char* key : {"seed", "total_steps"}) {
    if (const config::ConfigValue* v = config.Get("run", key))
      j["run." + std::string(key)] = v->text;
  }
  if (!request.data_file.empty()) j["eval.data_file"] = request.data_file;
  if (!request.checkpoint.empty()) j["eval.checkpoint"] = request.checkpoint;
  if (request.periods_per_year > 0) j["eval.periods"] = request.periods_per_year;
  return j;
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path.string());
  return Status::Ok();
}

// Stages `files` (name -> bytes) as RUN_DIR/eval/<name>/, writes the report (market
// evaluations) and renames the directory into place, replacing an earlier one.
Status WriteEvalDir(const fs::path& out_dir, const std::map<std::string, std::string>& files,
                    bool report, EvalOutcome& outcome) {
  std::error_code ec;
  fs::create_directories(out_dir.parent_path(), ec);
  if (ec)
    return Status::IoError("cannot create " + out_dir.parent_path().string() + ": " + ec.message());
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging, runlog::StagingDir::Create(out_dir.string()));
  for (const auto& [name, text] : files) {
    RLT_RETURN_IF_ERROR(WriteText(fs::path(staging.path()) / name, text));
  }
  if (report) {
    RLT_RETURN_IF_ERROR(eval::WriteReport(staging.path()));
    outcome.report_written = true;
  }
  return staging.Commit(/*replace=*/true);
}

// The data a summary names: {"source": "file", "file": PATH} or {"source": "synthetic",
// "seed": N, "days": N}.
Json DataJson(const train::DataOptions& d) {
  Json j;
  j["source"] = d.source;
  if (d.source == "file") {
    j["file"] = d.file;
  } else {
    j["seed"] = d.seed;
    j["days"] = d.days;
  }
  return j;
}

std::string DataLabel(const train::DataOptions& d) {
  return d.source == "file" ? std::string(d.file) : fmt::format("synthetic data (seed {})", d.seed);
}

// The checkpoint directory of the trained policy.
std::string CheckpointDir(const EvalRequest& request) {
  return request.checkpoint.empty() ? runlog::FinalCheckpointPath(request.run_dir).string()
                                    : request.checkpoint;
}

// The checkpoint an evaluation uses (runlog::ChooseCheckpoint): request.checkpoint ""
// (the trained policy: best/ when the run has one, else final/), "best", "final" or a
// directory. final/ stays "" in the request (the names and settings of an evaluation of
// final/ are as they always were); best/ becomes its path (output name <range>.ckpt-best).
Result<EvalRequest> ResolveCheckpoint(const EvalRequest& request, bool trained) {
  EvalRequest out = request;
  const bool keyword = request.checkpoint == "best" || request.checkpoint == "final";
  if (!keyword && !(trained && request.checkpoint.empty())) return out;
  std::string label;
  RLT_ASSIGN_OR_RETURN(const std::string dir,
                       runlog::ChooseCheckpoint(request.run_dir, request.checkpoint, &label));
  out.checkpoint = label == "final" ? "" : dir;
  return out;
}

// Whether `checkpoint` is the run's best/.
bool IsBestCheckpoint(const std::string& run_dir, const std::string& checkpoint) {
  if (checkpoint.empty()) return false;
  std::error_code ec;
  return fs::weakly_canonical(checkpoint, ec) ==
         fs::weakly_canonical(runlog::BestCheckpointPath(run_dir), ec);
}

// The selection behind checkpoint best/ (summary.json "selection"; null for any other
// checkpoint): the metric, the selected step and score, the validation curve, and with
// `returns` (the evaluated range's daily returns) the deflated Sharpe ratio of this range
// given trials = the run's validation evaluations (x 1 seed) and the variance of their
// per-session Sharpe ratios (eval::DeflatedSharpeRatio), annualised with `periods` (unused
// without returns).
Result<Json> SelectionSummary(const std::string& run_dir, const std::string& checkpoint,
                              std::span<const double> returns, int periods) {
  if (!IsBestCheckpoint(run_dir, checkpoint)) return Json();
  RLT_ASSIGN_OR_RETURN(const train::Selection chosen, train::Selection::Read(checkpoint));
  // Every evaluation of the run (RUN/selection.json), else those up to best/.
  Result<train::Selection> all = train::Selection::Read(run_dir);
  const train::Selection& trials = all.ok() ? *all : chosen;
  Json j;
  j["checkpoint"] = "best";
  j["metric"] = chosen.metric;
  j["best_step"] = chosen.best_step;
  j["best_score"] = chosen.best_score;
  j["evaluations"] = trials.evaluations();
  j["seeds"] = 1;
  j["trials"] = trials.evaluations();
  Json curve = Json::array();
  for (const train::SelectionPoint& p : trials.curve) {
    curve.push_back({{"step", p.step}, {"score", p.score}, {"sharpe_ratio", p.sharpe_ratio}});
  }
  j["curve"] = curve;
  if (!returns.empty()) {
    const double variance = trials.SharpeVariancePerPeriod();
    const eval::DeflatedSharpeResult dsr = eval::DeflatedSharpeRatio(
        returns, static_cast<double>(std::max<int64_t>(1, trials.evaluations())), variance);
    const double annualise = std::sqrt(static_cast<double>(periods));
    j["deflated_sharpe"] = dsr.dsr;
    j["deflated_sharpe_detail"] = {{"sharpe_ratio", dsr.sharpe_per_period * annualise},
                                   {"sr0_annualised", dsr.sr0 * annualise},
                                   {"sharpe_variance_per_period", variance},
                                   {"observations", dsr.observations},
                                   {"skewness", dsr.skewness},
                                   {"kurtosis", dsr.kurtosis}};
  }
  return j;
}

// The terminal line naming the selected checkpoint ("" without one).
std::string SelectionLine(const Json& selection) {
  if (selection.is_null()) return "";
  std::string line = fmt::format(
      "checkpoint best/: selected on validation {} = {:.6g} at step {}, the best of {} "
      "evaluations",
      selection["metric"].get<std::string>(), selection["best_score"].get<double>(),
      selection["best_step"].get<int64_t>(), selection["evaluations"].get<int64_t>());
  if (selection.contains("deflated_sharpe")) {
    line +=
        fmt::format("; deflated Sharpe ratio of this range given {} trials: {:.4g}",
                    selection["trials"].get<int64_t>(), selection["deflated_sharpe"].get<double>());
  }
  return line + "\n";
}

// The terminal table (eval/console_table.h): one row per metric, labelled as in the report,
// the policy beside flat and buy-and-hold, the fills (orders executed, `fills`: policy,
// flat, buy-and-hold) after the round trips so the two counts are never confused, the
// significance of the Sharpe differences and how the ratios were annualised.
std::string Table(const std::string& title, const Json& summary, const Json& fills, bool in_sample,
                  bool periods_given) {
  std::string out = title + "\n";
  if (in_sample) out += "IN-SAMPLE: this range overlaps the training range\n";
  eval::BenchmarkTableInput t;
  t.first_header = in_sample ? "metric (IN-SAMPLE)" : "metric";
  t.policy = &summary["metrics"];
  t.flat = &summary["benchmarks"]["flat"];
  t.buy_and_hold = &summary["benchmarks"]["buy_and_hold"];
  t.significance = summary.contains("significance") ? &summary["significance"] : nullptr;
  t.fills = &fills;
  out += eval::BenchmarkTable(t);
  return out + eval::AnnualisationNote(summary["periods_per_year"].get<int>(), periods_given);
}

// Periods per year: --periods, else from the session dates of the data (a fifth of them on
// weekends: 365, else 252; eval/significance.h).
int PeriodsOf(const EvalRequest& request, std::span<const int32_t> session_dates) {
  return request.periods_per_year > 0 ? request.periods_per_year
                                      : eval::PeriodsPerYearOf(session_dates);
}

Result<Json> EnsembleJson(const EvalRequest& request, const std::string& method);

// The returns of `episodes` deterministic episodes of the seed ensemble of
// request.ensemble_runs on one env (as learn::EvaluatePolicy runs one policy: reset with
// `seed`, episode totals in finishing order, recurrent states reset at each episode's end).
Result<std::vector<double>> EnsembleEpisodes(const EvalRequest& request, env::VecEnv& venv,
                                             uint64_t seed, std::string* method) {
  const EnsembleActions actions = EnsembleActionsOf(venv.spec().action, "", 0, 0);
  RLT_ASSIGN_OR_RETURN(const EnsembleMethod m, ResolveEnsembleMethod(request.ensemble, actions));
  *method = EnsembleMethodName(m);
  RLT_ASSIGN_OR_RETURN(const std::vector<std::string> checkpoints, EnsembleCheckpoints(request));
  RLT_ASSIGN_OR_RETURN(
      std::unique_ptr<EnsembleRunner> runner,
      EnsembleRunner::Load(checkpoints, venv.obs_dim(), ActionCombiner(m, actions)));
  std::vector<double> returns;
  std::vector<float> action(venv.act_dim());  // (act_dim)
  venv.Reset(seed);
  while (static_cast<int>(returns.size()) < request.episodes) {
    runner->Act(venv.observations(), action.data());
    venv.Step(action.data());
    if (venv.done(0)) {
      returns.push_back(venv.episode_returns()[0]);
      runner->ResetState();
    }
  }
  return returns;
}

Result<EvalOutcome> RunEpisodic(const EvalRequest& request, const LoadedRun& run) {
  if (request.policy != "trained") {
    return Status::InvalidArgument("--policy " + request.policy + ": the " + run.setup.id +
                                   " environment has no trading benchmarks; only --policy "
                                   "trained applies to episodic environments");
  }
  RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs(run.setup.id, run.setup.context, 1));
  env::VecEnv venv(std::move(envs), 1);
  const uint64_t seed = run.run.seed + train::kEvalSeedOffset;
  std::vector<double> returns;
  std::string method;  // an ensemble's
  if (!request.ensemble_runs.empty()) {
    RLT_ASSIGN_OR_RETURN(returns, EnsembleEpisodes(request, venv, seed, &method));
  } else {
    RLT_ASSIGN_OR_RETURN(
        std::unique_ptr<learn::PolicyRunner> runner,
        learn::PolicyRunner::Load(CheckpointDir(request), venv.obs_dim(), venv.spec().action));
    RLT_ASSIGN_OR_RETURN(returns, runner->EvaluateEpisodes(venv, request.episodes, seed));
  }
  double mean = 0, var = 0;
  for (double r : returns) mean += r;
  mean /= static_cast<double>(returns.size());
  for (double r : returns) var += (r - mean) * (r - mean);
  Json j;
  j["run_dir"] = request.output_root.empty() ? request.run_dir : request.output_root;
  j["env"] = run.setup.id;
  j["in_sample"] = false;
  j["policy"] = "trained";
  if (method.empty()) {
    j["checkpoint"] = CheckpointDir(request);
  } else {
    RLT_ASSIGN_OR_RETURN(j["ensemble"], EnsembleJson(request, method));
  }
  j["episodes"] = static_cast<int64_t>(returns.size());
  j["mean_return"] = mean;
  j["std_return"] = std::sqrt(var / static_cast<double>(returns.size()));  // population, as SB3
  j["returns"] = returns;
  j["seed"] = seed;
  RLT_ASSIGN_OR_RETURN(
      const Json selection,
      SelectionSummary(request.run_dir, method.empty() ? request.checkpoint : "", {}, 0));
  if (!selection.is_null()) j["selection"] = selection;
  eval::NullNonFinite(j);
  EvalOutcome out;
  out.episodic = true;
  out.range_name = "episodes";
  EvalRequest named = request;
  named.ensemble = method;
  out.name = EvalOutputName(named, "episodes", "trained");
  out.ensemble_method = method;
  const std::string root = request.output_root.empty() ? request.run_dir : request.output_root;
  out.out_dir = (fs::path(root) / "eval" / out.name).string();
  out.summary_json = JsonText(j, 2) + "\n";
  out.table = fmt::format(
      "{} on {} ({}): {} deterministic episodes, mean return {:.6g}, std {:.6g}\n", root,
      run.setup.id,
      method.empty()
          ? "checkpoint " + CheckpointDir(request)
          : fmt::format("ensemble ({}) of {} seeds", method, request.ensemble_runs.size()),
      returns.size(), mean, j["std_return"].is_null() ? NAN : j["std_return"].get<double>());
  out.table += SelectionLine(selection);
  RLT_RETURN_IF_ERROR(
      WriteEvalDir(out.out_dir, {{eval::kSummaryFile, out.summary_json}}, /*report=*/false, out));
  return out;
}

// One walk of the options environment over the evaluated range: per day (the first is
// the start) its date, the underlying's close and the env's info.
struct PortfolioWalk {
  std::vector<int32_t> dates;
  std::vector<double> close, net_worth, cash, shares, costs, margin_ratio, liquidations, gross;
  std::vector<double> missing_marks;  // cumulative held-contract days marked without a quote
  std::vector<double> returns;        // per day after the first: net worth change
};

// `act` writes the action for the current observation (or leaves it at 0: flat).
using PortfolioPolicy = std::function<void(const float* obs, float* action, bool first)>;

PortfolioWalk WalkPortfolio(env::VecEnv& venv, const PortfolioPolicy& act) {
  PortfolioWalk w;
  auto record = [&w](const double* info) {
    w.dates.push_back(static_cast<int32_t>(info[env::kOptInfoDate]));
    w.close.push_back(info[env::kOptInfoUnderlying]);
    w.net_worth.push_back(info[env::kOptInfoNetWorth]);
    w.cash.push_back(info[env::kOptInfoCash]);
    w.shares.push_back(info[env::kOptInfoShares]);
    w.costs.push_back(info[env::kOptInfoCosts]);
    w.margin_ratio.push_back(info[env::kOptInfoMarginRatio]);
    w.liquidations.push_back(info[env::kOptInfoLiquidations]);
    w.gross.push_back(info[env::kOptInfoGrossExposure]);
    w.missing_marks.push_back(info[env::kOptInfoMissingQuoteMarks]);
  };
  venv.Reset(0);  // random_start = false: the seed draws nothing
  record(venv.info());
  std::vector<float> action(venv.act_dim());
  for (bool first = true;; first = false) {
    std::fill(action.begin(), action.end(), 0.0f);
    act(venv.observations(), action.data(), first);
    venv.Step(action.data());
    const bool done = venv.done(0);
    record(done ? venv.terminal_info() : venv.info());
    const size_t n = w.net_worth.size();
    w.returns.push_back(w.net_worth[n - 2] > 0 ? w.net_worth[n - 1] / w.net_worth[n - 2] - 1 : -1);
    if (done) break;
  }
  return w;
}

Json PortfolioMetrics(const PortfolioWalk& w, int periods_per_year) {
  return eval::StrategyMetricsJson<Json>(eval::ComputeStrategyMetrics(
      w.returns, {}, w.gross, w.costs.back(), eval::MetricsOptions{periods_per_year}));
}

// The options environment (env/envs/options_portfolio.h): one deterministic walk over the
// range's trading days from the initial cash, daily returns of net worth; benchmarks flat
// (cash at the rate) and buy-and-hold of the underlying (its close-to-close returns, all in,
// no costs). Writes summary.json, daily_returns.csv and portfolio.csv (per day).
Result<EvalOutcome> RunOptionsPortfolio(const EvalRequest& request, const LoadedRun& run,
                                        const std::string& policy_name) {
  if (policy_name != "trained" && policy_name != "flat") {
    return Status::InvalidArgument("--policy " + policy_name +
                                   ": the options environment is evaluated with --policy trained "
                                   "or flat (buy-and-hold of the underlying is always reported)");
  }
  RLT_ASSIGN_OR_RETURN(ResolvedRange range, ResolveRange(request, run.setup.split, run.trained));
  env::EnvContext context = run.setup.context;
  context.settings["range"] = range.dates.ToString();
  context.settings["random_start"] = "false";
  context.settings["episode_days"] = "200000";  // the whole range in one episode
  auto make = [&]() -> Result<std::unique_ptr<env::VecEnv>> {
    RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs(run.setup.id, context, 1));
    return std::make_unique<env::VecEnv>(std::move(envs), 1);
  };
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<env::VecEnv> policy_env, make());
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<env::VecEnv> flat_env, make());
  PortfolioPolicy flat = [](const float*, float*, bool) {};
  PortfolioPolicy policy = flat;
  if (policy_name == "trained") {
    RLT_ASSIGN_OR_RETURN(std::unique_ptr<learn::PolicyRunner> runner,
                         learn::PolicyRunner::Load(CheckpointDir(request), policy_env->obs_dim(),
                                                   policy_env->spec().action));
    std::shared_ptr<learn::PolicyRunner> shared(std::move(runner));
    policy = [shared](const float* obs, float* action, bool first) {
      if (first) shared->ResetState();  // one episode: the state starts afresh once
      shared->Act(obs, 1, action, nullptr);
    };
  }
  const PortfolioWalk walk = WalkPortfolio(*policy_env, policy);
  const PortfolioWalk flat_walk = WalkPortfolio(*flat_env, flat);
  PortfolioWalk hold;  // buy-and-hold of the underlying
  hold.costs = {0.0};
  for (size_t i = 1; i < walk.close.size(); ++i) {
    hold.returns.push_back(walk.close[i] / walk.close[i - 1] - 1);
    hold.gross.push_back(1.0);
  }
  Json summary;
  summary["run_dir"] = request.run_dir;
  Json range_json;
  range_json["name"] = range.name;
  range_json["first"] = FormatDate(walk.dates.front());
  range_json["last"] = FormatDate(walk.dates.back());
  summary["range"] = range_json;
  summary["in_sample"] = range.in_sample;
  summary["policy"] = policy_name;
  const auto underlying = context.settings.find("underlying");
  const auto chain_file = context.settings.find("chain_file");
  if (chain_file != context.settings.end() && !chain_file->second.empty()) {
    summary["data"] = {{"source", "chain_file"}, {"chain_file", chain_file->second}};
  } else {
    summary["data"] = {
        {"source", "underlying"},
        {"underlying",
         underlying == context.settings.end() ? std::string("synthetic") : underlying->second}};
  }
  if (policy_name == "trained") summary["checkpoint"] = CheckpointDir(request);
  const int periods = PeriodsOf(request, walk.dates);
  summary["periods_per_year"] = periods;
  summary["metrics"] = PortfolioMetrics(walk, periods);
  summary["benchmarks"]["flat"] = PortfolioMetrics(flat_walk, periods);
  summary["benchmarks"]["buy_and_hold"] =
      eval::StrategyMetricsJson<Json>(eval::ComputeStrategyMetrics(
          hold.returns, {}, hold.gross, 0.0, eval::MetricsOptions{periods}));
  if (flat_walk.returns.size() == walk.returns.size()) {
    summary["significance"] =
        eval::SignificanceJson<Json>(walk.returns, flat_walk.returns, hold.returns, periods);
  }
  RLT_ASSIGN_OR_RETURN(
      const Json selection,
      SelectionSummary(request.run_dir, request.checkpoint,
                       policy_name == "trained" ? walk.returns : std::vector<double>{}, periods));
  if (!selection.is_null()) summary["selection"] = selection;
  summary["liquidations"] = walk.liquidations.back();
  // Days a held contract had no quote in the chain file and was marked by missing_quote.
  summary["missing_quote_marks"] = walk.missing_marks.back();
  summary["final_net_worth"] = walk.net_worth.back();
  Json settings;
  for (const auto& [key, value] : context.settings) settings["env." + key] = value;
  settings["run.seed"] = run.run.seed;
  summary["settings"] = settings;
  eval::NullNonFinite(summary);
  EvalOutcome out;
  out.range_name = range.name;
  out.in_sample = range.in_sample;
  out.name = EvalOutputName(request, range.name, policy_name);
  out.out_dir = (fs::path(request.run_dir) / "eval" / out.name).string();
  out.summary_json = JsonText(summary, 2) + "\n";
  const std::string title = fmt::format(
      "{}{}: policy {}{} on the options environment, range {} ({} to {}, {} trading days)",
      range.in_sample ? "IN-SAMPLE " : "", request.run_dir, policy_name,
      summary.contains("checkpoint") ? " (checkpoint " + CheckpointDir(request) + ")" : "",
      range.name, range_json["first"].get<std::string>(), range_json["last"].get<std::string>(),
      walk.returns.size());
  const Json no_fills = {{"strategy", 0}, {"flat", 0}, {"buy_and_hold", 0}};
  out.table = Table(title, summary, no_fills, range.in_sample, request.periods_per_year > 0) +
              SelectionLine(selection);
  std::string daily = std::string(eval::kDailyReturnsHeader) + "\n";
  for (size_t i = 0; i < walk.returns.size(); ++i) {
    daily += fmt::format("{},{},{},{}\n", FormatDate(walk.dates[i + 1]), Num(walk.returns[i]),
                         Num(hold.returns[i]), Num(flat_walk.returns[i]));
  }
  std::string portfolio =
      "date,underlying,net_worth,cash,shares,costs,margin_ratio,liquidations,gross_exposure,"
      "buy_and_hold_net_worth,missing_quote_marks\n";
  for (size_t i = 0; i < walk.dates.size(); ++i) {
    const double bh = walk.net_worth.front() * walk.close[i] / walk.close.front();
    portfolio += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", FormatDate(walk.dates[i]),
                             Num(walk.close[i]), Num(walk.net_worth[i]), Num(walk.cash[i]),
                             Num(walk.shares[i]), Num(walk.costs[i]), Num(walk.margin_ratio[i]),
                             Num(walk.liquidations[i]), Num(walk.gross[i]), Num(bh),
                             Num(walk.missing_marks[i]));
  }
  RLT_RETURN_IF_ERROR(WriteEvalDir(out.out_dir,
                                   {{eval::kSummaryFile, out.summary_json},
                                    {eval::kDailyReturnsFile, daily},
                                    {"portfolio.csv", portfolio}},
                                   /*report=*/false, out));
  return out;
}

// One sequential walk of the chain-fed hedging environment: every contract of the range
// once, in order, with `act` (obs -> hedge ratio; `first` at each contract's first step).
struct HedgeWalk {
  std::vector<std::string> ids;
  std::vector<double> returns, pnl, costs;
};

HedgeWalk WalkHedging(env::VecEnv& venv, int contracts,
                      const std::function<void(const float*, float*, bool)>& act) {
  HedgeWalk w;
  const auto* chain_env = dynamic_cast<const env::ChainHedgingEnv*>(&venv.env(0));
  venv.Reset(0);  // sequential: the seed draws nothing
  float action = 0;
  bool first = true;
  while (static_cast<int>(w.returns.size()) < contracts) {
    const int contract = chain_env->contract();
    act(venv.observations(), &action, first);
    venv.Step(&action);
    first = venv.done(0);
    if (!first) continue;
    const double* info = venv.terminal_info();
    w.ids.push_back(chain_env->data().contracts[contract].id);
    w.returns.push_back(venv.episode_returns()[0]);
    w.pnl.push_back(info[env::ChainHedgingEnv::kInfoWealth]);
    w.costs.push_back(info[env::ChainHedgingEnv::kInfoCosts]);
  }
  return w;
}

Json MeanStd(const std::vector<double>& x) {
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  return {{"mean", mean}, {"std", std::sqrt(var / static_cast<double>(x.size()))}};
}

// The hedging environment on a listed chain ([env] chain_file): every contract whose first
// quote date lies in the range, once, in order (sequential = true), with the policy
// (trained or bs-delta) and the Black-Scholes delta baseline always beside it. Writes
// summary.json and contracts.csv (per contract: the episode's return and final P&L).
Result<EvalOutcome> RunChainHedging(const EvalRequest& request, const LoadedRun& run,
                                    const std::string& policy_name) {
  if (policy_name != "trained" && policy_name != "bs-delta") {
    return Status::InvalidArgument(
        "--policy " + policy_name +
        ": the hedging environment on a chain is evaluated with --policy trained or bs-delta "
        "(the Black-Scholes delta is always reported beside it)");
  }
  RLT_ASSIGN_OR_RETURN(ResolvedRange range, ResolveRange(request, run.setup.split, run.trained));
  env::EnvContext context = run.setup.context;
  context.settings["range"] =
      range.dates.first == 0 && range.dates.last == 0 ? "" : range.dates.ToString();
  context.settings["sequential"] = "true";
  auto make = [&]() -> Result<std::unique_ptr<env::VecEnv>> {
    RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs(run.setup.id, context, 1));
    return std::make_unique<env::VecEnv>(std::move(envs), 1);
  };
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<env::VecEnv> policy_env, make());
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<env::VecEnv> bs_env, make());
  const auto* chain_env = dynamic_cast<const env::ChainHedgingEnv*>(&policy_env->env(0));
  RLT_CHECK_MSG(chain_env != nullptr, "chain_file builds a ChainHedgingEnv");
  const int contracts = chain_env->num_contracts();
  auto bs_delta = [](const float* obs, float* action, bool first) {
    env::BsDeltaPolicy(obs, 1, action, first);
  };
  std::function<void(const float*, float*, bool)> policy = bs_delta;
  if (policy_name == "trained") {
    RLT_ASSIGN_OR_RETURN(std::unique_ptr<learn::PolicyRunner> runner,
                         learn::PolicyRunner::Load(CheckpointDir(request), policy_env->obs_dim(),
                                                   policy_env->spec().action));
    std::shared_ptr<learn::PolicyRunner> shared(std::move(runner));
    policy = [shared](const float* obs, float* action, bool first) {
      if (first) shared->ResetState();  // each contract's episode starts afresh
      shared->Act(obs, 1, action, nullptr);
    };
  }
  const HedgeWalk walk = WalkHedging(*policy_env, contracts, policy);
  const HedgeWalk bs = WalkHedging(*bs_env, contracts, bs_delta);
  Json summary;
  summary["run_dir"] = request.run_dir;
  summary["env"] = run.setup.id;
  summary["range"] = {{"name", range.name}, {"dates", range.dates.ToString()}};
  summary["in_sample"] = range.in_sample;
  summary["policy"] = policy_name;
  if (policy_name == "trained") summary["checkpoint"] = CheckpointDir(request);
  summary["chain_file"] = chain_env->data().path;
  summary["contracts"] = contracts;
  summary["mean_return"] = MeanStd(walk.returns)["mean"];
  summary["std_return"] = MeanStd(walk.returns)["std"];
  summary["pnl"] = MeanStd(walk.pnl);
  summary["benchmarks"]["bs_delta"] = {{"mean_return", MeanStd(bs.returns)["mean"]},
                                       {"std_return", MeanStd(bs.returns)["std"]},
                                       {"pnl", MeanStd(bs.pnl)}};
  Json settings;
  for (const auto& [key, value] : context.settings) settings["env." + key] = value;
  summary["settings"] = settings;
  eval::NullNonFinite(summary);
  EvalOutcome out;
  out.episodic = true;
  out.range_name = range.name;
  out.in_sample = range.in_sample;
  out.name = EvalOutputName(request, range.name, policy_name);
  out.out_dir = (fs::path(request.run_dir) / "eval" / out.name).string();
  out.summary_json = JsonText(summary, 2) + "\n";
  out.table = fmt::format(
      "{}{}: policy {} on the hedging environment, chain {}, range {} ({}): {} contracts\n"
      "  mean return {:.6g} (bs-delta {:.6g}); mean final P&L {:.6g} (bs-delta {:.6g}), "
      "std {:.6g} (bs-delta {:.6g})\n",
      range.in_sample ? "IN-SAMPLE " : "", request.run_dir, policy_name, chain_env->data().path,
      range.name, range.dates.ToString(), contracts, MeanStd(walk.returns)["mean"].get<double>(),
      MeanStd(bs.returns)["mean"].get<double>(), MeanStd(walk.pnl)["mean"].get<double>(),
      MeanStd(bs.pnl)["mean"].get<double>(), MeanStd(walk.pnl)["std"].get<double>(),
      MeanStd(bs.pnl)["std"].get<double>());
  std::string csv = "contract,return,pnl,costs,bs_delta_return,bs_delta_pnl\n";
  for (size_t i = 0; i < walk.ids.size(); ++i) {
    csv += fmt::format("{},{},{},{},{},{}\n", walk.ids[i], Num(walk.returns[i]), Num(walk.pnl[i]),
                       Num(walk.costs[i]), Num(bs.returns[i]), Num(bs.pnl[i]));
  }
  RLT_RETURN_IF_ERROR(WriteEvalDir(out.out_dir,
                                   {{eval::kSummaryFile, out.summary_json}, {"contracts.csv", csv}},
                                   /*report=*/false, out));
  return out;
}

Result<EvalOutcome> RunResolved(const EvalRequest& request, const std::string& policy_name,
                                const ActionFn* custom);

// An ensemble's request: the trained policy of every seed, their checkpoints named by a
// keyword, the seeds' files verified and observing the same features.
Status CheckEnsembleRequest(const EvalRequest& request, const std::string& policy_name,
                            const ActionFn* custom) {
  if (custom != nullptr || policy_name != "trained") {
    return Status::InvalidArgument("--policy " + policy_name +
                                   ": a seed ensemble combines the seeds' trained policies; "
                                   "evaluate other policies with --seed S");
  }
  if (!request.checkpoint.empty() && request.checkpoint != "best" &&
      request.checkpoint != "final") {
    return Status::InvalidArgument(
        "--checkpoint " + request.checkpoint +
        ": an ensemble takes the same checkpoint of every seed (best or final); give --seed S "
        "to evaluate one seed's checkpoint directory");
  }
  if (fs::path(request.run_dir) != fs::path(request.ensemble_runs.front())) {
    return Status::InvalidArgument("an ensemble's run_dir must be its first seed's run");
  }
  for (const std::string& run : request.ensemble_runs) RLT_RETURN_IF_ERROR(VerifyRunFiles(run));
  return CheckSameObservations(request.ensemble_runs);
}

Result<EvalOutcome> Run(const EvalRequest& request, const std::string& policy_name,
                        const ActionFn* custom) {
  EvalRequest resolved = request;
  if (!request.ensemble_runs.empty()) {
    RLT_RETURN_IF_ERROR(CheckEnsembleRequest(request, policy_name, custom));
  } else {
    RLT_ASSIGN_OR_RETURN(resolved,
                         ResolveCheckpoint(request, custom == nullptr && policy_name == "trained"));
  }
  // A run of several symbols: every symbol (or the one --symbol names) and their portfolio.
  const fs::path config_path = fs::path(request.run_dir) / "config.toml";
  if (request.symbol.empty() && fs::exists(config_path)) {
    RLT_ASSIGN_OR_RETURN(const config::Config config, train::LoadConfig(config_path.string()));
    const std::vector<std::string> symbols = train::RunSymbols(config);
    if (symbols.size() >= 2) {
      return RunSymbolsEvaluation(resolved, symbols, [&](const EvalRequest& one) {
        return RunResolved(one, policy_name, custom);
      });
    }
  }
  return RunResolved(resolved, policy_name, custom);
}

// summary.json "pnl" of one walk: net (the sessions' net worth changes, after costs), the
// costs paid and gross = net + costs.
Json PnlJson(const BacktestResult& r) {
  Json j;
  j["net"] = r.net_pnl;
  j["costs"] = r.costs_paid;
  j["gross"] = r.net_pnl + r.costs_paid;
  return j;
}

// --set and --costs: the accepted [env] keys (ParseEvalSetting) replace the run's, checked
// here so a bad value names the flag before anything is walked or written.
Status ApplyEnvSettings(const EvalRequest& request, train::EnvSetup& setup) {
  if (request.env_settings.empty() && request.cost_levels_bps.empty()) return Status::Ok();
  if (setup.id != "intraday") {
    return Status::Refused(
        "--set env.KEY and --costs change the execution costs of the intraday "
        "environment; this run's environment is " +
        setup.id + ", so evaluate it without them");
  }
  for (const auto& [key, value] : request.env_settings) setup.context.settings[key] = value;
  env::IntradayOptions o;
  const Status st = SetOptions(o, setup.context.settings, "[env]");
  if (!st.ok()) {
    return Status::InvalidArgument("--set: " + st.message() +
                                   "; give a value of the kind `rltrade docs config` lists");
  }
  return Status::Ok();
}

// --costs: the policy walked once per cost level (its own walk: the observation holds the
// portfolio, so actions may change with costs), the rows of costs.csv and costs.json, the
// terminal table and the break-even cost on the total net return (evalrun/cost_sweep.h),
// and every level's daily returns (costs_daily_returns.csv).
Result<CostSweep> SweepCosts(const EvalRequest& request, const std::string& policy_name,
                             const ActionFn* custom, const train::EnvSetup& setup,
                             const market::DateRange& dates, int periods) {
  const env::MarketDataset& data = *setup.context.market;
  std::vector<CostLevel> levels;
  std::vector<BacktestResult> walks;
  for (const double bps : request.cost_levels_bps) {
    const double rate = bps / 10000.0;
    RLT_ASSIGN_OR_RETURN(
        EnvBundle e, MakeBacktestEnv(setup, dates, {{"cost_rate", fmt::format("{:.17g}", rate)}}));
    ActionFn policy;
    if (custom != nullptr) {
      policy = *custom;
    } else {
      RLT_ASSIGN_OR_RETURN(policy, MakePolicy(request, policy_name, data, *e.venv, e.options));
    }
    BacktestResult r = Backtest(*e.venv, data.bars, e.options, policy);
    const Json m = MetricsJson(r, periods);
    CostLevel l;
    l.bps = bps;
    l.total_return = m["cum_returns_final"].get<double>();
    l.annual_return = m["annual_return"].get<double>();
    l.sharpe_ratio = m["sharpe_ratio"].get<double>();
    l.max_drawdown = m["max_drawdown"].get<double>();
    l.turnover = m["turnover"].get<double>();
    l.costs_paid = r.costs_paid;
    l.net_pnl = r.net_pnl;
    l.fills = static_cast<int64_t>(r.fills.size());
    levels.push_back(l);
    walks.push_back(std::move(r));
  }
  CostSweep out = FormatCostSweep(levels);
  // Every level walked the range's sessions (a stopped walk padded with flat sessions).
  out.daily_csv = "date";
  for (const double bps : request.cost_levels_bps) out.daily_csv += "," + Num(bps);
  out.daily_csv += "\n";
  for (size_t d = 0; d < walks.front().session_dates.size(); ++d) {
    out.daily_csv += FormatDate(walks.front().session_dates[d]);
    for (const BacktestResult& w : walks) {
      out.daily_csv += "," + (d < w.session_returns.size() ? Num(w.session_returns[d]) : "nan");
    }
    out.daily_csv += "\n";
  }
  return out;
}

// summary.json "ensemble" of an ensemble's evaluation: the method, the seeds, their runs
// and the checkpoint each seed acted with.
Result<Json> EnsembleJson(const EvalRequest& request, const std::string& method) {
  Json j;
  j["method"] = method;
  j["seeds"] = request.ensemble_seeds;
  j["runs"] = request.ensemble_runs;
  RLT_ASSIGN_OR_RETURN(j["checkpoints"], EnsembleCheckpoints(request));
  return j;
}

// What the title calls the evaluated policy.
std::string PolicyLabel(const EvalRequest& request, const std::string& policy_name,
                        const Json& summary) {
  if (summary.contains("ensemble")) {
    return fmt::format("ensemble ({}) of {} seeds",
                       summary["ensemble"]["method"].get<std::string>(),
                       request.ensemble_runs.size());
  }
  return policy_name +
         (summary.contains("checkpoint") ? " (checkpoint " + CheckpointDir(request) + ")" : "");
}

Result<EvalOutcome> RunResolved(const EvalRequest& request, const std::string& policy_name,
                                const ActionFn* custom) {
  if (request.episodes < 1) {
    return Status::InvalidArgument("--episodes must be >= 1 (got " +
                                   std::to_string(request.episodes) + ")");
  }
  RLT_ASSIGN_OR_RETURN(LoadedRun run, LoadRun(request));
  RLT_RETURN_IF_ERROR(ApplyEnvSettings(request, run.setup));
  const bool ensemble = !request.ensemble_runs.empty();
  if (ensemble && run.setup.id == "options") {
    return Status::InvalidArgument(
        "a seed ensemble is evaluated on the intraday and the episodic environments; options "
        "runs are evaluated seed by seed (--seed S)");
  }
  if (run.setup.id == "options") {
    if (custom != nullptr) return Status::InvalidArgument("custom policies need the intraday env");
    return RunOptionsPortfolio(request, run, policy_name);
  }
  if (run.setup.id == "hedging" && !ensemble) {
    const auto chain_file = run.setup.context.settings.find("chain_file");
    if (chain_file != run.setup.context.settings.end() && !chain_file->second.empty()) {
      if (custom != nullptr)
        return Status::InvalidArgument("custom policies need the intraday env");
      return RunChainHedging(request, run, policy_name);
    }
  }
  if (!run.setup.context.market) {
    if (custom != nullptr) return Status::InvalidArgument("custom policies need a market env");
    return RunEpisodic(request, run);
  }
  if (run.setup.id != "intraday") {
    return Status::InvalidArgument("rltrade eval backtests the intraday environment; " +
                                   run.setup.id + " is not supported yet");
  }
  RLT_ASSIGN_OR_RETURN(ResolvedRange range, ResolveRange(request, run.setup.split, run.trained));
  const env::MarketDataset& data = *run.setup.context.market;
  RLT_ASSIGN_OR_RETURN(EnvBundle policy_env, MakeBacktestEnv(run.setup, range.dates));
  ActionFn policy;
  std::string ensemble_method;
  if (custom != nullptr) {
    policy = *custom;
  } else {
    RLT_ASSIGN_OR_RETURN(policy, MakePolicy(request, policy_name, data, *policy_env.venv,
                                            policy_env.options, &ensemble_method));
  }
  const BacktestResult result = Backtest(*policy_env.venv, data.bars, policy_env.options, policy);
  BacktestResult bench[2];
  const char* bench_names[2] = {"flat", "buy-and-hold"};
  for (int k = 0; k < 2; ++k) {
    RLT_ASSIGN_OR_RETURN(EnvBundle e, MakeBacktestEnv(run.setup, range.dates));
    RLT_ASSIGN_OR_RETURN(ActionFn p, MakePolicy(request, bench_names[k], data, *e.venv, e.options));
    bench[k] = Backtest(*e.venv, data.bars, e.options, p);
  }
  Json summary;
  // An ensemble's: the multi-seed run (output_root), not its first seed.
  summary["run_dir"] = request.output_root.empty() ? request.run_dir : request.output_root;
  Json range_json;
  range_json["name"] = range.name;
  range_json["first"] =
      result.session_dates.empty() ? "" : FormatDate(result.session_dates.front());
  range_json["last"] = result.session_dates.empty() ? "" : FormatDate(result.session_dates.back());
  summary["range"] = range_json;
  summary["in_sample"] = range.in_sample;
  summary["policy"] = policy_name;
  const train::DataOptions data_used = EffectiveData(run.setup, request);
  summary["data"] = DataJson(data_used);
  if (ensemble) {
    RLT_ASSIGN_OR_RETURN(summary["ensemble"], EnsembleJson(request, ensemble_method));
  } else if (custom == nullptr && policy_name == "trained") {
    summary["checkpoint"] = CheckpointDir(request);
  }
  std::vector<int32_t> data_sessions;
  for (const market::Session& s : data.bars.sessions) data_sessions.push_back(s.date);
  const int periods = request.periods_per_year <= 0 && data.bars.around_the_clock
                          ? 365  // a market that never closes ([data] session = "24h")
                          : PeriodsOf(request, data_sessions);
  summary["periods_per_year"] = periods;
  summary["metrics"] = MetricsJson(result, periods);
  if (result.stopped_date != 0) summary["stopped_out"] = FormatDate(result.stopped_date);
  RLT_ASSIGN_OR_RETURN(
      const Json selection,
      SelectionSummary(request.run_dir, ensemble ? "" : request.checkpoint,
                       policy_name == "trained" && custom == nullptr ? result.session_returns
                                                                     : std::vector<double>{},
                       periods));
  if (!selection.is_null()) summary["selection"] = selection;
  // Fills (rows of trades.csv: every order executed, closing flattens included), apart
  // from the round trips (metrics.num_trades).
  summary["fills"] = {{"strategy", static_cast<int64_t>(result.fills.size())},
                      {"flat", static_cast<int64_t>(bench[0].fills.size())},
                      {"buy_and_hold", static_cast<int64_t>(bench[1].fills.size())}};
  // Net and gross P&L (gross = net + costs paid; the env books every cost).
  summary["pnl"] = {{"strategy", PnlJson(result)},
                    {"flat", PnlJson(bench[0])},
                    {"buy_and_hold", PnlJson(bench[1])}};
  summary["benchmarks"]["flat"] = MetricsJson(bench[0], periods);
  summary["benchmarks"]["buy_and_hold"] = MetricsJson(bench[1], periods);
  if (bench[0].session_returns.size() == result.session_returns.size() &&
      bench[1].session_returns.size() == result.session_returns.size()) {
    summary["significance"] = eval::SignificanceJson<Json>(
        result.session_returns, bench[0].session_returns, bench[1].session_returns, periods);
  }
  Json settings = SettingsJson(run.config, run.setup.context, data_used, request);
  settings["env.range"] = range.dates.ToString();
  settings["env.sequential"] = "true";
  for (const auto& [key, value] : request.env_settings) settings["eval.set.env." + key] = value;
  summary["settings"] = settings;
  eval::NullNonFinite(summary);
  EvalOutcome out;
  out.range_name = range.name;
  out.in_sample = range.in_sample;
  EvalRequest named = request;
  named.ensemble = ensemble_method;
  out.name = EvalOutputName(named, range.name, policy_name);
  out.ensemble_method = ensemble_method;
  const std::string root = request.output_root.empty() ? request.run_dir : request.output_root;
  out.out_dir = (fs::path(root) / "eval" / out.name).string();
  out.summary_json = JsonText(summary, 2) + "\n";
  const std::string title = fmt::format(
      "{}{}: policy {} on {}, range {} ({} to {}, {} sessions)",
      range.in_sample ? "IN-SAMPLE " : "", root, PolicyLabel(request, policy_name, summary),
      DataLabel(data_used), range.name, range_json["first"].get<std::string>(),
      range_json["last"].get<std::string>(), result.session_dates.size());
  out.table =
      Table(title, summary, summary["fills"], range.in_sample, request.periods_per_year > 0) +
      SelectionLine(selection) +
      (result.stopped_date == 0
           ? std::string()
           : fmt::format("stopped out on {}: net worth fell to [env] stop_fraction x capital; "
                         "the later sessions count as flat (return 0)\n",
                         FormatDate(result.stopped_date)));
  std::map<std::string, std::string> files = {
      {eval::kSummaryFile, out.summary_json},
      {eval::kEquityFile, EquityCsv(data.bars, result, bench[1])},
      {eval::kDailyReturnsFile, DailyCsv(result, bench[1], bench[0])},
      {eval::kTradesFile, TradesCsv(data.bars, result)}};
  if (!request.cost_levels_bps.empty()) {
    RLT_ASSIGN_OR_RETURN(const CostSweep sweep,
                         SweepCosts(request, policy_name, custom, run.setup, range.dates, periods));
    files[std::string(eval::kCostsCsvFile)] = sweep.csv;
    files[std::string(eval::kCostsJsonFile)] = sweep.json;
    files[kCostsDailyFile] = sweep.daily_csv;
    out.table += sweep.table;
  }
  RLT_RETURN_IF_ERROR(WriteEvalDir(out.out_dir, files, /*report=*/true, out));
  return out;
}

// Characters outside [A-Za-z0-9_.+-] (':' and '/' among them) become '-'.
std::string PathSafe(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-';
    if (!keep) c = '-';
  }
  return out;
}

// The checkpoint's suffix: "" for RUN_DIR/final; RUN_DIR/checkpoints/step_500 ->
// "step_500"; another path inside RUN_DIR -> that path; outside it -> "<parent>-<leaf>".
std::string CheckpointSuffix(const EvalRequest& request) {
  if (request.checkpoint.empty()) return "";
  std::error_code ec;
  const fs::path run = fs::weakly_canonical(request.run_dir, ec);
  const fs::path ckpt = fs::weakly_canonical(request.checkpoint, ec);
  if (ckpt == runlog::FinalCheckpointPath(run)) return "";
  const fs::path rel = ckpt.lexically_relative(run);
  if (!rel.empty() && *rel.begin() != "..") {
    const fs::path inside =
        *rel.begin() == "checkpoints" ? rel.lexically_relative("checkpoints") : rel;
    return PathSafe(inside.string());
  }
  return PathSafe(ckpt.parent_path().filename().string() + "-" + ckpt.filename().string());
}

}  // namespace

std::string EvalOutputName(const EvalRequest& request, const std::string& range_name,
                           const std::string& policy_name) {
  std::string name = range_name;
  if (policy_name != "trained") {
    name += "." + PathSafe(policy_name);
  } else if (!request.ensemble_runs.empty()) {
    if (!request.checkpoint.empty()) name += ".ckpt-" + PathSafe(request.checkpoint);
    name += ".ensemble-" + PathSafe(request.ensemble.empty() ? "default" : request.ensemble);
  } else if (const std::string ckpt = CheckpointSuffix(request); !ckpt.empty()) {
    name += ".ckpt-" + ckpt;
  }
  for (const auto& [key, value] : request.env_settings) {
    name += ".set-" + PathSafe(key + "-" + value);
  }
  if (!request.data_file.empty()) {
    name += ".data-" + PathSafe(fs::path(request.data_file).stem().string());
  }
  if (!request.symbol.empty()) name += ".symbol-" + PathSafe(request.symbol);
  return name;
}

Result<EvalOutcome> RunEvaluation(const EvalRequest& request) {
  return Run(request, request.policy, nullptr);
}

Result<EvalOutcome> RunEvaluationWith(const EvalRequest& request, const std::string& policy_name,
                                      const ActionFn& policy) {
  return Run(request, policy_name, &policy);
}

Status VerifyRunFiles(const std::string& run_dir) {
  return runlog::VerifyManifestFiles(run_dir, train::RunSetupFiles());
}

Result<std::string> TrainingOverlap(const std::string& run_dir, const std::string& checkpoint,
                                    int32_t first_date, int32_t last_date) {
  RLT_ASSIGN_OR_RETURN(const std::optional<train::TrainingRanges> trained,
                       LoadTrainingRanges(run_dir, checkpoint));
  market::DateRange dates;
  dates.first = first_date;
  dates.last = last_date;
  return OverlapOf(trained, dates);
}

Status InSampleRefusal(const std::string& label, const std::string& dates,
                       const std::string& overlap, const std::string& advice) {
  return Status::InvalidArgument(
      label + " (" + dates + ") overlaps what the policy saw in training: " + overlap +
      ". Evaluating on training dates is in-sample and says nothing about the future; " + advice +
      ", or pass --allow-in-sample to run it anyway (every output is then labelled " +
      "IN-SAMPLE)");
}

Status ParseEvalSetting(const std::string& text, std::map<std::string, std::string>& settings) {
  const size_t eq = text.find('=');
  const size_t dot = text.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 >= eq ||
      eq + 1 == text.size()) {
    return Status::InvalidArgument("--set " + text +
                                   ": expected env.KEY=VALUE, e.g. --set env.cost_rate=0.0002");
  }
  const std::string section = text.substr(0, dot);
  const std::string key = text.substr(dot + 1, eq - dot - 1);
  std::string accepted;
  bool known = false;
  for (const char* k : kEvalSettableKeys) {
    accepted += std::string(accepted.empty() ? "" : ", ") + "env." + k;
    known = known || key == k;
  }
  if (section != "env" || !known) {
    std::string why;
    if (section != "env") {
      why = "[" + section +
            "] is not an execution setting: it shaped what was trained or how, so it belongs to "
            "a new `rltrade train`";
    } else if (key == "initial_capital") {
      why =
          "the observation scales by initial_capital, so the policy would see other inputs "
          "than it was trained on";
    } else {
      why =
          "eval changes only how orders are executed and charged, never what the policy "
          "observes or how the environment is built";
    }
    return Status::Refused("--set " + section + "." + key + ": " + why + "; eval accepts " +
                           accepted + " (train a new run to change anything else)");
  }
  if (settings.count(key) != 0) {
    return Status::InvalidArgument("--set env." + key + " is given twice; give it once");
  }
  settings[key] = text.substr(eq + 1);
  return Status::Ok();
}

Result<std::vector<double>> ParseCostLevels(const std::string& text) {
  auto bad = [&text](const std::string& why) {
    return Status::InvalidArgument("--costs " + text + ": " + why +
                                   "; expected increasing basis points (0 to 10000) separated by "
                                   "commas, e.g. --costs 0,1,2,5,10");
  };
  std::vector<double> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    char* end = nullptr;
    const double v = item.empty() ? 0 : std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v)) {
      return bad("'" + item + "' is not a number");
    }
    if (v < 0 || v > 10000) return bad("'" + item + "' is outside 0 to 10000");
    if (!out.empty() && v <= out.back()) return bad("'" + item + "' does not increase");
    out.push_back(v);
    start = comma + 1;
  }
  return out;
}

BreakEven BreakEvenCost(std::span<const double> bps, std::span<const double> net_returns) {
  RLT_CHECK(!bps.empty() && bps.size() == net_returns.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!(net_returns[0] > 0)) {
    if (net_returns[0] == 0) return {"crossed", bps[0]};
    return {"at_or_below_smallest", nan};
  }
  for (size_t i = 1; i < bps.size(); ++i) {
    const double n0 = net_returns[i - 1], n1 = net_returns[i];
    if (n1 > 0) continue;
    if (n1 == 0) return {"crossed", bps[i]};
    return {"crossed", bps[i - 1] + (bps[i] - bps[i - 1]) * n0 / (n0 - n1)};
  }
  return {"above_largest", nan};
}

}  // namespace rlt::evalrun
