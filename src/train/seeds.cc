// rltrade train: runs of several seeds (see seeds.h).
#include "train/seeds.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "config/config.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "core/spawn.h"
#include "core/thread_pool.h"
#include "dist/dist.h"
#include "runlog/manifest.h"
#include "runlog/run_dir.h"
#include "train/train_options.h"

namespace rlt::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::atomic<int> g_seeds_signal{0};
extern "C" void OnSeedsSignal(int sig) { g_seeds_signal.store(sig); }

std::string SeedsJson(const SeedsIndex& index) {
  json j;
  j["format"] = 1;
  j["seeds"] = index.seeds;
  json runs = json::array();
  for (uint64_t s : index.seeds) runs.push_back(SeedDirName(s));
  j["runs"] = runs;
  j["config"] = index.config_path;
  j["overrides"] = index.overrides;
  return JsonText(j, 2) + "\n";
}

// One seed's training process.
struct Job {
  uint64_t seed = 0;
  std::vector<std::string> args;  // after the executable
  std::string run_dir, log;
  pid_t pid = 0;
  enum { kQueued, kRunning, kDone } state = kQueued;
  int exit_code = 0;
  std::chrono::steady_clock::time_point start;
  double seconds = 0;
};

// steps, total_steps and fps from a run's status.json (zeros when absent).
struct Progress {
  int64_t steps = 0, total = 0;
  double fps = 0;
  std::string state;
};
Progress ReadProgress(const std::string& run_dir) {
  Progress p;
  const Result<runlog::RunStatusRead> st = runlog::ReadRunStatus(run_dir);
  if (!st.ok()) return p;
  const auto whole = [](double v) { return std::isfinite(v) ? static_cast<int64_t>(v) : 0; };
  p.steps = whole(st->steps);
  p.total = whole(st->total_steps);
  p.fps = std::isfinite(st->fps) ? st->fps : 0.0;
  p.state = st->state;
  return p;
}

std::string ProgressLine(const std::vector<Job>& jobs) {
  std::string line = "seeds:";
  for (const Job& j : jobs) {
    if (j.state == Job::kQueued) {
      line += fmt::format(" {} queued |", j.seed);
      continue;
    }
    const Progress p = ReadProgress(j.run_dir);
    const double pct = p.total > 0 ? 100.0 * static_cast<double>(p.steps) / p.total : 0.0;
    line += j.state == Job::kDone
                ? fmt::format(" {} {} |", j.seed, j.exit_code == 0 ? "done" : "stopped")
                : fmt::format(" {} {:.0f}% {:.0f}/s |", j.seed, pct, p.fps);
  }
  line.pop_back();
  return line;
}

// Runs the jobs, `parallel` at a time, until all have finished or a signal arrives (then
// running ones are signalled, waited for, and queued ones never start).
Result<TrainOutcome> RunJobs(std::vector<Job>& jobs, int parallel, const std::string& executable,
                             const std::string& run_dir, bool quiet) {
  g_seeds_signal.store(0);
  struct sigaction action {
  }, old_int{}, old_term{};
  action.sa_handler = OnSeedsSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  const bool tty = !quiet && isatty(STDERR_FILENO) != 0;
  bool forwarded = false;
  Status spawn_error = Status::Ok();
  auto last_print = std::chrono::steady_clock::now();
  for (;;) {
    const int sig = g_seeds_signal.load();
    int running = 0;
    for (const Job& j : jobs) running += j.state == Job::kRunning;
    for (Job& j : jobs) {
      if (sig != 0 || !spawn_error.ok() || running >= parallel) break;
      if (j.state != Job::kQueued) continue;
      Result<pid_t> pid = SpawnLogged(executable, j.args, j.log);
      if (!pid.ok()) {
        spawn_error = pid.status();
        break;
      }
      j.pid = *pid;
      j.state = Job::kRunning;
      j.start = std::chrono::steady_clock::now();
      ++running;
      if (!quiet) {
        fmt::print(stderr, "{}seed {}: training in {} (log {})\n", tty ? "\r\033[K" : "", j.seed,
                   j.run_dir, j.log);
      }
    }
    if (sig != 0 && !forwarded) {
      for (const Job& j : jobs) {
        if (j.state == Job::kRunning) kill(j.pid, sig);
      }
      forwarded = true;
    }
    for (Job& j : jobs) {
      if (j.state != Job::kRunning) continue;
      int wstatus = 0;
      const pid_t r = waitpid(j.pid, &wstatus, WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) continue;
      j.state = Job::kDone;
      j.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - j.start).count();
      j.exit_code = r < 0                  ? 1
                    : WIFEXITED(wstatus)   ? WEXITSTATUS(wstatus)
                    : WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus)
                                           : 1;
      if (quiet) continue;
      const Progress p = ReadProgress(j.run_dir);
      if (j.exit_code == 0) {
        fmt::print(stderr, "{}seed {}: trained {} steps in {:.1f} s ({:.0f} env steps/s)\n",
                   tty ? "\r\033[K" : "", j.seed, p.steps, j.seconds,
                   j.seconds > 0 ? static_cast<double>(p.steps) / j.seconds : 0.0);
      } else if (j.exit_code == 130 || j.exit_code == 143) {
        fmt::print(stderr, "{}seed {}: interrupted at step {} (checkpoint written)\n",
                   tty ? "\r\033[K" : "", j.seed, p.steps);
      } else {
        fmt::print(stderr, "{}seed {}: FAILED (exit code {}); last lines of {}:\n{}",
                   tty ? "\r\033[K" : "", j.seed, j.exit_code, j.log, TailLines(j.log, 15));
      }
    }
    bool all_done = true;
    for (const Job& j : jobs) {
      all_done = all_done && (j.state == Job::kDone ||
                              (j.state == Job::kQueued && (sig != 0 || !spawn_error.ok())));
    }
    if (all_done) break;
    const auto now = std::chrono::steady_clock::now();
    if (tty && now - last_print > std::chrono::seconds(1)) {
      fmt::print(stderr, "\r\033[K{}", ProgressLine(jobs));
      last_print = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (tty) fmt::print(stderr, "\r\033[K");
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  TrainOutcome out;
  out.run_dir = run_dir;
  std::vector<std::string> failed, stopped;
  for (const Job& j : jobs) {
    out.total_steps += ReadProgress(j.run_dir).steps;
    if (j.state == Job::kQueued) {
      stopped.push_back(std::to_string(j.seed) + " (not started)");
    } else if (j.exit_code == 130 || j.exit_code == 143) {
      stopped.push_back(std::to_string(j.seed));
    } else if (j.exit_code != 0) {
      failed.push_back(fmt::format("{} (exit code {}, log {})", j.seed, j.exit_code, j.log));
    }
  }
  RLT_RETURN_IF_ERROR(spawn_error);
  if (!failed.empty()) {
    std::string list;
    for (const std::string& f : failed) list += (list.empty() ? "" : ", ") + f;
    return Status::IoError("seed(s) " + list + " failed; the other seeds' runs are complete. " +
                           "Fix the cause and continue with rltrade train --resume " + run_dir);
  }
  const int sig = g_seeds_signal.load();
  if (sig != 0 || !stopped.empty()) out.exit_code = 128 + (sig != 0 ? sig : SIGINT);
  return out;
}

// Processes at once and threads each for `jobs` seeds given [run] threads and
// `max_parallel` (train --parallel; 0 = as many as the cores allow).
std::pair<int, int> Parallelism(int jobs, int configured_threads, int max_parallel) {
  const int cores = AvailableCores();
  const int cap = max_parallel > 0 ? std::min(max_parallel, std::max(jobs, 1)) : std::max(jobs, 1);
  if (configured_threads > 0) {
    return {std::clamp(cores / configured_threads, 1, cap), configured_threads};
  }
  const int processes = std::clamp(std::min(jobs, cores), 1, cap);
  return {processes, CoresPerProcess(cores, processes)};
}

std::string ListSeeds(const std::vector<uint64_t>& seeds) {
  std::string out;
  for (uint64_t s : seeds) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

Result<TrainOutcome> ResumeSeeds(const TrainRequest& request, const SeedsIndex& index,
                                 const std::string& executable) {
  const std::string& run_dir = request.resume_dir;
  RLT_ASSIGN_OR_RETURN(runlog::RunLock lock,
                       runlog::RunLock::Acquire(run_dir, "rltrade train --seeds"));
  std::vector<Job> jobs;
  const std::vector<std::string> dirs = index.SeedRuns(run_dir);
  for (size_t i = 0; i < index.seeds.size(); ++i) {
    Job j;
    j.seed = index.seeds[i];
    j.run_dir = dirs[i];
    j.log = (fs::path(run_dir) / "logs" / (SeedDirName(j.seed) + ".log")).string();
    if (fs::exists(j.run_dir)) {
      // A finished seed is resumed only to change something (e.g. run.total_steps).
      if (ReadProgress(j.run_dir).state == "finished" && request.overrides.empty()) continue;
      j.args = {"train", "--resume", j.run_dir};
    } else {  // never started: train it as the original command would have
      j.args = {"train", index.config_path, "--run-dir", j.run_dir};
      for (const std::string& o : index.overrides) j.args.insert(j.args.end(), {"--set", o});
      j.args.insert(j.args.end(),
                    {"--set", "run.seed=" + std::to_string(j.seed), "--set", "run.seeds=1"});
    }
    for (const std::string& o : request.overrides) j.args.insert(j.args.end(), {"--set", o});
    if (request.allow_config_change) j.args.push_back("--allow-config-change");
    jobs.push_back(std::move(j));
  }
  if (jobs.empty()) {
    return Status::InvalidArgument(
        "every seed of " + run_dir + " (" + ListSeeds(index.seeds) +
        ") has finished; extend them with --set run.total_steps=N, or resume one with --seed S");
  }
  std::error_code ec;
  fs::create_directories(fs::path(run_dir) / "logs", ec);
  const auto [processes, threads] = Parallelism(static_cast<int>(jobs.size()), 1, request.parallel);
  (void)threads;  // each seed resumes with the thread count its config.toml records
  if (!request.quiet) {
    fmt::print(stderr, "resuming {} seed(s) of {}, {} at a time\n", jobs.size(), run_dir,
               processes);
  }
  return RunJobs(jobs, processes, executable, run_dir, request.quiet);
}

}  // namespace

std::string SeedDirName(uint64_t seed) { return "seed_" + std::to_string(seed); }

std::vector<std::string> SeedsIndex::SeedRuns(const std::string& run_dir) const {
  std::vector<std::string> out;
  for (uint64_t s : seeds) out.push_back((fs::path(run_dir) / SeedDirName(s)).string());
  return out;
}

Result<std::optional<SeedsIndex>> ReadSeedsIndex(const std::string& run_dir) {
  const std::string path = (fs::path(run_dir) / kSeedsFile).string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<SeedsIndex>();
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path, 1 << 20));
  const json j = ParseJsonOrDiscarded<json>(text);
  const auto bad = [&](const std::string& what) {
    return Status::DataError(path + ": " + what +
                             " (written by rltrade train --seeds; restore it or retrain)");
  };
  if (JsonNestingBeyond(text, kMaxJsonDepth) != std::string::npos) {
    return bad("JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  if (!j.is_object() || !j.contains("seeds") || !j["seeds"].is_array()) {
    return bad("expected a JSON object with a \"seeds\" array");
  }
  SeedsIndex index;
  for (const json& s : j["seeds"]) {
    if (!s.is_number_unsigned()) return bad("\"seeds\" must hold non-negative integers");
    index.seeds.push_back(s.get<uint64_t>());
  }
  if (index.seeds.empty() || index.seeds.size() > static_cast<size_t>(kMaxSeeds)) {
    return bad("\"seeds\" must list 1 to " + std::to_string(kMaxSeeds) + " seeds");
  }
  if (j.contains("config") && j["config"].is_string()) {
    index.config_path = j["config"].get<std::string>();
  }
  if (j.contains("overrides") && j["overrides"].is_array()) {
    for (const json& o : j["overrides"]) {
      if (!o.is_string()) return bad("\"overrides\" must hold strings");
      index.overrides.push_back(o.get<std::string>());
    }
  }
  return std::optional<SeedsIndex>(std::move(index));
}

Result<std::string> ResolveSeedRun(const std::string& run_dir, std::optional<uint64_t> seed) {
  RLT_ASSIGN_OR_RETURN(const std::optional<SeedsIndex> index, ReadSeedsIndex(run_dir));
  if (!index) {
    if (seed) {
      return Status::InvalidArgument(
          "--seed " + std::to_string(*seed) + ": " + run_dir +
          " is a single-seed run (no seeds.json); --seed picks one seed of a run trained with "
          "--seeds N. Drop --seed");
    }
    return run_dir;
  }
  if (!seed) {
    return Status::InvalidArgument(run_dir + " holds " + std::to_string(index->seeds.size()) +
                                   " seeds (" + ListSeeds(index->seeds) +
                                   "): choose one with --seed S, or give its directory " +
                                   (fs::path(run_dir) / SeedDirName(index->seeds[0])).string());
  }
  if (std::find(index->seeds.begin(), index->seeds.end(), *seed) == index->seeds.end()) {
    return Status::InvalidArgument("--seed " + std::to_string(*seed) + ": " + run_dir +
                                   " holds seeds " + ListSeeds(index->seeds));
  }
  return (fs::path(run_dir) / SeedDirName(*seed)).string();
}

Result<int> RequestedSeeds(const TrainRequest& request) {
  int seeds = request.seeds;
  if (seeds == 0) {
    RLT_ASSIGN_OR_RETURN(const config::Config config,
                         LoadConfig(request.config_path, request.overrides));
    seeds = 1;
    if (const config::ConfigValue* v = config.Get("run", "seeds")) {
      RunOptions run;
      RLT_RETURN_IF_ERROR(config.Bind("run", run));
      seeds = run.seeds;
      if (seeds < 1 || seeds > kMaxSeeds) {
        return Status::InvalidArgument(v->source + ": [run] seeds = " + std::to_string(seeds) +
                                       ": expected 1 to " + std::to_string(kMaxSeeds));
      }
    }
  }
  if (seeds < 1 || seeds > kMaxSeeds) {
    return Status::InvalidArgument("--seeds " + std::to_string(seeds) + ": expected 1 to " +
                                   std::to_string(kMaxSeeds));
  }
  return seeds;
}

namespace {

// A new multi-seed run: its directory, its seeds.json and, on the rank that created it,
// the lock held while the seeds train.
struct SeedsPlan {
  std::string run_dir;
  SeedsIndex index;
  int configured_threads = 0;  // [run] threads
  std::optional<runlog::RunLock> lock;
};

// Checks the request once and, with `create`, creates RUN/logs, takes the lock and writes
// seeds.json (without: the same plan, for a rank that did not create RUN).
Result<SeedsPlan> PlanSeeds(const TrainRequest& request, int seeds, bool create) {
  RLT_ASSIGN_OR_RETURN(const config::Config config,
                       LoadConfig(request.config_path, request.overrides));
  RunOptions run;
  RLT_RETURN_IF_ERROR(config.Bind("run", run));
  SeedsPlan plan;
  plan.configured_threads = run.threads;
  plan.run_dir = request.run_dir.empty() ? DefaultRunDir(request.config_path) : request.run_dir;
  plan.index.config_path = request.config_path;
  plan.index.overrides = request.overrides;
  for (int i = 0; i < seeds; ++i) plan.index.seeds.push_back(run.seed + static_cast<uint64_t>(i));
  if (!create) return plan;
  std::error_code ec;
  if (fs::exists(plan.run_dir, ec) && !fs::is_empty(plan.run_dir, ec)) {
    return Status::InvalidArgument("run directory " + plan.run_dir +
                                   " already exists; continue it with --resume " + plan.run_dir +
                                   " or choose another --run-dir");
  }
  // Everything is checked once before anything is written (the seeds differ only in
  // run.seed, which no check depends on).
  RLT_RETURN_IF_ERROR(ValidateTraining(request));
  fs::create_directories(fs::path(plan.run_dir) / "logs", ec);
  if (ec) return Status::IoError("cannot create " + plan.run_dir + ": " + ec.message());
  RLT_ASSIGN_OR_RETURN(runlog::RunLock lock,
                       runlog::RunLock::Acquire(plan.run_dir, "rltrade train --seeds"));
  plan.lock.emplace(std::move(lock));
  RLT_RETURN_IF_ERROR(
      WriteFileAtomic((fs::path(plan.run_dir) / kSeedsFile).string(), SeedsJson(plan.index)));
  return plan;
}

// One child process per seed: `train CONFIG --run-dir RUN/seed_S --set ... run.seed=S`.
std::vector<Job> SeedJobs(const TrainRequest& request, const SeedsPlan& plan, int threads) {
  std::vector<Job> jobs;
  const std::vector<std::string> dirs = plan.index.SeedRuns(plan.run_dir);
  for (size_t i = 0; i < plan.index.seeds.size(); ++i) {
    Job j;
    j.seed = plan.index.seeds[i];
    j.run_dir = dirs[i];
    j.log = (fs::path(plan.run_dir) / "logs" / (SeedDirName(j.seed) + ".log")).string();
    j.args = {"train", request.config_path, "--run-dir", j.run_dir};
    for (const std::string& o : request.overrides) j.args.insert(j.args.end(), {"--set", o});
    j.args.insert(j.args.end(), {"--set", "run.seed=" + std::to_string(j.seed), "--set",
                                 "run.seeds=1", "--set", "run.threads=" + std::to_string(threads)});
    jobs.push_back(std::move(j));
  }
  return jobs;
}

// --seed S without --resume.
Status SeedWithoutResume() {
  return Status::InvalidArgument(
      "--seed S picks one seed of a multi-seed run to resume (with --resume RUN); for a new "
      "run use --set run.seed=S");
}

}  // namespace

Result<TrainOutcome> RunTrainCommand(const TrainRequest& request, const std::string& executable) {
  if (!request.resume_dir.empty()) {
    RLT_ASSIGN_OR_RETURN(const std::optional<SeedsIndex> index, ReadSeedsIndex(request.resume_dir));
    if (request.seeds > 0) {
      return Status::InvalidArgument(
          "--seeds applies to a new run; --resume continues the seeds the run has");
    }
    if (index && !request.seed) return ResumeSeeds(request, *index, executable);
    TrainRequest one = request;
    RLT_ASSIGN_OR_RETURN(one.resume_dir, ResolveSeedRun(request.resume_dir, request.seed));
    one.seed.reset();
    return RunTraining(one);
  }
  if (request.seed) return SeedWithoutResume();
  RLT_ASSIGN_OR_RETURN(const int seeds, RequestedSeeds(request));
  if (seeds == 1) {
    TrainRequest one = request;
    one.seeds = 0;
    if (request.seeds == 1) one.overrides.push_back("run.seeds=1");
    return RunTraining(one);
  }
  RLT_ASSIGN_OR_RETURN(SeedsPlan plan, PlanSeeds(request, seeds, /*create=*/true));
  const auto [processes, threads] = Parallelism(seeds, plan.configured_threads, request.parallel);
  std::vector<Job> jobs = SeedJobs(request, plan, threads);
  if (!request.quiet) {
    fmt::print(stderr, "training seeds {} into {}: {} at a time, {} thread{} each\n",
               ListSeeds(plan.index.seeds), plan.run_dir, processes, threads,
               threads == 1 ? "" : "s");
  }
  return RunJobs(jobs, processes, executable, plan.run_dir, request.quiet);
}

Result<TrainOutcome> RunSeedsOnRanks(const TrainRequest& request, const std::string& executable) {
  const int rank = dist::Rank(), ranks = dist::Size();
  if (!request.resume_dir.empty()) {
    // A single-seed run continues data-parallel; a multi-seed run's seeds are resumed
    // without mpirun.
    RLT_ASSIGN_OR_RETURN(const std::optional<SeedsIndex> index, ReadSeedsIndex(request.resume_dir));
    if (index || request.seed) {
      return Status::Refused(
          "under mpirun, rltrade train --resume continues a single-seed run on the ranks; "
          "resume the seeds of a multi-seed run without mpirun (rltrade train --resume RUN)");
    }
    return RunTrainingOnRanks(request);
  }
  if (request.seed) return SeedWithoutResume();
  RLT_ASSIGN_OR_RETURN(const int seeds, RequestedSeeds(request));
  if (seeds < 2) {  // one policy, data-parallel
    TrainRequest one = request;
    one.seeds = 0;
    if (request.seeds == 1) one.overrides.push_back("run.seeds=1");
    return RunTrainingOnRanks(one);
  }
  // Rank 0 checks everything and creates RUN (seeds.json, the lock) before any rank starts.
  std::optional<SeedsPlan> plan;
  Status planned = Status::Ok();
  if (rank == 0) {
    Result<SeedsPlan> p = PlanSeeds(request, seeds, /*create=*/true);
    if (p.ok()) {
      plan = std::move(*p);
    } else {
      planned = p.status();
    }
  }
  const std::string verdict = dist::Broadcast(planned.ok() ? "" : planned.message());
  if (!verdict.empty()) return rank == 0 ? planned : Status::Refused(verdict);
  if (rank != 0) {
    Result<SeedsPlan> p = PlanSeeds(request, seeds, /*create=*/false);
    if (!p.ok()) {
      std::fprintf(stderr, "error: rank %d: %s\n", rank, p.status().message().c_str());
      dist::Abort(1);
    }
    plan = std::move(*p);
  }
  // Seed i on rank i mod K; each rank runs its seeds as child processes, as one process
  // runs all of them.
  std::vector<Job> mine;
  {
    const int count = (seeds - rank + ranks - 1) / ranks;
    const auto [processes, threads] =
        Parallelism(count, plan->configured_threads, request.parallel);
    std::vector<Job> all = SeedJobs(request, *plan, threads);
    for (int i = rank; i < seeds; i += ranks) mine.push_back(std::move(all[i]));
    if (!request.quiet && !mine.empty()) {
      std::vector<uint64_t> ids;
      for (const Job& j : mine) ids.push_back(j.seed);
      fmt::print(stderr, "rank {}/{}: training seeds {} into {}: {} at a time, {} thread{} each\n",
                 rank, ranks, ListSeeds(ids), plan->run_dir, processes, threads,
                 threads == 1 ? "" : "s");
    }
    Result<TrainOutcome> done =
        mine.empty() ? Result<TrainOutcome>(TrainOutcome{})
                     : RunJobs(mine, processes, executable, plan->run_dir, request.quiet);
    nlohmann::json pack = {
        {"ok", done.ok()},
        {"message", done.ok() ? "" : done.status().message()},
        {"refused", !done.ok() && done.status().code() == Status::Code::kRefused},
        {"exit_code", done.ok() ? done->exit_code : 0},
        {"steps", done.ok() ? done->total_steps : 0}};
    const std::vector<std::string> packs = dist::Gather(pack.dump());
    nlohmann::json all_ranks = {{"message", ""}, {"exit_code", 0}, {"steps", 0}};
    if (rank == 0) {
      int64_t steps = 0;
      for (const std::string& text : packs) {
        const nlohmann::json r = nlohmann::json::parse(text);
        steps += r["steps"].get<int64_t>();
        if (!r["ok"].get<bool>() && all_ranks["message"].get<std::string>().empty()) {
          all_ranks["message"] = r["message"];
        }
        if (all_ranks["exit_code"].get<int>() == 0) all_ranks["exit_code"] = r["exit_code"];
      }
      all_ranks["steps"] = steps;
    }
    all_ranks = nlohmann::json::parse(dist::Broadcast(all_ranks.dump()));
    const std::string message = all_ranks["message"].get<std::string>();
    if (!message.empty()) return Status::IoError(message);
    TrainOutcome out;
    out.run_dir = plan->run_dir;
    out.exit_code = all_ranks["exit_code"].get<int>();
    out.total_steps = all_ranks["steps"].get<int64_t>();
    return out;
  }
}

}  // namespace rlt::train
