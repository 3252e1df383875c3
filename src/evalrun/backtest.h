// rltrade evalrun: Backtest() — one policy walked through a sequential intraday env, with
// every bar, fill and session recorded (internal to evalrun; see evalrun.h).
//
// Per bar (equity): the first bar of each session (before any decision: flat) and every
// bar a step moves to. `position` is the shares held through the bar (after the decision
// fill at its open, before a closing flatten); cash and net worth are after every fill of
// the bar. Fills: the decision trade (env info traded_shares at fill_price) and, at a
// session's last bar, the flattening trade at the close, derived from the shares held;
// the costs of the step (change in costs_paid) are split between them with the env's
// cost rule for the flattening trade.
#ifndef RLT_EVALRUN_BACKTEST_H_
#define RLT_EVALRUN_BACKTEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "env/envs/intraday.h"
#include "env/vec_env.h"
#include "evalrun/evalrun.h"

namespace rlt::evalrun {

struct EquityRow {
  int32_t bar = 0;
  double position = 0;  // shares (lots x lot_size)
  double cash = 0, net_worth = 0;
};

struct FillRow {
  int32_t bar = 0;
  double quantity = 0;         // shares, signed: > 0 buy
  double price = 0, cost = 0;  // price per share
  double position_after = 0;
  double cash_after = 0;
};

struct BacktestResult {
  std::vector<EquityRow> equity;
  std::vector<FillRow> fills;
  std::vector<int32_t> session_dates;   // (sessions) yyyymmdd
  std::vector<double> session_returns;  // (sessions) net worth end / start - 1
  std::vector<double> round_trip_pnls;  // flat-to-flat cash changes
  std::vector<double> exposures;        // (bars) position value / net worth
  double costs_paid = 0;
  double final_net_worth = 0;
};

// REQUIRES: venv holds one IntradayStockEnv with sequential = true over `bars`.
BacktestResult Backtest(env::VecEnv& venv, const market::Bars& bars,
                        const env::IntradayOptions& options, const ActionFn& policy);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_BACKTEST_H_
