// rltrade env: the intraday portfolio — whole lots, per-lot prices, self-financing
// accounting, and the sizing rules that turn an action into an order.
//
// One implementation serves IntradayStockEnv (training, evaluation) and the paper trader
// (paper/), so a live decision is sized and booked exactly as in the backtest.
//
// Quantities are lot counts (a lot is `lot_size` shares) and prices are per lot (price x
// lot_size). Execute(q, p) trades q lots at p: cash changes by -(q p) - cost, where cost =
// |q| p cost_rate + fixed_cost; realised PnL and the average price follow the position
// (a reduction realises (p - average) per lot closed; a flip opens the rest at p).
//
// Sizing (OrderQuantity), with the fill price p of the order:
//  - target_position: a[0] in [-1, 1] is the target exposure; target = trunc(a[0] x net
//    worth / p), clamped to [-floor(max_short_value / p), floor(net worth / (p (1 +
//    cost_rate)))]; the order is target - position.
//  - original: a[0] >= buy_threshold buys floor((amount x cash - fixed_cost) / (p (1 +
//    cost_rate))) lots; a[0] <= sell_threshold sells floor(amount x (position +
//    floor(max_short_value / p))) lots; else hold. amount = a[1] clamped to [min_amount, 1].
// Non-finite actions count as 0.
#ifndef RLT_ENV_ENVS_INTRADAY_BOOK_H_
#define RLT_ENV_ENVS_INTRADAY_BOOK_H_

#include <cstdint>

#include "env/envs/intraday_reward.h"

namespace rlt::env {

struct IntradayOptions;

struct IntradaySizing {
  bool target_mode = false;
  double buy_threshold = 0.3, sell_threshold = -0.3, min_amount = 0.1;
  double cost_rate = 0.0005, fixed_cost = 0.0;
  double max_short_value = 0.0;  // resolved: >= 0

  // The cost of trading qty lots at a per-lot price: |qty| price cost_rate + fixed_cost
  // (0 for no trade). Execute() charges exactly this.
  double Cost(int64_t qty, double lot_price) const;
};

// The sizing and cost rules of `options` (max_short_value < 0 resolved to initial_capital).
IntradaySizing SizingOf(const IntradayOptions& options);

struct IntradayBook {
  double cash = 0, avg_price = 0, realized = 0, costs = 0;  // avg_price: per lot
  int64_t shares = 0, trades = 0;                           // lots; fills so far

  double NetWorth(double lot_price) const { return cash + static_cast<double>(shares) * lot_price; }
  // Lots to trade for `action` filled at `lot_price`; *kind and *a0 (the clamped a[0])
  // describe the decision.
  int64_t OrderQuantity(const IntradaySizing& s, const float* action, double lot_price,
                        ActionKind* kind, float* a0) const;
  // Trades qty lots at lot_price; returns the cost paid (0 and no trade when qty is 0).
  double Execute(const IntradaySizing& s, int64_t qty, double lot_price);
  // The same with the cost given: a broker's fill, booked at its price and fee.
  double ExecuteAt(int64_t qty, double lot_price, double cost);
};

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_INTRADAY_BOOK_H_
