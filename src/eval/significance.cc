// rltrade eval: the paired stationary bootstrap of a Sharpe ratio difference (see
// significance.h for the definitions and sources).
#include "eval/significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/civil_time.h"
#include "core/rng.h"
#include "core/status.h"

namespace rlt::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Sample autocovariances γ(0..max_lag) of x about its mean, divided by n.
std::vector<double> Autocovariances(const std::vector<double>& x, int max_lag) {
  const int n = static_cast<int>(x.size());
  double mean = 0;
  for (double v : x) mean += v;
  mean /= n;
  std::vector<double> gamma(max_lag + 1, 0.0);
  for (int k = 0; k <= max_lag; ++k) {
    double s = 0;
    for (int t = 0; t + k < n; ++t) s += (x[t] - mean) * (x[t + k] - mean);
    gamma[k] = s / n;
  }
  return gamma;
}

// The flat-top lag window of Politis & White.
double FlatTop(double t) {
  t = std::fabs(t);
  if (t <= 0.5) return 1.0;
  return t <= 1.0 ? 2.0 * (1.0 - t) : 0.0;
}

// m̂: the smallest lag m after which `run` consecutive autocorrelations are insignificant.
int SignificantLags(const std::vector<double>& gamma, int run, double threshold) {
  const int max_lag = static_cast<int>(gamma.size()) - 1;
  for (int m = 0; m + run <= max_lag; ++m) {
    bool quiet = true;
    for (int k = m + 1; k <= m + run && quiet; ++k) {
      quiet = std::fabs(gamma[k] / gamma[0]) < threshold;
    }
    if (quiet) return m;
  }
  return max_lag - run;  // never quiet: the longest lag the search looked at
}

// The per-period Sharpe ratio of x from the sums of x − shift and of its squares (the
// shift, x's full-sample mean, keeps the sums small); 0 when x never varies.
double SharpeOfSums(double sum, double sum_sq, int64_t n, double shift) {
  const double mean = sum / static_cast<double>(n);
  const double var = (sum_sq - sum * mean) / static_cast<double>(n - 1);
  if (!(var > 0)) return 0.0;  // never varies: Sharpe 0 (the flat benchmark)
  return (mean + shift) / std::sqrt(var);
}

// SR(policy) − SR(benchmark), per period, over the index list `idx`.
double DifferenceOver(const std::vector<double>& p, const std::vector<double>& b,
                      const std::vector<int64_t>& idx, const double shift[2]) {
  double sp = 0, sqp = 0, sb = 0, sqb = 0;
  for (int64_t i : idx) {
    const double x = p[i] - shift[0], y = b[i] - shift[1];
    sp += x, sqp += x * x, sb += y, sqb += y * y;
  }
  const int64_t n = static_cast<int64_t>(idx.size());
  return SharpeOfSums(sp, sqp, n, shift[0]) - SharpeOfSums(sb, sqb, n, shift[1]);
}

// One stationary-bootstrap resample of the indices 0..n-1 into `idx`.
void ResampleIndices(Rng& rng, int64_t n, double mean_block, std::vector<int64_t>& idx) {
  const double restart = 1.0 / mean_block;
  int64_t at = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n)));
  for (int64_t t = 0; t < n; ++t) {
    idx[t] = at;
    at = rng.Uniform() < restart ? static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n)))
                                 : (at + 1) % n;
  }
}

// The q-quantile of sorted values, linear between order statistics.
double Quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

int PeriodsPerYearOf(std::span<const int32_t> session_dates) {
  size_t weekend = 0;
  for (int32_t d : session_dates) {
    const int weekday = Weekday(DaysFromCivil(d / 10000, d / 100 % 100, d % 100));
    weekend += weekday == 0 || weekday == 6 ? 1 : 0;
  }
  // A market open every day has 2 of 7 sessions on a weekend; an exchange's occasional
  // weekend session (NSE's Muhurat and special Saturday sessions) is far rarer.
  return !session_dates.empty() && 5 * weekend >= session_dates.size() ? kCalendarDaysPerYear
                                                                       : kExchangeSessionsPerYear;
}

double PolitisWhiteBlockLength(std::span<const double> values) {
  std::vector<double> x;
  for (double v : values) {
    if (!std::isnan(v)) x.push_back(v);
  }
  const int n = static_cast<int>(x.size());
  if (n < 4) return 1.0;
  const double log_n = std::log10(static_cast<double>(n));
  const int run = std::max(5, static_cast<int>(std::ceil(std::sqrt(log_n))));
  const int max_lag = std::min(n - 1, static_cast<int>(std::ceil(std::sqrt(n))) + run);
  const std::vector<double> gamma = Autocovariances(x, max_lag);
  if (!(gamma[0] > 0)) return 1.0;
  const int m_hat = SignificantLags(gamma, std::min(run, max_lag), 2.0 * std::sqrt(log_n / n));
  const int big_m = std::min(2 * m_hat, max_lag);
  double g = gamma[0], big_g = 0;
  for (int k = 1; k <= big_m; ++k) {
    const double w = FlatTop(static_cast<double>(k) / big_m);
    g += 2 * w * gamma[k];
    big_g += 2 * w * k * gamma[k];
  }
  const double d = 2 * g * g;
  const double b = d > 0 ? std::cbrt(2 * big_g * big_g / d * n) : 1.0;
  const double b_max = std::ceil(std::min(3 * std::sqrt(n), n / 3.0));
  return std::clamp(b, 1.0, std::max(1.0, b_max));
}

SharpeDifferenceTest BootstrapSharpeDifference(std::span<const double> policy,
                                               std::span<const double> benchmark,
                                               const BootstrapOptions& o) {
  RLT_CHECK_MSG(policy.size() == benchmark.size(), "paired series of different lengths");
  RLT_CHECK_MSG(o.resamples >= 1 && o.periods_per_year > 0 && o.confidence > 0 && o.confidence < 1,
                "BootstrapOptions out of range");
  std::vector<double> p, b, diff;
  for (size_t i = 0; i < policy.size(); ++i) {
    if (std::isnan(policy[i]) || std::isnan(benchmark[i])) continue;
    p.push_back(policy[i]), b.push_back(benchmark[i]), diff.push_back(policy[i] - benchmark[i]);
  }
  const int64_t n = static_cast<int64_t>(p.size());
  SharpeDifferenceTest r{kNaN, kNaN, kNaN, kNaN, 1.0, o.resamples, n, FewObservations(n)};
  if (n < 2) return r;
  r.mean_block_length =
      o.mean_block_length > 0 ? o.mean_block_length : PolitisWhiteBlockLength(diff);
  double shift[2] = {0, 0};
  for (int64_t i = 0; i < n; ++i) shift[0] += p[i] / n, shift[1] += b[i] / n;
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  const double observed = DifferenceOver(p, b, idx, shift);
  Rng rng(o.seed);
  std::vector<double> resampled(o.resamples);
  int64_t as_far = 0;
  for (int k = 0; k < o.resamples; ++k) {
    ResampleIndices(rng, n, r.mean_block_length, idx);
    resampled[k] = DifferenceOver(p, b, idx, shift);
    if (std::fabs(resampled[k] - observed) >= std::fabs(observed)) ++as_far;
  }
  std::sort(resampled.begin(), resampled.end());
  const double annualise = std::sqrt(static_cast<double>(o.periods_per_year));
  r.sharpe_difference = observed * annualise;
  r.p_value = static_cast<double>(1 + as_far) / static_cast<double>(1 + o.resamples);
  r.ci_low = Quantile(resampled, (1 - o.confidence) / 2) * annualise;
  r.ci_high = Quantile(resampled, (1 + o.confidence) / 2) * annualise;
  return r;
}

}  // namespace rlt::eval
