// rltrade perf: `rltrade bench threads` — is the default thread count (`threads = 0`) as
// fast as the best fixed count?
//
// For one config, CheckDefaultThreads() measures the real training loop
// (perf::MeasureTraining, i.e. `bench train`) with [run] threads = 0 and with each of the
// fixed counts (default 1 and 2), `repeats` times each, interleaved (setting order rotated
// every repeat so no setting always runs first, on cold caches, or last), and compares the
// medians: the default passes when its median env steps/s is at least (1 - tolerance) x
// the best fixed count's median. This is a benchmark, not a unit test: run it on a quiet
// machine (`make bench` does); on a busy one read the spread it prints.
// The header is LibTorch-free.
#ifndef RLT_PERF_THREADS_CHECK_H_
#define RLT_PERF_THREADS_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/median.h"
#include "core/status.h"

namespace rlt::perf {

struct ThreadsCheckOptions {
  std::string config_path;
  std::vector<std::string> overrides;  // "section.key=value"
  int64_t steps = 0;  // env steps per measurement; 0 = 4 updates and >= 2 s (calibrated)
  std::vector<int> fixed_threads = {1, 2};
  int repeats = 3;
  double tolerance = 0.05;
  // Also require that no fixed count runs slower than a smaller one (more threads never
  // cost speed): each count's median at least (1 - tolerance) x every smaller count's.
  bool check_scaling = false;
};

// The measurements of one setting. threads == 0 is the default; resolved_threads is what
// it resolved to (equal to threads otherwise).
struct ThreadsSample {
  int threads = 0;
  int resolved_threads = 0;
  std::vector<double> env_steps_per_sec;  // one per repeat
  double median = 0;
};

struct ThreadsVerdict {
  std::vector<ThreadsSample> samples;  // the default first, then fixed_threads in order
  int best_threads = 0;                // the fixed count with the highest median
  double ratio = 0;                    // default median / best fixed median
  // The lowest ratio of a fixed count's median to a smaller count's median (1 with a single
  // fixed count; above 1 when every larger count is faster), and the pair it was found at.
  double scaling_ratio = 1;
  int scaling_more = 0, scaling_fewer = 0;
  bool scaling_checked = false;  // judged with check_scaling
  bool ok = false;  // ratio >= 1 - tolerance, and scaling_ratio too when scaling_checked
};

// Median of a non-empty list (core/median.h).
using rlt::Median;

// The verdict from measured samples (samples[0] is the default). REQUIRES: samples.size()
// >= 2, every sample has at least one measurement.
ThreadsVerdict Judge(std::vector<ThreadsSample> samples, double tolerance,
                     bool check_scaling = false);

// Measures and judges one config (see the file comment).
Result<ThreadsVerdict> CheckDefaultThreads(const ThreadsCheckOptions& options);

// One human-readable paragraph: the medians, the spread, the verdict.
std::string DescribeVerdict(const std::string& config_path, const ThreadsVerdict& verdict,
                            double tolerance);

}  // namespace rlt::perf

#endif  // RLT_PERF_THREADS_CHECK_H_
