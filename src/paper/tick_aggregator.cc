// rltrade paper: ticks into bars (see tick_aggregator.h).
#include "paper/tick_aggregator.h"

#include <algorithm>
#include <cmath>

#include "core/status.h"

namespace rlt::paper {

TickAggregator::TickAggregator(int64_t bar_seconds, int32_t utc_offset_seconds)
    : bar_ms_(bar_seconds * 1000), offset_ms_(int64_t{utc_offset_seconds} * 1000) {
  RLT_CHECK(bar_seconds >= 1);
}

int64_t TickAggregator::Interval(int64_t time_ms) const {
  const int64_t local = time_ms + offset_ms_;
  // Floor division (times before the epoch stay in order).
  return local >= 0 ? local / bar_ms_ : -((-local + bar_ms_ - 1) / bar_ms_);
}

AggregatedBar TickAggregator::Close() {
  AggregatedBar b = bar_;
  b.start = (interval_ * bar_ms_ - offset_ms_) / 1000;
  b.vwap = b.volume > 0 ? value_ / b.volume : b.close;
  open_ = false;
  last_emitted_ = interval_;
  emitted_any_ = true;
  ++emitted_;
  return b;
}

std::optional<AggregatedBar> TickAggregator::Add(const Tick& t) {
  if (!std::isfinite(t.price) || !std::isfinite(t.size) || t.price <= 0 || t.size < 0) {
    ++bad_;
    return std::nullopt;
  }
  const int64_t k = Interval(t.time_ms);
  if ((open_ && k < interval_) || (emitted_any_ && k <= last_emitted_)) {
    ++late_;  // its bar is closed (or it is older than the open one): never reopened
    return std::nullopt;
  }
  std::optional<AggregatedBar> done;
  if (open_ && k > interval_) done = Close();
  if (!open_) {
    open_ = true;
    interval_ = k;
    bar_ = AggregatedBar{};
    bar_.open = bar_.high = bar_.low = t.price;
    value_ = 0;
  }
  bar_.high = std::max(bar_.high, t.price);
  bar_.low = std::min(bar_.low, t.price);
  bar_.close = t.price;
  bar_.volume += t.size;
  value_ += t.price * t.size;
  ++bar_.ticks;
  return done;
}

std::optional<AggregatedBar> TickAggregator::Flush(int64_t now_ms, int64_t grace_ms) {
  if (!open_) return std::nullopt;
  const int64_t end_ms = (interval_ + 1) * bar_ms_ - offset_ms_;
  if (now_ms < end_ms + grace_ms) return std::nullopt;
  return Close();
}

}  // namespace rlt::paper
