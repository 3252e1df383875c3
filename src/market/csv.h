// rltrade market: reading and writing bar files (CSV), with validation.
//
// Reads one CSV of OHLCV bars, single- or multi-symbol, detects its columns from the
// header (case-insensitive), parses timestamps, converts them to UTC, validates every
// row, and returns one Bars per symbol with its sessions assigned.
//
// Recognised columns:
//   time:    date | datetime | timestamp | time   (also Compustat's datadate)
//   prices:  open, high, low, close               (Compustat: prcod, prchd, prcld, prccd)
//   volume:  volume                               (Compustat: cshtrd)
//   symbol:  symbol | tic   (optional; without it the file is one symbol, named after it)
// Other columns are ignored. Timestamps: YYYY-MM-DD, YYYYMMDD, YYYY-MM-DD HH:MM[:SS],
// YYYY-MM-DDTHH:MM:SS, each with an optional +HH:MM / -HH:MM offset or Z. Naive times
// are read in options.timezone (IANA name, system tz database); DataReport::naive_times
// tells whether any were, so that a caller can say which zone it assumed (this library
// prints nothing).
//
// Regular session (options.session, e.g. 09:30-16:00): only bars whose local time in
// options.timezone (also for timestamps written with an offset) lies in [open, close)
// are kept; the bounds are bar START times, open inclusive, close exclusive. A bar is
// stamped with the time it opens (SPY's 1-minute file has 09:30 .. 15:59 in the regular
// session, and its 16:00 bar opens the after-hours session), so 09:30-16:00 keeps
// exactly the 390 one-minute bars of a NYSE day. Rows outside are skipped before
// validation (their problems are not reported) and counted in
// DataReport::rows_outside_session.
//
// Exchange calendar (options.calendar, market/calendar.h): instead of one session for
// every day, each local date has its own hours or none. A bar is kept when its local date
// is a session and its start time lies in that day's [open, close); bars on a day without
// a session (holiday, weekend) and bars outside the day's hours (after an early close,
// before the open, after hours) are skipped and counted in the report, with the
// calendar's sessions that have no bar at all. A bar on a date the calendar does not
// cover is a whole-file error. The calendar's zone, when it has one, must be
// options.timezone (callers set the one from the other).
//
// Trading day boundary (options.day_boundary_minute, for markets that trade around the
// clock): a session runs from that local time to the same time the next day and takes
// the date on which it ends (0 = midnight: the calendar day), as futures exchanges date
// their trading days.
//
// Validation rules (each problem names file:line, column, the rule and a fix):
// non-monotonic or duplicate timestamps (per symbol), empty or non-numeric fields, NaN,
// non-positive prices, high < max(open, close), low > min(open, close), negative volume.
// A row with more fields than the header ("extra fields": e.g. an unquoted 76,467) is a
// problem like a short row. Prices must lie in [kMinBarPrice, kMaxBarPrice] and volume
// in [0, kMaxBarVolume] (market/limits.h, the limits of every path bars take): values
// outside are no real market's and overflow or underflow the features' squares and
// products ("absurd value").
// Messages quote at most 40 printable bytes of a value, and list the header's columns
// only when it looks like a CSV header (short names of letters, digits and the usual
// punctuation): the first line of a file that is not a bar file is never echoed.
// With BadRowPolicy::kFail (default) any problem makes the read fail and nothing is
// returned; with kDrop the bad rows are dropped and listed in the report.
//
// Whole-file errors (never dropped): a header naming one column twice (case-insensitive),
// a path that is not a regular file (a device such as /dev/zero, a FIFO, a directory), a
// file above kMaxBarFileBytes, a line above kMaxBarLineBytes. A UTF-8 byte order mark at
// the start is skipped (the rule of every text reader in rltrade).
#ifndef RLT_MARKET_CSV_H_
#define RLT_MARKET_CSV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "market/bars.h"
#include "market/limits.h"

namespace rlt::market {

class ExchangeCalendar;  // market/calendar.h

enum class BadRowPolicy { kFail, kDrop };

// Limits of the reader (see the file comment).
inline constexpr int64_t kMaxBarFileBytes = int64_t{4} << 30;  // 4 GiB
inline constexpr int64_t kMaxBarLineBytes = 64 << 10;          // 64 KiB

// Local trading hours [open_minute, close_minute) in minutes after local midnight, by bar
// start time; open_minute < 0 means all hours.
struct SessionHours {
  int open_minute = -1;
  int close_minute = -1;
  bool all_hours() const { return open_minute < 0; }
  std::string ToString() const;  // "09:30-16:00", or "" for all hours
};

// Parses "HH:MM-HH:MM" (open before close, both within 00:00..24:00); "" is all hours.
// `key` names the setting in errors (e.g. "[data] session" or "--session").
Result<SessionHours> ParseSessionHours(const std::string& text, const std::string& key);

struct CsvReadOptions {
  // IANA time zone for naive timestamps and for deriving sessions (local dates).
  std::string timezone = "UTC";
  BadRowPolicy on_bad_rows = BadRowPolicy::kFail;
  // Keep only this symbol (empty: all symbols). A file without a symbol column holds
  // one symbol: this one when given (else it is named after the file).
  std::string symbol;
  // Keep only bars inside these local hours (default: all).
  SessionHours session;
  // Keep only bars inside each day's session of this calendar (null: none). Exclusive
  // with `session`.
  std::shared_ptr<const ExchangeCalendar> calendar;
  // Local time (minutes after midnight) at which one session ends and the next begins.
  int day_boundary_minute = 0;
  // A market that never closes (Bars::around_the_clock).
  bool around_the_clock = false;
};

// One broken rule on one row.
struct DataProblem {
  std::string file;
  int64_t line = 0;              // 1-based line number in the file (header is line 1)
  std::string column;            // column name as written in the header ("" for whole-row rules)
  std::string rule;              // short rule id, e.g. "high<max(open,close)"
  std::string detail;            // what was found, e.g. "high=10.2 < close=10.5"
  std::string fix;               // what the user can do
  std::string ToString() const;  // "file:line: column 'high': <rule>: <detail>. Fix: <fix>"
};

struct DataReport {
  std::vector<DataProblem> problems;  // every problem found, in file order
  std::vector<std::string> notes;  // non-fatal remarks (e.g. "open/high/low absent: set to close")
  int64_t rows_read = 0;           // data rows in the file
  int64_t rows_dropped = 0;        // rows dropped under BadRowPolicy::kDrop
  int64_t rows_outside_session = 0;  // rows skipped by CsvReadOptions::session
  bool naive_times = false;          // some timestamps had no UTC offset (read in options.timezone)
  bool symbol_column = false;        // the file has a symbol (or tic) column; without one its
                                     // bars are named after the file
  std::vector<int32_t> utc_offsets;  // the distinct explicit UTC offsets (seconds) written in
                                     // the file's timestamps, in order of first appearance
  // With a calendar (CsvReadOptions::calendar), over the dates from the first to the last
  // kept bar (any symbol), in date order:
  int64_t rows_on_closed_days = 0;  // rows on days without a session (in rows_outside_session too)
  std::vector<std::pair<int32_t, int64_t>> closed_days_with_bars;  // (yyyymmdd, rows)
  // Early-close sessions, with the rows dropped after the early close.
  std::vector<std::pair<int32_t, int64_t>> early_closes;
  std::vector<int32_t> missing_sessions;  // sessions of the calendar without a kept bar
};

// "note: FILE has no UTC offsets; timestamps read as ZONE (set [data] timezone or
// --timezone)" — what a caller prints (once per file) when report.naive_times and the
// zone was not given explicitly.
std::string NaiveTimesNote(const std::string& path, const std::string& zone);

// All symbols of one file, sorted by symbol name.
struct MarketData {
  std::vector<Bars> symbols;
  const Bars* Find(const std::string& symbol) const;
};

// Reads and validates `path`. On kFail and any problem, returns a DataError whose message
// lists the problems (the full list is also in *report when report != nullptr).
Result<MarketData> ReadBarsCsv(const std::string& path, const CsvReadOptions& options,
                               DataReport* report = nullptr);
// The same from CSV text already in memory; `source` stands for the file path (in
// messages, and it names the symbol of a file without a symbol column).
Result<MarketData> ParseBarsCsv(std::string_view text, const std::string& source,
                                const CsvReadOptions& options, DataReport* report = nullptr);

// Funding payments of a perpetual future: when each was paid and its rate (a fraction of
// the position's value; a long position pays a positive rate, a short one receives it).
struct FundingSeries {
  std::vector<int64_t> time;  // UTC seconds, strictly increasing
  std::vector<double> rate;
};
// Reads a CSV with a time column (the names and formats of bar files; naive times in
// `timezone`) and a rate column (rate, funding_rate, fundingRate). Errors name
// file:line and the column: an unreadable time or rate, times not increasing, a rate
// outside (-1, 1) (a percentage written as 0.01 is 1 %).
Result<FundingSeries> ReadFundingCsv(const std::string& path, const std::string& timezone);

// Writes `data` as `timestamp,symbol,open,high,low,close,volume` with ISO 8601 local
// timestamps carrying their UTC offset. Written to a temporary file, then renamed.
Status WriteBarsCsv(const std::string& path, const MarketData& data);

}  // namespace rlt::market

#endif  // RLT_MARKET_CSV_H_
