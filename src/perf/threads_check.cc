// rltrade perf: `rltrade bench threads` (see threads_check.h).
#include "perf/threads_check.h"

#include <algorithm>
#include <cstdio>

#include "perf/train_bench.h"

namespace rlt::perf {

ThreadsVerdict Judge(std::vector<ThreadsSample> samples, double tolerance, bool check_scaling) {
  RLT_CHECK(samples.size() >= 2);
  ThreadsVerdict v;
  for (ThreadsSample& s : samples) s.median = Median(s.env_steps_per_sec);
  double best = -1;
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].median > best) {
      best = samples[i].median;
      v.best_threads = samples[i].threads;
    }
  }
  v.ratio = best > 0 ? samples[0].median / best : 0;
  for (size_t i = 1; i < samples.size(); ++i) {
    for (size_t j = 1; j < samples.size(); ++j) {
      if (samples[j].threads >= samples[i].threads) continue;
      const double r = samples[j].median > 0 ? samples[i].median / samples[j].median : 0;
      if (v.scaling_more == 0 || r < v.scaling_ratio) {
        v.scaling_ratio = r;
        v.scaling_more = samples[i].threads;
        v.scaling_fewer = samples[j].threads;
      }
    }
  }
  v.scaling_checked = check_scaling;
  v.ok = v.ratio >= 1 - tolerance && (!check_scaling || v.scaling_ratio >= 1 - tolerance);
  v.samples = std::move(samples);
  return v;
}

Result<ThreadsVerdict> CheckDefaultThreads(const ThreadsCheckOptions& o) {
  if (o.repeats < 1) return Status::InvalidArgument("--repeats must be >= 1");
  if (o.fixed_threads.empty()) return Status::InvalidArgument("--threads: no thread counts");
  std::vector<int> settings = {0};
  settings.insert(settings.end(), o.fixed_threads.begin(), o.fixed_threads.end());
  auto measure = [&o](int threads, int64_t steps) -> Result<TrainBenchResult> {
    TrainBenchOptions b;
    b.config_path = o.config_path;
    b.overrides = o.overrides;
    b.overrides.push_back("run.threads=" + std::to_string(threads));
    b.steps = steps;
    b.devices = {"cpu"};
    RLT_ASSIGN_OR_RETURN(std::vector<TrainBenchResult> r, MeasureTraining(b));
    RLT_CHECK(r.size() == 1);
    return r[0];
  };
  int64_t steps = o.steps;
  if (steps <= 0) {
    // A discarded calibration run (4 updates at the default): each measurement then lasts
    // at least kMinSeconds, so fast configs are not timed over a few milliseconds.
    constexpr double kMinSeconds = 2.0;
    RLT_ASSIGN_OR_RETURN(TrainBenchResult calib, measure(0, 0));
    steps =
        std::max<int64_t>(calib.steps, static_cast<int64_t>(kMinSeconds * calib.env_steps_per_sec));
  }
  std::vector<ThreadsSample> samples(settings.size());
  for (size_t i = 0; i < settings.size(); ++i) samples[i].threads = settings[i];
  for (int rep = 0; rep < o.repeats; ++rep) {
    for (size_t k = 0; k < settings.size(); ++k) {
      const size_t i = (k + static_cast<size_t>(rep)) % settings.size();  // rotated order
      RLT_ASSIGN_OR_RETURN(TrainBenchResult r, measure(settings[i], steps));
      samples[i].resolved_threads = r.threads;
      samples[i].env_steps_per_sec.push_back(r.env_steps_per_sec);
    }
  }
  return Judge(std::move(samples), o.tolerance, o.check_scaling);
}

std::string DescribeVerdict(const std::string& config_path, const ThreadsVerdict& v,
                            double tolerance) {
  std::string out = config_path + "\n";
  char line[256];
  for (const ThreadsSample& s : v.samples) {
    const auto [lo, hi] =
        std::minmax_element(s.env_steps_per_sec.begin(), s.env_steps_per_sec.end());
    if (s.threads == 0) {
      std::snprintf(line, sizeof line, "  threads = 0 (%d) ", s.resolved_threads);
    } else {
      std::snprintf(line, sizeof line, "  threads = %-5d ", s.threads);
    }
    out += line;
    std::snprintf(line, sizeof line, "median %10.0f env steps/s  (%zu runs, %.0f-%.0f)\n", s.median,
                  s.env_steps_per_sec.size(), *lo, *hi);
    out += line;
  }
  const bool default_ok = v.ratio >= 1 - tolerance;
  std::snprintf(line, sizeof line,
                "  %s: threads = 0 runs at %.1f%% of the best fixed count (threads = %d); "
                "required >= %.0f%%\n",
                default_ok ? "ok" : "SLOWER", 100 * v.ratio, v.best_threads, 100 * (1 - tolerance));
  out += line;
  if (v.scaling_checked && v.scaling_more > 0) {
    std::snprintf(line, sizeof line,
                  "  %s: threads = %d runs at %.1f%% of threads = %d (more threads must not be "
                  "slower); required >= %.0f%%\n",
                  v.scaling_ratio >= 1 - tolerance ? "ok" : "SLOWER", v.scaling_more,
                  100 * v.scaling_ratio, v.scaling_fewer, 100 * (1 - tolerance));
    out += line;
  }
  return out;
}

}  // namespace rlt::perf
