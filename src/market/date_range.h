// rltrade market: an inclusive range of exchange-local session dates.
//
// What it is: the one type every layer uses to name the dates of a split ([split] train,
// validation, test), an environment's range, or an evaluation's range. Dates are
// yyyymmdd integers of the exchange's local calendar (market/bars.h session dates); 0 on
// a side means unbounded there. It lives in market/ so that train/, evalrun/ and cli/ can
// use it without including the environment layer.
// Value type; thread-compatible.
#ifndef RLT_MARKET_DATE_RANGE_H_
#define RLT_MARKET_DATE_RANGE_H_

#include <cstdint>
#include <string>

#include "core/status.h"

namespace rlt::market {

struct DateRange {
  int32_t first = 0;  // yyyymmdd, 0 = from the start
  int32_t last = 0;   // yyyymmdd, 0 = to the end
  bool Contains(int32_t date) const {
    return (first == 0 || date >= first) && (last == 0 || date <= last);
  }
  bool Overlaps(const DateRange& o) const;
  std::string ToString() const;  // "2023-01-02:2023-06-30", "start", "end" for open sides
  // Parses "YYYY-MM-DD:YYYY-MM-DD"; either side may be empty or "start" / "end".
  static Result<DateRange> Parse(const std::string& text);
};

// Parses exactly YYYY-MM-DD (a real day) into yyyymmdd.
Result<int32_t> ParseDateKey(const std::string& text);

}  // namespace rlt::market

#endif  // RLT_MARKET_DATE_RANGE_H_
