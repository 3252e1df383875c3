// rltrade pricing: `rltrade bench pricing`'s measurement — vectorised Black-Scholes-Merton
// prices with all seven Greeks per second (BsmGreeksBatch on a worker pool), and how far
// the batch is from the scalar reference (BsmGreeks) on the same inputs.
//
// The batch is drawn once (S 50..150, K around 100, r 0..8%, q 0..4%, vol 10..60%, T one
// day to two years, calls and puts; the same draws for both precisions); the figure is
// the number of options priced per wall second and per CPU second over at least
// min_seconds of repeated passes after a warm-up pass. Not thread-safe (it owns its pool).
#ifndef RLT_PRICING_GREEKS_BENCH_H_
#define RLT_PRICING_GREEKS_BENCH_H_

#include <cstdint>
#include <string>

namespace rlt::pricing {

struct GreeksRate {
  std::string precision;
  int threads = 0;
  double per_sec = 0;      // options / wall second
  double per_cpu_sec = 0;  // options / CPU second (what one core does when not shared)
  double seconds = 0;
  double max_scaled_error = 0;  // max |fast - reference| / max(1, |reference|)
  double tolerance = 0;         // 1e-12 (double) or 1e-6 (float)
  bool accurate = false;        // max_scaled_error <= tolerance
};

// REQUIRES: n >= 1, threads >= 1, min_seconds > 0.
GreeksRate MeasureGreeksRate(bool single_precision, int64_t n, int threads, double min_seconds);

}  // namespace rlt::pricing

#endif  // RLT_PRICING_GREEKS_BENCH_H_
