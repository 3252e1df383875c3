// rltrade paper: the feeds of `rltrade paper --feed` — which one a spec names, and the
// line feed behind `--feed stdin` (bars or ticks as CSV lines).
//
// Specs: replay:FILE[@SPEED] (a bar file replayed in time order, SPEED x real time, from
// 0.001 to 1e6, or as fast as possible), stdin (CSV lines on standard input), tcp:HOST:PORT (the
// bars of a server of the broker protocol, protocol.h: `rltrade exchange-sim` or a bridge).
//
// The line feed: the first line is a CSV header, and it says what the lines are:
//  - bars: the columns a bar file has (`rltrade eval --data` reads the same: a time
//    column, close, optionally open/high/low, volume, symbol), one bar per line;
//  - ticks: a time column, price and size (or quantity/qty/volume), optionally symbol;
//    ticks are aggregated into bars of the run's bar size (tick_aggregator.h).
// Each line is read by the bar-file reader (market/csv.h) with the run's timezone and
// symbol, so a line is accepted or refused by the same rules as a row of a file. A
// refused line is skipped, and Next() reports it with the reader's message ("stdin:17:
// column 'close': ..."): a live session does not stop for one bad line. A bar whose time
// is not after the previous bar's (a duplicate or out of order) is skipped and counted.
// Ticks: a bar is emitted when a tick of a later interval arrives, at the end of the
// input, or — when the ticks are live (their times within a minute of the wall clock) —
// once the wall clock is past the bar's end plus one second; ticks of a bar already
// emitted are late (dropped, counted). Times have one-second resolution (the reader's).
// Thread safety: none; one owner.
#ifndef RLT_PAPER_FEED_H_
#define RLT_PAPER_FEED_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "market/csv.h"
#include "paper/tick_aggregator.h"

namespace rlt::paper {

struct FeedSpec {
  // kExternal: the caller pushes bars (DrivenSession, driven.h); never parsed from a spec.
  enum class Kind { kReplay, kStdin, kTcp, kExternal };
  Kind kind = Kind::kReplay;
  std::string file;  // replay
  double speed = 0;  // replay: x real time; 0 = as fast as possible
  std::string host;  // tcp
  int port = 0;      // tcp
};
// A replay's SPEED is within these (x real time).
inline constexpr double kMinReplaySpeed = 0.001, kMaxReplaySpeed = 1e6;
// Errors name the spec and the forms expected. replay:FILE@SPEED: only a trailing
// @<number> is a speed, and a file that exists under the whole name wins over it.
Result<FeedSpec> ParseFeedSpec(const std::string& spec);

// A bar as a feed delivers it.
struct FeedBar {
  int64_t time = 0;  // the bar's timestamp, seconds since the epoch (UTC)
  double open = 0, high = 0, low = 0, close = 0, volume = 0;
  int64_t seq = -1;  // the stream's seq (tcp feed); -1 otherwise
};
// The bar ticks were aggregated into, as a feed delivers it.
inline FeedBar FeedBarOf(const AggregatedBar& b) {
  return FeedBar{b.start, b.open, b.high, b.low, b.close, b.volume, -1};
}

struct LineFeedStats {
  int64_t lines = 0;         // data lines read (not the header)
  int64_t bad_lines = 0;     // refused by the reader, skipped
  int64_t out_of_order = 0;  // bars not after the previous bar, skipped
  int64_t ticks = 0, late_ticks = 0, bad_ticks = 0;
  int64_t bars = 0;  // bars delivered
};

class LineFeed {
 public:
  // `fd` is read (not owned, not closed); `source` names it in messages ("stdin");
  // `bar_seconds` is the run's bar size (ticks are aggregated into it).
  LineFeed(int fd, std::string source, market::CsvReadOptions csv, int64_t bar_seconds);

  struct Event {
    enum class Kind { kBar, kIdle, kBadLine, kEnd };
    Kind kind = Kind::kIdle;
    FeedBar bar;          // kBar
    std::string problem;  // kBadLine: the reader's message (the line was skipped)
  };
  // The next bar, a bad line, the end of the input, or kIdle when nothing completed a bar
  // within timeout_ms. Errors: the header is neither bars nor ticks (naming the columns
  // found and those expected), a read error.
  Result<Event> Next(int timeout_ms);

  // Lines naming another symbol than `symbol` (in a symbol column) are refused as bad
  // lines ("stdin:3: symbol 'AAPL' is not the run's symbol 'BPCL' ..."): a policy trades
  // the symbol it learned. Lines without a symbol column are taken as that symbol. ""
  // (the default) accepts every symbol, as does a CsvReadOptions::symbol filter, which
  // skips other symbols' lines silently (a multi-symbol stream).
  void ExpectSymbol(std::string symbol) { expected_symbol_ = std::move(symbol); }

  // The reader of the feed refused the last bar delivered (e.g. a time far in the future):
  // the next bars are ordered against the bar before it, not against the refused one.
  void Refuse(const FeedBar& bar);

  bool ticks() const { return ticks_; }
  const LineFeedStats& stats() const;

 private:
  Result<Event> TakeLine(const std::string& line);
  Result<std::optional<FeedBar>> ParseLine(const std::string& line, std::string* problem);
  std::optional<Event> Deliver(const FeedBar& bar);

  int fd_;
  std::string source_;
  market::CsvReadOptions csv_;
  std::string expected_symbol_;
  int64_t bar_seconds_;
  std::string buffer_;
  bool eof_ = false;
  std::string header_;  // as the reader is given it (tick columns renamed)
  bool have_header_ = false, ticks_ = false;
  int64_t line_no_ = 0;
  int64_t last_time_ = 0, previous_time_ = 0;
  bool any_bar_ = false, any_previous_ = false;
  std::unique_ptr<TickAggregator> aggregator_;
  int64_t last_tick_ms_ = 0;
  mutable LineFeedStats stats_;
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_FEED_H_
