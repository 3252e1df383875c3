// rltrade features: Wilder's directional movement system (+DI, -DI, DX, ADX, ADXR), fast
// O(n) versions sharing one pass of Wilder sums. Plain-loop references: reference.cc.
// Conventions (TA-Lib ta_PLUS_DI.c / ta_DX.c / ta_ADX.c behaviour, reimplemented):
//   sums of +DM, -DM, TR start as plain sums over bars 1..n-1, then every bar from n on
//   takes a Wilder step s <- s - s/n + x; a DX whose denominators fall in the zero band is
//   "undefined": DX repeats the previous value (0 at the first), ADX skips the bar and its
//   seed (mean of the first n DX) counts undefined DX as 0.
#include <cmath>
#include <vector>

#include "core/status.h"
#include "features/indicators.h"
#include "features/internal.h"

namespace rlt::features {
namespace internal {

DmSums WilderDmSums(std::span<const double> high, std::span<const double> low,
                    std::span<const double> close, int period) {
  RLT_CHECK(high.size() == low.size() && low.size() == close.size());
  RLT_CHECK(period >= 1);
  const size_t size = close.size();
  const size_t n = static_cast<size_t>(period);
  DmSums out{NaNs(size), NaNs(size), NaNs(size)};
  if (size <= n) return out;
  double plus = 0.0, minus = 0.0, tr = 0.0;
  for (size_t t = 1; t < size; ++t) {
    double plus_dm, minus_dm;
    DirectionalMovement(high[t], high[t - 1], low[t], low[t - 1], &plus_dm, &minus_dm);
    const double range = TrueRangeOf(high[t], low[t], close[t - 1]);
    if (t < n) {
      plus += plus_dm;
      minus += minus_dm;
      tr += range;
      continue;
    }
    plus = plus - plus / period + plus_dm;
    minus = minus - minus / period + minus_dm;
    tr = tr - tr / period + range;
    out.plus_dm[t] = plus;
    out.minus_dm[t] = minus;
    out.tr[t] = tr;
  }
  return out;
}

}  // namespace internal

using internal::DxOf;
using internal::NaNs;

namespace {

std::vector<double> Di(const std::vector<double>& dm, const std::vector<double>& tr) {
  std::vector<double> out = NaNs(dm.size());
  for (size_t t = 0; t < dm.size(); ++t) {
    if (std::isnan(tr[t])) continue;
    out[t] = internal::DiOf(dm[t], tr[t]);
  }
  return out;
}

}  // namespace

int DiLookback(const DmiParams& p) { return p.period; }
int AdxLookback(const DmiParams& p) { return 2 * p.period - 1; }
int AdxrLookback(const DmiParams& p) { return 3 * p.period - 2; }

std::vector<double> PlusDi(std::span<const double> high, std::span<const double> low,
                           std::span<const double> close, const DmiParams& p) {
  const internal::DmSums sums = internal::WilderDmSums(high, low, close, p.period);
  return Di(sums.plus_dm, sums.tr);
}

std::vector<double> MinusDi(std::span<const double> high, std::span<const double> low,
                            std::span<const double> close, const DmiParams& p) {
  const internal::DmSums sums = internal::WilderDmSums(high, low, close, p.period);
  return Di(sums.minus_dm, sums.tr);
}

std::vector<double> Dx(std::span<const double> high, std::span<const double> low,
                       std::span<const double> close, const DmiParams& p) {
  const internal::DmSums sums = internal::WilderDmSums(high, low, close, p.period);
  std::vector<double> out = NaNs(close.size());
  double previous = 0.0;
  for (size_t t = p.period; t < close.size(); ++t) {
    double dx;
    if (DxOf(sums.plus_dm[t], sums.minus_dm[t], sums.tr[t], &dx)) previous = dx;
    out[t] = previous;
  }
  return out;
}

std::vector<double> Adx(std::span<const double> high, std::span<const double> low,
                        std::span<const double> close, const DmiParams& p) {
  const internal::DmSums sums = internal::WilderDmSums(high, low, close, p.period);
  std::vector<double> out = NaNs(close.size());
  const size_t first = static_cast<size_t>(AdxLookback(p));
  if (close.size() <= first) return out;
  double adx = 0.0;
  for (size_t t = p.period; t <= first; ++t) {
    double dx;
    if (DxOf(sums.plus_dm[t], sums.minus_dm[t], sums.tr[t], &dx)) adx += dx;
  }
  adx /= p.period;
  out[first] = adx;
  for (size_t t = first + 1; t < close.size(); ++t) {
    double dx;
    if (DxOf(sums.plus_dm[t], sums.minus_dm[t], sums.tr[t], &dx)) {
      adx = (adx * (p.period - 1) + dx) / p.period;
    }
    out[t] = adx;
  }
  return out;
}

std::vector<double> Adxr(std::span<const double> high, std::span<const double> low,
                         std::span<const double> close, const DmiParams& p) {
  const std::vector<double> adx = Adx(high, low, close, p);
  std::vector<double> out = NaNs(close.size());
  for (size_t t = AdxrLookback(p); t < close.size(); ++t) {
    out[t] = (adx[t] + adx[t - (p.period - 1)]) / 2.0;
  }
  return out;
}

}  // namespace rlt::features
