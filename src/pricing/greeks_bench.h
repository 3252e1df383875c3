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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "pricing/pricing.h"

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

// The batch: options drawn once (S 50..150, K around 100, r 0..8%, q 0..4%, vol 10..60%,
// T 1 day to 2 years, calls and puts; the same draws for both precisions), with the
// scalar reference check; shared with the micro-benchmarks (pricing_bench.cc).
template <typename T>
struct GreeksBatchData {
  explicit GreeksBatchData(size_t n)
      : type(n), in(6, std::vector<T>(n)), out(8, std::vector<T>(n)) {
    Rng rng(1);
    for (size_t i = 0; i < n; ++i) {
      type[i] = rng.Bernoulli(0.5) ? OptionType::kCall : OptionType::kPut;
      in[0][i] = static_cast<T>(rng.Uniform(50, 150));
      in[1][i] = static_cast<T>(100 * std::exp(0.2 * rng.Normal()));
      in[2][i] = static_cast<T>(rng.Uniform(0, 0.08));
      in[3][i] = static_cast<T>(rng.Uniform(0, 0.04));
      in[4][i] = static_cast<T>(rng.Uniform(0.1, 0.6));
      in[5][i] = static_cast<T>(rng.Uniform(1 / 365.0, 2.0));
    }
  }
  OptionBatch<T> Inputs() const {
    return {type.size(),  type.data(),  in[0].data(), in[1].data(),
            in[2].data(), in[3].data(), in[4].data(), in[5].data()};
  }
  GreeksBatch<T> Outputs() {
    return {out[0].data(), out[1].data(), out[2].data(), out[3].data(),
            out[4].data(), out[5].data(), out[6].data(), out[7].data()};
  }
  // The largest scaled difference of the last outputs from the scalar reference
  // (BsmGreeks on the same inputs, read as doubles): |fast - ref| / max(1, |ref|),
  // for elasticity also divided by its condition number (below).
  double MaxScaledError() const {
    double worst = 0;
    for (size_t i = 0; i < type.size(); ++i) {
      OptionInputs x;
      x.type = type[i];
      x.spot = in[0][i];
      x.strike = in[1][i];
      x.rate = in[2][i];
      x.dividend = in[3][i];
      x.vol = in[4][i];
      x.time = in[5][i];
      Result<Greeks> g = BsmGreeks(x);
      RLT_CHECK(g.ok());
      const double ref[8] = {g->price, g->delta, g->gamma,        g->vega,
                             g->theta, g->rho,   g->dividend_rho, g->elasticity};
      // Elasticity = delta S / V divides by the price, which far out of the money is a
      // small difference of two larger terms, |delta| S and K e^{-rT} N(phi d2) = |rho| / T
      // (in the reference as much as in the batch): its error is measured relative to that
      // condition number, as pricing_test does.
      const double cond =
          g->price > 0 ? std::max(1.0, (std::fabs(g->delta) * x.spot + std::fabs(g->rho) / x.time) /
                                           g->price)
                       : 1.0;
      for (int c = 0; c < 8; ++c) {
        const double err = std::fabs(static_cast<double>(out[c][i]) - ref[c]) /
                           (std::max(1.0, std::fabs(ref[c])) * (c == 7 ? cond : 1.0));
        worst = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(worst, err);
      }
    }
    return worst;
  }
  std::vector<OptionType> type;
  std::vector<std::vector<T>> in, out;
};

// REQUIRES: n >= 1, threads >= 1, min_seconds > 0.
GreeksRate MeasureGreeksRate(bool single_precision, int64_t n, int threads, double min_seconds);

}  // namespace rlt::pricing

#endif  // RLT_PRICING_GREEKS_BENCH_H_
