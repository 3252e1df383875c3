// rltrade env: the intraday portfolio (see intraday_book.h).
#include "env/envs/intraday_book.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "env/envs/intraday.h"

namespace rlt::env {
namespace {

// A share count from a double: NaN -> 0, clamped to +-2^53 (exact in a double) so that
// the conversion is defined whatever the prices and capital (found by fuzz/config_fuzz:
// initial_capital = 1e300 converted 9.8e297 to int64_t).
int64_t ToShares(double shares) {
  constexpr double kMaxShares = 9007199254740992.0;  // 2^53
  if (!(shares == shares)) return 0;
  return static_cast<int64_t>(std::clamp(shares, -kMaxShares, kMaxShares));
}

}  // namespace

IntradaySizing SizingOf(const IntradayOptions& o) {
  IntradaySizing s;
  s.target_mode = o.action_mode == "target_position";
  s.buy_threshold = o.buy_threshold;
  s.sell_threshold = o.sell_threshold;
  s.min_amount = o.min_amount;
  s.cost_rate = o.cost_rate;
  s.fixed_cost = o.fixed_cost;
  s.max_short_value = o.max_short_value < 0 ? o.initial_capital : o.max_short_value;
  return s;
}

double IntradaySizing::Cost(int64_t qty, double lot_price) const {
  if (qty == 0) return 0.0;
  return std::fabs(static_cast<double>(qty)) * lot_price * cost_rate + fixed_cost;
}

int64_t IntradayBook::OrderQuantity(const IntradaySizing& s, const float* action, double price,
                                    ActionKind* kind, float* a0) const {
  const float raw = std::isfinite(action[0]) ? action[0] : 0.0f;
  *a0 = std::clamp(raw, -1.0f, 1.0f);
  const double short_cap = std::floor(s.max_short_value / price);  // max shares short
  if (s.target_mode) {
    const double worth = NetWorth(price);
    double target = std::trunc(*a0 * worth / price);
    // Long side: what net worth can buy after costs (nothing when net worth is <= 0).
    const double long_cap = std::max(0.0, std::floor(worth / (price * (1 + s.cost_rate))));
    target = std::clamp(target, -short_cap, long_cap);
    const int64_t qty = ToShares(target) - shares;
    *kind = qty > 0 ? ActionKind::kBuy : (qty < 0 ? ActionKind::kSell : ActionKind::kHold);
    return qty;
  }
  const float raw_amount = std::isfinite(action[1]) ? action[1] : 0.0f;
  const double amount = std::clamp<double>(raw_amount, s.min_amount, 1.0);
  if (*a0 >= s.buy_threshold) {
    *kind = ActionKind::kBuy;
    const double budget = amount * cash - s.fixed_cost;
    return budget > 0 ? ToShares(std::floor(budget / (price * (1 + s.cost_rate)))) : 0;
  }
  if (*a0 <= s.sell_threshold) {
    *kind = ActionKind::kSell;
    const double capacity = static_cast<double>(shares) + short_cap;
    return capacity > 0 ? -ToShares(std::floor(amount * capacity)) : 0;
  }
  *kind = ActionKind::kHold;
  return 0;
}

double IntradayBook::Execute(const IntradaySizing& s, int64_t qty, double price) {
  if (qty == 0) return 0.0;
  return ExecuteAt(qty, price, s.Cost(qty, price));
}

double IntradayBook::ExecuteAt(int64_t qty, double price, double cost) {
  if (qty == 0) return 0.0;
  const double q = static_cast<double>(qty);
  if (shares != 0 && (shares > 0) != (qty > 0)) {  // reduces (or flips) the position
    const int64_t closed = std::min(std::llabs(qty), std::llabs(shares));
    realized += static_cast<double>(closed) * (price - avg_price) * (shares > 0 ? 1 : -1);
    if (std::llabs(qty) > std::llabs(shares))
      avg_price = price;
    else if (std::llabs(qty) == std::llabs(shares))
      avg_price = 0.0;
  } else {  // opens or adds in the same direction
    avg_price = (avg_price * std::fabs(static_cast<double>(shares)) + price * std::fabs(q)) /
                std::fabs(static_cast<double>(shares + qty));
  }
  shares += qty;
  cash -= q * price + cost;
  costs += cost;
  ++trades;
  return cost;
}

}  // namespace rlt::env
