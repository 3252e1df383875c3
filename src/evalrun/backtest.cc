// rltrade evalrun: Backtest() (see backtest.h).
#include "evalrun/backtest.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include "core/civil_time.h"
#include "eval/metrics.h"
#include "eval/metrics_json.h"
#include "eval/outputs.h"

namespace rlt::evalrun {

namespace {

// A walk that ended before the range's last session was stopped out: the later sessions
// the env would have walked get a return of 0 (the account no longer trades).
void PadStoppedWalk(env::VecEnv& venv, const market::Bars& bars, BacktestResult& r) {
  const auto* intraday = dynamic_cast<const env::IntradayStockEnv*>(&venv.env(0));
  if (intraday == nullptr || r.session_dates.empty()) return;
  const int32_t last = r.session_dates.back();
  for (int32_t s : intraday->eligible_sessions()) {
    const int32_t date = bars.sessions[s].date;
    if (date <= last) continue;
    if (r.stopped_date == 0) r.stopped_date = last;
    r.session_dates.push_back(date);
    r.session_returns.push_back(0.0);
  }
}

}  // namespace

BacktestResult Backtest(env::VecEnv& venv, const market::Bars& bars,
                        const env::IntradayOptions& options, const ActionFn& policy) {
  RLT_CHECK(venv.num_envs() == 1 && options.sequential);
  BacktestResult r;
  RoundTrips trips;
  const env::IntradaySizing sizing = env::SizingOf(options);
  std::vector<float> action(venv.act_dim());
  const double lot = options.lot_size;
  auto shares = [lot](int64_t lots) { return static_cast<double>(lots) * lot; };
  venv.Reset(0);  // sequential: the seed draws nothing
  // A session's first bar: flat, or (flatten_at_close = false) the position carried in.
  auto add_first_bar = [&](const double* info) {
    const double held = info[env::kInfoShares];
    const double worth = info[env::kInfoNetWorth];
    const int32_t bar = static_cast<int32_t>(info[env::kInfoBar]);
    r.equity.push_back({bar, held, info[env::kInfoCash], worth});
    r.exposures.push_back(held != 0 && worth > 0 ? held * bars.close[bar] / worth : 0.0);
  };
  add_first_bar(venv.info());
  double session_start_worth = venv.info()[env::kInfoNetWorth];
  for (;;) {
    const double* before = venv.info();
    const int32_t t = static_cast<int32_t>(before[env::kInfoBar]);
    // Quantities in lots (exact integers); rows report shares (lots x lot_size).
    const int64_t lots_before = std::llround(before[env::kInfoShares] / lot);
    const double cash_before = before[env::kInfoCash];
    policy(venv.observations(), before, action.data());
    venv.Step(action.data());
    const bool done = venv.done(0);
    const double* after = done ? venv.terminal_info() : venv.info();
    const int32_t b = t + 1;
    RLT_CHECK(done || b == static_cast<int32_t>(after[env::kInfoBar]) || bars.last_in_session[b]);
    const int64_t qty = std::llround(after[env::kInfoTradedShares] / lot);
    const int64_t held = lots_before + qty;
    const bool session_end = bars.last_in_session[b] != 0;
    const bool flatten = session_end && held != 0 && options.flatten_at_close;
    const double close = bars.close[b];
    const double close_lot = close * lot;
    // The env's own cost and cash arithmetic (env::IntradayBook::Execute), so each fill
    // row holds the exact values the env booked.
    const double fill_lot = after[env::kInfoFillPrice] * lot;
    const double decision_cost = sizing.Cost(qty, fill_lot);
    const double flatten_cost = flatten ? sizing.Cost(-held, close_lot) : 0.0;
    const double cash_end = after[env::kInfoCash];
    if (qty != 0) {
      // With funding, the step also paid what fell due before the fill: the cash after the
      // fill is the env's (less the closing flatten's proceeds).
      const double cash_after_decision =
          options.funding_file.empty()
              ? cash_before - (static_cast<double>(qty) * fill_lot + decision_cost)
          : flatten ? cash_end - (static_cast<double>(held) * close_lot - flatten_cost)
                    : cash_end;
      FillRow f{b,
                shares(qty),
                after[env::kInfoFillPrice],
                decision_cost,
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
    // At a session's last bar the env has moved on to the next session's first bar: a
    // position carried over (flatten_at_close = false) is marked here at this bar's close.
    const bool carried = session_end && !done && !flatten && held != 0;
    const double worth =
        carried ? cash_end + static_cast<double>(held) * close_lot : after[env::kInfoNetWorth];
    r.equity.push_back({b, shares(held), cash_end, worth});
    r.exposures.push_back(worth > 0 ? static_cast<double>(held) * close_lot / worth : 0.0);
    if (session_end || done) {
      r.session_dates.push_back(bars.sessions[bars.session[b]].date);
      r.session_returns.push_back(worth / session_start_worth - 1.0);
      r.net_pnl += worth - session_start_worth;
      session_start_worth = worth;
    }
    if (done) {
      r.costs_paid = after[env::kInfoCostsPaid];
      r.final_net_worth = worth;
      break;
    }
    if (session_end) add_first_bar(venv.info());
  }
  PadStoppedWalk(venv, bars, r);
  return r;
}

nlohmann::ordered_json MetricsJson(const BacktestResult& r, int periods_per_year) {
  return eval::StrategyMetricsJson<nlohmann::ordered_json>(
      eval::ComputeStrategyMetrics(r.session_returns, r.round_trip_pnls, r.exposures, r.costs_paid,
                                   eval::MetricsOptions{periods_per_year}));
}

std::string Num(double v) { return std::isfinite(v) ? fmt::format("{:.10g}", v) : "nan"; }

std::string BarTime(const market::Bars& bars, int32_t bar) {
  return FormatIso8601(bars.time[bar], bars.utc_offset[bar], /*utc_z=*/false);
}

std::string EquityCsv(const market::Bars& bars, const BacktestResult& r, const BacktestResult& bh) {
  std::map<int32_t, double> bh_worth;
  for (const EquityRow& e : bh.equity) bh_worth[e.bar] = e.net_worth;
  std::string out = std::string(eval::kEquityHeader) + "\n";
  for (const EquityRow& e : r.equity) {
    const auto it = bh_worth.find(e.bar);
    out += fmt::format("{},{},{},{},{},{},{},{}\n", BarTime(bars, e.bar),
                       FormatDate(bars.sessions[bars.session[e.bar]].date),
                       bars.bar_in_session[e.bar], Num(bars.close[e.bar]), e.position, Num(e.cash),
                       Num(e.net_worth), it == bh_worth.end() ? "nan" : Num(it->second));
  }
  return out;
}

std::string DailyCsv(const BacktestResult& r, const BacktestResult& bh,
                     const BacktestResult& flat) {
  auto by_date = [](const BacktestResult& x) {
    std::map<int32_t, double> m;
    for (size_t i = 0; i < x.session_dates.size(); ++i)
      m[x.session_dates[i]] = x.session_returns[i];
    return m;
  };
  const auto bh_map = by_date(bh), flat_map = by_date(flat);
  auto get = [](const std::map<int32_t, double>& m, int32_t d) {
    const auto it = m.find(d);
    return it == m.end() ? std::string("nan") : Num(it->second);
  };
  std::string out = std::string(eval::kDailyReturnsHeader) + "\n";
  for (size_t i = 0; i < r.session_dates.size(); ++i) {
    const int32_t d = r.session_dates[i];
    out += fmt::format("{},{},{},{}\n", FormatDate(d), Num(r.session_returns[i]), get(bh_map, d),
                       get(flat_map, d));
  }
  return out;
}

std::string TradesCsv(const market::Bars& bars, const BacktestResult& r) {
  std::string out = std::string(eval::kTradesHeader) + "\n";
  for (const FillRow& f : r.fills) {
    out += fmt::format("{},{},{},{},{},{},{}\n", BarTime(bars, f.bar),
                       f.quantity > 0 ? "BUY" : "SELL", std::fabs(f.quantity), Num(f.price),
                       Num(f.cost), f.position_after, Num(f.cash_after));
  }
  return out;
}

}  // namespace rlt::evalrun
