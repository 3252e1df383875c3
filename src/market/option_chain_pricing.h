// rltrade market: prices and Greeks of a whole option chain, computed once in batch.
//
// For every contract of every quote date: mid, implied volatility, delta, gamma, vega,
// theta (pricing/pricing.h conventions: vega per 1.00 of sigma, theta per year), by
// Black-Scholes-Merton with rate r and dividend yield q, T = calendar days / 365. r and q
// are per contract: the chain's own rate/dividend (columns of the file) where it has them,
// else ChainPricingOptions::rate/dividend; override_rate/override_dividend make the
// options' values replace the chain's. One call before any stepping; an environment then
// only reads the arrays.
//
// Mid source:
//  - kQuotes: mid = (bid + ask) / 2; the implied vol is solved from the mid
//    (pricing::ImpliedVol, BSM). Where it has none (no quote: a zero bid or ask, see
//    OptionChain::HasQuote; a mid outside the no-arbitrage bounds; an expired contract),
//    the file's implied vol is used if it has one, else the median
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
  kNoQuote = 5,          // a zero bid or ask: no mid (OptionChain::HasQuote)
};
// "mid<=lower-bound", "mid>=upper-bound", "expires-today", "no-iv-in-range", "no-quote"
// ("" for kNone).
const char* IvGapName(IvGap gap);

struct ChainPricingOptions {
  MidSource mid_source = MidSource::kQuotes;
  double rate = 0;      // r, continuously compounded per year, where the chain has none
  double dividend = 0;  // q, continuous yield per year, where the chain has none
  std::string source;   // the file, for messages ("" = the chain's underlying)
  // After `source`, so that {mid_source, rate, dividend, source} still initialises it.
  bool override_rate = false;      // true: `rate` for every contract, the chain's ignored
  bool override_dividend = false;  // true: `dividend` for every contract
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

// ---------------------------------------------------------------------------------------
// Per-quote implied vols and Greeks with the exercise style of each contract (`chain check
// --out`). Unlike PriceChain nothing is filled: a contract whose mid has no implied vol
// gets a reason instead.
//
// Inputs of contract i: S = the underlying price of its quote date, K, T = calendar days /
// 365, r and q as in PriceChain (the chain's columns, else the fallback; override_* makes
// the options' values replace the columns), the style: the chain's (ExerciseStyle) unless
// override_style or unknown, then `style`. mid = (bid + ask) / 2, only when HasQuote(i).
// Model: European contracts by Black-Scholes-Merton (closed-form price and Greeks);
// American ones by Barone-Adesi-Whaley (pricing/american.cc; Greeks by its finite
// differences, pricing::ModelGreeks), or, where BAW's critical price does not converge, by
// the CRR binomial tree with kQuoteTreeSteps steps (tree Greeks). The implied vol is
// pricing::ImpliedVol of that model from the mid, in [1e-6, 10] (European) or [1e-6,
// kQuoteMaxAmericanVol] (American: BAW cannot price some calls at sigma = 10).
enum class QuoteReason : int8_t {
  kOk = 0,
  kNoQuote,          // zero bid or zero ask: no mid
  kNoUnderlying,     // the quote date has no underlying price
  kExpired,          // expires on the quote date (T = 0): no time value to invert
  kBelowLowerBound,  // mid <= the model's lower bound (discounted intrinsic for European,
                     // also the undiscounted intrinsic for American)
  kAboveUpperBound,  // mid >= S e^{-qT} / K e^{-rT} (European), S / K (American)
  kNoVolInRange,     // inside the bounds, but no vol in [1e-6, 10] reproduces it
  kModelFailed,      // the American models could not price it (message in detail)
};
// "", "no-quote", "no-underlying-price", "expires-today", "mid<=lower-bound",
// "mid>=upper-bound", "no-iv-in-range", "model-failed".
const char* QuoteReasonName(QuoteReason reason);

inline constexpr int kQuoteTreeSteps = 500;
inline constexpr double kQuoteMaxAmericanVol = 5;

struct QuoteSolveOptions {
  double rate = 0, dividend = 0;  // where the chain has none (or all, with override_*)
  bool override_rate = false, override_dividend = false;
  ExerciseStyle style = ExerciseStyle::kEuropean;  // where the chain has none
  bool override_style = false;                     // true: `style` for every contract
  std::string source;  // the file, for messages ("" = the chain's underlying)
};

struct QuoteSolution {
  // The inputs used (spot NaN without an underlying price; mid NaN without a quote).
  std::vector<double> spot, rate, dividend, time, mid;
  std::vector<ExerciseStyle> style;              // kEuropean or kAmerican
  std::vector<pricing::Model> model;             // kBsm, kBaroneAdesiWhaley or kBinomial
  std::vector<double> lower_bound, upper_bound;  // the model's bounds of the mid (NaN if none)
  // The outputs: NaN unless reason is kOk. price = the model's value at iv.
  std::vector<double> iv, price, delta, gamma, vega, theta;
  std::vector<QuoteReason> reason;
  std::vector<std::string> detail;  // the model's message for kModelFailed, else ""
  int64_t solved = 0, no_bid = 0, no_ask = 0, no_quote = 0;  // no_quote: no bid or no ask
  int64_t rate_fallback = 0, dividend_fallback = 0, style_fallback = 0;  // rows given the
                                                                         // options' value
};

// Errors: options outside the pricing domain (InvalidArgument); a contract whose inputs
// are outside it (InvalidArgument naming source:line).
Result<QuoteSolution> SolveQuotes(const OptionChain& chain, const QuoteSolveOptions& options);

}  // namespace rlt::market

#endif  // RLT_MARKET_OPTION_CHAIN_PRICING_H_
