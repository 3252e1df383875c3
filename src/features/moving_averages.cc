// rltrade features: moving averages and ratios to them (SMA, EMA, MACD, price relative to
// SMA, volume ratio), fast O(n) versions. Plain-loop references: reference.cc.
#include <cstddef>
#include <utility>
#include <vector>

#include "core/status.h"
#include "features/indicators.h"
#include "features/internal.h"

namespace rlt::features {
namespace internal {

size_t FirstFinite(std::span<const double> x) {
  size_t i = 0;
  while (i < x.size() && !std::isfinite(x[i])) ++i;
  return i;
}

void EmaSeeded(std::span<const double> x, size_t seed_end, int period, double k,
               std::span<double> out) {
  RLT_CHECK(period >= 1 && seed_end + 1 >= static_cast<size_t>(period));
  if (seed_end >= x.size()) return;
  double sum = 0.0;
  for (size_t i = seed_end + 1 - period; i <= seed_end; ++i) sum += x[i];
  double ema = sum / period;
  out[seed_end] = ema;
  for (size_t t = seed_end + 1; t < x.size(); ++t) {
    ema = (x[t] - ema) * k + ema;
    out[t] = ema;
  }
}

std::vector<double> SmaFromFirstFinite(std::span<const double> x, int period) {
  RLT_CHECK(period >= 1);
  std::vector<double> out = NaNs(x.size());
  const size_t s = FirstFinite(x);
  const size_t n = static_cast<size_t>(period);
  if (x.size() < s + n) return out;
  double sum = 0.0;
  for (size_t i = s; i < s + n; ++i) sum += x[i];
  out[s + n - 1] = sum / period;
  for (size_t t = s + n; t < x.size(); ++t) {
    if ((t - s) % n == 0) {  // re-sum the window exactly: no rounding drift on long series
      sum = 0.0;
      for (size_t i = t + 1 - n; i <= t; ++i) sum += x[i];
    } else {
      sum += x[t] - x[t - n];
    }
    out[t] = sum / period;
  }
  return out;
}

}  // namespace internal

using internal::NaNs;

int SmaLookback(const SmaParams& p) { return p.period - 1; }
int EmaLookback(const EmaParams& p) { return p.period - 1; }
int MacdLookback(const MacdParams& p) { return std::max(p.fast, p.slow) - 1 + p.signal - 1; }

std::vector<double> Sma(std::span<const double> x, const SmaParams& p) {
  return internal::SmaFromFirstFinite(x, p.period);
}

std::vector<double> Ema(std::span<const double> x, const EmaParams& p) {
  RLT_CHECK(p.period >= 1);
  std::vector<double> out = NaNs(x.size());
  const size_t s = internal::FirstFinite(x);
  if (x.size() < s + p.period) return out;
  internal::EmaSeeded(x, s + p.period - 1, p.period, 2.0 / (p.period + 1), out);
  return out;
}

// TA-Lib MACD: both EMAs are seeded at the slow EMA's first bar (the fast one with the mean
// of its last `fast` inputs there), the signal EMA is seeded with the mean of the first
// `signal` MACD values, and all three outputs start at MacdLookback.
MacdOutput Macd(std::span<const double> x, const MacdParams& p) {
  RLT_CHECK(p.fast >= 1 && p.slow >= 1 && p.signal >= 1);
  int fast = p.fast, slow = p.slow;
  if (fast > slow) std::swap(fast, slow);
  const size_t n = x.size();
  MacdOutput out{NaNs(n), NaNs(n), NaNs(n)};
  const size_t s = internal::FirstFinite(x);
  const size_t start = s + slow - 1;
  const size_t first = start + p.signal - 1;
  if (first >= n) return out;
  std::vector<double> fast_ema = NaNs(n), slow_ema = NaNs(n), line = NaNs(n);
  internal::EmaSeeded(x, start, fast, 2.0 / (fast + 1), fast_ema);
  internal::EmaSeeded(x, start, slow, 2.0 / (slow + 1), slow_ema);
  for (size_t t = start; t < n; ++t) line[t] = fast_ema[t] - slow_ema[t];
  std::vector<double> signal = NaNs(n);
  internal::EmaSeeded(line, first, p.signal, 2.0 / (p.signal + 1), signal);
  for (size_t t = first; t < n; ++t) {
    out.macd[t] = line[t];
    out.signal[t] = signal[t];
    out.hist[t] = line[t] - signal[t];
  }
  return out;
}

std::vector<double> PriceVsSma(std::span<const double> x, const RatioParams& p) {
  std::vector<double> out = internal::SmaFromFirstFinite(x, p.period);
  for (size_t t = 0; t < x.size(); ++t) {
    if (std::isnan(out[t])) continue;
    out[t] = internal::PriceVsSmaOf(x[t], out[t]);
  }
  return out;
}

std::vector<double> VolumeRatio(std::span<const double> volume, const RatioParams& p) {
  std::vector<double> out = internal::SmaFromFirstFinite(volume, p.period);
  for (size_t t = 0; t < volume.size(); ++t) {
    if (std::isnan(out[t])) continue;
    out[t] = internal::VolumeRatioOf(volume[t], out[t]);
  }
  return out;
}

}  // namespace rlt::features
