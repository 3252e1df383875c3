// rltrade features: plain-loop reference implementations of every indicator.
//
// Same signatures and conventions as indicators.h, written for obviousness, not speed:
// every output is recomputed from scratch from its definition (window sums re-added,
// exponential/Wilder averages evaluated as closed-form weighted sums
// e_t = (1-a)^(t-t0) seed + sum_j a (1-a)^(t-j) x_j instead of the recursion). Most are
// O(n * period) or O(n^2): use them in tests on a few hundred bars, never in production.
// indicators_test.cc checks the fast versions against these and both against TA-Lib's
// published values.
#ifndef RLT_FEATURES_REFERENCE_H_
#define RLT_FEATURES_REFERENCE_H_

#include <span>
#include <vector>

#include "features/indicators.h"

namespace rlt::features::reference {

using Series = std::span<const double>;

std::vector<double> Sma(Series x, const SmaParams& p);
std::vector<double> Ema(Series x, const EmaParams& p);
MacdOutput Macd(Series x, const MacdParams& p);
std::vector<double> Rsi(Series x, const RsiParams& p);
std::vector<double> Stddev(Series x, const StddevParams& p);
BbandsOutput Bbands(Series x, const BbandsParams& p);
std::vector<double> LogReturn(Series x, const LogReturnParams& p);
std::vector<double> PriceVsSma(Series x, const RatioParams& p);
std::vector<double> VolumeRatio(Series volume, const RatioParams& p);
std::vector<double> TrueRange(Series high, Series low, Series close);
std::vector<double> Atr(Series high, Series low, Series close, const AtrParams& p);
std::vector<double> Natr(Series high, Series low, Series close, const AtrParams& p);
StochOutput Stoch(Series high, Series low, Series close, const StochParams& p);
std::vector<double> Willr(Series high, Series low, Series close, const WillrParams& p);
std::vector<double> Cci(Series high, Series low, Series close, const CciParams& p);
std::vector<double> PlusDi(Series high, Series low, Series close, const DmiParams& p);
std::vector<double> MinusDi(Series high, Series low, Series close, const DmiParams& p);
std::vector<double> Dx(Series high, Series low, Series close, const DmiParams& p);
std::vector<double> Adx(Series high, Series low, Series close, const DmiParams& p);
std::vector<double> Adxr(Series high, Series low, Series close, const DmiParams& p);

}  // namespace rlt::features::reference

#endif  // RLT_FEATURES_REFERENCE_H_
