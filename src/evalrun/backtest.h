// rltrade evalrun: Backtest() — one policy walked through a sequential intraday env, with
// every bar, fill and session recorded (internal to evalrun; see evalrun.h).
//
// Per bar (equity): the first bar of each session (before any decision: flat) and every
// bar a step moves to. `position` is the shares held through the bar (after the decision
// fill at its open, before a closing flatten); cash and net worth are after every fill of
// the bar. Fills: the decision trade (env info traded_shares at fill_price) and, at a
// session's last bar, the flattening trade at the close, derived from the shares held;
// each fill's cost and the cash after it come from the env's own arithmetic
// (env::IntradaySizing::Cost, IntradayBook::Execute), so the rows are the exact values the
// env booked, and `rltrade paper`, which books with the same code, writes the same bytes.
#ifndef RLT_EVALRUN_BACKTEST_H_
#define RLT_EVALRUN_BACKTEST_H_

#include <cstdint>
#include <nlohmann/json.hpp>
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
  double net_pnl = 0;  // the sum over sessions of net worth end - start (after costs)
  double final_net_worth = 0;
  // The walk was stopped (net worth fell to [env] stop_fraction x capital) in the session
  // of this date (yyyymmdd; 0: it walked the whole range). The account trades no more:
  // every later session of the range is in session_dates with a return of 0, so the
  // series covers the range as the benchmarks' do.
  int32_t stopped_date = 0;
};

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

// REQUIRES: venv holds one IntradayStockEnv with sequential = true over `bars`.
BacktestResult Backtest(env::VecEnv& venv, const market::Bars& bars,
                        const env::IntradayOptions& options, const ActionFn& policy);

// ---- The evaluation files of a backtest (eval/outputs.h), shared by `rltrade eval` and
// ---- `rltrade paper`, so both write the same bytes for the same walk.

// summary.json's metrics of a walk, ratios annualised with `periods_per_year`.
nlohmann::ordered_json MetricsJson(const BacktestResult& r, int periods_per_year);
// A number as the files print it: 10 significant digits, "nan" when not finite.
std::string Num(double v);
// A bar's time, ISO 8601 with the exchange's UTC offset.
std::string BarTime(const market::Bars& bars, int32_t bar);
// equity.csv (with buy-and-hold's net worth beside), daily_returns.csv (with the
// benchmarks), trades.csv.
std::string EquityCsv(const market::Bars& bars, const BacktestResult& r, const BacktestResult& bh);
std::string DailyCsv(const BacktestResult& r, const BacktestResult& bh, const BacktestResult& flat);
std::string TradesCsv(const market::Bars& bars, const BacktestResult& r);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_BACKTEST_H_
