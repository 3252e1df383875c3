// rltrade perf: `rltrade bench startup` — how long a command takes from exec to exit, and
// its peak memory, for the commands that should feel instant: `--help`, pricing one
// option, and `status` of a run. Each command runs `repeats` times as a child process
// (stdout and stderr to /dev/null), interleaved case by case so a change of machine load
// hits every case alike; wall time from fork to the end of wait4(), peak resident memory
// from the child's rusage (ru_maxrss). The run that `status` reads is trained first, in a
// scratch directory (a few hundred CartPole steps; not timed), unless one is given.
// Targets: a median of at most 30 ms and a peak of at most 40 MB per command
// (docs/performance.md holds the measured figures, with the machine and build).
// Not thread-safe.
#ifndef RLT_PERF_STARTUP_BENCH_H_
#define RLT_PERF_STARTUP_BENCH_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::perf {

struct StartupBenchOptions {
  std::string binary;   // the rltrade executable to run (default: this one)
  std::string run_dir;  // a run for `status` ("" = train a tiny one in `scratch`)
  std::string scratch = "/tmp";
  int repeats = 20;  // REQUIRES: >= 1
};

struct StartupTiming {
  std::string name;     // "help", "price", "status"
  std::string command;  // the command line, for the report
  int repeats = 0;
  double median_seconds = 0, min_seconds = 0, max_seconds = 0;
  double peak_rss_mb = 0;  // the largest over the runs
};

inline constexpr double kStartupTargetSeconds = 0.030;
inline constexpr double kStartupTargetMb = 40.0;

// Runs every case; an error when a command cannot be started or exits non-zero (the
// message names the command and its exit code).
Result<std::vector<StartupTiming>> MeasureStartup(const StartupBenchOptions& options);

}  // namespace rlt::perf

#endif  // RLT_PERF_STARTUP_BENCH_H_
