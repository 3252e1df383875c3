// rltrade perf: `rltrade bench startup` (see startup_bench.h).
#include "perf/startup_bench.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/file_io.h"
#include "core/median.h"
#include "core/spawn.h"

namespace rlt::perf {
namespace {

struct Run {
  double seconds = 0;
  double peak_rss_mb = 0;
  int exit_code = 0;
};

// One run of `binary args...` with stdin, stdout and stderr on /dev/null.
Result<Run> RunOnce(const std::string& binary, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::IoError("bench startup: fork failed");
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage = {};
  if (::wait4(pid, &status, 0, &usage) != pid) {
    return Status::IoError("bench startup: waiting for '" + binary + "' failed");
  }
  Run r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string Joined(const std::string& binary, const std::vector<std::string>& args) {
  std::string s = binary;
  for (const std::string& a : args) s += " " + a;
  return s;
}

// A CartPole run of two updates in `dir`/run, for `status` to read.
Result<std::string> TrainTinyRun(const std::string& binary, const std::string& dir) {
  const std::string config = dir + "/tiny.toml";
  {
    std::ofstream out(config);
    out << "[run]\ntotal_steps = 256\nseed = 1\nthreads = 1\ncheckpoint_every = 0\n"
           "[env]\nid = \"cartpole\"\nnum_envs = 2\n"
           "[algo]\nn_steps = 64\nbatch_size = 64\nn_epochs = 1\n";
    if (!out) return Status::IoError("bench startup: cannot write '" + config + "'");
  }
  const std::string run = dir + "/run";
  const std::string log = dir + "/train.log";
  Result<pid_t> pid = SpawnLogged(binary, {"train", config, "--run-dir", run, "--quiet"}, log);
  RLT_RETURN_IF_ERROR(pid.status());
  const int code = WaitExitCode(*pid);
  if (code != 0) {
    return Status::IoError("bench startup: training the run for `status` failed (exit " +
                           std::to_string(code) + "):\n" + TailLines(log, 10));
  }
  return run;
}

}  // namespace

Result<std::vector<StartupTiming>> MeasureStartup(const StartupBenchOptions& options) {
  RLT_CHECK(options.repeats >= 1);
  const std::string binary = options.binary.empty() ? SelfExecutable() : options.binary;
  if (::access(binary.c_str(), X_OK) != 0 || std::filesystem::is_directory(binary)) {
    return Status::InvalidArgument("bench startup: --binary '" + binary +
                                   "' is not an executable file; give the path of rltrade");
  }
  std::string run_dir = options.run_dir;
  if (!run_dir.empty() && !std::filesystem::is_directory(run_dir)) {
    return Status::InvalidArgument("bench startup: --run '" + run_dir +
                                   "' is not a directory; give a run directory of rltrade train, "
                                   "or leave --run out to train a tiny one");
  }
  Result<ScratchDirectory> scratch = ScratchDirectory::Create(options.scratch, "rlt-startup-");
  RLT_RETURN_IF_ERROR(scratch.status());
  if (run_dir.empty()) {
    Result<std::string> run = TrainTinyRun(binary, scratch->path());
    RLT_RETURN_IF_ERROR(run.status());
    run_dir = *run;
  }
  struct Case {
    std::string name;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"help", {"--help"}},
      {"price",
       {"price", "--model", "bsm", "--type", "call", "--spot", "100", "--strike", "100", "--rate",
        "0.05", "--div", "0", "--vol", "0.2", "--time", "1"}},
      {"status", {"status", run_dir}},
  };
  std::vector<std::vector<Run>> runs(cases.size());
  // One untimed run each first (page cache), then the repeats interleaved.
  for (int rep = -1; rep < options.repeats; ++rep) {
    for (size_t c = 0; c < cases.size(); ++c) {
      Result<Run> r = RunOnce(binary, cases[c].args);
      RLT_RETURN_IF_ERROR(r.status());
      if (r->exit_code != 0) {
        return Status::IoError("bench startup: `" + Joined(binary, cases[c].args) +
                               "` exited with code " + std::to_string(r->exit_code));
      }
      if (rep >= 0) runs[c].push_back(*r);
    }
  }
  std::vector<StartupTiming> out;
  for (size_t c = 0; c < cases.size(); ++c) {
    StartupTiming t;
    t.name = cases[c].name;
    t.command = Joined("rltrade", cases[c].args);
    t.repeats = options.repeats;
    std::vector<double> seconds;
    for (const Run& r : runs[c]) {
      seconds.push_back(r.seconds);
      t.peak_rss_mb = std::max(t.peak_rss_mb, r.peak_rss_mb);
    }
    t.min_seconds = *std::min_element(seconds.begin(), seconds.end());
    t.max_seconds = *std::max_element(seconds.begin(), seconds.end());
    t.median_seconds = Median(seconds);
    out.push_back(t);
  }
  return out;
}

}  // namespace rlt::perf
