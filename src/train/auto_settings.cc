// rltrade train: the settings measured before a run's setup ([run] device = "auto",
// threads = 0; see setup.h).
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "config/config.h"
#include "core/thread_pool.h"
#include "learn/policy.h"
#include "train/setup.h"

namespace rlt::train::internal {
namespace {

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

}  // namespace

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

}  // namespace rlt::train::internal
