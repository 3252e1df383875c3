// rltrade paper: ticks into bars — the live feeds' aggregation of trades into the run's
// bar size (OHLCV with the ticks' volume-weighted average price).
//
// Intervals: a tick at time t (milliseconds since the epoch, UTC) belongs to the interval
// floor((t + utc_offset) / bar) of local time, so bars are aligned on the exchange's local
// midnight (a 5-minute bar starts at 09:30, 09:35, ...). A bar is emitted only once its
// interval is over: when a tick of a later interval arrives, or when Flush(now) finds the
// wall clock past the interval's end plus a grace period (live feeds call it on a timer).
// So no bar is built from the future, and no bar is emitted twice: an interval without
// ticks gives no bar (a gap, not a copy of the last one), and a tick of an interval whose
// bar was already emitted (a late tick) is dropped and counted, never reopening the bar.
// Ticks that are not finite, or have a price <= 0 or a size < 0, are dropped and counted.
// Bars: open/close = the first/last tick's price, high/low, volume = sum of sizes, vwap =
// sum(price x size) / volume (the close when the volume is 0), ticks = count.
// Not thread-safe.
#ifndef RLT_PAPER_TICK_AGGREGATOR_H_
#define RLT_PAPER_TICK_AGGREGATOR_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace rlt::paper {

struct Tick {
  int64_t time_ms = 0;  // UTC
  double price = 0;
  double size = 0;
};

struct AggregatedBar {
  int64_t start = 0;  // the interval's start, seconds since the epoch (UTC)
  double open = 0, high = 0, low = 0, close = 0, volume = 0, vwap = 0;
  int64_t ticks = 0;
};

class TickAggregator {
 public:
  // REQUIRES: bar_seconds >= 1.
  TickAggregator(int64_t bar_seconds, int32_t utc_offset_seconds);

  // Adds one tick; returns the bar it completed, if any (the previous interval's).
  std::optional<AggregatedBar> Add(const Tick& tick);
  // The open bar when `now_ms` is at or past its interval's end + grace_ms (then emitted).
  std::optional<AggregatedBar> Flush(int64_t now_ms, int64_t grace_ms);

  int64_t late_ticks() const { return late_; }
  int64_t bad_ticks() const { return bad_; }
  int64_t bars_emitted() const { return emitted_; }

 private:
  int64_t Interval(int64_t time_ms) const;
  AggregatedBar Close();

  int64_t bar_ms_;
  int64_t offset_ms_;
  bool open_ = false;         // a bar is being built
  int64_t interval_ = 0;      // the open bar's interval
  int64_t last_emitted_ = 0;  // the last emitted bar's interval
  bool emitted_any_ = false;
  AggregatedBar bar_;
  double value_ = 0;  // sum of price x size
  int64_t late_ = 0, bad_ = 0, emitted_ = 0;
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_TICK_AGGREGATOR_H_
