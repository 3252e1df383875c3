// rltrade market: synthetic end-of-day option chains from an underlying price series.
//
// The default chain source of the options environments. For each day d of a daily close
// series (dates in days since 1970-01-01, ascending):
//  - Expiries: the next `monthly_expiries` third Fridays of a month (monthlies), plus
//    every other Friday at most `weekly_horizon_days` ahead (weeklies), each on or after
//    the day. Holidays are not moved (a Friday holiday keeps its Friday expiry date). An
//    expiry once listed stays listed until it expires (the windows only slide forward).
//  - Strikes: multiples of the expiry's strike increment nearest to S_d * m for m on the
//    moneyness grid [moneyness_min, moneyness_max] step moneyness_step. Strikes listed on
//    an earlier day for an expiry stay listed (a contract, once listed, is quoted every
//    day to its expiry), so the set per expiry only grows (with the defaults, ~370 to
//    ~2,000 contracts a day on SPY 2009-2020; fewer monthly_expiries list fewer).
//  - Implied vol: level_d = clamp(vol_multiplier * realised vol of the last `rv_window`
//    daily log returns up to and including day d (closes 0..d only: causal), annualised
//    by sqrt(252), times exp(iv_noise * z_d) with one standard normal z_d per day when
//    iv_noise > 0 (default 0: no per-day noise), min_vol, max_vol), where
//    initial_vol replaces vol_multiplier * realised vol while fewer than 2 returns exist.
//    Then with T_e = max(T, 1/365) and x = ln(K / F) / sqrt(T_e), F = S e^{(r - q) T}:
//      iv = clamp(level_d * max(0.1, 1 + term_slope * ln(T_e / (30/365))) *
//                 max(0.1, 1 + skew * x + smile * x^2), min_vol, max_vol).
//    Calls and puts of one strike share the vol.
//  - mark = BSM value at that vol (pricing::BsmPriceBatch); spread = max(spread_fraction
//    * mark, min_spread); bid = mark - spread/2 rounded down to the tick, floored at 0;
//    ask = mark + spread/2 rounded up to the tick, and at least bid + min_spread (rounded
//    up to the tick; far out-of-the-money contracts are quoted 0 x min_spread).
//  - Open interest: round(oi_scale * exp(-x^2 / 2) * e^{0.5 u}), u standard normal per
//    contract and day from the seeded generator; volume = round(oi * 0.1 * e^{0.5 u'}).
// Same inputs and seed, same chain (value-identical). No LibTorch; pure.
#ifndef RLT_MARKET_OPTION_CHAIN_SYNTH_H_
#define RLT_MARKET_OPTION_CHAIN_SYNTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "market/option_chain.h"

namespace rlt::market {

struct ChainSynthOptions {
  double moneyness_min = 0.8;
  double moneyness_max = 1.2;
  double moneyness_step = 0.025;
  double strike_increment = 0;  // 0: auto per expiry, the largest 1/2/2.5/5 x 10^k at most
                                // 1% of the spot on the day the expiry is first listed
  int monthly_expiries = 6;
  int weekly_horizon_days = 35;
  int rv_window = 20;
  double initial_vol = 0.2;
  double vol_multiplier = 1.1;  // implied over realised
  double term_slope = 0.05;
  double skew = -0.5;
  double smile = 0.3;
  double min_vol = 0.05;
  double max_vol = 2.0;
  double iv_noise = 0;
  double rate = 0.02;
  double dividend = 0.015;
  double spread_fraction = 0.04;
  double min_spread = 0.05;
  double tick = 0.01;
  double oi_scale = 5000;
  uint64_t seed = 1;

  template <typename V>
  void VisitFields(V& v) {
    v("moneyness_min", &moneyness_min, "lowest strike / spot of the listed grid");
    v("moneyness_max", &moneyness_max, "highest strike / spot of the listed grid");
    v("moneyness_step", &moneyness_step, "step of the moneyness grid");
    v("strike_increment", &strike_increment, "strikes are multiples of this (0: auto)");
    v("monthly_expiries", &monthly_expiries, "listed monthly (third Friday) expiries");
    v("weekly_horizon_days", &weekly_horizon_days, "weekly Friday expiries up to this far");
    v("rv_window", &rv_window, "daily returns in the realised-vol window");
    v("initial_vol", &initial_vol, "vol level before two returns exist");
    v("vol_multiplier", &vol_multiplier, "implied vol level / realised vol");
    v("term_slope", &term_slope, "ATM vol change per unit log(T / 30 days)");
    v("skew", &skew, "linear coefficient in ln(K/F)/sqrt(T)");
    v("smile", &smile, "quadratic coefficient in ln(K/F)/sqrt(T)");
    v("min_vol", &min_vol, "lower clamp of the implied vol");
    v("max_vol", &max_vol, "upper clamp of the implied vol");
    v("iv_noise", &iv_noise, "sd of a per-day log-normal vol level shock (0: none)");
    v("rate", &rate, "risk-free rate, continuously compounded");
    v("dividend", &dividend, "dividend yield, continuous");
    v("spread_fraction", &spread_fraction, "bid/ask spread as a fraction of the value");
    v("min_spread", &min_spread, "smallest bid/ask spread");
    v("tick", &tick, "price tick of bids and asks");
    v("oi_scale", &oi_scale, "open interest at the money");
    v("seed", &seed, "random seed (open interest, volume, vol noise)");
  }
};

// Checks ranges; InvalidArgument naming the field.
Status ValidateChainSynthOptions(const ChainSynthOptions& options);

// The third Friday of a month, in days since 1970-01-01.
int32_t ThirdFriday(int year, int month);

// How many contracts (rows) the chain of these closes has, by the same listing rules
// without pricing or storing them: O(days x listed expiries x grid) set operations, no
// per-contract memory. Counting stops after the first day that takes the total above
// `stop_above`; `days` says how many days were counted then. Errors as GenerateOptionChain.
struct ChainSize {
  int64_t contracts = 0;
  int64_t days = 0;
};
Result<ChainSize> CountOptionChainContracts(const std::vector<int32_t>& dates,
                                            const std::vector<double>& closes,
                                            const ChainSynthOptions& options,
                                            int64_t stop_above = INT64_MAX);

// The chain for closes[d] on dates[d]. REQUIRES nothing; errors: sizes differ, dates not
// ascending, a close not finite and positive (InvalidArgument naming the index).
Result<OptionChain> GenerateOptionChain(const std::vector<int32_t>& dates,
                                        const std::vector<double>& closes,
                                        const ChainSynthOptions& options,
                                        const std::string& underlying = "SYNTH");

}  // namespace rlt::market

#endif  // RLT_MARKET_OPTION_CHAIN_SYNTH_H_
