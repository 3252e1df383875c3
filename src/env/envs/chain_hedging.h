// rltrade env: delta hedging of listed option contracts along their real quoted lives —
// the engine of `rltrade hedge --chain FILE --contract ID|all`.
//
// Where DeltaHedgingEnv (delta_hedging.h) simulates paths of a model, this replays an
// end-of-day option chain (market/option_chain.h): one contract, its quotes and the
// underlying's price on every quote date of the file, from the contract's first quote to
// its expiry. It is a plain function over the chain; the hedging environment's chain mode
// (chain_hedging_env.h) replays the same lives step by step with the same rules
// (ChainDayVol, ChainDelta below), so its Black-Scholes delta walk reproduces this P&L.
//
// Conventions (docs/pricing.md, "Hedging listed contracts"):
//  - A row has a quote when bid > 0 and ask > 0 (a zero bid or ask is "no quote").
//  - Start: the first quote date with a quote for the contract, before its expiry. One
//    contract is sold at that day's mid (bid + ask) / 2, the premium; half the spread is
//    reported apart (half_spread0), so the hedging error measures the hedge, not the spread.
//  - Rebalancing: at every quote date of the file from the start to the day before expiry
//    (the hedge days), the hedge is set to the Black-Scholes delta (call N(d1), put
//    N(d1) - 1; dividend yield 0) at that day's underlying price, T = calendar days to
//    expiry / 365, rate `rate`, and the day's implied vol: the row's own implied vol when
//    the file has one (finite and > 0) and the day has a quote, else the vol implied from
//    the mid (pricing::ImpliedVol, BSM), else the last vol known for the contract (a day
//    without a quote, or a mid outside the no-arbitrage bounds). Before any vol is known the
//    delta is the zero-vol limit: phi when phi (S - K e^{-rT}) > 0, else 0.
//  - Cash (premium in, shares bought out) earns or pays `rate`, continuously compounded
//    over calendar days / 365. Every trade of the underlying, including the final sale,
//    pays cost x |shares traded| x S.
//  - Expiry: the expiry date must be a quote date of the file; the option is cash-settled
//    at its intrinsic value at that day's underlying price (the close) and the hedge is
//    sold at that price.
//  - The hedging error is the final P&L at expiry: premium compounded + hedge trades +
//    interest - costs - payoff (positive = the seller kept money), also as a fraction of
//    the premium.
#ifndef RLT_ENV_ENVS_CHAIN_HEDGING_H_
#define RLT_ENV_ENVS_CHAIN_HEDGING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "market/option_chain.h"

namespace rlt::env {

// One listed contract of a chain: every row of the chain with its (expiry, right, strike).
struct ChainContract {
  int32_t expiry = 0;  // days since 1970-01-01
  pricing::OptionType right = pricing::OptionType::kCall;
  double strike = 0;
  std::vector<int64_t> rows;  // the chain's rows of the contract, by ascending quote date
  // The contract's identifier, EXPIRY:C|P:STRIKE, e.g. "2018-01-31:C:2700" (the strike in
  // the shortest form that reads back exactly).
  std::string id;
  // The OCC-style symbol ROOT YYMMDD C|P STRIKEx1000 (8 digits), e.g. SPXW180131C02700000,
  // with the chain's underlying symbol as the root; "" when it has none (no symbol, longer
  // than 6 characters or not alphanumeric) or the strike has no such form.
  std::string occ;
};

// Every contract of `chain`, sorted by (expiry, calls first, strike).
std::vector<ChainContract> ListChainContracts(const market::OptionChain& chain);

// The index in `contracts` of the contract that `text` names: its id or its OCC-style
// symbol (case-insensitive); -1 when none.
int64_t FindChainContract(const std::vector<ChainContract>& contracts, std::string_view text);

struct ChainHedgeOptions {
  double rate = 0;   // r per year, continuously compounded: financing and the delta
  double cost = 0;   // proportional cost per unit of traded value of the underlying
  int min_days = 1;  // fewer hedge days than this is kTooShort
};

// Why a contract cannot be hedged along its life in the chain.
enum class HedgeSkip : int8_t {
  kNone = 0,
  kNoQuote,           // no quote (bid > 0 and ask > 0) before its expiry date
  kExpiresAfterFile,  // expires after the chain's last quote date: its life is not all there
  kExpiryNotQuoted,   // the expiry date is not a quote date of the chain: no settlement price
  kNoUnderlying,      // a quote date of its life has no underlying price
  kTooShort,          // fewer hedge days than min_days
};
// "no-quote", "expires-after-file", "expiry-not-a-quote-date", "no-underlying-price",
// "too-short" ("" for kNone).
const char* HedgeSkipName(HedgeSkip skip);

struct ChainHedgeResult {
  HedgeSkip skip = HedgeSkip::kNone;
  std::string why;          // the skip in words (a date, a count), "" when hedged
  int32_t first_date = 0;   // the start (sale) date
  int hedge_days = 0;       // rebalancing dates: the start to the day before expiry
  int quoted_days = 0;      // of those, days with a quote for the contract
  int file_iv_days = 0;     // days whose delta used the row's implied vol
  int solved_iv_days = 0;   // ... the vol implied from the day's mid
  int carried_iv_days = 0;  // ... the last known vol (no quote, or no vol from the mid)
  int no_iv_days = 0;       // ... the zero-vol limit (no vol known yet)
  double spot0 = 0;         // the underlying at the start
  double iv0 = 0;           // the vol of the first delta (NaN when none)
  double premium = 0;       // the mid received at the start
  double half_spread0 = 0;  // (ask - bid) / 2 at the start
  double spot_expiry = 0;   // the underlying at expiry
  double payoff = 0;        // intrinsic value paid at expiry
  double costs = 0;         // transaction costs paid (not compounded)
  double interest = 0;      // interest earned (negative: paid) on the cash account
  double pnl = 0;           // the hedging error: cash at expiry after settlement
  double pnl_over_premium = 0;
};

// Hedges one short contract along its life in `chain` (see above). The result's skip says
// when it cannot be hedged (then only skip, why and what was found before are set).
// Errors: options out of range (rate outside [-5, 5], cost outside [0, 1), min_days < 1).
Result<ChainHedgeResult> HedgeChainContract(const market::OptionChain& chain,
                                            const ChainContract& contract,
                                            const ChainHedgeOptions& options);

// Where the vol of a hedge day came from (the conventions above).
enum class ChainVolSource : int8_t {
  kFile,     // the row's implied vol (finite and > 0; the day has a quote)
  kSolved,   // the vol implied from the day's mid (pricing::ImpliedVol, BSM)
  kCarried,  // the last vol known for the contract
  kNone,     // no vol known yet: NaN, the delta's zero-vol limit
};

// The vol of `contract` on a quote date: `row` is the contract's row that day (-1 when it
// has none), `s` the underlying, `t` the years to expiry, `last_vol` the last vol known
// (NaN when none). HedgeChainContract's rule, shared with the chain-fed hedging
// environment (chain_hedging_env.h) so both hedge alike.
double ChainDayVol(const market::OptionChain& chain, const ChainContract& contract, int64_t row,
                   double s, double t, double rate, double last_vol, ChainVolSource* source);

// The Black-Scholes delta of the option held long (call N(d1), put N(d1) - 1; no
// dividends); the zero-vol limit when vol is NaN or t <= 0: phi when phi (S - K e^{-rT}) > 0,
// else 0.
double ChainDelta(pricing::OptionType right, double s, double k, double r, double vol, double t);

// A row with a quote: bid > 0 and ask > 0.
inline bool ChainRowQuoted(const market::OptionChain& chain, int64_t row) {
  return chain.bid[row] > 0 && chain.ask[row] > 0;
}

// Quantile q in [0, 1] of `sorted` (ascending, not empty) by linear interpolation between
// order statistics (position q (n - 1), as numpy's default).
double SortedQuantile(const std::vector<double>& sorted, double q);

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_CHAIN_HEDGING_H_
