// rltrade paper: risk limits — the rules every order of a paper (or live) session passes
// before it reaches the broker, read from a TOML file (`rltrade paper --risk RISK.toml`).
//
//   max_position_shares  = 1000        # |position| after the order, shares
//   max_position_value   = 50000.0     # |position| x price after the order
//   max_order_shares     = 500         # |order quantity|, shares
//   max_gross_exposure   = 1.0         # |position value| / net worth after the order
//   max_daily_loss       = 2000.0      # session PnL <= -this: flatten, no new orders that day
//   max_orders_per_minute = 10         # orders sent in any 60 s of feed time
//   trading_hours        = "09:30-16:00"  # local exchange time: no new orders outside
//   flatten_before_close = "15:55"     # local time: flatten then, no new exposure after
//   price_collar         = 0.05        # |fill price / last price - 1| above this: refused
//   stale_feed_seconds   = 120         # live feeds: no bar for this long: no new orders
//   flatten_on_stale     = true        # ... and flatten
//
// Every key is optional (absent = no limit). Orders that only reduce the position (toward
// flat, without flipping) always pass: a limit never blocks getting out. A refused order
// is not sent; the session journals {"type": "risk", "rule", "detail"} for it. Errors name
// RISK.toml:line, the key and what was expected; an unknown key names the nearest valid one.
#ifndef RLT_PAPER_RISK_H_
#define RLT_PAPER_RISK_H_

#include <cstdint>
#include <deque>
#include <limits>
#include <string>

#include "core/status.h"

namespace rlt::paper {

struct RiskLimits {
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  // stale_feed_seconds is > 0 and at most this (a day).
  static constexpr double kMaxStaleFeedSeconds = 86400;
  double max_position_shares = kNone, max_position_value = kNone, max_order_shares = kNone;
  double max_gross_exposure = kNone, max_daily_loss = kNone, price_collar = kNone;
  double stale_feed_seconds = kNone;
  bool flatten_on_stale = false;
  int max_orders_per_minute = 0;             // 0: no limit
  int trading_start = -1, trading_end = -1;  // minutes after local midnight; -1: always
  int flatten_before_close = -1;             // minutes after local midnight; -1: none
  bool any = false;                          // some limit is set
};

Result<RiskLimits> ParseRiskLimits(const std::string& text, const std::string& name);
Result<RiskLimits> LoadRiskLimits(const std::string& path);

// One order about to be sent.
struct OrderCheck {
  double quantity = 0;    // shares, signed (> 0 buys)
  double position = 0;    // shares held before the order
  double price = 0;       // the price it is expected to fill at, per share
  double last_price = 0;  // the last traded price (the previous bar's close)
  double net_worth = 0;   // before the order
  int minute_of_day = 0;  // local exchange time of the order
  int64_t time = 0;       // feed time, seconds since the epoch
};

// Applies the limits to the orders of one session in time order.
class RiskGate {
 public:
  explicit RiskGate(const RiskLimits& limits) : limits_(limits) {}
  // "" when the order may be sent (and it is then counted as sent), else the rule's name;
  // *detail says what was exceeded.
  std::string Check(const OrderCheck& order, std::string* detail);
  // Whether new exposure may be opened at `minute_of_day` (trading hours, flatten time).
  bool MayOpen(int minute_of_day) const;
  // Whether the position must be flattened at `minute_of_day` (flatten_before_close).
  bool MustFlatten(int minute_of_day) const;
  const RiskLimits& limits() const { return limits_; }

 private:
  RiskLimits limits_;
  std::deque<int64_t> sent_;  // feed times of the orders sent in the last 60 s
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_RISK_H_
