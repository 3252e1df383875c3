// rltrade market: reading end-of-day option chains from CSV.
//
// The columns are found from the header (case-insensitive; '_', ' ', '/' and '-' ignored,
// so "call/put", "option_type" and "openInterest" all match). First match wins:
//   quote date  (required): quotedate, quote_date, date, spot_date, trade_date, asof
//   expiration  (required): expiration, expiry, option_expiration, expiration_date, exdate
//   strike      (required): strike, strike_price
//   call/put    (required): type, call/put, option_type, put_call, cp_flag, right
//                           values C, P, call, put (any case)
//   bid, ask    (required)
//   optional: last (last, lastPrice, last_price), volume, open interest (openinterest,
//     open_interest), implied vol (impliedvol, iv, impliedVolatility, implied_volatility),
//     underlying price (underlying_last, underlying_price, stock_price_close, S, spot),
//     delta, gamma, theta, vega, mark (a model value); symbol (symbol, ticker, underlying);
//     rate (r, rate, risk_free_rate, interest_rate) and dividend yield (q, div,
//     dividend_yield, dividend): continuously compounded annual decimals (0.0371 = 3.71%
//     a year), per row; exercise style (style, exercise_style): E, A, european, american
//     (any case; empty = unknown).
// Other columns are ignored. Dates: YYYY-MM-DD, YYYYMMDD, M/D/YYYY, M/D/YY (YY < 69 is
// 20YY, else 19YY, as POSIX strptime).
// A file without one of the required columns is a DataError naming it (no rows read).
//
// Validation rules (rule ids in DataProblem::rule), each problem with file:line, column,
// what was found and a fix:
//   wrong-field-count  the row has a different number of fields than the header
//   missing-field      a required field is empty
//   not-a-date         a date that is none of the formats above (or not a real day)
//   not-a-number       a number field (required or optional) that does not parse, or is
//                      NaN or infinite
//   not-call/put       a call/put value other than C, P, call, put
//   strike<=0          strike not positive
//   bid<0              negative bid (a zero bid is a valid "no bid")
//   ask<0              negative ask (a zero ask is a valid "no offer")
//   bid>ask            crossed quote: bid > ask with both > 0 (a zero bid or ask is "no
//                      quote": the row is kept, see OptionChain::HasQuote, and not an error)
//   expiry<quote-date  the contract expired before the quote date (same day is allowed:
//                      it expires at that day's close)
//   expiry>100y        the expiry is more than 100 years (36,500 days) after the quote
//                      date: beyond the pricing domain (pricing/pricing.h)
//   underlying<=0      an underlying price of zero or below (an empty field is allowed)
//   rate-not-decimal   a rate or dividend yield above 1 (100% a year) in magnitude: most
//                      likely a percentage (write 0.0371, not 3.71)
//   not-a-style        a style other than E, A, european, american or empty
//   out-of-range       a strike or underlying price outside the pricing domain [1e-8, 1e12]
//   duplicate-contract a second row for the same (quote date, expiry, call/put, strike);
//                      the later row is the bad one
//   second-underlying  a symbol other than the file's first (a chain is one underlying)
// With BadRowPolicy::kFail (default) any problem fails the read; with kDrop bad rows are
// dropped and listed in the report. The problem and report types are the bar reader's
// (market/csv.h).
#ifndef RLT_MARKET_OPTION_CHAIN_CSV_H_
#define RLT_MARKET_OPTION_CHAIN_CSV_H_

#include <string>
#include <string_view>

#include "core/file_io.h"
#include "core/status.h"
#include "market/csv.h"
#include "market/option_chain.h"

namespace rlt::market {

struct ChainReadOptions {
  BadRowPolicy on_bad_rows = BadRowPolicy::kFail;
  int64_t max_file_bytes = kDefaultMaxFileBytes;  // larger files are refused
};

// Reads and validates `path` (a regular file, at most max_file_bytes). On kFail and any
// problem returns a DataError listing the first problems (all are in *report).
Result<OptionChain> ReadOptionChainCsv(const std::string& path, const ChainReadOptions& options,
                                       DataReport* report = nullptr);
// The same from text in memory; `source` names the file in messages.
Result<OptionChain> ParseOptionChainCsv(std::string_view text, const std::string& source,
                                        const ChainReadOptions& options,
                                        DataReport* report = nullptr);

// Writes `chain` as symbol,quote_date,expiration,strike,type,bid,ask,last,volume,open_interest,
// implied_vol,underlying_price,delta,gamma,theta,vega,mark,rate,dividend_yield,style (dates
// YYYY-MM-DD, type C/P, style E/A/empty, numbers with 17 significant digits, NaN as an
// empty field), which ReadOptionChainCsv
// reads back value-identically. A symbol with a comma, quote or line break is an
// InvalidArgument error. Written to a temporary file, then renamed.
Status WriteOptionChainCsv(const std::string& path, const OptionChain& chain);

// Parses a date in one of the formats above into days since 1970-01-01.
Result<int32_t> ParseChainDate(std::string_view text);

}  // namespace rlt::market

#endif  // RLT_MARKET_OPTION_CHAIN_CSV_H_
