// rltrade market: the limits of every number a bar or an order carries — one definition
// for every way bars and orders enter or leave rltrade: bar files (csv.h), the stdin and
// tcp feeds of `rltrade paper`, the broker protocol in both directions
// (paper/protocol.h) and `rltrade exchange-sim`.
//
// Prices lie in [kMinBarPrice, kMaxBarPrice]:
//  - the ceiling, 1e12, is above any real market's price and keeps the features' squares
//    and products of prices and volumes finite;
//  - the floor, 1e-8, is the finest price increment venues quote (eight decimal places:
//    a satoshi, the tick of the finest crypto pairs); venues quote assets worth less per
//    1,000 or per million units ("1000SHIB") rather than below it, and rescaled prices
//    pass. Below it a price is a unit or data error, and its reciprocal and squares leave
//    the range the features are computed in (1e-300 squared is 0).
// Volumes lie in [0, kMaxBarVolume]. Order quantities lie in [kMinOrderQuantity,
// kMaxOrderQuantity] (the same eight decimal places, and more units than any asset has
// outstanding), so a fill's value is at most 1e24. Account amounts (cash, fees, position
// quantities) stay within ±kMaxAccountAmount, a million maximal fills: a fill that would
// take an account beyond it is refused, so nothing a broker sends or a simulator
// computes overflows to infinity. Integers on the wire (seqs, counts) stay at most
// kMaxWireInteger, and epochs within years 1970..9999 (ISO-8601's four-digit years).
// Thread safety: constants and pure functions.
#ifndef RLT_MARKET_LIMITS_H_
#define RLT_MARKET_LIMITS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace rlt::market {

inline constexpr double kMinBarPrice = 1e-8;
inline constexpr double kMaxBarPrice = 1e12;
inline constexpr double kMaxBarVolume = 1e18;
// Relative slack of the OHLC rules (high >= max(open, close), low <= min(open, close)):
// adjusted prices written by float arithmetic differ by ~1e-16 where they should be equal.
inline constexpr double kOhlcTolerance = 1e-9;

inline constexpr double kMinOrderQuantity = 1e-8;
inline constexpr double kMaxOrderQuantity = 1e12;
inline constexpr double kMaxAccountAmount = 1e30;

// 2^53 - 1: the largest integer every JSON reader holds exactly (RFC 7493, I-JSON).
inline constexpr int64_t kMaxWireInteger = (int64_t{1} << 53) - 1;
// 9999-12-31T23:59:59Z.
inline constexpr int64_t kMaxEpochSeconds = 253402300799;

inline bool PriceInRange(double p) {
  return std::isfinite(p) && p >= kMinBarPrice && p <= kMaxBarPrice;
}
inline bool VolumeInRange(double v) { return std::isfinite(v) && v >= 0 && v <= kMaxBarVolume; }
inline bool QuantityInRange(double q) {
  return std::isfinite(q) && q >= kMinOrderQuantity && q <= kMaxOrderQuantity;
}
inline bool AmountInRange(double x) {
  return std::isfinite(x) && std::fabs(x) <= kMaxAccountAmount;
}

// The rules above as text for messages: "a price in [1e-08, 1e+12]".
inline std::string PriceRangeText() { return "a price in [1e-08, 1e+12]"; }
inline std::string VolumeRangeText() { return "a volume in [0, 1e+18]"; }
inline std::string QuantityRangeText() { return "a quantity in [1e-08, 1e+12]"; }
inline std::string AmountRangeText() { return "a finite amount within +-1e+30"; }

// The first rule a bar's values break, as {field, what is wrong}, or {nullptr, ""} when
// they keep every rule: each price in range, volume in range, high >= max(open, close),
// low <= min(open, close) (within kOhlcTolerance).
struct BarValueProblem {
  const char* field = nullptr;
  std::string what;
};
inline BarValueProblem CheckBarValues(double open, double high, double low, double close,
                                      double volume) {
  const char* names[] = {"open", "high", "low", "close"};
  const double prices[] = {open, high, low, close};
  for (int i = 0; i < 4; ++i) {
    if (!PriceInRange(prices[i])) return {names[i], "must be " + PriceRangeText()};
  }
  if (!VolumeInRange(volume)) return {"volume", "must be " + VolumeRangeText()};
  if (high < std::max(open, close) * (1 - kOhlcTolerance)) {
    return {"high", "must be >= open and close"};
  }
  if (low > std::min(open, close) * (1 + kOhlcTolerance)) {
    return {"low", "must be <= open and close"};
  }
  return {};
}

}  // namespace rlt::market

#endif  // RLT_MARKET_LIMITS_H_
