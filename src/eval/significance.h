// rltrade eval: did the policy beat a benchmark, beyond what luck explains? A paired
// stationary bootstrap of the difference of two Sharpe ratios, the block length it uses,
// the annualisation a series of session dates calls for, and the short-sample flag.
//
// The test (BootstrapSharpeDifference). Input: the policy's and the benchmark's simple
// returns per period, paired by index (the same sessions); a pair with a NaN on either
// side is dropped. The statistic is the difference of the per-period Sharpe ratios,
//   Δ = SR(policy) − SR(benchmark),  SR(x) = mean(x) / std(x)  (ddof = 1, no risk-free
//   rate), with SR = 0 for a series that never varies (the flat benchmark's all-zero
//   returns: the test against flat is then the test of SR(policy) = 0),
// reported annualised (· √periods_per_year). Resampling: the stationary bootstrap of
// Politis & Romano (1994, JASA 89(428)) on the index of the pairs, so both series are
// resampled together and their correlation and serial dependence are kept: a resample is
// built from blocks that start at a uniform random index and run on (wrapping around the
// end) until a geometric stopping time with mean `mean_block_length` ends them.
// B = 2,000 resamples from a fixed seed, so the same input gives the same figures.
// Null hypothesis: Δ = 0 (the two Sharpe ratios are equal). The two-sided p-value is that
// of the centred bootstrap distribution,
//   p = (1 + #{b : |Δ*_b − Δ̂| ≥ |Δ̂|}) / (B + 1),
// i.e. how often a resample's deviation from the observed difference is at least as far
// as the observed difference is from 0; identical series give p = 1. The interval is the
// percentile interval of the Δ*_b (95 % by default). Neither is studentised.
//
// Block length (PolitisWhiteBlockLength): the automatic choice of Politis & White (2004,
// Econometric Reviews 23(1)) for the stationary bootstrap, with the correction of Patton,
// Politis & White (2009, Econometric Reviews 28(4)), computed on the paired differences
// policy − benchmark (see the function).
//
// Thread safety: pure functions.
#ifndef RLT_EVAL_SIGNIFICANCE_H_
#define RLT_EVAL_SIGNIFICANCE_H_

#include <cstdint>
#include <span>

namespace rlt::eval {

// Ratios (Sharpe, Sortino, Calmar, PSR) computed from fewer than this many non-missing
// periods are flagged "few_observations" wherever they are shown.
inline constexpr int64_t kMinRatioObservations = 30;
inline bool FewObservations(int64_t observations) { return observations < kMinRatioObservations; }

// Periods per year of a daily series, from its session dates (yyyymmdd): 365 when at
// least a fifth of the sessions fall on a Saturday or a Sunday (a market that trades every
// day has two in seven), else 252 (exchange sessions, an occasional weekend session such
// as NSE's Muhurat or special Saturday sessions included). 252 for no dates.
inline constexpr int kExchangeSessionsPerYear = 252;
inline constexpr int kCalendarDaysPerYear = 365;
int PeriodsPerYearOf(std::span<const int32_t> session_dates);

// The mean block length of the stationary bootstrap for the series x (NaN entries
// skipped), by Politis & White (2004) with the correction of Patton, Politis & White
// (2009): with ρ(k) the sample autocorrelations, m̂ the smallest lag after which
// K = max(5, ⌈√log10 n⌉) consecutive |ρ| stay below 2·√(log10 n / n), M = min(2·m̂,
// ⌈√n⌉ + K) and the flat-top window λ(t) = 1 for |t| ≤ 1/2, 2(1 − |t|) to |t| = 1:
//   G = Σ_{|k| ≤ M} λ(k/M) |k| γ(k),  g = Σ_{|k| ≤ M} λ(k/M) γ(k),
//   b = (2 G² / D)^{1/3} n^{1/3} with D = 2 g²,
// clamped to [1, min(3√n, n/3)]. 1 for fewer than 4 values or a series that never varies
// (nothing to preserve). For an AR(1) series with coefficient φ the target is
// (2φ / (1 − φ²))^{2/3} n^{1/3}.
double PolitisWhiteBlockLength(std::span<const double> x);

inline constexpr uint64_t kBootstrapSeed = 19940601;  // fixed: reproducible output

struct BootstrapOptions {
  int resamples = 2000;            // B. REQUIRES: >= 1
  uint64_t seed = kBootstrapSeed;  // the resampling's random stream
  double mean_block_length = 0;    // 0 = PolitisWhiteBlockLength of the differences
  int periods_per_year = 252;      // annualises the reported difference and interval
  double confidence = 0.95;        // of the percentile interval, in (0, 1)
};

struct SharpeDifferenceTest {
  double sharpe_difference;  // annualised SR(policy) − SR(benchmark); NaN if n < 2
  double p_value;            // two-sided, for Δ = 0; NaN if n < 2
  double ci_low, ci_high;    // annualised percentile interval of Δ; NaN if n < 2
  double mean_block_length;  // the one used
  int resamples;             // B
  int64_t observations;      // n: pairs with both returns present
  bool few_observations;     // n < kMinRatioObservations
};

SharpeDifferenceTest BootstrapSharpeDifference(std::span<const double> policy,
                                               std::span<const double> benchmark,
                                               const BootstrapOptions& options = {});

}  // namespace rlt::eval

#endif  // RLT_EVAL_SIGNIFICANCE_H_
