// rltrade market: prices and Greeks of a whole option chain, computed once in batch.
//
// For every contract of every quote date: mid, implied volatility, delta, gamma, vega,
// theta (pricing/pricing.h conventions: vega per 1.00 of sigma, theta per year), by
// Black-Scholes-Merton with flat rate r and dividend yield q, T = calendar days / 365.
// One call before any stepping; an environment then only reads the arrays.
//
// Mid source:
//  - kQuotes: mid = (bid + ask) / 2; the implied vol is solved from the mid
//    (pricing::ImpliedVol, BSM). Where it has none (a mid outside the no-arbitrage bounds,
//    an expired contract), the file's implied vol is used if it has one, else the median
//    solved vol of the same day and expiry, else the day's median; iv_source says which
//    and iv_gap why (stale quotes below the discounted intrinsic value are common in real
//    chains: they are kept, and callers are expected to report them, as `chain check` does).
//  - kModel: the contract's implied_vol column is the model vol (synthetic chains);
//    mid = the BSM value at that vol.
// Greeks are then BsmGreeksBatch at the chosen vol. An expired contract (T = 0) has its
// intrinsic value and the documented limit Greeks. Every output is finite.
#ifndef RLT_MARKET_OPTION_CHAIN_PRICING_H_
#define RLT_MARKET_OPTION_CHAIN_PRICING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "market/option_chain.h"

namespace rlt::market {

enum class MidSource { kQuotes, kModel };
enum class IvSource : int8_t { kSolved = 0, kFile = 1, kFilled = 2, kModel = 3 };
// Why a quote's mid has no implied vol (kQuotes only; kNone when it was solved).
enum class IvGap : int8_t {
  kNone = 0,
  kBelowLowerBound = 1,  // mid <= max(phi (S e^{-qT} - K e^{-rT}), 0): below the discounted
                         // intrinsic value (or at it: no vol reproduces it)
  kAboveUpperBound = 2,  // mid >= S e^{-qT} (call) or K e^{-rT} (put)
  kExpired = 3,          // expires on the quote date (T = 0): no time value to invert
  kNoVolInRange = 4,     // inside the bounds, but no vol in [1e-6, 10] reproduces it
};
// "mid<=lower-bound", "mid>=upper-bound", "expires-today", "no-iv-in-range" ("" for kNone).
const char* IvGapName(IvGap gap);

struct ChainPricingOptions {
  MidSource mid_source = MidSource::kQuotes;
  double rate = 0;      // r, continuously compounded per year
  double dividend = 0;  // q, continuous yield per year
  std::string source;   // the file, for messages ("" = the chain's underlying)
};

struct ChainPricing {
  std::vector<double> time;                                       // T in years
  std::vector<double> mid, iv, price, delta, gamma, vega, theta;  // price = BSM at iv
  std::vector<double> lower_bound, upper_bound;  // no-arbitrage bounds of the mid (kQuotes)
  std::vector<IvSource> iv_source;
  std::vector<IvGap> iv_gap;
  int64_t solved = 0, from_file = 0, filled = 0;  // counts by iv source
};

// REQUIRES nothing of the chain beyond its invariants. Errors: a quote date without an
// underlying price (InvalidArgument naming the date), a day where no vol can be found for
// some contract (DataError), a contract outside the pricing domain (InvalidArgument
// naming source:line and the field, as pricing::ValidateInputs does).
Result<ChainPricing> PriceChain(const OptionChain& chain, const ChainPricingOptions& options);

}  // namespace rlt::market

#endif  // RLT_MARKET_OPTION_CHAIN_PRICING_H_
