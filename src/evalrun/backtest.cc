// rltrade evalrun: Backtest() (see backtest.h).
#include "evalrun/backtest.h"

#include <cmath>
#include <cstdlib>
#include <vector>

namespace rlt::evalrun {
namespace {

// Tracks round trips from flat to flat over the fills in order.
struct RoundTrips {
  double position = 0;  // zero exactly when flat (lots x lot_size)
  double start_cash = 0;
  void Fill(const FillRow& f, double cash_before, std::vector<double>& pnls) {
    if (position == 0 && f.position_after != 0) start_cash = cash_before;
    if (position != 0 && f.position_after == 0) pnls.push_back(f.cash_after - start_cash);
    position = f.position_after;
  }
};

}  // namespace

BacktestResult Backtest(env::VecEnv& venv, const market::Bars& bars,
                        const env::IntradayOptions& options, const ActionFn& policy) {
  RLT_CHECK(venv.num_envs() == 1 && options.sequential);
  BacktestResult r;
  RoundTrips trips;
  std::vector<float> action(venv.act_dim());
  const double lot = options.lot_size;
  auto shares = [lot](int64_t lots) { return static_cast<double>(lots) * lot; };
  venv.Reset(0);  // sequential: the seed draws nothing
  auto add_first_bar = [&](const double* info) {
    r.equity.push_back({static_cast<int32_t>(info[env::kInfoBar]), 0, info[env::kInfoCash],
                        info[env::kInfoNetWorth]});
    r.exposures.push_back(0.0);
  };
  add_first_bar(venv.info());
  double session_start_worth = venv.info()[env::kInfoNetWorth];
  for (;;) {
    const double* before = venv.info();
    const int32_t t = static_cast<int32_t>(before[env::kInfoBar]);
    // Quantities in lots (exact integers); rows report shares (lots x lot_size).
    const int64_t lots_before = std::llround(before[env::kInfoShares] / lot);
    const double cash_before = before[env::kInfoCash];
    const double costs_before = before[env::kInfoCostsPaid];
    policy(venv.observations(), before, action.data());
    venv.Step(action.data());
    const bool done = venv.done(0);
    const double* after = done ? venv.terminal_info() : venv.info();
    const int32_t b = t + 1;
    RLT_CHECK(done || b == static_cast<int32_t>(after[env::kInfoBar]) || bars.last_in_session[b]);
    const int64_t qty = std::llround(after[env::kInfoTradedShares] / lot);
    const int64_t held = lots_before + qty;
    const bool session_end = bars.last_in_session[b] != 0;
    const bool flatten = session_end && held != 0;
    const double close = bars.close[b];
    const double close_lot = close * lot;
    const double flatten_cost =
        flatten ? std::fabs(static_cast<double>(held)) * close_lot * options.cost_rate +
                      options.fixed_cost
                : 0.0;
    const double step_costs = after[env::kInfoCostsPaid] - costs_before;
    const double cash_end = after[env::kInfoCash];
    if (qty != 0) {
      const double cash_after_decision =
          flatten ? cash_end - static_cast<double>(held) * close_lot + flatten_cost : cash_end;
      FillRow f{b,
                shares(qty),
                after[env::kInfoFillPrice],
                step_costs - flatten_cost,
                shares(held),
                cash_after_decision};
      trips.Fill(f, cash_before, r.round_trip_pnls);
      r.fills.push_back(f);
    }
    if (flatten) {
      const double cash_before_flatten =
          r.fills.empty() || r.fills.back().bar != b ? cash_before : r.fills.back().cash_after;
      FillRow f{b, shares(-held), close, flatten_cost, 0, cash_end};
      trips.Fill(f, cash_before_flatten, r.round_trip_pnls);
      r.fills.push_back(f);
    }
    const double worth = after[env::kInfoNetWorth];
    r.equity.push_back({b, shares(held), cash_end, worth});
    r.exposures.push_back(worth > 0 ? static_cast<double>(held) * close_lot / worth : 0.0);
    if (session_end || done) {
      r.session_dates.push_back(bars.sessions[bars.session[b]].date);
      r.session_returns.push_back(worth / session_start_worth - 1.0);
      session_start_worth = worth;
    }
    if (done) {
      r.costs_paid = after[env::kInfoCostsPaid];
      r.final_net_worth = worth;
      break;
    }
    if (session_end) add_first_bar(venv.info());
  }
  return r;
}

}  // namespace rlt::evalrun
