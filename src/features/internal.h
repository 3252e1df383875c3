// rltrade features: building blocks shared by the fast indicator kernels. Not part of the
// public API (do not include outside src/features/).
#ifndef RLT_FEATURES_INTERNAL_H_
#define RLT_FEATURES_INTERNAL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace rlt::features::internal {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
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
