// rltrade env: IntradayStockEnv — one symbol's intraday bars, buy/sell/hold with an
// amount (or a target exposure), shorting, costs, and end-of-session flattening.
//
// It is the environment of the intraday system rltrade replaces, with its defects fixed:
//  - Causal observation: a window of the last nlags+1 feature rows (precomputed once,
//    causal, normalised on the training range only) plus portfolio state. Warm-up rows
//    are never shown: episodes start only in sessions whose bars all have features.
//  - No look-ahead in execution: the decision made after bar t closes fills at bar t+1's
//    open (or its (h+l+c)/3 with fill = "next_typical"), a price not in the observation.
//  - Exact, self-financing accounting in doubles with whole lots (`lot_size` shares each;
//    1 by default, e.g. 0.001 for crypto): cash changes by -(traded value) - costs; net
//    worth changes by mark-to-market PnL - costs. Internally quantities are lot counts
//    and prices are per lot (price x lot_size); info and outputs report shares.
//  - Every position is flattened at the close of the last bar of each session, with costs
//    (flatten_at_close = false, for markets that never close: carried to the next session;
//    the boundary bar between two sessions has no decision of its own).
//
// Timeline of one Step() at bar t (obs shows bars <= t):
//   decode action -> fill at bar t+1 (open) -> mark at close[t+1] -> if t+1 is the
//   session's last bar: flatten at close[t+1], move to the next session's first bar
//   (or end the episode) -> reward -> observation of the new bar.
// Episodes: `episode_sessions` sessions starting at a uniformly drawn session of `range`
// (training), or with sequential = true every session of `range` in order (evaluation).
// Ends: end of the range's data (terminated), net worth <= stop_fraction * capital
// (terminated), episode_sessions done (truncated).
//
// Funding (funding_file, perpetual futures): a payment falling after bar t-1 and at or
// before bar t is paid at bar t's open on the position held into it, rate x lots x open
// (a long pays a positive rate), booked in cash and realised P&L. The boundary bar of two
// sessions has no step of its own: what fell due there (e.g. at 00:00) is paid at the
// next bar's open.
// Not modelled: partial fills, slippage beyond the fill-price rule, borrow fees,
// margin calls other than the stop fraction, dividends.
#ifndef RLT_ENV_ENVS_INTRADAY_H_
#define RLT_ENV_ENVS_INTRADAY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/status.h"
#include "env/env.h"
#include "env/envs/intraday_book.h"
#include "env/envs/intraday_reward.h"
#include "env/market_dataset.h"

namespace rlt::env {

struct IntradayOptions {
  int nlags = 5;                         // observation window = nlags + 1 bars
  double initial_capital = 100000.0;     // C0
  double lot_size = 1.0;                 // shares per lot; orders are whole lots
  std::string action_mode = "original";  // "original" (type, amount) | "target_position"
  double buy_threshold = 0.3;            // original: a[0] >= this buys
  double sell_threshold = -0.3;          // original: a[0] <= this sells
  double min_amount = 0.1;               // original: a[1] is clamped to [min_amount, 1]
  std::string fill = "next_open";        // "next_open" | "next_typical" ((h+l+c)/3 of t+1)
  double cost_rate = 0.0005;             // proportional cost on traded value
  double fixed_cost = 0.0;               // per trade (non-zero quantity)
  double max_short_value = -1.0;         // max short exposure in cash; < 0: initial_capital
  int episode_sessions = 1;              // sessions per training episode
  std::string reward = "pnl";            // "pnl" | "shaped" (the original composite)
  double turnover_penalty = 0.0;         // pnl reward: minus this x traded value / C0
  double drawdown_penalty = 0.0;         // pnl reward: minus this x increase of drawdown / C0
  double stop_fraction = 0.5;            // terminate when net worth <= this x C0
  bool sequential = false;               // walk every session of `range` in order
  bool flatten_at_close = true;          // flatten at each session's last bar (false: carry)
  FilePath funding_file;                 // perpetual futures' funding payments ("" = none)
  std::string range;                     // "YYYY-MM-DD:YYYY-MM-DD" (local dates); "" = all

  template <typename V>
  void VisitFields(V& v) {
    v("nlags", &nlags, "bars of history in the observation besides the current one");
    v("initial_capital", &initial_capital, "starting cash (> 0, at most 1e15)");
    v("lot_size", &lot_size,
      "shares per lot, the smallest tradable quantity (1 = whole shares; 0.001 for crypto)");
    v("action_mode", &action_mode, "action semantics", {"original", "target_position"});
    v("buy_threshold", &buy_threshold, "original mode: a[0] >= this buys");
    v("sell_threshold", &sell_threshold, "original mode: a[0] <= this sells");
    v("min_amount", &min_amount, "original mode: lower clamp of the amount a[1]");
    v("fill", &fill, "fill price of a decision at bar t", {"next_open", "next_typical"});
    v("cost_rate", &cost_rate, "proportional transaction cost");
    v("fixed_cost", &fixed_cost, "fixed cost per trade");
    v("max_short_value", &max_short_value, "max short exposure (cash); <0 = initial capital");
    v("episode_sessions", &episode_sessions, "sessions per training episode");
    v("reward", &reward, "reward mode", {"pnl", "shaped"});
    v("turnover_penalty", &turnover_penalty, "pnl mode: penalty per traded value / capital");
    v("drawdown_penalty", &drawdown_penalty, "pnl mode: penalty per drawdown increase");
    v("stop_fraction", &stop_fraction, "stop out when net worth falls to this x capital");
    v("sequential", &sequential, "evaluation: walk every session of the range in order");
    v("flatten_at_close", &flatten_at_close,
      "flatten every position at each session's last bar (false: a market that never closes, "
      "[data] session = \"24h\": positions are carried from one trading day to the next)");
    v("funding_file", &funding_file,
      "perpetual futures: CSV time,rate of funding payments (a long position pays rate x its "
      "value at each time, a short one receives it; naive times in [data] timezone); empty = "
      "funding not modelled");
    v("range", &range, "date range of sessions, YYYY-MM-DD:YYYY-MM-DD ('' = all)");
  }
};

// Info values written every step, in this order (IntradayStockEnv::kInfoNames).
enum IntradayInfo {
  kInfoNetWorth,
  kInfoCash,
  kInfoShares,
  kInfoCostsPaid,
  kInfoRealizedPnl,
  kInfoUnrealizedPnl,
  kInfoFillPrice,
  kInfoTradedShares,
  kInfoBar,
  kInfoSessionDate,
  kInfoTrades,
  kInfoCount
};

class IntradayStockEnv : public Env {
 public:
  // Validates options against the data; errors name the option and what to change.
  static Result<std::unique_ptr<IntradayStockEnv>> Create(std::shared_ptr<const MarketDataset> data,
                                                          const IntradayOptions& options);

  const EnvSpec& spec() const override { return spec_; }
  void Reset(float* obs, double* info) override;
  StepResult Step(const float* action, float* obs, double* info) override;
  // Carry rng_, the episode's position in the data, the portfolio and the shaped reward's
  // histories. LoadState() also checks that the data has the saved bar and session counts.
  void SaveState(StateWriter& out) const override;
  Status LoadState(StateReader& in) override;

  // Sessions (indices into bars.sessions) episodes may use, in time order.
  const std::vector<int32_t>& eligible_sessions() const { return eligible_; }
  static const std::vector<std::string>& InfoNames();
  // The spec of an env with `feature_cols` features and `options` (obs_dim, action space).
  static EnvSpec MakeSpec(int64_t feature_cols, const IntradayOptions& options);

  // The portfolio part of an observation, for callers that know the portfolio but do not
  // step the env (signals).
  struct PortfolioView {
    double position_fraction = 0.0;        // shares x close / net worth (0 = flat)
    double unrealized_over_capital = 0.0;  // shares x (close - average price) / C0
  };
  // Writes the observation the env would show at `bar` (obs_dim floats) for the portfolio
  // `view`, by the same code as Reset() and Step(): the nlags + 1 feature rows ending at
  // `bar`, then view.position_fraction, view.unrealized_over_capital and the fraction of
  // the session left, (session_bars - 1 - bar_in_session) / (session_bars - 1).
  // session_bars: bars in the bar's session; 0 = its session in `data` (as the env sees
  // it). Needs no eligible session, so it also serves a partial (live) session.
  // InvalidArgument: bar outside the data, its window reaching warm-up rows
  // (bar < first_valid + nlags), session_bars < 2 or <= the bar's index in its session.
  static Status WriteObservationAt(const MarketDataset& data, const IntradayOptions& options,
                                   int32_t bar, const PortfolioView& view, int32_t session_bars,
                                   float* obs);
  // The same layout from `rows`: the nlags + 1 feature rows (cols floats each, oldest
  // first) ending at the decided bar, as a live trader keeps them; session_left =
  // (session_bars - 1 - bar_in_session) / (session_bars - 1).
  static void WriteObservationFromRows(const float* rows, int64_t cols, int nlags,
                                       const PortfolioView& view, double session_left, float* obs);
  // The observation's portfolio part for `book` marked at a per-lot close.
  static PortfolioView ViewOf(const IntradayBook& book, double lot_close, double initial_capital);

 private:
  IntradayStockEnv(std::shared_ptr<const MarketDataset> data, const IntradayOptions& options,
                   std::vector<int32_t> eligible,
                   std::shared_ptr<const std::vector<double>> funding);
  void WriteObservation(float* obs) const;
  // The one observation layout (WriteObservation, WriteObservationAt).
  static void FillObservation(const features::FeatureMatrix& features, int nlags, int32_t bar,
                              double position_fraction, double unrealized_over_capital,
                              double session_left, float* obs);
  void WriteInfo(double* info) const;
  // funding_file: pays the funding of bars (from, to] at bar to's open on the position.
  void PayFunding(int32_t from, int32_t to);
  // lot_price: price x lot_size.
  double NetWorth(double lot_price) const { return book_.NetWorth(lot_price); }
  double LotPrice(double price) const { return price * options_.lot_size; }

  std::shared_ptr<const MarketDataset> data_;
  const market::Bars& bars_;
  const features::FeatureMatrix& features_;
  IntradayOptions options_;
  EnvSpec spec_;
  std::vector<int32_t> eligible_;
  IntradaySizing sizing_;
  bool typical_fill_, shaped_;
  // funding_file: the sum of the funding rates paid between bar t-1 and bar t, per bar
  // (null without a file); paid at bar t's open.
  std::shared_ptr<const std::vector<double>> funding_;

  // Episode state.
  int32_t t_ = 0;    // current bar (observation shows bars <= t_)
  int32_t pos_ = 0;  // index into eligible_ of the current session
  int32_t sessions_left_ = 0;
  IntradayBook book_;        // the portfolio: lots, per-lot prices
  int64_t last_traded_ = 0;  // lots
  // last_fill_: per share.
  double last_fill_ = 0, prev_net_worth_ = 0, peak_net_worth_ = 0, session_start_worth_ = 0;
  ShapedReward shaped_reward_;
};

Result<std::unique_ptr<Env>> MakeIntradayEnv(const std::map<std::string, std::string>& settings,
                                             std::shared_ptr<const MarketDataset> data);

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_INTRADAY_H_
