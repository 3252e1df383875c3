// rltrade market: the in-memory layout of price bars.
//
// Bars hold one symbol's OHLCV series in columns (structure of arrays), in time order,
// together with its session structure. A session is one trading day in the exchange's
// local time zone: bars are grouped by their local calendar date. Everything downstream
// (features, environments, evaluation) indexes bars by their position in these arrays.
//
// This header is plain data: no I/O, no validation. Readers (csv.h), the synthetic
// generator (synth.h) and sessions.h fill it.
#ifndef RLT_MARKET_BARS_H_
#define RLT_MARKET_BARS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rlt::market {

// One trading session: bars [begin, end) of a Bars series, all on local date `date`.
struct Session {
  int32_t date = 0;   // local calendar date as yyyymmdd, e.g. 20240131
  int32_t begin = 0;  // index of the first bar
  int32_t end = 0;    // one past the last bar
  int32_t size() const { return end - begin; }
};

// One symbol's bars, columnar. Invariants (established by the readers): all columns have
// the same length; `time` is strictly increasing; session arrays are filled by
// AssignSessions() (sessions.h).
struct Bars {
  std::string symbol;
  std::string timezone = "UTC";  // IANA name of the exchange's local time zone
  // Seconds after local midnight at which a session (trading day) begins: 0 = sessions are
  // calendar days; > 0 (a market that trades around the clock, cut at e.g. 17:00) = a
  // session runs to the same time the next day and takes the date on which it ends.
  int32_t day_boundary = 0;
  // The market never closes (read with [data] session = "24h"): a year has 365 sessions.
  bool around_the_clock = false;
  std::vector<int64_t> time;        // bar timestamp, seconds since epoch, UTC
  std::vector<int32_t> utc_offset;  // local offset from UTC at that bar, seconds
  std::vector<double> open, high, low, close, volume;
  // Session structure (exchange-local calendar days):
  std::vector<int32_t> session;          // session index of each bar, 0..sessions.size()-1
  std::vector<int32_t> bar_in_session;   // 0 for a session's first bar
  std::vector<uint8_t> last_in_session;  // 1 on the last bar of its session
  std::vector<Session> sessions;

  size_t size() const { return time.size(); }
  bool empty() const { return time.empty(); }
};

}  // namespace rlt::market

#endif  // RLT_MARKET_BARS_H_
