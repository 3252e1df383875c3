// rltrade features: plain-loop reference indicators (see reference.h). Deliberately shares
// no code with the fast kernels (indicators.h) so that the two can check each other.
#include "features/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/status.h"

namespace rlt::features::reference {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
bool IsTaZero(double v) { return -1e-8 < v && v < 1e-8; }  // TA-Lib TA_IS_ZERO

std::vector<double> NaNs(size_t n) { return std::vector<double>(n, kNaN); }

size_t FirstFinite(Series x) {
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isfinite(x[i])) return i;
  }
  return x.size();
}

double Mean(Series x, size_t begin, size_t end) {
  double sum = 0.0;
  for (size_t i = begin; i < end; ++i) sum += x[i];
  return sum / static_cast<double>(end - begin);
}

double PopVariance(Series x, size_t begin, size_t end) {
  const double mean = Mean(x, begin, end);
  double ss = 0.0;
  for (size_t i = begin; i < end; ++i) ss += (x[i] - mean) * (x[i] - mean);
  return ss / static_cast<double>(end - begin);
}

double TaStddev(double variance) { return variance < 1e-8 ? 0.0 : std::sqrt(variance); }

// Closed form of s_t = decay * s_{t-1} + gain * x_t with s_{t0} = seed.
double ExpAt(Series x, size_t t0, double seed, double decay, double gain, size_t t) {
  double value = std::pow(decay, static_cast<double>(t - t0)) * seed;
  for (size_t j = t0 + 1; j <= t; ++j) {
    value += gain * std::pow(decay, static_cast<double>(t - j)) * x[j];
  }
  return value;
}

// Exponential moving average with smoothing k seeded at seed_end by the mean of the
// `period` inputs ending there; NaN before seed_end.
std::vector<double> SeededEma(Series x, size_t seed_end, int period, double k) {
  std::vector<double> out = NaNs(x.size());
  if (seed_end >= x.size()) return out;
  const double seed = Mean(x, seed_end + 1 - period, seed_end + 1);
  for (size_t t = seed_end; t < x.size(); ++t) out[t] = ExpAt(x, seed_end, seed, 1 - k, k, t);
  return out;
}

double TrueRangeAt(Series high, Series low, Series close, size_t t) {
  return std::max(
      {high[t] - low[t], std::fabs(high[t] - close[t - 1]), std::fabs(low[t] - close[t - 1])});
}

}  // namespace

std::vector<double> Sma(Series x, const SmaParams& p) {
  std::vector<double> out = NaNs(x.size());
  const size_t s = FirstFinite(x);
  for (size_t t = s + p.period - 1; t < x.size(); ++t) out[t] = Mean(x, t + 1 - p.period, t + 1);
  return out;
}

std::vector<double> Ema(Series x, const EmaParams& p) {
  return SeededEma(x, FirstFinite(x) + p.period - 1, p.period, 2.0 / (p.period + 1));
}

MacdOutput Macd(Series x, const MacdParams& p) {
  const int fast = std::min(p.fast, p.slow), slow = std::max(p.fast, p.slow);
  const size_t n = x.size();
  MacdOutput out{NaNs(n), NaNs(n), NaNs(n)};
  const size_t start = FirstFinite(x) + slow - 1;  // both EMAs are seeded here
  const size_t first = start + p.signal - 1;
  if (first >= n) return out;
  const std::vector<double> fast_ema = SeededEma(x, start, fast, 2.0 / (fast + 1));
  const std::vector<double> slow_ema = SeededEma(x, start, slow, 2.0 / (slow + 1));
  std::vector<double> line = NaNs(n);
  for (size_t t = start; t < n; ++t) line[t] = fast_ema[t] - slow_ema[t];
  const std::vector<double> signal = SeededEma(line, first, p.signal, 2.0 / (p.signal + 1));
  for (size_t t = first; t < n; ++t) {
    out.macd[t] = line[t];
    out.signal[t] = signal[t];
    out.hist[t] = line[t] - signal[t];
  }
  return out;
}

std::vector<double> Rsi(Series x, const RsiParams& p) {
  std::vector<double> out = NaNs(x.size());
  const size_t s = FirstFinite(x), n = p.period;
  if (x.size() <= s + n) return out;
  std::vector<double> gains(x.size(), 0.0), losses(x.size(), 0.0);
  for (size_t t = s + 1; t < x.size(); ++t) {
    gains[t] = std::max(x[t] - x[t - 1], 0.0);
    losses[t] = std::max(x[t - 1] - x[t], 0.0);
  }
  const double gain_seed = Mean(gains, s + 1, s + n + 1);
  const double loss_seed = Mean(losses, s + 1, s + n + 1);
  const double a = 1.0 / p.period;
  for (size_t t = s + n; t < x.size(); ++t) {
    const double gain = ExpAt(gains, s + n, gain_seed, 1 - a, a, t);
    const double loss = ExpAt(losses, s + n, loss_seed, 1 - a, a, t);
    out[t] = IsTaZero(gain + loss) ? 0.0 : 100.0 * gain / (gain + loss);
  }
  return out;
}

std::vector<double> Stddev(Series x, const StddevParams& p) {
  std::vector<double> out = NaNs(x.size());
  for (size_t t = FirstFinite(x) + p.period - 1; t < x.size(); ++t) {
    out[t] = TaStddev(PopVariance(x, t + 1 - p.period, t + 1)) * p.nbdev;
  }
  return out;
}

BbandsOutput Bbands(Series x, const BbandsParams& p) {
  const size_t n = x.size();
  BbandsOutput out{NaNs(n), NaNs(n), NaNs(n), NaNs(n), NaNs(n)};
  for (size_t t = FirstFinite(x) + p.period - 1; t < n; ++t) {
    const double mean = Mean(x, t + 1 - p.period, t + 1);
    const double sd = TaStddev(PopVariance(x, t + 1 - p.period, t + 1));
    out.middle[t] = mean;
    out.upper[t] = mean + p.nbdevup * sd;
    out.lower[t] = mean - p.nbdevdn * sd;
    const double band = out.upper[t] - out.lower[t];
    out.width[t] = mean == 0.0 ? 0.0 : band / mean;
    out.percent_b[t] = band == 0.0 ? 0.5 : (x[t] - out.lower[t]) / band;
  }
  return out;
}

std::vector<double> LogReturn(Series x, const LogReturnParams& p) {
  std::vector<double> out = NaNs(x.size());
  for (size_t t = p.lag; t < x.size(); ++t) out[t] = std::log(x[t]) - std::log(x[t - p.lag]);
  return out;
}

std::vector<double> PriceVsSma(Series x, const RatioParams& p) {
  std::vector<double> out = reference::Sma(x, SmaParams{p.period});
  for (size_t t = 0; t < x.size(); ++t) {
    if (!std::isnan(out[t])) out[t] = out[t] == 0.0 ? 0.0 : (x[t] - out[t]) / out[t];
  }
  return out;
}

std::vector<double> VolumeRatio(Series volume, const RatioParams& p) {
  std::vector<double> out = reference::Sma(volume, SmaParams{p.period});
  for (size_t t = 0; t < volume.size(); ++t) {
    if (!std::isnan(out[t])) out[t] = out[t] == 0.0 ? 1.0 : volume[t] / out[t];
  }
  return out;
}

std::vector<double> TrueRange(Series high, Series low, Series close) {
  std::vector<double> out = NaNs(close.size());
  for (size_t t = 1; t < close.size(); ++t) out[t] = TrueRangeAt(high, low, close, t);
  return out;
}

std::vector<double> Atr(Series high, Series low, Series close, const AtrParams& p) {
  std::vector<double> out = NaNs(close.size());
  const size_t n = p.period;
  if (close.size() <= n) return out;
  const std::vector<double> tr = TrueRange(high, low, close);
  const double seed = Mean(tr, 1, n + 1);
  const double a = 1.0 / p.period;
  for (size_t t = n; t < close.size(); ++t) out[t] = ExpAt(tr, n, seed, 1 - a, a, t);
  return out;
}

std::vector<double> Natr(Series high, Series low, Series close, const AtrParams& p) {
  std::vector<double> out = reference::Atr(high, low, close, p);
  for (size_t t = 0; t < close.size(); ++t) {
    if (!std::isnan(out[t])) out[t] = close[t] == 0.0 ? 0.0 : out[t] / close[t] * 100.0;
  }
  return out;
}

namespace {

double WindowMax(Series x, size_t begin, size_t end) {
  double m = x[begin];
  for (size_t i = begin; i < end; ++i) m = std::max(m, x[i]);
  return m;
}
double WindowMin(Series x, size_t begin, size_t end) {
  double m = x[begin];
  for (size_t i = begin; i < end; ++i) m = std::min(m, x[i]);
  return m;
}

// Raw fast %K at bar t (REQUIRES: t + 1 >= period).
double FastK(Series high, Series low, Series close, int period, size_t t) {
  const double hh = WindowMax(high, t + 1 - period, t + 1);
  const double ll = WindowMin(low, t + 1 - period, t + 1);
  return hh == ll ? 0.0 : 100.0 * (close[t] - ll) / (hh - ll);
}

double SlowK(Series high, Series low, Series close, const StochParams& p, size_t t) {
  double sum = 0.0;
  for (size_t j = t + 1 - p.slowk; j <= t; ++j) sum += FastK(high, low, close, p.fastk, j);
  return sum / p.slowk;
}

}  // namespace

StochOutput Stoch(Series high, Series low, Series close, const StochParams& p) {
  StochOutput out{NaNs(close.size()), NaNs(close.size())};
  for (size_t t = StochLookback(p); t < close.size(); ++t) {
    out.slowk[t] = SlowK(high, low, close, p, t);
    double sum = 0.0;
    for (size_t j = t + 1 - p.slowd; j <= t; ++j) sum += SlowK(high, low, close, p, j);
    out.slowd[t] = sum / p.slowd;
  }
  return out;
}

std::vector<double> Willr(Series high, Series low, Series close, const WillrParams& p) {
  std::vector<double> out = NaNs(close.size());
  for (size_t t = p.period - 1; t < close.size(); ++t) {
    const double hh = WindowMax(high, t + 1 - p.period, t + 1);
    const double ll = WindowMin(low, t + 1 - p.period, t + 1);
    out[t] = hh == ll ? 0.0 : -100.0 * (hh - close[t]) / (hh - ll);
  }
  return out;
}

std::vector<double> Cci(Series high, Series low, Series close, const CciParams& p) {
  std::vector<double> out = NaNs(close.size());
  auto typical = [&](size_t i) { return (high[i] + low[i] + close[i]) / 3.0; };
  for (size_t t = p.period - 1; t < close.size(); ++t) {
    double mean = 0.0;
    for (size_t i = t + 1 - p.period; i <= t; ++i) mean += typical(i);
    mean /= p.period;
    double deviation = 0.0;
    for (size_t i = t + 1 - p.period; i <= t; ++i) deviation += std::fabs(typical(i) - mean);
    deviation /= p.period;
    out[t] = IsTaZero(deviation) ? 0.0 : (typical(t) - mean) / (0.015 * deviation);
  }
  return out;
}

namespace {

// Wilder sums of +DM, -DM and TR at every t >= period, as closed-form weighted sums.
struct Sums {
  std::vector<double> plus, minus, tr;
};
Sums DirectionalSums(Series high, Series low, Series close, int period) {
  const size_t size = close.size(), n = period;
  std::vector<double> plus(size, 0.0), minus(size, 0.0), tr(size, 0.0);
  for (size_t t = 1; t < size; ++t) {
    const double up = high[t] - high[t - 1], down = low[t - 1] - low[t];
    plus[t] = (up > down && up > 0) ? up : 0.0;
    minus[t] = (down > up && down > 0) ? down : 0.0;
    tr[t] = TrueRangeAt(high, low, close, t);
  }
  Sums out{NaNs(size), NaNs(size), NaNs(size)};
  if (size <= n) return out;
  double plus0 = 0.0, minus0 = 0.0, tr0 = 0.0;  // plain sums over bars 1..n-1
  for (size_t t = 1; t < n; ++t) {
    plus0 += plus[t];
    minus0 += minus[t];
    tr0 += tr[t];
  }
  const double decay = 1.0 - 1.0 / period;
  for (size_t t = n; t < size; ++t) {
    out.plus[t] = ExpAt(plus, n - 1, plus0, decay, 1.0, t);
    out.minus[t] = ExpAt(minus, n - 1, minus0, decay, 1.0, t);
    out.tr[t] = ExpAt(tr, n - 1, tr0, decay, 1.0, t);
  }
  return out;
}

// DX at t with its definedness (TA-Lib zero band on both denominators).
std::pair<bool, double> DxAt(const Sums& s, size_t t) {
  if (IsTaZero(s.tr[t])) return {false, 0.0};
  const double plus_di = 100.0 * s.plus[t] / s.tr[t];
  const double minus_di = 100.0 * s.minus[t] / s.tr[t];
  if (IsTaZero(plus_di + minus_di)) return {false, 0.0};
  return {true, 100.0 * std::fabs(plus_di - minus_di) / (plus_di + minus_di)};
}

std::vector<double> DiFrom(const std::vector<double>& dm, const std::vector<double>& tr) {
  std::vector<double> out = NaNs(dm.size());
  for (size_t t = 0; t < dm.size(); ++t) {
    if (!std::isnan(tr[t])) out[t] = IsTaZero(tr[t]) ? 0.0 : 100.0 * dm[t] / tr[t];
  }
  return out;
}

}  // namespace

std::vector<double> PlusDi(Series high, Series low, Series close, const DmiParams& p) {
  const Sums s = DirectionalSums(high, low, close, p.period);
  return DiFrom(s.plus, s.tr);
}

std::vector<double> MinusDi(Series high, Series low, Series close, const DmiParams& p) {
  const Sums s = DirectionalSums(high, low, close, p.period);
  return DiFrom(s.minus, s.tr);
}

std::vector<double> Dx(Series high, Series low, Series close, const DmiParams& p) {
  const Sums s = DirectionalSums(high, low, close, p.period);
  std::vector<double> out = NaNs(close.size());
  for (size_t t = p.period; t < close.size(); ++t) {
    // The latest defined DX at or before t (0 when none since the first output).
    out[t] = 0.0;
    for (size_t j = t + 1; j-- > static_cast<size_t>(p.period);) {
      const auto [defined, dx] = DxAt(s, j);
      if (defined) {
        out[t] = dx;
        break;
      }
    }
  }
  return out;
}

std::vector<double> Adx(Series high, Series low, Series close, const DmiParams& p) {
  const Sums s = DirectionalSums(high, low, close, p.period);
  std::vector<double> out = NaNs(close.size());
  const size_t first = 2 * p.period - 1;
  for (size_t t = first; t < close.size(); ++t) {
    double adx = 0.0;  // recomputed from scratch for every t
    for (size_t j = p.period; j <= first; ++j) adx += DxAt(s, j).second;
    adx /= p.period;
    for (size_t j = first + 1; j <= t; ++j) {
      const auto [defined, dx] = DxAt(s, j);
      if (defined) adx = (adx * (p.period - 1) + dx) / p.period;
    }
    out[t] = adx;
  }
  return out;
}

std::vector<double> Adxr(Series high, Series low, Series close, const DmiParams& p) {
  const std::vector<double> adx = reference::Adx(high, low, close, p);
  std::vector<double> out = NaNs(close.size());
  for (size_t t = 3 * p.period - 2; t < close.size(); ++t) {
    out[t] = 0.5 * (adx[t] + adx[t + 1 - p.period]);
  }
  return out;
}

}  // namespace rlt::features::reference
