// rltrade pricing: MeasureGreeksRate (see greeks_bench.h).
#include "pricing/greeks_bench.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "pricing/pricing.h"

namespace rlt::pricing {
namespace {

// CPU seconds used by this process (all threads).
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <typename T>
GreeksRate Measure(int64_t n, int threads, double min_seconds) {
  GreeksBatchData<T> d(static_cast<size_t>(n));
  const OptionBatch<T> batch = d.Inputs();
  const GreeksBatch<T> greeks = d.Outputs();
  WorkerPool pool(threads);
  RLT_CHECK(BsmGreeksBatch(batch, greeks, &pool).ok());  // warm up
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const double cpu_start = ProcessCpuSeconds();
  int64_t passes = 0;
  double seconds = 0;
  while (seconds < min_seconds) {
    RLT_CHECK(BsmGreeksBatch(batch, greeks, &pool).ok());
    ++passes;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  const double options = static_cast<double>(passes) * static_cast<double>(n);
  GreeksRate r;
  r.precision = std::is_same_v<T, float> ? "float" : "double";
  r.threads = threads;
  r.per_sec = options / seconds;
  r.per_cpu_sec = options / (ProcessCpuSeconds() - cpu_start);
  r.seconds = seconds;
  r.tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-12;
  r.max_scaled_error = d.MaxScaledError();  // on what the last timed pass wrote
  r.accurate = r.max_scaled_error <= r.tolerance;
  return r;
}

}  // namespace

GreeksRate MeasureGreeksRate(bool single_precision, int64_t n, int threads, double min_seconds) {
  return single_precision ? Measure<float>(n, threads, min_seconds)
                          : Measure<double>(n, threads, min_seconds);
}

}  // namespace rlt::pricing
