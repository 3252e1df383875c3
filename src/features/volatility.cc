// rltrade features: dispersion and range indicators (STDDEV, BBANDS, TRANGE, ATR, NATR)
// and log returns, fast O(n) versions. Plain-loop references: reference.cc.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/status.h"
#include "features/indicators.h"
#include "features/internal.h"

namespace rlt::features {
namespace internal {
namespace {

// Exact two-pass mean and sum of squared deviations of x[begin, end).
void WindowMoments(std::span<const double> x, size_t begin, size_t end, double* mean, double* m2) {
  double sum = 0.0;
  for (size_t i = begin; i < end; ++i) sum += x[i];
  *mean = sum / static_cast<double>(end - begin);
  double ss = 0.0;
  for (size_t i = begin; i < end; ++i) ss += (x[i] - *mean) * (x[i] - *mean);
  *m2 = ss;
}

}  // namespace

void RollingMeanVar(std::span<const double> x, int period, std::vector<double>* mean,
                    std::vector<double>* var) {
  RLT_CHECK(period >= 1);
  const size_t n = static_cast<size_t>(period);
  *mean = NaNs(x.size());
  *var = NaNs(x.size());
  const size_t s = FirstFinite(x);
  if (x.size() < s + n) return;
  double m = 0.0, m2 = 0.0;
  WindowMoments(x, s, s + n, &m, &m2);
  (*mean)[s + n - 1] = m;
  (*var)[s + n - 1] = std::max(m2 / period, 0.0);
  for (size_t t = s + n; t < x.size(); ++t) {
    if ((t - s) % n == 0) {  // exact restart: rounding never accumulates past one window
      WindowMoments(x, t + 1 - n, t + 1, &m, &m2);
    } else {  // sliding Welford update: x[t] enters, x[t - n] leaves
      const double in = x[t], out = x[t - n], old_mean = m;
      m += (in - out) / period;
      m2 += (in - out) * (in - m + out - old_mean);
    }
    (*mean)[t] = m;
    (*var)[t] = std::max(m2 / period, 0.0);
  }
}

}  // namespace internal

using internal::NaNs;

using internal::TaStddev;

int StddevLookback(const StddevParams& p) { return p.period - 1; }
int BbandsLookback(const BbandsParams& p) { return p.period - 1; }
int AtrLookback(const AtrParams& p) { return p.period; }

std::vector<double> Stddev(std::span<const double> x, const StddevParams& p) {
  std::vector<double> mean, var;
  internal::RollingMeanVar(x, p.period, &mean, &var);
  for (size_t t = 0; t < x.size(); ++t) {
    if (!std::isnan(var[t])) var[t] = TaStddev(var[t]) * p.nbdev;
  }
  return var;
}

BbandsOutput Bbands(std::span<const double> x, const BbandsParams& p) {
  const size_t n = x.size();
  BbandsOutput out{NaNs(n), NaNs(n), NaNs(n), NaNs(n), NaNs(n)};
  std::vector<double> mean, var;
  internal::RollingMeanVar(x, p.period, &mean, &var);
  for (size_t t = 0; t < n; ++t) {
    if (std::isnan(var[t])) continue;
    const internal::Bands b = internal::BandsOf(mean[t], var[t], x[t], p.nbdevup, p.nbdevdn);
    out.upper[t] = b.upper;
    out.middle[t] = b.middle;
    out.lower[t] = b.lower;
    out.width[t] = b.width;
    out.percent_b[t] = b.percent_b;
  }
  return out;
}

std::vector<double> LogReturn(std::span<const double> x, const LogReturnParams& p) {
  RLT_CHECK(p.lag >= 1);
  std::vector<double> out = NaNs(x.size());
  const size_t lag = static_cast<size_t>(p.lag);
  for (size_t t = lag; t < x.size(); ++t) out[t] = std::log(x[t] / x[t - lag]);
  return out;
}

std::vector<double> TrueRange(std::span<const double> high, std::span<const double> low,
                              std::span<const double> close) {
  RLT_CHECK(high.size() == low.size() && low.size() == close.size());
  std::vector<double> out = NaNs(close.size());
  for (size_t t = 1; t < close.size(); ++t) {
    out[t] = internal::TrueRangeOf(high[t], low[t], close[t - 1]);
  }
  return out;
}

std::vector<double> Atr(std::span<const double> high, std::span<const double> low,
                        std::span<const double> close, const AtrParams& p) {
  RLT_CHECK(p.period >= 1);
  const std::vector<double> tr = TrueRange(high, low, close);
  std::vector<double> out = NaNs(close.size());
  const size_t n = static_cast<size_t>(p.period);
  if (close.size() <= n) return out;
  double atr = 0.0;
  for (size_t t = 1; t <= n; ++t) atr += tr[t];
  atr /= p.period;
  out[n] = atr;
  for (size_t t = n + 1; t < close.size(); ++t) {
    atr = (atr * (p.period - 1) + tr[t]) / p.period;
    out[t] = atr;
  }
  return out;
}

std::vector<double> Natr(std::span<const double> high, std::span<const double> low,
                         std::span<const double> close, const AtrParams& p) {
  std::vector<double> out = Atr(high, low, close, p);
  for (size_t t = 0; t < close.size(); ++t) {
    if (!std::isnan(out[t])) out[t] = close[t] == 0.0 ? 0.0 : 100.0 * out[t] / close[t];
  }
  return out;
}

}  // namespace rlt::features
