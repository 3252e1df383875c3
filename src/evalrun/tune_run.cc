// rltrade evalrun: `rltrade tune` (see tune_run.h).
#include "evalrun/tune_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
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
#include <sstream>
#include <thread>

#include "config/config.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "core/median.h"
#include "core/thread_pool.h"
#include "dist/dist.h"
#include "env/registry.h"
#include "eval/report.h"
#include "evalrun/evalrun.h"
#include "train/train.h"
#include "tune/asha.h"
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
  const json j = json::parse(summary, nullptr, false);
  if (j.is_discarded()) return Status::DataError("summary.json does not parse");
  if (j.contains("metrics") && j["metrics"].contains(metric) && j["metrics"][metric].is_number()) {
    return j["metrics"][metric].get<double>();
  }
  if (j.contains(metric) && j[metric].is_number()) return j[metric].get<double>();
  std::string known;
  if (j.contains("metrics")) {
    for (const auto& [k, v] : j["metrics"].items()) known += (known.empty() ? "" : ", ") + k;
  }
  return Status::InvalidArgument("--objective " + metric + ": not a metric of the evaluation (" +
                                 (known.empty() ? std::string("mean_return") : known) + ")");
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

// ---- Trials on the ranks of mpirun (issue 15 §2) -----------------------------------
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

// A resumed study's request: its arguments as study.json recorded them.
Result<TuneRequest> ResumedRequest(const TuneRequest& given) {
  RLT_ASSIGN_OR_RETURN(std::string text, tune::ReadStudyHeader(given.resume_dir));
  const json h = json::parse(text, nullptr, false);
  const std::string path = given.resume_dir + "/study.json";
  if (h.is_discarded() || !h.contains("command") || !h["command"].is_object() ||
      !h.contains("space") || !h.contains("method") || !h.contains("trials") ||
      !h.contains("seed")) {
    return Status::DataError(path + ": not a study header this version wrote");
  }
  TuneRequest r = given;
  const json& c = h["command"];
  r.method = h["method"].get<std::string>();
  r.trials = h["trials"].get<int>();
  r.seed = h["seed"].get<uint64_t>();
  r.config_path = c.value("config", "");
  r.objective_fn = c.value("objective_fn", "");
  r.objective = c.value("objective", "");
  r.overrides = c.value("overrides", std::vector<std::string>{});
  // The workers of the killed study, unless --parallel says otherwise (successive
  // halving's order of promotions depends on them).
  if (given.parallel == 0) r.parallel = c.value("parallel", 0);
  r.space_text = h["space"].get<std::string>();
  r.eta = h.value("eta", r.eta);
  r.rung_steps = h.value("rung_steps", std::vector<int64_t>{});
  r.space_path = path + " (space)";
  return r;
}

}  // namespace

Result<TuneOutcome> RunTune(const TuneRequest& given) {
  const bool resume = !given.resume_dir.empty();
  TuneRequest r = given;
  if (resume) {
    RLT_ASSIGN_OR_RETURN(r, ResumedRequest(given));
  }
  if (!resume && r.space_path.empty()) {
    return Status::InvalidArgument("--space SPACE.toml is required (or --resume DIR)");
  }
  TuneOutcome out;
  out.out_dir = resume ? r.resume_dir : (r.out_dir.empty() ? DefaultOutDir() : r.out_dir);
  if (dist::Distributed()) out.out_dir = dist::Broadcast(out.out_dir);  // rank 0's clock
  std::string space_text = r.space_text;
  if (!resume) {
    RLT_ASSIGN_OR_RETURN(space_text, ReadFile(r.space_path));
  }
  RLT_ASSIGN_OR_RETURN(tune::Space space, tune::ParseSpace(space_text, r.space_path));
  tune::StudyOptions o;
  o.out_dir = out.out_dir;
  o.method = r.method;
  o.trials = r.trials;
  o.seed = r.seed;
  o.resume = resume;
  o.space_text = space_text;
  o.quiet = r.quiet;
  o.command = json{{"config", r.config_path},
                   {"objective_fn", r.objective_fn},
                   {"objective", r.objective},
                   {"overrides", r.overrides},
                   {"parallel", r.parallel}}
                  .dump();
  o.eta = r.eta;
  if (r.method == "asha" && r.eta < 2) {
    return Status::InvalidArgument("--eta " + std::to_string(r.eta) +
                                   ": the reduction factor must be at least 2 (3 is usual)");
  }
  // Successive halving's rungs: training steps up to the config's [run] total_steps (with
  // --objective-fn, a nominal budget of 81 that the function ignores).
  auto set_rungs = [&](int64_t total) {
    if (r.method != "asha") return;
    o.rung_steps =
        !r.rung_steps.empty() ? r.rung_steps : tune::RungSteps(total, r.eta, r.min_steps);
  };
  if (!r.objective_fn.empty()) {
    if (!r.config_path.empty()) {
      return Status::InvalidArgument("--objective-fn replaces training: give no CONFIG");
    }
    RLT_RETURN_IF_ERROR(tune::CheckObjectiveSpace(r.objective_fn, space));
    o.objective = r.objective_fn;
    o.minimize = true;
    set_rungs(81);
    if (r.parallel > 0) o.parallel = r.parallel;
    RLT_ASSIGN_OR_RETURN(std::optional<tune::StudyResult> s,
                         RunStudyOnRanks(space, o, [&](const tune::TrialJob& job) {
                           tune::TrialResult t;
                           std::vector<double> x;
                           for (const auto& [k, v] : job.params) x.push_back(std::stod(v));
                           t.objective = r.objective_fn == "branin" ? tune::Branin(x[0], x[1])
                                                                    : tune::Rosenbrock(x);
                           t.steps = job.steps;
                           return t;
                         }));
    if (!s) return out;  // a rank that served trials
    RLT_RETURN_IF_ERROR(eval::WriteTuneReport(out.out_dir));
    out.json = tune::StudyJson(*s, r.method);
    return out;
  }
  if (r.config_path.empty())
    return Status::InvalidArgument("tune needs CONFIG (or --objective-fn)");
  RLT_ASSIGN_OR_RETURN(config::Config cfg, config::Config::LoadFile(r.config_path));
  for (const std::string& s : r.overrides) RLT_RETURN_IF_ERROR(cfg.ApplyOverride(s));
  const bool market = IsMarketEnv(cfg);
  if (market && cfg.Get("split", "validation") == nullptr) {
    return Status::InvalidArgument(
        r.config_path +
        ": [split] validation is missing: trials are scored on it, never on "
        "the test range; add validation = \"YYYY-MM-DD:YYYY-MM-DD\" between "
        "train and test");
  }
  o.objective = !r.objective.empty() ? r.objective : (market ? "sharpe_ratio" : "mean_return");
  o.minimize = o.objective == "max_drawdown_duration" || o.objective == "downside_risk" ||
               o.objective == "annual_volatility" || o.objective == "turnover";
  // Every key against the config's schema, with the space's low values, before any run.
  {
    train::TrainRequest probe;
    probe.config_path = r.config_path;
    std::vector<std::pair<std::string, std::string>> low;
    for (const tune::Param& p : space.params) low.emplace_back(p.key, tune::ValueText(p, 0.0));
    probe.overrides = TrialOverrides(r, low);
    const Status st = train::ValidateTraining(probe);
    if (!st.ok() && st.message().find("unknown key") != std::string::npos) {
      return Status::InvalidArgument(r.space_path + ": " + st.message());
    }
  }
  // Parallel trials: P training runs at once in threads of this process, each with its
  // own thread budget; the annealing search is sequential.
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
  if (r.method == "asha") {
    const config::ConfigValue* total = cfg.Get("run", "total_steps");
    set_rungs(total != nullptr ? std::max<int64_t>(1, std::atoll(total->text.c_str())) : 1);
  }
  RLT_ASSIGN_OR_RETURN(
      std::optional<tune::StudyResult> served,
      RunStudyOnRanks(space, o, [&](const tune::TrialJob& job) {
        tune::TrialResult t;
        train::TrainRequest tr;
        tr.run_dir =
            (fs::path(out.out_dir) / "trials" / ("trial_" + std::to_string(job.trial))).string();
        tr.quiet = true;
        tr.stop_at_steps = job.steps;
        t.run_dir = tr.run_dir;
        if (job.rung > 0) {
          // Successive halving: the trial continues from the checkpoint its last rung left.
          tr.resume_dir = tr.run_dir;
          if (o.parallel > 1) tr.overrides = {"run.threads=" + std::to_string(trial_threads)};
        } else {
          tr.config_path = r.config_path;
          tr.overrides = TrialOverrides(trial_request, job.params);
          if (fs::exists(tr.run_dir)) fs::remove_all(tr.run_dir);  // a trial cut by a kill
          config::Config trial_cfg = cfg;
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
        return Scored(std::move(t), ev.ok() ? MetricOf(ev->summary_json, o.objective)
                                            : Result<double>(ev.status()));
      }));
  if (!served) return out;  // a rank that served trials
  const tune::StudyResult& s = *served;
  json j = json::parse(tune::StudyJson(s, r.method));
  if (s.best_trial >= 0) {
    const fs::path best_dir =
        fs::path(out.out_dir) / "trials" / ("trial_" + std::to_string(s.best_trial));
    RLT_ASSIGN_OR_RETURN(std::string best_config, ReadFile((best_dir / "config.toml").string()));
    RLT_RETURN_IF_ERROR(
        WriteFileAtomic((fs::path(out.out_dir) / "best.toml").string(), best_config));
    if (market && cfg.Get("split", "test") != nullptr) {
      // A copy of the best trial (OUT/best_run/) is what sees the test range: no trial's
      // own directory ever holds a test evaluation.
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
      RLT_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out.out_dir) / "test_evaluation.json").string(),
                                          ev.summary_json));
      RLT_ASSIGN_OR_RETURN(double test_value, MetricOf(ev.summary_json, o.objective));
      j["test_objective"] = test_value;
      out.test_report =
          "out-of-sample ([split] test, evaluated once, after the search): " + o.objective + " " +
          std::to_string(test_value) + " (trial " + std::to_string(s.best_trial) + ")";
    }
  }
  j["objective"] = o.objective;
  RLT_RETURN_IF_ERROR(eval::WriteTuneReport(out.out_dir));
  out.json = JsonText(j, 2);
  return out;
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
      const json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j["train_seconds"].is_number()) continue;
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
