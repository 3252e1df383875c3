// rltrade evalrun: `rltrade tune` (see tune_run.h).
#include "evalrun/tune_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "config/config.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "core/median.h"
#include "core/thread_pool.h"
#include "dist/dist.h"
#include "env/registry.h"
#include "eval/eval_files.h"
#include "eval/metrics.h"
#include "eval/metrics_json.h"
#include "eval/metrics_table.h"
#include "eval/outputs.h"
#include "eval/report.h"
#include "evalrun/evalrun.h"
#include "runlog/run_dir.h"
#include "train/train.h"
#include "train/train_options.h"
#include "tune/asha.h"
#include "tune/json_file.h"
#include "tune/objectives.h"
#include "tune/space.h"
#include "tune/study.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string DefaultOutDir() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return std::string("runs/tune-") + stamp;
}

bool IsMarketEnv(const config::Config& cfg) {
  const config::ConfigValue* id = cfg.Get("env", "id");
  if (id == nullptr) return false;
  for (const env::EnvEntry& e : env::EnvRegistry()) {
    if (id->text == e.id) return e.needs_market_data;
  }
  return false;
}

// The metric's value in a summary.json: metrics.<m>, or <m> at the top (mean_return).
Result<double> MetricOf(const std::string& summary, const std::string& metric) {
  RLT_ASSIGN_OR_RETURN(const tune::JsonDoc doc, tune::JsonDoc::Parse(summary, "summary.json"));
  const json& j = doc.root();
  if (!j.is_object()) return Status::DataError("summary.json is not a JSON object");
  if (j.contains("metrics") && j["metrics"].contains(metric) && j["metrics"][metric].is_number()) {
    return j["metrics"][metric].get<double>();
  }
  if (j.contains(metric) && j[metric].is_number()) return j[metric].get<double>();
  if ((j.contains("metrics") && j["metrics"].contains(metric) && j["metrics"][metric].is_null()) ||
      (j.contains(metric) && j[metric].is_null())) {
    return Status::DataError(metric +
                             " is undefined on this evaluation (NaN, written as null: e.g. a "
                             "ratio of returns that never varied)");
  }
  std::string known;
  if (j.contains("metrics")) {
    for (const auto& [k, v] : j["metrics"].items()) known += (known.empty() ? "" : ", ") + k;
  }
  return Status::InvalidArgument("--objective " + metric + ": not a metric of the evaluation (" +
                                 (known.empty() ? std::string("mean_return") : known) + ")");
}

// A study in which no trial produced an objective has no result: an error saying how the
// trials ended and the first reason (the study's files stay, for the reasons).
Status NoObjectiveError(const tune::StudyResult& s, const std::string& out_dir) {
  if (s.ok > 0) return Status::Ok();
  return Status::DataError("no trial produced an objective (" + std::to_string(s.trials) +
                           " trials: " + std::to_string(s.rejected) + " rejected, " +
                           std::to_string(s.failed) +
                           " failed); the first reason: " + s.first_reason +
                           " (every trial's reason is in " + out_dir + "/trials.jsonl)");
}

std::vector<std::string> TrialOverrides(const TuneRequest& r,
                                        const std::vector<std::pair<std::string, std::string>>& p) {
  std::vector<std::string> sets = r.overrides;
  for (const auto& [k, v] : p) sets.push_back(k + "=" + v);
  sets.push_back("run.seeds=1");
  return sets;
}

// The minibatch rule PPO needs: batch_size divides n_steps * num_envs (and so is not
// larger); "" when it holds or the config does not set the three keys.
std::string MinibatchProblem(const config::Config& cfg) {
  const config::ConfigValue* b = cfg.Get("algo", "batch_size");
  const config::ConfigValue* n = cfg.Get("algo", "n_steps");
  const config::ConfigValue* e = cfg.Get("env", "num_envs");
  if (b == nullptr || n == nullptr || e == nullptr) return "";
  const long long batch = std::atoll(b->text.c_str()), steps = std::atoll(n->text.c_str()),
                  envs = std::atoll(e->text.c_str());
  const long long rollout = steps * envs;
  if (batch <= 0 || rollout <= 0 || rollout % batch == 0) return "";
  return "algo.batch_size = " + b->text +
         " does not divide algo.n_steps x env.num_envs = " + std::to_string(steps) + " x " +
         std::to_string(envs) + " = " + std::to_string(rollout);
}

// The trial scored by its evaluation's metric, or failed with the reason.
tune::TrialResult Scored(tune::TrialResult t, const Result<double>& metric) {
  if (!metric.ok()) {
    t.status = "failed";
    t.reason = metric.status().message();
    return t;
  }
  t.objective = *metric;
  return t;
}

// ---- Trials on the ranks of mpirun -----------------------------------
// Rank 0 runs the study in a thread with one worker per rank; a worker hands its trial to
// a free rank (rank 0's own run in the worker) and rank 0's main thread alone talks MPI:
// it sends each trial to its rank and passes the result back. The other ranks serve: run
// each trial they receive with the same trial function, send the result, until told to
// stop. The study's files are rank 0's, as one process writes them.
constexpr int kTagTrial = 1, kTagResult = 2, kTagStop = 3;

json TrialJobJson(const tune::TrialJob& j) {
  return {{"trial", j.trial}, {"rung", j.rung}, {"steps", j.steps}, {"params", j.params}};
}

tune::TrialJob TrialJobFrom(const json& j) {
  tune::TrialJob t;
  t.trial = j["trial"].get<int>();
  t.rung = j["rung"].get<int>();
  t.steps = j["steps"].get<int64_t>();
  t.params = j["params"].get<std::vector<std::pair<std::string, std::string>>>();
  return t;
}

json TrialResultJson(const tune::TrialResult& t) {
  return {{"status", t.status},
          {"reason", t.reason},
          {"objective", t.objective},
          {"run_dir", t.run_dir},
          {"checkpoint", t.checkpoint},
          {"steps", t.steps},
          {"train_seconds", t.train_seconds},
          {"rank", t.rank}};
}

tune::TrialResult TrialResultFrom(const json& j) {
  tune::TrialResult t;
  t.status = j["status"].get<std::string>();
  t.reason = j["reason"].get<std::string>();
  t.objective = j["objective"].is_number() ? j["objective"].get<double>() : 0.0;
  t.run_dir = j["run_dir"].get<std::string>();
  t.checkpoint = j["checkpoint"].get<std::string>();
  t.steps = j["steps"].get<int64_t>();
  t.train_seconds = j["train_seconds"].get<double>();
  t.rank = j["rank"].get<int>();
  return t;
}

// RunStudy, spread over the ranks when under mpirun. On ranks other than 0 it serves
// trials and returns nullopt (the study's result is rank 0's).
Result<std::optional<tune::StudyResult>> RunStudyOnRanks(const tune::Space& space,
                                                         tune::StudyOptions o,
                                                         const tune::TrialFn& fn) {
  if (!dist::Distributed()) {
    RLT_ASSIGN_OR_RETURN(tune::StudyResult s, tune::RunStudy(space, o, fn));
    return std::optional<tune::StudyResult>(std::move(s));
  }
  const int ranks = dist::Size();
  if (dist::Rank() != 0) {
    for (;;) {
      const dist::Message m = dist::ReceiveText(0);
      if (m.tag == kTagStop) return std::optional<tune::StudyResult>();
      tune::TrialResult t = fn(TrialJobFrom(json::parse(m.text)));
      t.rank = dist::Rank();
      dist::SendText(0, kTagResult, TrialResultJson(t).dump());
    }
  }
  // One trial at a time per rank (the annealing search proposes one at a time anyway).
  o.parallel = o.method == "anneal" ? 1 : ranks;
  struct Pending {
    int rank = 0;
    std::string trial;
    std::promise<std::string> reply;
  };
  std::mutex mu;
  std::condition_variable freed;
  std::vector<bool> busy(ranks, false);
  std::deque<Pending*> outbox;
  std::map<int, Pending*> running;  // by rank
  std::atomic<bool> done{false};
  auto on_a_rank = [&](const tune::TrialJob& job) {
    int rank = 0;
    {
      std::unique_lock<std::mutex> lock(mu);
      // The other ranks first: rank 0's main thread is also the dispatcher.
      freed.wait(lock, [&] { return std::find(busy.begin(), busy.end(), false) != busy.end(); });
      const auto free_remote = std::find(busy.begin() + 1, busy.end(), false);
      rank = free_remote != busy.end() ? static_cast<int>(free_remote - busy.begin()) : 0;
      busy[rank] = true;
    }
    tune::TrialResult t;
    if (rank == 0) {
      t = fn(job);
      t.rank = 0;
    } else {
      Pending p;
      p.rank = rank;
      p.trial = TrialJobJson(job).dump();
      std::future<std::string> reply = p.reply.get_future();
      {
        std::lock_guard<std::mutex> lock(mu);
        outbox.push_back(&p);
      }
      t = TrialResultFrom(json::parse(reply.get()));
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      busy[rank] = false;
    }
    freed.notify_one();
    return t;
  };
  std::optional<Result<tune::StudyResult>> result;
  std::thread study([&] {
    result.emplace(tune::RunStudy(space, o, on_a_rank));
    done.store(true);
  });
  while (!done.load()) {
    Pending* next = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!outbox.empty()) {
        next = outbox.front();
        outbox.pop_front();
        running[next->rank] = next;
      }
    }
    if (next != nullptr) {
      dist::SendText(next->rank, kTagTrial, next->trial);
      continue;
    }
    if (dist::MessageWaiting(dist::kAnySource)) {
      dist::Message m = dist::ReceiveText(dist::kAnySource);
      std::lock_guard<std::mutex> lock(mu);
      auto it = running.find(m.source);
      if (it != running.end()) {
        it->second->reply.set_value(std::move(m.text));
        running.erase(it);
      }
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  study.join();
  for (int r = 1; r < ranks; ++r) dist::SendText(r, kTagStop, "");
  RLT_ASSIGN_OR_RETURN(tune::StudyResult s, std::move(*result));
  return std::optional<tune::StudyResult>(std::move(s));
}

// A resumed study's request: its arguments as study.json recorded them, each field checked
// (errors name study.json:line). Arguments given with --resume are honoured when they
// equal what the study was started with (re-running the same command line with --resume
// is safe) and refused when they differ; --parallel, --quiet and --json always apply.
Result<TuneRequest> ResumedRequest(const TuneRequest& given) {
  RLT_ASSIGN_OR_RETURN(const tune::JsonDoc h, tune::ReadStudyHeader(given.resume_dir));
  RLT_ASSIGN_OR_RETURN(const tune::StudyOptions recorded, tune::StudyOptionsFromHeader(h));
  RLT_RETURN_IF_ERROR(h.Object("/command"));
  TuneRequest r = given;
  r.method = recorded.method;
  r.prune = recorded.prune;
  r.trials = recorded.trials;
  r.seed = recorded.seed;
  RLT_ASSIGN_OR_RETURN(r.config_path, h.StringOr("/command/config", ""));
  RLT_ASSIGN_OR_RETURN(r.objective_fn, h.StringOr("/command/objective_fn", ""));
  if (!r.objective_fn.empty() && r.objective_fn != "branin" && r.objective_fn != "rosenbrock" &&
      r.objective_fn != "hartmann6") {
    return Status::DataError(h.Place("/command/objective_fn") + ": 'command.objective_fn' = \"" +
                             r.objective_fn + "\": expected branin, rosenbrock or hartmann6");
  }
  RLT_ASSIGN_OR_RETURN(r.objective, h.StringOr("/command/objective", ""));
  if (h.Has("/command/overrides")) {
    RLT_ASSIGN_OR_RETURN(r.overrides, h.Strings("/command/overrides"));
  } else {
    r.overrides.clear();
  }
  RLT_ASSIGN_OR_RETURN(r.recorded_config, h.StringOr("/command/config_toml", ""));
  // The workers of the killed study, unless --parallel says otherwise (successive
  // halving's order of promotions depends on them).
  RLT_ASSIGN_OR_RETURN(const int64_t parallel, h.IntOr("/command/parallel", 0, 1024, 0));
  if (given.parallel == 0) r.parallel = static_cast<int>(parallel);
  r.space_text = recorded.space_text;
  r.eta = recorded.eta;
  r.rung_steps = recorded.rung_steps;
  r.space_path = given.resume_dir + "/study.json (space)";
  // What was given with --resume against what the study records.
  std::vector<std::string> differ;
  auto given_flag = [&](const char* flag) { return given.given.count(flag) > 0; };
  auto same_path = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    return a == b || fs::equivalent(a, b, ec);
  };
  if (given_flag("config") && !same_path(given.config_path, r.config_path)) {
    differ.push_back("CONFIG " + given.config_path + " (the study's: " +
                     (r.config_path.empty() ? std::string("none, --objective-fn") : r.config_path) +
                     ")");
  }
  if (given_flag("--space")) {
    Result<std::string> text = ReadFile(given.space_path);
    if (!text.ok() || *text != r.space_text) {
      differ.push_back("--space " + given.space_path + " (" +
                       (text.ok() ? "its text differs from the space study.json records"
                                  : text.status().message()) +
                       ")");
    }
  }
  if (given_flag("--method") && given.method != r.method) {
    differ.push_back("--method " + given.method + " (the study's: " + r.method + ")");
  }
  if (given_flag("--prune") && given.prune != r.prune) {
    differ.push_back("--prune " + given.prune + " (the study's: " + r.prune + ")");
  }
  if (given_flag("--trials") && given.trials != r.trials) {
    differ.push_back("--trials " + std::to_string(given.trials) +
                     " (the study's: " + std::to_string(r.trials) + ")");
  }
  if (given_flag("--seed") && given.seed != r.seed) {
    differ.push_back("--seed " + std::to_string(given.seed) +
                     " (the study's: " + std::to_string(r.seed) + ")");
  }
  if (given_flag("--objective") && given.objective != recorded.objective) {
    differ.push_back("--objective " + given.objective + " (the study's: " + recorded.objective +
                     ")");
  }
  if (given_flag("--objective-fn") && given.objective_fn != r.objective_fn) {
    differ.push_back("--objective-fn " + given.objective_fn + " (the study's: " +
                     (r.objective_fn.empty() ? std::string("none") : r.objective_fn) + ")");
  }
  if (given_flag("--set") && given.overrides != r.overrides) {
    std::string recorded_sets;
    for (const std::string& o : r.overrides) recorded_sets += " " + o;
    differ.push_back("--set values (the study's:" +
                     (recorded_sets.empty() ? std::string(" none") : recorded_sets) + ")");
  }
  const bool rungs = r.method == "asha" || r.prune == "asha";
  if (given_flag("--eta") && (!rungs || given.eta != r.eta)) {
    differ.push_back("--eta " + std::to_string(given.eta) + " (the study's: " +
                     (rungs ? std::to_string(r.eta) : "no eta, " + r.method) + ")");
  }
  // --min-steps as given when the study started (older studies: the first rung's steps).
  RLT_ASSIGN_OR_RETURN(const int64_t min_steps,
                       h.IntOr("/command/min_steps", 0, tune::kMaxRungSteps, -1));
  r.min_steps = std::max<int64_t>(0, min_steps);
  const int64_t study_min =
      min_steps >= 0 ? min_steps : (r.rung_steps.empty() ? -1 : r.rung_steps[0]);
  if (given_flag("--min-steps") && (!rungs || given.min_steps != study_min)) {
    differ.push_back("--min-steps " + std::to_string(given.min_steps) + " (the study's: " +
                     (!rungs ? "no rungs, " + r.method : std::to_string(study_min)) + ")");
  }
  if (given_flag("--out") && !same_path(given.out_dir, given.resume_dir)) {
    differ.push_back("--out " + given.out_dir + " (a resumed study writes into DIR itself)");
  }
  if (!differ.empty()) {
    std::string list;
    for (const std::string& d : differ) list += "\n  " + d;
    return Status::Refused(
        "--resume " + given.resume_dir + " continues the study as " + given.resume_dir +
        "/study.json records it; these arguments differ from it:" + list +
        "\nGive them with the study's values or leave them out (--parallel, --quiet and --json "
        "apply to a resume); to change them, start a new study with --out");
  }
  return r;
}

// Space keys that define the data or the ranges: a trial that changed one would train or
// be scored on other dates or other bars than the study's, and the figure reported as
// out-of-sample would no longer be the config's test range. "" for a key a space may tune.
std::string ReservedKeyReason(const std::string& section, const std::string& name,
                              const std::string& method) {
  if (section == "split") {
    return "[split] holds the study's ranges (trials train on train and are scored on "
           "validation; the best is evaluated once on test): they stay the config's for every "
           "trial";
  }
  if (section == "data") {
    return "[data] defines the bars every trial trains and is scored on: they stay the "
           "config's for every trial";
  }
  if (section == "env" && name == "range") {
    return "[env] range sets the dates a trial trains on: it stays the config's for every trial";
  }
  if (section == "env" && name == "id") {
    return "[env] id chooses the environment, and with it the data and the objective: a study "
           "tunes one environment";
  }
  if (section == "env" &&
      (name == "underlying" || name == "chain_file" || name.rfind("synthetic_", 0) == 0)) {
    return "[env] " + name +
           " defines the data of the options environment: it stays the config's for every "
           "trial";
  }
  if (section == "run" && name == "seeds") {
    return "a trial trains one seed (tune sets run.seeds = 1)";
  }
  if (section == "run" && name == "total_steps" && method == "asha") {
    return "with --method asha or --prune asha the rungs set each trial's training steps, up to "
           "the config's "
           "[run] total_steps";
  }
  return "";
}

// Each space key names one config key as section.key, may define neither the data nor the
// ranges, and is not also given with --set. Every problem, one per line.
Status CheckSpaceKeys(const tune::Space& space, const TuneRequest& r) {
  std::set<std::string> set_keys;
  for (const std::string& o : r.overrides) set_keys.insert(o.substr(0, o.find('=')));
  std::vector<std::string> errors;
  for (const tune::Param& p : space.params) {
    const size_t dot = p.key.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == p.key.size() ||
        p.key.find('.', dot + 1) != std::string::npos) {
      errors.push_back(p.place + ": '" + p.key +
                       "' names no config key: a space key is a config key as section.key, "
                       "e.g. \"algo.learning_rate\" (x1, x2, ... are the keys of --objective-fn)");
      continue;
    }
    const std::string reason = ReservedKeyReason(p.key.substr(0, dot), p.key.substr(dot + 1),
                                                 r.prune == "asha" ? "asha" : r.method);
    if (!reason.empty()) {
      errors.push_back(p.place + ": '" + p.key + "' may not be tuned: " + reason + ".");
      continue;
    }
    if (set_keys.count(p.key) > 0) {
      errors.push_back(p.place + ": '" + p.key +
                       "' is also given with --set: the space's values would replace it in "
                       "every trial; give it in one place");
    }
  }
  if (errors.empty()) return Status::Ok();
  std::string msg;
  for (const std::string& e : errors) msg += (msg.empty() ? "" : "\n") + e;
  return Status::Refused(msg);
}

// The values of `p` the up-front check tries: both ends and the middle of a continuous
// range (a whole-number key takes 1 but refuses 5.5), both ends of an int range, every
// choice.
std::vector<std::string> CheckedValues(const tune::Param& p) {
  if (p.kind == tune::Param::Kind::kChoice) return p.choices;
  if (p.kind == tune::Param::Kind::kInt) return {tune::ValueText(p, 0.0), tune::ValueText(p, 1.0)};
  return {tune::ValueText(p, 0.0), tune::ValueText(p, 0.5), tune::ValueText(p, 1.0)};
}

// A refusal of training that every trial holding `key` = `value` would meet, whatever the
// other parameters: an unknown key or section (the key itself, or a key of the config that
// the value makes unknown, as algo.name = "es" does for PPO's keys), or a value the key's
// type does not take (training names its --set place and says what it expected). Rules on
// combinations (batch_size dividing the rollout, n_epochs >= 1) are the trial's rejection.
bool RefusesTheValue(const std::string& message, const std::string& key, const std::string& value) {
  if (message.find("unknown key") != std::string::npos ||
      message.find("unknown section") != std::string::npos) {
    return true;
  }
  const size_t dot = key.find('.');
  const std::string place = "--set " + key + "=" + value + ": [" + key.substr(0, dot) + "] ";
  for (size_t at = message.find(place); at != std::string::npos; at = message.find(place, at + 1)) {
    const std::string line = message.substr(at, message.find('\n', at) - at);
    if (line.find(": expected") != std::string::npos) return true;
  }
  return false;
}

// Every space key and the values of `CheckedValues` against the config's schema, before
// anything is written: a value no trial could train with is refused here, naming the
// space's file:line, the key, the value and training's reason.
Status CheckSpaceValues(const tune::Space& space, const TuneRequest& r) {
  auto probe = [&](const std::vector<std::pair<std::string, std::string>>& values) {
    train::TrainRequest request;
    request.config_path = r.config_path;
    request.overrides = TrialOverrides(r, values);
    return train::ValidateTraining(request);
  };
  // The config itself (with --set): an unknown key or a bad value there is the config's.
  if (Status base = probe({});
      !base.ok() && (RefusesTheValue(base.message(), "", "") ||
                     base.message().find(": expected") != std::string::npos)) {
    return base;
  }
  std::vector<std::vector<std::string>> values;
  size_t slots = 0;
  for (const tune::Param& p : space.params) {
    values.push_back(CheckedValues(p));
    slots = std::max(slots, values.back().size());
  }
  std::vector<std::string> errors;
  std::vector<bool> refused(space.params.size(), false);
  // One probe with every parameter's k-th value; only when it fails, one per parameter to
  // find which value training refuses.
  for (size_t k = 0; k < slots; ++k) {
    std::vector<std::pair<std::string, std::string>> together;
    std::vector<size_t> who;
    for (size_t j = 0; j < space.params.size(); ++j) {
      if (refused[j] || k >= values[j].size()) continue;
      together.emplace_back(space.params[j].key, values[j][k]);
      who.push_back(j);
    }
    if (together.empty() || probe(together).ok()) continue;
    for (size_t j : who) {
      const tune::Param& p = space.params[j];
      const Status st = probe({{p.key, values[j][k]}});
      if (st.ok() || !RefusesTheValue(st.message(), p.key, values[j][k])) continue;
      refused[j] = true;
      errors.push_back(p.place + ": '" + p.key + "' = " + values[j][k] +
                       ": training refuses this value, so every trial given it would be "
                       "rejected: " +
                       st.message());
    }
  }
  if (errors.empty()) return Status::Ok();
  std::string msg;
  for (const std::string& e : errors) msg += (msg.empty() ? "" : "\n") + e;
  return Status::Refused(msg);
}

// The metrics a trial's evaluation reports: an environment scored on [split] ranges
// reports the metric table (eval/metrics_table.h); an episodic one mean_return and
// std_return.
std::vector<std::string> ObjectiveNames(bool ranged) {
  if (!ranged) return {"mean_return", "std_return"};
  std::vector<std::string> names;
  for (const eval::MetricInfo& m : eval::MetricTable()) names.emplace_back(m.key);
  return names;
}

// The first key whose value differs between two configs' texts ("" when none does).
std::string FirstDifference(const std::string& before_text, const std::string& now_text) {
  Result<config::Config> before = config::Config::FromString(before_text, "study.json");
  Result<config::Config> now = config::Config::FromString(now_text, "CONFIG");
  if (!before.ok() || !now.ok()) return before_text == now_text ? "" : "the config's text";
  std::vector<std::string> sections = before->SectionNames();
  for (const std::string& n : now->SectionNames()) {
    if (std::find(sections.begin(), sections.end(), n) == sections.end()) sections.push_back(n);
  }
  for (const std::string& section : sections) {
    std::vector<std::string> keys;
    for (const config::Config* c : {&*before, &*now}) {
      if (const config::Section* s = c->Find(section)) {
        for (const std::string& k : s->Keys()) {
          if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
        }
      }
    }
    for (const std::string& key : keys) {
      const config::ConfigValue* a = before->Get(section, key);
      const config::ConfigValue* b = now->Get(section, key);
      const std::string was = a != nullptr ? a->text : "(absent)";
      const std::string is = b != nullptr ? b->text : "(absent)";
      if (was != is) return "[" + section + "] " + key + " was " + was + ", is now " + is;
    }
  }
  return "";
}

// The state of one `rltrade tune` that its phases share: whether it resumes a study, the
// request (the study's own when resuming), the search space, the study's options and the
// outcome being filled.
struct TuneStudy {
  bool resume = false;
  TuneRequest r;
  tune::Space space;
  tune::StudyOptions o;
  TuneOutcome out;
};

// Flags this study would not use are refused rather than ignored (a new study only).
Status CheckUnusedFlags(const TuneRequest& r) {
  std::vector<std::string> unused;
  auto has = [&](const char* flag) { return r.given.count(flag) > 0; };
  const bool rungs = r.method == "asha" || r.prune == "asha";
  if (!rungs && has("--eta")) unused.push_back("--eta (only --method asha or --prune asha)");
  if (!rungs && has("--min-steps")) {
    unused.push_back("--min-steps (only --method asha or --prune asha)");
  }
  if (!r.objective_fn.empty() && has("--objective")) {
    unused.push_back("--objective (--objective-fn is the objective)");
  }
  if (!r.objective_fn.empty() && !r.overrides.empty()) {
    unused.push_back("--set (--objective-fn trains nothing)");
  }
  if (!unused.empty()) {
    std::string list;
    for (const std::string& u : unused) list += (list.empty() ? "" : ", ") + u;
    return Status::Refused("this study would not use " + list + ": leave it out");
  }
  return Status::Ok();
}

// Opens the study into st: the request (read back from the study's directory on
// --resume), the output directory, the search space and the study's options; refuses a
// request without a space, an ASHA factor below 2 and flags the study would not use.
Status OpenStudy(const TuneRequest& given, TuneStudy& st) {
  st.resume = !given.resume_dir.empty();
  const bool resume = st.resume;
  TuneRequest& r = st.r;
  r = given;
  if (resume) {
    RLT_ASSIGN_OR_RETURN(r, ResumedRequest(given));
  }
  if (!resume && r.space_path.empty()) {
    return Status::Refused("--space SPACE.toml is required (or --resume DIR)");
  }
  TuneOutcome& out = st.out;
  out.out_dir = resume ? r.resume_dir : (r.out_dir.empty() ? DefaultOutDir() : r.out_dir);
  if (dist::Distributed()) out.out_dir = dist::Broadcast(out.out_dir);  // rank 0's clock
  std::string space_text = r.space_text;
  if (!resume) {
    RLT_ASSIGN_OR_RETURN(space_text, ReadFile(r.space_path));
  }
  RLT_ASSIGN_OR_RETURN(st.space, tune::ParseSpace(space_text, r.space_path));
  tune::StudyOptions& o = st.o;
  o.out_dir = out.out_dir;
  o.method = r.method;
  o.trials = r.trials;
  o.seed = r.seed;
  o.resume = resume;
  o.space_text = space_text;
  o.quiet = r.quiet;
  o.eta = r.eta;
  o.prune = r.prune;
  if ((r.method == "asha" || r.prune == "asha") && r.eta < 2) {
    return Status::Refused("--eta " + std::to_string(r.eta) +
                           ": the reduction factor must be at least 2 (3 is usual)");
  }
  if (!resume) RLT_RETURN_IF_ERROR(CheckUnusedFlags(r));
  return Status::Ok();
}

// Successive halving's rungs: training steps up to the config's [run] total_steps (with
// --objective-fn, a nominal budget of 81 that the function ignores).
void SetRungs(TuneStudy& st, int64_t total) {
  const TuneRequest& r = st.r;
  if (r.method != "asha" && r.prune != "asha") return;
  st.o.rung_steps =
      !r.rung_steps.empty() ? r.rung_steps : tune::RungSteps(total, r.eta, r.min_steps);
}

// The study's command as study.json records it: what a resume needs of the request, and
// the config (with its --set values) when trials train.
std::string StudyCommand(const TuneRequest& r, const std::string& config_toml) {
  json c = {{"config", r.config_path},  {"objective_fn", r.objective_fn},
            {"objective", r.objective}, {"overrides", r.overrides},
            {"parallel", r.parallel},   {"min_steps", r.min_steps}};
  if (!config_toml.empty()) c["config_toml"] = config_toml;
  return c.dump();
}

// A study of an analytic objective (--objective-fn): trials evaluate the function, train
// nothing; its result, report and outcome.
Result<TuneOutcome> RunObjectiveStudy(TuneStudy& st) {
  const TuneRequest& r = st.r;
  tune::StudyOptions& o = st.o;
  TuneOutcome& out = st.out;
  if (!r.config_path.empty()) {
    return Status::Refused("--objective-fn replaces training: give no CONFIG");
  }
  RLT_RETURN_IF_ERROR(tune::CheckObjectiveSpace(r.objective_fn, st.space));
  o.command = StudyCommand(r, "");
  o.objective = r.objective_fn;
  o.minimize = true;
  SetRungs(st, 81);
  if (r.parallel > 0) o.parallel = r.parallel;
  RLT_ASSIGN_OR_RETURN(std::optional<tune::StudyResult> s,
                       RunStudyOnRanks(st.space, o, [&](const tune::TrialJob& job) {
                         tune::TrialResult t;
                         std::vector<double> x;
                         for (const auto& [k, v] : job.params) x.push_back(std::stod(v));
                         t.objective = tune::EvaluateFunction(r.objective_fn, x);
                         if (tune::UsesRungs(o)) {
                           t.objective =
                               tune::ValueAtBudget(r.objective_fn, t.objective, o.seed, job.trial,
                                                   job.steps, o.rung_steps.back());
                         }
                         t.steps = job.steps;
                         return t;
                       }));
  if (!s) return out;  // a rank that served trials
  RLT_RETURN_IF_ERROR(NoObjectiveError(*s, out.out_dir));
  RLT_RETURN_IF_ERROR(eval::WriteTuneReport(out.out_dir));
  out.json = tune::StudyJson(*s, r.method, tune::UsesRungs(o));
  return out;
}

// The config the trials train (CONFIG with the study's --set values), recorded in the
// study's command; on --resume it must be the one the study started with.
Result<config::Config> LoadStudyConfig(TuneStudy& st) {
  const TuneRequest& r = st.r;
  if (r.config_path.empty()) return Status::Refused("tune needs CONFIG (or --objective-fn)");
  RLT_ASSIGN_OR_RETURN(config::Config cfg, train::LoadConfig(r.config_path, r.overrides));
  // The study's config, ranges included, is pinned: a resume with a CONFIG that changed
  // since the study started would mix trials of two configs.
  const std::string config_toml = cfg.ToToml();
  if (st.resume && !r.recorded_config.empty() && r.recorded_config != config_toml) {
    return Status::Refused(
        r.config_path + " (with the study's --set values) is not the config the study at " +
        st.out.out_dir + " started with: " + FirstDifference(r.recorded_config, config_toml) +
        "; restore it, or start a new study with --out");
  }
  st.o.command = StudyCommand(r, config_toml);
  return cfg;
}

// The metric trials are scored on (--objective, or the environment's default) and its
// direction, into the study's options. Returns whether trials are scored on a [split]
// range (which must then have a validation range).
Result<bool> ChooseObjective(TuneStudy& st, const config::Config& cfg) {
  const TuneRequest& r = st.r;
  tune::StudyOptions& o = st.o;
  const bool market = IsMarketEnv(cfg);
  // Environments whose trials are scored on [split] ranges: market data, and the options
  // portfolio (a synthetic or file underlying split by date).
  const config::ConfigValue* env_id = cfg.Get("env", "id");
  const bool ranged = market || (env_id != nullptr && env_id->text == "options");
  if (ranged && cfg.Get("split", "validation") == nullptr) {
    return Status::Refused(r.config_path +
                           ": [split] validation is missing: trials are scored on it, never on "
                           "the test range; add validation = \"YYYY-MM-DD:YYYY-MM-DD\" between "
                           "train and test");
  }
  o.objective = !r.objective.empty() ? r.objective : (ranged ? "sharpe_ratio" : "mean_return");
  {
    const std::vector<std::string> names = ObjectiveNames(ranged);
    if (std::find(names.begin(), names.end(), o.objective) == names.end()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      return Status::Refused("--objective " + o.objective + ": not a metric the trials' " +
                             (ranged ? "validation evaluation" : "episode evaluation") +
                             " reports; expected one of " + list);
    }
  }
  o.minimize = o.objective == "max_drawdown_duration" || o.objective == "downside_risk" ||
               o.objective == "annual_volatility" || o.objective == "turnover";
  return ranged;
}

// What every training trial of a study reads (from the worker threads, read-only): the
// study, its config, the request with every trial's base --set values, and the threads
// each trial is given when trials run in parallel.
struct TrialSetup {
  const TuneStudy& st;
  const config::Config& cfg;
  TuneRequest trial_request;
  int trial_threads = 0;
};

// Parallel trials: P training runs at once in threads of this process, each with its
// own thread budget; the annealing search is sequential. Sets the study's parallelism
// and rungs and returns what the trials read.
TrialSetup PlanTrials(TuneStudy& st, const config::Config& cfg) {
  const TuneRequest& r = st.r;
  tune::StudyOptions& o = st.o;
  const int cores = HardwareThreads();
  int per_trial = 0;
  if (const config::ConfigValue* th = cfg.Get("run", "threads"))
    per_trial = std::atoi(th->text.c_str());
  if (r.parallel > 0) {
    o.parallel = r.parallel;
  } else {
    o.parallel = std::max(1, cores / std::max(1, per_trial));
  }
  if (r.method == "anneal") o.parallel = 1;
  if (dist::Distributed()) o.parallel = 1;  // per rank: the ranks are the parallel trials
  const int trial_threads =
      per_trial > 0 ? per_trial : (o.parallel > 1 ? std::max(1, cores / o.parallel) : 0);
  std::vector<std::string> base_sets = r.overrides;
  if (o.parallel > 1) base_sets.push_back("run.threads=" + std::to_string(trial_threads));
  TuneRequest trial_request = r;
  trial_request.overrides = base_sets;
  if (r.method == "asha" || r.prune == "asha") {
    const config::ConfigValue* total = cfg.Get("run", "total_steps");
    SetRungs(st, total != nullptr ? std::max<int64_t>(1, std::atoll(total->text.c_str())) : 1);
  }
  return TrialSetup{st, cfg, std::move(trial_request), trial_threads};
}

// One training trial: trains OUT/trials/trial_N with the job's parameters (a later rung
// resumes it) and scores its validation evaluation; settings training refuses, or that
// give an unusable minibatch, reject the trial.
tune::TrialResult RunTrainingTrial(const TrialSetup& ts, const tune::TrialJob& job) {
  const tune::StudyOptions& o = ts.st.o;
  tune::TrialResult t;
  train::TrainRequest tr;
  tr.run_dir =
      (fs::path(ts.st.out.out_dir) / "trials" / ("trial_" + std::to_string(job.trial))).string();
  tr.quiet = true;
  tr.stop_at_steps = job.steps;
  t.run_dir = tr.run_dir;
  if (job.rung > 0) {
    // Successive halving: the trial continues from the checkpoint its last rung left.
    tr.resume_dir = tr.run_dir;
    if (o.parallel > 1) tr.overrides = {"run.threads=" + std::to_string(ts.trial_threads)};
  } else {
    tr.config_path = ts.st.r.config_path;
    tr.overrides = TrialOverrides(ts.trial_request, job.params);
    if (fs::exists(tr.run_dir)) fs::remove_all(tr.run_dir);  // a trial cut by a kill
    config::Config trial_cfg = ts.cfg;
    for (const auto& [k, v] : job.params) (void)trial_cfg.ApplyOverride(k + "=" + v);
    if (std::string problem = MinibatchProblem(trial_cfg); !problem.empty()) {
      t.status = "rejected";
      t.reason = problem;
      return t;
    }
  }
  // Training checks everything before it writes anything, so a failure that left no
  // run directory is a refusal of the trial's settings.
  Result<train::TrainOutcome> trained = train::RunTraining(tr);
  if (!trained.ok() || trained->exit_code != 0) {
    t.status = !trained.ok() && !fs::exists(tr.run_dir) ? "rejected" : "failed";
    t.reason = trained.ok() ? "training interrupted" : trained.status().message();
    return t;
  }
  t.steps = trained->total_steps;
  t.train_seconds = trained->loop_seconds;
  t.checkpoint = trained->checkpoint;
  EvalRequest er;
  er.run_dir = tr.run_dir;
  er.range = "validation";
  if (trained->paused) er.checkpoint = trained->checkpoint;
  Result<EvalOutcome> ev = RunEvaluation(er);
  return Scored(std::move(t),
                ev.ok() ? MetricOf(ev->summary_json, o.objective) : Result<double>(ev.status()));
}

// The objective's value for the benchmarks of a test evaluation's summary:
// {"flat": v, "buy_and_hold": v} (null where undefined or absent).
json TestBenchmarks(const std::string& summary_json, const std::string& objective) {
  const json summary = json::parse(summary_json, nullptr, /*allow_exceptions=*/false);
  json out = {{"flat", nullptr}, {"buy_and_hold", nullptr}};
  if (!summary.is_object() || !summary.contains("benchmarks")) return out;
  for (const char* name : {"flat", "buy_and_hold"}) {
    const json& b = summary["benchmarks"].value(name, json::object());
    if (b.is_object() && b.contains(objective) && b[objective].is_number()) {
      out[name] = b[objective];
    }
  }
  return out;
}

// A copy of the best trial (OUT/best_run/) is what sees the test range: no trial's own
// directory ever holds a test evaluation. Evaluates it once on [split] test, writes
// test_evaluation.json and puts the test objective into j and the outcome.
Status EvaluateBestOnTest(TuneStudy& st, const config::Config& cfg, const tune::StudyResult& s,
                          const fs::path& best_dir, json& j) {
  TuneOutcome& out = st.out;
  const tune::StudyOptions& o = st.o;
  const fs::path best_run = fs::path(out.out_dir) / "best_run";
  std::error_code ec;
  fs::remove_all(best_run, ec);
  fs::copy(best_dir, best_run, fs::copy_options::recursive, ec);
  if (ec) return Status::IoError(best_run.string() + ": " + ec.message());
  fs::remove_all(best_run / "eval", ec);
  EvalRequest er;
  er.run_dir = best_run.string();
  er.range = "test";
  // Successive halving's best may come from a rung below the full budget: the
  // checkpoint its validation score came from.
  const fs::path ckpt = fs::path(s.best_checkpoint).lexically_relative(best_dir);
  if (!s.best_checkpoint.empty() && !ckpt.empty() && *ckpt.begin() != ".." && ckpt != "final") {
    er.checkpoint = (best_run / ckpt).string();
  }
  RLT_ASSIGN_OR_RETURN(EvalOutcome ev, RunEvaluation(er));
  RLT_RETURN_IF_ERROR(
      WriteFileAtomic((fs::path(out.out_dir) / "test_evaluation.json").string(), ev.summary_json));
  // A metric undefined on the test range (NaN: returns that never varied) is reported
  // as null, not as a failure of the finished study.
  const Result<double> test_value = MetricOf(ev.summary_json, o.objective);
  j["test_objective"] = test_value.ok() ? json(*test_value) : json(nullptr);
  j["test_benchmarks"] = TestBenchmarks(ev.summary_json, o.objective);
  out.test_report = "out-of-sample ([split] test " + cfg.Get("split", "test")->text +
                    ", evaluated once, after the search): " + o.objective + " " +
                    (test_value.ok() ? std::to_string(*test_value)
                                     : "undefined (" + test_value.status().message() + ")") +
                    " (trial " + std::to_string(s.best_trial) + ")\n" + ev.table;
  return Status::Ok();
}

// The validation evaluation directories of the study's trials (every trial and, with asha,
// every rung: trials/trial_<i>/eval/validation*/) and the one of the best score.
struct TrialEvaluations {
  std::vector<fs::path> dirs;
  fs::path best;
};

TrialEvaluations FindTrialEvaluations(const fs::path& out_dir, const tune::StudyResult& s,
                                      const fs::path& best_dir) {
  TrialEvaluations ev;
  std::error_code ec;
  for (const auto& trial : fs::directory_iterator(out_dir / "trials", ec)) {
    for (const auto& e : fs::directory_iterator(trial.path() / "eval", ec)) {
      const std::string name = e.path().filename().string();
      if (name == "validation" || name.rfind("validation.ckpt-", 0) == 0) ev.dirs.push_back(e);
    }
  }
  // The best score's checkpoint, named as its evaluation named it (evalrun.h).
  EvalRequest er;
  er.run_dir = best_dir.string();
  const fs::path ckpt = fs::path(s.best_checkpoint).lexically_relative(best_dir);
  if (!s.best_checkpoint.empty() && ckpt != "final") er.checkpoint = s.best_checkpoint;
  if (er.checkpoint.empty() && fs::exists(runlog::BestCheckpointPath(best_dir) / "FORMAT", ec)) {
    er.checkpoint = runlog::BestCheckpointPath(best_dir).string();
  }
  ev.best = best_dir / "eval" / EvalOutputName(er, "validation", "trained");
  return ev;
}

// The best trial's validation Sharpe ratio deflated for having been picked from every
// validation evaluation of the study (trials = those evaluations; the variance of their
// per-session Sharpe ratios): j "deflated_sharpe" and "deflated_sharpe_detail". Market
// environments only (episodic ones have no daily returns); nothing when a file is missing.
void AddTuneDeflatedSharpe(const fs::path& out_dir, const tune::StudyResult& s,
                           const fs::path& best_dir, json& j) {
  const TrialEvaluations ev = FindTrialEvaluations(out_dir, s, best_dir);
  const double annualise = std::sqrt(static_cast<double>(eval::MetricsOptions{}.periods_per_year));
  std::vector<double> sharpes;
  for (const fs::path& dir : ev.dirs) {
    Result<json> summary = eval::ReadSummaryJson(dir.string());
    if (!summary.ok() || !summary->contains("metrics")) continue;
    const json& sr = (*summary)["metrics"]["sharpe_ratio"];
    if (sr.is_number() && std::isfinite(sr.get<double>()))
      sharpes.push_back(sr.get<double>() / annualise);
  }
  Result<std::vector<eval::DailyReturnRow>> daily =
      eval::ReadDailyReturnsCsv((ev.best / eval::kDailyReturnsFile).string());
  if (!daily.ok() || sharpes.size() < 2) return;
  double mean = 0, variance = 0;
  for (double v : sharpes) mean += v;
  mean /= static_cast<double>(sharpes.size());
  for (double v : sharpes) variance += (v - mean) * (v - mean);
  variance /= static_cast<double>(sharpes.size() - 1);
  std::vector<double> returns;
  for (const eval::DailyReturnRow& r : *daily) returns.push_back(r.strategy);
  const double trials = static_cast<double>(std::max<size_t>(ev.dirs.size(), s.ok));
  const eval::DeflatedSharpeResult dsr = eval::DeflatedSharpeRatio(returns, trials, variance);
  j["deflated_sharpe"] = std::isfinite(dsr.dsr) ? json(dsr.dsr) : json(nullptr);
  json detail = {{"trials", trials},
                 {"evaluation", ev.best.lexically_relative(out_dir).string()},
                 {"sharpe_ratio", dsr.sharpe_per_period * annualise},
                 {"sr0_annualised", dsr.sr0 * annualise},
                 {"sharpe_variance_per_period", variance},
                 {"observations", dsr.observations}};
  eval::NullNonFinite(detail);
  j["deflated_sharpe_detail"] = detail;
}

// The finished study of training trials: best.toml from the best trial, its test
// evaluation when the config has a test range, the report and the outcome's JSON.
Result<TuneOutcome> ReportTrainingStudy(TuneStudy& st, const config::Config& cfg, bool ranged,
                                        const tune::StudyResult& s) {
  TuneOutcome& out = st.out;
  RLT_RETURN_IF_ERROR(NoObjectiveError(s, out.out_dir));
  json j = json::parse(tune::StudyJson(s, st.r.method, tune::UsesRungs(st.o)));
  if (s.best_trial >= 0) {
    const fs::path best_dir =
        fs::path(out.out_dir) / "trials" / ("trial_" + std::to_string(s.best_trial));
    RLT_ASSIGN_OR_RETURN(std::string best_config, ReadFile((best_dir / "config.toml").string()));
    RLT_RETURN_IF_ERROR(
        WriteFileAtomic((fs::path(out.out_dir) / "best.toml").string(), best_config));
    AddTuneDeflatedSharpe(out.out_dir, s, best_dir, j);
    if (ranged && cfg.Get("split", "test") != nullptr) {
      RLT_RETURN_IF_ERROR(EvaluateBestOnTest(st, cfg, s, best_dir, j));
    }
  }
  j["objective"] = st.o.objective;
  RLT_RETURN_IF_ERROR(eval::WriteTuneReport(out.out_dir));
  out.json = JsonText(j, 2);
  return out;
}

// A study whose trials train CONFIG: the config, the objective and the space checked, the
// trials run (in threads of this process, or on the ranks), the result reported.
Result<TuneOutcome> RunTrainingStudy(TuneStudy& st) {
  RLT_ASSIGN_OR_RETURN(const config::Config cfg, LoadStudyConfig(st));
  RLT_ASSIGN_OR_RETURN(const bool ranged, ChooseObjective(st, cfg));
  // Every key and the values a trial could be given, against the config's schema, before
  // anything runs or is written.
  RLT_RETURN_IF_ERROR(CheckSpaceKeys(st.space, st.r));
  RLT_RETURN_IF_ERROR(CheckSpaceValues(st.space, st.r));
  const TrialSetup setup = PlanTrials(st, cfg);
  RLT_ASSIGN_OR_RETURN(std::optional<tune::StudyResult> served,
                       RunStudyOnRanks(st.space, st.o, [&](const tune::TrialJob& job) {
                         return RunTrainingTrial(setup, job);
                       }));
  if (!served) return st.out;  // a rank that served trials
  return ReportTrainingStudy(st, cfg, ranged, *served);
}

}  // namespace

Result<TuneOutcome> RunTune(const TuneRequest& request) {
  // --method random --prune asha is --method asha (the same study, recorded as before).
  TuneRequest given = request;
  if (given.prune == "asha" && (given.method == "random" || given.method == "asha")) {
    given.method = "asha";
    given.prune = "none";
  }
  if (given.prune != "none" && given.prune != "asha") {
    return Status::Refused("--prune " + given.prune + ": expected none or asha");
  }
  TuneStudy st;
  RLT_RETURN_IF_ERROR(OpenStudy(given, st));
  if (!st.r.objective_fn.empty()) return RunObjectiveStudy(st);
  return RunTrainingStudy(st);
}

Result<std::string> BenchTune(const TuneBenchOptions& b) {
  if (b.trials < 1 || b.parallel < 2) {
    return Status::InvalidArgument("bench tune needs --trials >= 1 and --parallel >= 2");
  }
  RLT_ASSIGN_OR_RETURN(const ScratchDirectory scratch,
                       ScratchDirectory::Create(b.scratch, "bench-tune-"));
  const std::string dir = scratch.path();
  std::string space = b.space_path;
  if (space.empty()) {
    space = dir + "/space.toml";
    RLT_RETURN_IF_ERROR(WriteFileAtomic(space,
                                        "\"algo.learning_rate\" = { log_uniform = [3e-4, 3e-3] }\n"
                                        "\"algo.n_epochs\" = { int = [5, 20] }\n"));
  }
  json out = {{"config", b.config_path}, {"trials", b.trials}, {"parallel", b.parallel}};
  for (int parallel : {1, b.parallel}) {
    TuneRequest r;
    r.config_path = b.config_path;
    r.space_path = space;
    r.method = "sobol";
    r.trials = b.trials;
    r.overrides = b.overrides;
    r.parallel = parallel;
    r.quiet = true;
    r.out_dir = dir + "/p" + std::to_string(parallel);
    const auto start = std::chrono::steady_clock::now();
    RLT_ASSIGN_OR_RETURN(TuneOutcome o, RunTune(r));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out[parallel == 1 ? "sequential_seconds" : "parallel_seconds"] = seconds;
    if (parallel != 1) continue;
    std::vector<double> train, overhead, fraction;
    RLT_ASSIGN_OR_RETURN(std::string journal, ReadFile(r.out_dir + "/trials.jsonl"));
    std::istringstream in(journal);
    for (std::string line; std::getline(in, line);) {
      Result<tune::JsonDoc> doc = tune::JsonDoc::Parse(line, r.out_dir + "/trials.jsonl");
      if (!doc.ok() || !doc->root().is_object()) continue;
      const json& j = doc->root();
      if (!j.contains("train_seconds") || !j["train_seconds"].is_number() ||
          !j.contains("seconds") || !j["seconds"].is_number()) {
        continue;
      }
      const double t = j["train_seconds"].get<double>(), all = j["seconds"].get<double>();
      train.push_back(t);
      overhead.push_back(all - t);
      fraction.push_back((all - t) / t);
    }
    if (train.empty()) return Status::DataError("bench tune: no trial trained (see the config)");
    out["train_seconds_median"] = Median(train);
    out["overhead_seconds_median"] = Median(overhead);
    out["overhead_fraction_median"] = Median(fraction);
  }
  out["ratio"] = out["parallel_seconds"].get<double>() / out["sequential_seconds"].get<double>();
  return JsonText(out, 2);
}

}  // namespace rlt::evalrun
