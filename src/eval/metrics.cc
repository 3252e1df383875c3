// rltrade eval: performance metrics (definitions and sources in metrics.h).
//
// Each metric is a plain loop. Empyrical's conventions are restated where they are
// applied; the reference is empyrical/stats.py (quantopian/empyrical, Apache-2.0),
// whose numbers tests/fixtures/empyrical_mixed.csv publishes.
#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/status.h"

namespace rlt::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Mean, count and sample standard deviation (ddof = 1) of the non-NaN values of
// x − shift, two-pass like numpy's nanmean / nanstd. std is NaN when n < 2.
struct Moments {
  int64_t n = 0;
  double mean = kNaN;
  double std = kNaN;
};

Moments NanMoments(std::span<const double> x, double shift) {
  Moments m;
  double sum = 0.0;
  for (double v : x) {
    if (std::isnan(v)) continue;
    sum += v - shift;
    ++m.n;
  }
  if (m.n == 0) return m;
  m.mean = sum / static_cast<double>(m.n);
  if (m.n < 2) return m;
  double ss = 0.0;
  for (double v : x) {
    if (std::isnan(v)) continue;
    const double d = (v - shift) - m.mean;
    ss += d * d;
  }
  m.std = std::sqrt(ss / static_cast<double>(m.n - 1));
  return m;
}

void CheckOptions(const MetricsOptions& options) {
  RLT_CHECK_MSG(options.periods_per_year > 0, "MetricsOptions::periods_per_year must be > 0");
}

// Standard normal CDF: Φ(z) = erfc(−z/√2) / 2 (accurate in both tails).
double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

// empyrical.sharpe_ratio: NaN if len < 2; nanmean / nanstd(ddof=1) · √P of r − rf.
double SharpeRatio(std::span<const double> returns, const MetricsOptions& options) {
  CheckOptions(options);
  if (returns.size() < 2) return kNaN;
  const Moments m = NanMoments(returns, options.risk_free);
  return m.mean / m.std * std::sqrt(static_cast<double>(options.periods_per_year));
}

// empyrical.downside_risk: NaN if len < 1; √(nanmean(min(r − rf, 0)²)) · √P. The mean
// runs over every non-NaN row, positive ones contributing 0 (not only the losses).
double DownsideRisk(std::span<const double> returns, const MetricsOptions& options) {
  CheckOptions(options);
  if (returns.empty()) return kNaN;
  double sum = 0.0;
  int64_t n = 0;
  for (double v : returns) {
    if (std::isnan(v)) continue;
    const double d = std::min(v - options.risk_free, 0.0);
    sum += d * d;
    ++n;
  }
  if (n == 0) return kNaN;
  return std::sqrt(sum / static_cast<double>(n)) *
         std::sqrt(static_cast<double>(options.periods_per_year));
}

// empyrical.sortino_ratio: NaN if len < 2; nanmean(r − rf) · P / downside_risk.
double SortinoRatio(std::span<const double> returns, const MetricsOptions& options) {
  CheckOptions(options);
  if (returns.size() < 2) return kNaN;
  const Moments m = NanMoments(returns, options.risk_free);
  return m.mean * options.periods_per_year / DownsideRisk(returns, options);
}

// empyrical.cum_returns_final: NaN if len == 0; nanprod(1 + r) − 1.
double CumReturnsFinal(std::span<const double> returns) {
  if (returns.empty()) return kNaN;
  double wealth = 1.0;
  for (double v : returns) {
    if (!std::isnan(v)) wealth *= 1.0 + v;
  }
  return wealth - 1.0;
}

// empyrical.annual_return: NaN if len < 1; ending^(1 / years) − 1 with years = len / P.
// len counts NaN rows: a missing period still takes up time.
double AnnualReturn(std::span<const double> returns, const MetricsOptions& options) {
  CheckOptions(options);
  if (returns.empty()) return kNaN;
  const double years =
      static_cast<double>(returns.size()) / static_cast<double>(options.periods_per_year);
  return std::pow(CumReturnsFinal(returns) + 1.0, 1.0 / years) - 1.0;
}

// empyrical.annual_volatility: NaN if len < 2; nanstd(r, ddof=1) · √P (no rf).
double AnnualVolatility(std::span<const double> returns, const MetricsOptions& options) {
  CheckOptions(options);
  if (returns.size() < 2) return kNaN;
  return NanMoments(returns, 0.0).std * std::sqrt(static_cast<double>(options.periods_per_year));
}

// empyrical.max_drawdown: NaN if len < 1; the wealth path starts at W_0 (before the first
// return, so a first-period loss is a drawdown) and NaN rows count as 0 %.
double MaxDrawdown(std::span<const double> returns) {
  if (returns.empty()) return kNaN;
  double wealth = 1.0, peak = 1.0, worst = 0.0;
  for (double v : returns) {
    if (!std::isnan(v)) wealth *= 1.0 + v;
    peak = std::fmax(peak, wealth);
    worst = std::fmin(worst, (wealth - peak) / peak);
  }
  return worst;
}

int64_t MaxDrawdownDuration(std::span<const double> returns) {
  double wealth = 1.0, peak = 1.0;
  int64_t peak_t = 0, longest = 0;
  const int64_t len = static_cast<int64_t>(returns.size());
  for (int64_t t = 1; t <= len; ++t) {
    const double v = returns[t - 1];
    if (!std::isnan(v)) wealth *= 1.0 + v;
    if (wealth >= peak) {  // a new peak, or a recovery that ends the open drawdown.
      const int64_t duration = t - peak_t > 1 ? t - peak_t : 0;  // 1: no period below.
      longest = std::max(longest, duration);
      peak = wealth;
      peak_t = t;
    }
  }
  if (peak_t < len) longest = std::max(longest, len - peak_t);  // still under water.
  return longest;
}

// empyrical.calmar_ratio: annual_return / |max_drawdown| if max_drawdown < 0, else NaN;
// an infinite ratio is NaN too.
double CalmarRatio(std::span<const double> returns, const MetricsOptions& options) {
  const double mdd = MaxDrawdown(returns);
  if (!(mdd < 0.0)) return kNaN;
  const double ratio = AnnualReturn(returns, options) / std::fabs(mdd);
  return std::isinf(ratio) ? kNaN : ratio;
}

// Not in empyrical: the share of non-NaN periods with a strictly positive return.
double WinRate(std::span<const double> returns) {
  int64_t wins = 0, n = 0;
  for (double v : returns) {
    if (std::isnan(v)) continue;
    ++n;
    if (v > 0.0) ++wins;
  }
  return n == 0 ? kNaN : static_cast<double>(wins) / static_cast<double>(n);
}

int64_t Observations(std::span<const double> returns) {
  return std::count_if(returns.begin(), returns.end(), [](double v) { return !std::isnan(v); });
}

// Bailey & López de Prado (2012), eq. (11); see metrics.h for the estimators.
PsrResult ProbabilisticSharpeRatio(std::span<const double> returns,
                                   double benchmark_sharpe_per_period, double risk_free) {
  PsrResult r{kNaN, 0, kNaN, kNaN, kNaN};
  const Moments m = NanMoments(returns, risk_free);
  r.observations = m.n;
  if (m.n < 2) return r;
  double m2 = 0.0, m3 = 0.0, m4 = 0.0;
  for (double v : returns) {
    if (std::isnan(v)) continue;
    const double d = (v - risk_free) - m.mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  const double n = static_cast<double>(m.n);
  m2 /= n;
  m3 /= n;
  m4 /= n;
  if (!(m.std > 0.0) || !(m2 > 0.0)) return r;
  r.sharpe_per_period = m.mean / m.std;
  r.skewness = m3 / std::pow(m2, 1.5);
  r.kurtosis = m4 / (m2 * m2);
  const double sr = r.sharpe_per_period;
  const double variance_term = 1.0 - r.skewness * sr + (r.kurtosis - 1.0) / 4.0 * sr * sr;
  if (!(variance_term > 0.0)) return r;
  const double z =
      (sr - benchmark_sharpe_per_period) * std::sqrt(n - 1.0) / std::sqrt(variance_term);
  r.psr = NormalCdf(z);
  return r;
}

double NormalQuantile(double p) {
  if (!(p >= 0.0 && p <= 1.0)) return kNaN;
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  // Acklam's coefficients (central region and tails), relative error < 1.15e-9.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  double x;
  if (p < kLow || p > 1.0 - kLow) {
    const double q = std::sqrt(-2.0 * std::log(p < kLow ? p : 1.0 - p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    if (p > 1.0 - kLow) x = -x;
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  // One Halley step on Φ(x) − p.
  const double e = NormalCdf(x) - p;
  const double u = e * std::sqrt(2.0 * std::numbers::pi) * std::exp(x * x / 2.0);
  return x - u / (1.0 + x * u / 2.0);
}

DeflatedSharpeResult DeflatedSharpeFromMoments(double sharpe_per_period, int64_t observations,
                                               double skewness, double kurtosis, double trials,
                                               double sharpe_variance) {
  constexpr double kEulerGamma = 0.5772156649015329;
  DeflatedSharpeResult r{kNaN, 0.0, sharpe_per_period, observations, trials, skewness, kurtosis};
  if (trials > 1.0 && sharpe_variance > 0.0) {
    r.sr0 = std::sqrt(sharpe_variance) *
            ((1.0 - kEulerGamma) * NormalQuantile(1.0 - 1.0 / trials) +
             kEulerGamma * NormalQuantile(1.0 - 1.0 / (trials * std::numbers::e)));
  }
  const double sr = sharpe_per_period;
  const double variance_term = 1.0 - skewness * sr + (kurtosis - 1.0) / 4.0 * sr * sr;
  if (observations < 2 || !std::isfinite(sr) || !(variance_term > 0.0)) return r;
  r.dsr = NormalCdf((sr - r.sr0) * std::sqrt(static_cast<double>(observations) - 1.0) /
                    std::sqrt(variance_term));
  return r;
}

DeflatedSharpeResult DeflatedSharpeRatio(std::span<const double> returns, double trials,
                                         double sharpe_variance) {
  const PsrResult p = ProbabilisticSharpeRatio(returns);
  return DeflatedSharpeFromMoments(p.sharpe_per_period, p.observations, p.skewness, p.kurtosis,
                                   trials, sharpe_variance);
}

ReturnMetrics ComputeReturnMetrics(std::span<const double> returns, const MetricsOptions& options) {
  CheckOptions(options);
  ReturnMetrics m;
  m.sharpe_ratio = SharpeRatio(returns, options);
  m.sortino_ratio = SortinoRatio(returns, options);
  m.downside_risk = DownsideRisk(returns, options);
  m.annual_return = AnnualReturn(returns, options);
  m.annual_volatility = AnnualVolatility(returns, options);
  m.max_drawdown = MaxDrawdown(returns);
  m.calmar_ratio = CalmarRatio(returns, options);
  m.cum_returns_final = CumReturnsFinal(returns);
  m.win_rate = WinRate(returns);
  m.observations = Observations(returns);
  m.max_drawdown_duration = MaxDrawdownDuration(returns);
  const PsrResult psr = ProbabilisticSharpeRatio(returns, 0.0, options.risk_free);
  m.psr = psr.psr;
  m.psr_observations = psr.observations;
  m.few_observations = FewObservations(m.observations);
  return m;
}

TradeMetrics ComputeTradeMetrics(std::span<const double> trade_pnls) {
  TradeMetrics t{0, 0.0, 0.0, kNaN, kNaN, kNaN};
  int64_t wins = 0;
  double sum = 0.0;
  for (double pnl : trade_pnls) {
    if (std::isnan(pnl)) continue;
    ++t.num_trades;
    sum += pnl;
    if (pnl > 0.0) {
      t.gross_profit += pnl;
      ++wins;
    } else {
      t.gross_loss -= pnl;
    }
  }
  if (t.num_trades == 0) return t;
  t.profit_factor = t.gross_profit / t.gross_loss;  // x/0 → +inf, 0/0 → NaN.
  t.average_trade_pnl = sum / static_cast<double>(t.num_trades);
  t.win_rate = static_cast<double>(wins) / static_cast<double>(t.num_trades);
  return t;
}

double Exposure(std::span<const double> positions) {
  if (positions.empty()) return kNaN;
  const auto held = std::count_if(positions.begin(), positions.end(),
                                  [](double x) { return x != 0.0 && !std::isnan(x); });
  return static_cast<double>(held) / static_cast<double>(positions.size());
}

double Turnover(std::span<const double> positions) {
  if (positions.empty()) return kNaN;
  double previous = 0.0, traded = 0.0;
  for (double x : positions) {
    traded += std::fabs(x - previous);
    previous = x;
  }
  return traded / static_cast<double>(positions.size());
}

}  // namespace rlt::eval
