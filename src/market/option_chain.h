// rltrade market: end-of-day option chains in structure-of-arrays form.
//
// An OptionChain holds the listed contracts of one underlying for a series of quote dates.
// Contracts of one quote date are contiguous (day_begin[d] .. day_begin[d + 1]) and sorted
// by (expiry, right: calls first, strike). Dates are days since 1970-01-01 (UTC civil
// dates; see core/civil_time.h). Optional fields are NaN when the source has no value.
// Greeks read from a file are stored as the file writes them (vendors differ in units:
// theta per day or per year, vega per 1% or per 1.00); market/option_chain_pricing.h
// computes our own, in the conventions of pricing/pricing.h.
//
// Quotes: a bid <= 0 means "no bid" and an ask <= 0 "no offer" (real chains quote far
// strikes and illiquid contracts with a zero bid or ask). Such rows are kept; code that
// needs a two-sided market (a mid, an implied vol) checks HasQuote(i) first. A crossed
// quote (bid > ask, both > 0) is never in a chain: the reader refuses it.
//
// Rates: rate and dividend are the file's own per-row r and q (continuously compounded
// annual decimals, 0.0371 = 3.71% a year), NaN when the file has no such column; style is
// the file's exercise style (kUnknown when it has none).
#ifndef RLT_MARKET_OPTION_CHAIN_H_
#define RLT_MARKET_OPTION_CHAIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "pricing/pricing.h"

namespace rlt::market {

using pricing::OptionType;

// Exercise style of a contract as the source gives it.
enum class ExerciseStyle : int8_t { kUnknown = 0, kEuropean = 1, kAmerican = 2 };
// "european", "american" or "" (unknown).
const char* ExerciseStyleName(ExerciseStyle style);

struct OptionChain {
  std::string underlying;  // symbol, or the file name when the file names none

  // Per quote date (ascending, distinct).
  std::vector<int32_t> dates;            // days since 1970-01-01
  std::vector<double> underlying_price;  // NaN when the source has none
  std::vector<int64_t> day_begin;        // size dates.size() + 1; day d's contracts are
                                         // [day_begin[d], day_begin[d + 1])

  // Per contract (all the same size).
  std::vector<int32_t> expiry;  // days since 1970-01-01, >= the quote date
  std::vector<double> strike;   // > 0
  std::vector<OptionType> right;
  std::vector<double> bid;                        // >= 0 (0 = no bid)
  std::vector<double> ask;                        // >= 0 (0 = no offer), >= bid when both > 0
  std::vector<double> last;                       // optional
  std::vector<double> volume;                     // optional
  std::vector<double> open_interest;              // optional
  std::vector<double> implied_vol;                // optional (per sqrt(year), 0.2 = 20%)
  std::vector<double> delta, gamma, theta, vega;  // optional, as in the source
  std::vector<double> mark;          // the model value (synthetic chains); NaN for files
  std::vector<double> rate;          // optional: the file's r (continuous, per year)
  std::vector<double> dividend;      // optional: the file's q (continuous yield, per year)
  std::vector<ExerciseStyle> style;  // kUnknown when the file has no style
  std::vector<int64_t> line;         // 1-based source line (0 for synthetic chains)

  size_t num_days() const { return dates.size(); }
  size_t size() const { return strike.size(); }
  // A bid (> 0), an offer (> 0), both: the convention above.
  bool HasBid(size_t i) const { return bid[i] > 0; }
  bool HasAsk(size_t i) const { return ask[i] > 0; }
  bool HasQuote(size_t i) const { return HasBid(i) && HasAsk(i); }
  // Index of the quote date of contract i (binary search over day_begin).
  size_t DayOf(size_t i) const;
  // Appends one contract with every optional field NaN (style kUnknown); returns its index.
  size_t AddContract(int32_t expiry_day, double strike_value, OptionType type, double bid_value,
                     double ask_value);
};

// Every contract of `chain` as a pricing batch: the chain's rights and strikes with the
// caller's per-contract arrays (chain.size() each; they must outlive the batch).
inline pricing::OptionBatch<double> ChainBatch(const OptionChain& chain, const double* spot,
                                               const double* rate, const double* dividend,
                                               const double* vol, const double* time) {
  pricing::OptionBatch<double> in;
  in.size = chain.size();
  in.type = chain.right.data();
  in.spot = spot;
  in.strike = chain.strike.data();
  in.rate = rate;
  in.dividend = dividend;
  in.vol = vol;
  in.time = time;
  return in;
}

}  // namespace rlt::market

#endif  // RLT_MARKET_OPTION_CHAIN_H_
