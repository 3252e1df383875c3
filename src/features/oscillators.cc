// rltrade features: bounded oscillators (RSI, STOCH, WILLR, CCI), fast versions.
// Plain-loop references: reference.cc.
#include <cmath>
#include <deque>
#include <vector>

#include "core/status.h"
#include "features/indicators.h"
#include "features/internal.h"

namespace rlt::features {
namespace internal {
namespace {

// Rolling extreme over `period` values with a monotonic deque of indices: the front is the
// extreme of the current window. `better(a, b)` is true when a beats b.
template <typename Better>
std::vector<double> RollingExtreme(std::span<const double> x, int period, Better better) {
  RLT_CHECK(period >= 1);
  std::vector<double> out = NaNs(x.size());
  std::deque<size_t> window;
  const size_t n = static_cast<size_t>(period);
  for (size_t t = 0; t < x.size(); ++t) {
    while (!window.empty() && !better(x[window.back()], x[t])) window.pop_back();
    window.push_back(t);
    if (window.front() + n <= t) window.pop_front();
    if (t + 1 >= n) out[t] = x[window.front()];
  }
  return out;
}

}  // namespace

std::vector<double> RollingMax(std::span<const double> x, int period) {
  return RollingExtreme(x, period, [](double a, double b) { return a > b; });
}
std::vector<double> RollingMin(std::span<const double> x, int period) {
  return RollingExtreme(x, period, [](double a, double b) { return a < b; });
}

}  // namespace internal

using internal::NaNs;

int RsiLookback(const RsiParams& p) { return p.period; }
int StochLookback(const StochParams& p) { return p.fastk - 1 + p.slowk - 1 + p.slowd - 1; }
int WillrLookback(const WillrParams& p) { return p.period - 1; }
int CciLookback(const CciParams& p) { return p.period - 1; }

std::vector<double> Rsi(std::span<const double> x, const RsiParams& p) {
  RLT_CHECK(p.period >= 1);
  std::vector<double> out = NaNs(x.size());
  const size_t s = internal::FirstFinite(x);
  const size_t n = static_cast<size_t>(p.period);
  if (x.size() <= s + n) return out;
  using internal::RsiOf;
  double gain = 0.0, loss = 0.0;
  for (size_t t = s + 1; t <= s + n; ++t) {
    const double d = x[t] - x[t - 1];
    (d > 0 ? gain : loss) += std::fabs(d);
  }
  gain /= p.period;
  loss /= p.period;
  out[s + n] = RsiOf(gain, loss);
  for (size_t t = s + n + 1; t < x.size(); ++t) {
    const double d = x[t] - x[t - 1];
    gain = (gain * (p.period - 1) + (d > 0 ? d : 0.0)) / p.period;
    loss = (loss * (p.period - 1) + (d < 0 ? -d : 0.0)) / p.period;
    out[t] = RsiOf(gain, loss);
  }
  return out;
}

StochOutput Stoch(std::span<const double> high, std::span<const double> low,
                  std::span<const double> close, const StochParams& p) {
  RLT_CHECK(high.size() == low.size() && low.size() == close.size());
  RLT_CHECK(p.fastk >= 1 && p.slowk >= 1 && p.slowd >= 1);
  const std::vector<double> hh = internal::RollingMax(high, p.fastk);
  const std::vector<double> ll = internal::RollingMin(low, p.fastk);
  std::vector<double> fastk = NaNs(close.size());
  for (size_t t = p.fastk - 1; t < close.size(); ++t) {
    const double range = hh[t] - ll[t];
    fastk[t] = range == 0.0 ? 0.0 : 100.0 * (close[t] - ll[t]) / range;
  }
  StochOutput out;
  out.slowk = internal::SmaFromFirstFinite(fastk, p.slowk);
  out.slowd = internal::SmaFromFirstFinite(out.slowk, p.slowd);
  // TA-Lib reports both outputs from the combined lookback only.
  const size_t first = std::min<size_t>(StochLookback(p), close.size());
  for (size_t t = 0; t < first; ++t) out.slowk[t] = internal::kNaN;
  return out;
}

std::vector<double> Willr(std::span<const double> high, std::span<const double> low,
                          std::span<const double> close, const WillrParams& p) {
  RLT_CHECK(high.size() == low.size() && low.size() == close.size());
  const std::vector<double> hh = internal::RollingMax(high, p.period);
  const std::vector<double> ll = internal::RollingMin(low, p.period);
  std::vector<double> out = NaNs(close.size());
  for (size_t t = p.period - 1; t < close.size(); ++t) {
    const double range = hh[t] - ll[t];
    out[t] = range == 0.0 ? 0.0 : -100.0 * (hh[t] - close[t]) / range;
  }
  return out;
}

// O(n * period) like TA-Lib: the mean absolute deviation is re-summed for every window.
std::vector<double> Cci(std::span<const double> high, std::span<const double> low,
                        std::span<const double> close, const CciParams& p) {
  RLT_CHECK(high.size() == low.size() && low.size() == close.size());
  std::vector<double> tp(close.size());
  for (size_t t = 0; t < close.size(); ++t) tp[t] = (high[t] + low[t] + close[t]) / 3.0;
  const std::vector<double> mean = internal::SmaFromFirstFinite(tp, p.period);
  std::vector<double> out = NaNs(close.size());
  for (size_t t = p.period - 1; t < close.size(); ++t) {
    double dev = 0.0;
    for (size_t i = t + 1 - p.period; i <= t; ++i) dev += std::fabs(tp[i] - mean[t]);
    dev /= p.period;
    out[t] = internal::IsTaZero(dev) ? 0.0 : (tp[t] - mean[t]) / (0.015 * dev);
  }
  return out;
}

}  // namespace rlt::features
