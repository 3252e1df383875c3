// rltrade features: building blocks shared by the fast indicator kernels. Not part of the
// public API (do not include outside src/features/).
#ifndef RLT_FEATURES_INTERNAL_H_
#define RLT_FEATURES_INTERNAL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "market/bars.h"

namespace rlt::features::internal {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The precondition of every batch feature computation (presets, the signal library): OHLCV
// columns of one length, sessions assigned. InvalidArgument naming the symbol otherwise.
inline Status CheckBars(const market::Bars& b) {
  const size_t n = b.size();
  if (b.open.size() != n || b.high.size() != n || b.low.size() != n || b.close.size() != n ||
      b.volume.size() != n) {
    return Status::InvalidArgument("bars of symbol '" + b.symbol +
                                   "' have OHLCV columns of unequal length");
  }
  if (b.bar_in_session.size() != n) {
    return Status::InvalidArgument("bars of symbol '" + b.symbol +
                                   "' have no sessions assigned: call market::AssignSessions()");
  }
  return Status::Ok();
}
// TA-Lib's TA_IS_ZERO band (ta_utility.h, TA-Lib 0.4/0.6).
inline constexpr double kTaZero = 1e-8;
inline bool IsTaZero(double v) { return -kTaZero < v && v < kTaZero; }

// Index of the first finite element (x.size() when none).
size_t FirstFinite(std::span<const double> x);

inline std::vector<double> NaNs(size_t n) { return std::vector<double>(n, kNaN); }

// Wilder's true range of a bar given the previous close.
inline double TrueRangeOf(double high, double low, double prev_close) {
  double range = high - low;
  range = std::max(range, std::fabs(high - prev_close));
  return std::max(range, std::fabs(low - prev_close));
}

// Directional movement between bar t-1 and t (Wilder, TA-Lib tie rules): up = h - h_prev,
// down = l_prev - l; +DM = up when up > 0 and up > down; -DM = down when down > 0 and
// down > up; otherwise 0.
inline void DirectionalMovement(double high, double prev_high, double low, double prev_low,
                                double* plus_dm, double* minus_dm) {
  const double up = high - prev_high;
  const double down = prev_low - low;
  *plus_dm = 0.0;
  *minus_dm = 0.0;
  if (down > 0 && up < down) {
    *minus_dm = down;
  } else if (up > 0 && up > down) {
    *plus_dm = up;
  }
}

// Formulas shared by the batch kernels and the streaming ones (incremental.h), so that
// both evaluate exactly the same expression.

// Wilder RSI from average gain and loss; 0 when their sum is in the zero band (TA-Lib).
inline double RsiOf(double gain, double loss) {
  return IsTaZero(gain + loss) ? 0.0 : 100.0 * gain / (gain + loss);
}

// TA-Lib: a variance below its zero band (TA_IS_ZERO_OR_NEG) gives a stddev of 0.
inline double TaStddev(double variance) { return variance < kTaZero ? 0.0 : std::sqrt(variance); }

// DI from a Wilder DM sum and TR sum; 0 when the TR sum is in the zero band.
inline double DiOf(double dm, double tr) { return IsTaZero(tr) ? 0.0 : 100.0 * (dm / tr); }

// DX from Wilder sums; false when it is undefined (a denominator in the zero band).
inline bool DxOf(double plus_dm, double minus_dm, double tr, double* dx) {
  if (IsTaZero(tr)) return false;
  const double minus_di = 100.0 * (minus_dm / tr);
  const double plus_di = 100.0 * (plus_dm / tr);
  const double sum = minus_di + plus_di;
  if (IsTaZero(sum)) return false;
  *dx = 100.0 * (std::fabs(minus_di - plus_di) / sum);
  return true;
}

// Price relative to its SMA (PriceVsSma); 0 when the SMA is 0.
inline double PriceVsSmaOf(double x, double sma) { return sma == 0.0 ? 0.0 : x / sma - 1.0; }
// Volume relative to its SMA (VolumeRatio); 1 when the SMA is 0.
inline double VolumeRatioOf(double volume, double sma) { return sma == 0.0 ? 1.0 : volume / sma; }

// Bollinger bands of x from the window's mean and population variance (Bbands).
struct Bands {
  double upper, middle, lower, width, percent_b;
};
inline Bands BandsOf(double mean, double var, double x, double nbdevup, double nbdevdn) {
  const double sd = TaStddev(var);
  const double upper = mean + nbdevup * sd;
  const double lower = mean - nbdevdn * sd;
  return {upper, mean, lower, mean == 0.0 ? 0.0 : (upper - lower) / mean,
          upper == lower ? 0.5 : (x - lower) / (upper - lower)};
}

// EMA with smoothing k, seeded at index `seed_end` with the mean of
// x[seed_end - period + 1 .. seed_end], then e_t = e_{t-1} + k (x_t - e_{t-1}) to the end.
// Writes out[seed_end..]; leaves other entries untouched. REQUIRES: seed_end + 1 >= period.
void EmaSeeded(std::span<const double> x, size_t seed_end, int period, double k,
               std::span<double> out);

// Rolling mean and population variance over `period` values, x[s..] only (s = first
// finite). Sliding Welford updates, re-summed exactly every `period` steps so rounding
// never accumulates. Writes mean/var at t >= s + period - 1; NaN elsewhere.
void RollingMeanVar(std::span<const double> x, int period, std::vector<double>* mean,
                    std::vector<double>* var);

// Rolling maximum / minimum over `period` values ending at t (monotonic deques, O(n)).
// Defined from t = period - 1 on.
std::vector<double> RollingMax(std::span<const double> x, int period);
std::vector<double> RollingMin(std::span<const double> x, int period);

// SMA of x starting at its first finite value (NaN prefix skipped).
std::vector<double> SmaFromFirstFinite(std::span<const double> x, int period);

// Wilder-smoothed directional sums for DI/DX at every t >= period (TA-Lib seeding).
struct DmSums {
  std::vector<double> plus_dm, minus_dm, tr;  // NaN before `period`
};
DmSums WilderDmSums(std::span<const double> high, std::span<const double> low,
                    std::span<const double> close, int period);

}  // namespace rlt::features::internal

#endif  // RLT_FEATURES_INTERNAL_H_
