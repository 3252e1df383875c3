// rltrade env: IntradayStockEnv implementation (see intraday.h for the semantics).
#include "env/envs/intraday.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/options.h"
#include "market/csv.h"

namespace rlt::env {

const std::vector<std::string>& IntradayStockEnv::InfoNames() {
  static const std::vector<std::string> kNames = {
      "net_worth",  "cash",          "shares", "costs_paid",   "realized_pnl", "unrealized_pnl",
      "fill_price", "traded_shares", "bar",    "session_date", "trades"};
  return kNames;
}

namespace {

// Per bar t: the funding rates paid in (time[t-1], time[t]] (bar 0: none). Read once per
// file and process (each environment of a vector shares it).
Result<std::shared_ptr<const std::vector<double>>> FundingPerBar(const std::string& path,
                                                                 const market::Bars& bars) {
  RLT_ASSIGN_OR_RETURN(const market::FundingSeries f, market::ReadFundingCsv(path, bars.timezone));
  auto out = std::make_shared<std::vector<double>>(bars.size(), 0.0);
  size_t k = 0;
  for (size_t t = 0; t < bars.size(); ++t) {
    while (k < f.time.size() && f.time[k] <= bars.time[t]) {
      if (t > 0 && f.time[k] > bars.time[t - 1]) (*out)[t] += f.rate[k];
      ++k;
    }
  }
  return std::shared_ptr<const std::vector<double>>(std::move(out));
}

}  // namespace

Result<std::unique_ptr<IntradayStockEnv>> IntradayStockEnv::Create(
    std::shared_ptr<const MarketDataset> data, const IntradayOptions& o) {
  if (!data) return Status::InvalidArgument("intraday env: no market data given");
  auto bad = [](const std::string& what) { return Status::InvalidArgument("[env] " + what); };
  if (o.nlags < 0) return bad("nlags must be >= 0");
  if (!(o.initial_capital > 0 && o.initial_capital <= 1e15)) {
    return bad("initial_capital must be > 0 and at most 1e15");
  }
  if (!(o.lot_size > 0 && o.lot_size <= 1e9)) {
    return bad(
        "lot_size must be > 0 and at most 1e9 (shares per lot; 1 = whole shares, "
        "0.001 for crypto)");
  }
  if (!(o.buy_threshold > o.sell_threshold)) return bad("buy_threshold must exceed sell_threshold");
  if (!(o.min_amount > 0 && o.min_amount <= 1)) return bad("min_amount must be in (0, 1]");
  if (o.cost_rate < 0 || o.fixed_cost < 0) return bad("costs must be >= 0");
  if (!(o.cost_rate < 1)) {
    return bad("cost_rate must be in [0, 1) (a fraction of the traded value)");
  }
  if (o.episode_sessions < 1) return bad("episode_sessions must be >= 1");
  if (!(o.stop_fraction >= 0 && o.stop_fraction < 1)) return bad("stop_fraction must be in [0, 1)");
  DateRange range;
  if (!o.range.empty()) {
    RLT_ASSIGN_OR_RETURN(range, DateRange::Parse(o.range));
  }
  // Sessions whose every bar has a full, defined observation window (within its symbol's
  // part, for several symbols) and >= 2 bars.
  const int64_t first_observable = data->features.first_valid + o.nlags;
  std::vector<int32_t> eligible;
  const auto& sessions = data->bars.sessions;
  for (int32_t s = 0; s < static_cast<int32_t>(sessions.size()); ++s) {
    if (range.Contains(sessions[s].date) &&
        sessions[s].begin >= data->FirstValidOfSession(s) + o.nlags && sessions[s].size() >= 2) {
      eligible.push_back(s);
    }
  }
  if (eligible.empty()) {
    bool any_in_range = false;
    for (const auto& s : sessions) any_in_range = any_in_range || range.Contains(s.date);
    if (!any_in_range) {
      return bad("range '" + range.ToString() + "' contains no session of symbol '" +
                 data->bars.symbol + "'; choose a range inside the data");
    }
    bool all_single = true;
    for (const auto& s : sessions)
      all_single = all_single && (!range.Contains(s.date) || s.size() < 2);
    if (all_single) {
      return bad("each session in range '" + range.ToString() + "' of symbol '" +
                 data->bars.symbol +
                 "' has one bar (daily bars?); the intraday environment trades within sessions "
                 "and needs intraday bars (e.g. 1- or 5-minute bars)");
    }
    return bad("no session in range '" + range.ToString() + "' of symbol '" + data->bars.symbol +
               "' starts after the " + std::to_string(first_observable) +
               " bars of feature warm-up (and has >= 2 bars); choose a later range or more data");
  }
  std::shared_ptr<const std::vector<double>> funding;
  if (!o.funding_file.empty()) {
    Result<std::shared_ptr<const std::vector<double>>> read =
        FundingPerBar(o.funding_file.str(), data->bars);
    if (!read.ok()) {
      return Status::InvalidArgument("[env] funding_file: " + read.status().message() +
                                     (read.status().code() == Status::Code::kNotFound
                                          ? ". Fix: check the path (a CSV time,rate)"
                                          : ""));
    }
    funding = std::move(read).value();
  }
  return std::unique_ptr<IntradayStockEnv>(
      new IntradayStockEnv(std::move(data), o, eligible, std::move(funding)));
}

IntradayStockEnv::IntradayStockEnv(std::shared_ptr<const MarketDataset> data,
                                   const IntradayOptions& options, std::vector<int32_t> eligible,
                                   std::shared_ptr<const std::vector<double>> funding)
    : data_(std::move(data)),
      bars_(data_->bars),
      features_(data_->features),
      options_(options),
      eligible_(std::move(eligible)),
      sizing_(SizingOf(options)),
      typical_fill_(options.fill == "next_typical"),
      shaped_(options.reward == "shaped"),
      funding_(std::move(funding)) {
  spec_ = MakeSpec(features_.cols, options);
}

EnvSpec IntradayStockEnv::MakeSpec(int64_t feature_cols, const IntradayOptions& options) {
  const bool target_mode = options.action_mode == "target_position";
  EnvSpec spec;
  spec.id = "intraday";
  spec.obs_dim = static_cast<int>((options.nlags + 1) * feature_cols + 3);
  spec.action.discrete = false;
  spec.action.dim = target_mode ? 1 : 2;
  spec.action.low = target_mode ? std::vector<float>{-1.0f} : std::vector<float>{-1.0f, 0.0f};
  spec.action.high = target_mode ? std::vector<float>{1.0f} : std::vector<float>{1.0f, 1.0f};
  spec.info_names = InfoNames();
  return spec;
}

void IntradayStockEnv::Reset(float* obs, double* info) {
  pos_ = options_.sequential ? 0 : static_cast<int32_t>(rng_.UniformInt(eligible_.size()));
  sessions_left_ =
      options_.sequential ? static_cast<int32_t>(eligible_.size()) : options_.episode_sessions;
  t_ = bars_.sessions[eligible_[pos_]].begin;
  book_.cash = options_.initial_capital;
  book_.shares = 0;
  book_.avg_price = book_.realized = book_.costs = 0.0;
  book_.trades = last_traded_ = 0;
  last_fill_ = 0.0;
  prev_net_worth_ = peak_net_worth_ = session_start_worth_ = book_.cash;
  shaped_reward_.Reset();
  WriteObservation(obs);
  WriteInfo(info);
}

StepResult IntradayStockEnv::Step(const float* action, float* obs, double* info) {
  const int32_t next = t_ + 1;  // invariant: t_ is never a session's last bar
  // Funding due since the bar the position was last held at: the previous session's last
  // bar when this is a session's first bar with a position carried into it.
  const bool carried = book_.shares != 0 && bars_.bar_in_session[t_] == 0 && pos_ > 0;
  PayFunding(carried ? bars_.sessions[eligible_[pos_ - 1]].end - 1 : t_, next);
  const double fill = typical_fill_ ? (bars_.high[next] + bars_.low[next] + bars_.close[next]) / 3.0
                                    : bars_.open[next];
  ActionKind kind;
  float a0;
  const double fill_lot = LotPrice(fill);
  const int64_t qty = book_.OrderQuantity(sizing_, action, fill_lot, &kind, &a0);
  book_.Execute(sizing_, qty, fill_lot);
  last_fill_ = fill;
  last_traded_ = qty;
  const int64_t shares_after_trade = book_.shares;
  double traded_value = std::fabs(static_cast<double>(qty)) * fill_lot;
  t_ = next;
  const double close = LotPrice(bars_.close[t_]);
  StepResult result;
  const bool session_end = bars_.last_in_session[t_] != 0;
  double flatten_pnl = 0.0;
  // Flatten at the session's close; a carried position never passes to another symbol's
  // bars (an evaluation walk of several symbols).
  const bool symbol_ends =
      !data_->parts.empty() && pos_ + 1 < static_cast<int32_t>(eligible_.size()) &&
      data_->PartOfSession(eligible_[pos_ + 1]) != data_->PartOfSession(eligible_[pos_]);
  if (session_end && book_.shares != 0 && (options_.flatten_at_close || symbol_ends)) {
    const double realized_before = book_.realized;
    traded_value += std::fabs(static_cast<double>(book_.shares)) * close;
    const double cost = book_.Execute(sizing_, -book_.shares, close);
    flatten_pnl = book_.realized - realized_before - cost;
  }
  const double worth = NetWorth(close);
  RLT_DCHECK(std::fabs(worth - (options_.initial_capital + book_.realized +
                                static_cast<double>(book_.shares) * (close - book_.avg_price) -
                                book_.costs)) <= 1e-6 * options_.initial_capital);
  const double c0 = options_.initial_capital;
  if (shaped_) {
    ShapedStepInput in;
    in.initial_capital = c0;
    in.net_worth = worth;
    in.step_pnl = worth - prev_net_worth_;
    in.fill_price = fill_lot;  // per lot: the shaped terms use shares x price
    in.shares = shares_after_trade;
    in.a0 = a0;
    in.kind = kind;
    in.session_end = session_end;
    in.session_pnl = worth - session_start_worth_;
    in.flatten_pnl = flatten_pnl;
    result.reward = shaped_reward_.Step(in);
  } else {
    const double drawdown_before = (peak_net_worth_ - prev_net_worth_) / c0;
    const double drawdown_now = (std::max(peak_net_worth_, worth) - worth) / c0;
    result.reward = static_cast<float>(
        (worth - prev_net_worth_) / c0 - options_.turnover_penalty * traded_value / c0 -
        options_.drawdown_penalty * std::max(0.0, drawdown_now - drawdown_before));
  }
  peak_net_worth_ = std::max(peak_net_worth_, worth);
  prev_net_worth_ = worth;
  if (worth <= options_.stop_fraction * c0) result.terminated = true;
  if (session_end) {
    session_start_worth_ = worth;
    --sessions_left_;
    if (pos_ + 1 >= static_cast<int32_t>(eligible_.size()) ||
        (!options_.sequential && !data_->parts.empty() &&
         data_->PartOfSession(eligible_[pos_ + 1]) != data_->PartOfSession(eligible_[pos_]))) {
      // No more data in the range (of this symbol: a training episode never moves on to
      // another symbol's sessions; an evaluation walk goes through every symbol's).
      result.terminated = true;
    } else if (sessions_left_ <= 0) {
      result.truncated = !result.terminated;
    } else if (!result.terminated) {
      ++pos_;
      t_ = bars_.sessions[eligible_[pos_]].begin;
    }
  }
  WriteObservation(obs);
  WriteInfo(info);
  return result;
}

void IntradayStockEnv::PayFunding(int32_t from, int32_t to) {
  if (funding_ == nullptr || book_.shares == 0 || to <= from) return;
  double rate = 0.0;
  for (int32_t t = from + 1; t <= to; ++t) rate += (*funding_)[t];
  if (rate == 0.0) return;
  const double paid = rate * static_cast<double>(book_.shares) * LotPrice(bars_.open[to]);
  book_.cash -= paid;
  book_.realized -= paid;
}

void IntradayStockEnv::SaveState(StateWriter& out) const {
  Env::SaveState(out);             // rng_
  out.Put<int64_t>(bars_.size());  // checked on load: the same data
  out.Put<int64_t>(static_cast<int64_t>(eligible_.size()));
  out.Put(t_);
  out.Put(pos_);
  out.Put(sessions_left_);
  for (double v : {book_.cash, book_.avg_price, book_.realized, book_.costs}) out.Put(v);
  for (int64_t v : {book_.shares, book_.trades, last_traded_}) out.Put(v);
  for (double v : {last_fill_, prev_net_worth_, peak_net_worth_, session_start_worth_}) out.Put(v);
  shaped_reward_.SaveState(out);
}

Status IntradayStockEnv::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(Env::LoadState(in));
  RLT_RETURN_IF_ERROR(in.Expect<int64_t>(bars_.size(), "intraday bar count"));
  RLT_RETURN_IF_ERROR(
      in.Expect<int64_t>(static_cast<int64_t>(eligible_.size()), "intraday eligible sessions"));
  int32_t t = 0, pos = 0, sessions_left = 0;
  RLT_RETURN_IF_ERROR(in.Get(&t, "intraday bar"));
  RLT_RETURN_IF_ERROR(in.Get(&pos, "intraday session"));
  RLT_RETURN_IF_ERROR(in.Get(&sessions_left, "intraday sessions left"));
  if (pos < 0 || pos >= static_cast<int32_t>(eligible_.size())) {
    return in.Error("intraday session index " + std::to_string(pos) + " out of range");
  }
  const market::Session& s = bars_.sessions[eligible_[pos]];
  // Step() reads bar t + 1 of the same session: t is never a session's last bar.
  if (t < s.begin || t >= s.end - 1) {
    return in.Error("intraday bar " + std::to_string(t) + " is not in its session [" +
                    std::to_string(s.begin) + ", " + std::to_string(s.end - 1) + ")");
  }
  if (sessions_left < 0 || sessions_left > static_cast<int32_t>(eligible_.size())) {
    return in.Error("intraday sessions left " + std::to_string(sessions_left) + " out of range");
  }
  t_ = t;
  pos_ = pos;
  sessions_left_ = sessions_left;
  for (double* v : {&book_.cash, &book_.avg_price, &book_.realized, &book_.costs}) {
    RLT_RETURN_IF_ERROR(in.Get(v, "intraday portfolio"));
  }
  for (int64_t* v : {&book_.shares, &book_.trades, &last_traded_}) {
    RLT_RETURN_IF_ERROR(in.Get(v, "intraday portfolio"));
  }
  for (double* v : {&last_fill_, &prev_net_worth_, &peak_net_worth_, &session_start_worth_}) {
    RLT_RETURN_IF_ERROR(in.Get(v, "intraday portfolio"));
  }
  // A portfolio no run can reach (corrupt bytes) would break Step()'s arithmetic (share
  // counts converted from doubles, the self-financing identity): refuse it here. Bounds:
  // values within 1e9 x the initial capital, share counts within 2^53 (exact as doubles),
  // and cash + shares x avg_price = capital + realized - costs (Step()'s identity, at a
  // tolerance 100x tighter than its check so that stepping cannot break it).
  const double c0 = options_.initial_capital, limit = 1e9 * c0, max_shares = 9007199254740992.0;
  for (double v : {book_.cash, book_.avg_price, book_.realized, book_.costs, last_fill_,
                   prev_net_worth_, peak_net_worth_, session_start_worth_}) {
    if (!std::isfinite(v) || std::fabs(v) > limit) {
      return in.Error("intraday portfolio value " + std::to_string(v) +
                      " is not finite or beyond 1e9 x initial_capital (corrupt state)");
    }
  }
  for (int64_t v : {book_.shares, last_traded_}) {
    if (std::fabs(static_cast<double>(v)) > max_shares ||
        std::fabs(static_cast<double>(v) * book_.avg_price) > limit) {
      return in.Error("intraday share count " + std::to_string(v) + " out of range");
    }
  }
  if (book_.trades < 0 || book_.avg_price < 0 || book_.costs < 0) {
    return in.Error("intraday trades, avg_price and costs must be >= 0 (corrupt state)");
  }
  const double identity = book_.cash + static_cast<double>(book_.shares) * book_.avg_price -
                          (c0 + book_.realized - book_.costs);
  if (!(std::fabs(identity) <= 1e-8 * c0)) {
    return in.Error(
        "intraday cash, shares, avg_price, realized and costs are inconsistent "
        "(cash + shares x avg_price differs from capital + realized - costs by " +
        std::to_string(identity) + ")");
  }
  return shaped_reward_.LoadState(in);
}

void IntradayStockEnv::FillObservation(const features::FeatureMatrix& features, int nlags,
                                       int32_t bar, double position_fraction,
                                       double unrealized_over_capital, double session_left,
                                       float* obs) {
  // Rows bar-nlags..bar are contiguous in the row-major feature matrix.
  WriteObservationFromRows(features.row(bar - nlags), features.cols, nlags,
                           {position_fraction, unrealized_over_capital}, session_left, obs);
}

void IntradayStockEnv::WriteObservationFromRows(const float* rows, int64_t cols, int nlags,
                                                const PortfolioView& view, double session_left,
                                                float* obs) {
  const int64_t window = nlags + 1;
  std::memcpy(obs, rows, sizeof(float) * window * cols);
  float* state = obs + window * cols;
  state[0] = static_cast<float>(view.position_fraction);
  state[1] = static_cast<float>(view.unrealized_over_capital);
  state[2] = static_cast<float>(session_left);
}

IntradayStockEnv::PortfolioView IntradayStockEnv::ViewOf(const IntradayBook& book, double lot_close,
                                                         double initial_capital) {
  const double worth = book.NetWorth(lot_close);
  return {static_cast<double>(book.shares) * lot_close / worth,
          static_cast<double>(book.shares) * (lot_close - book.avg_price) / initial_capital};
}

void IntradayStockEnv::WriteObservation(float* obs) const {
  const double close = LotPrice(bars_.close[t_]);
  const market::Session& s = bars_.sessions[bars_.session[t_]];
  const PortfolioView view = ViewOf(book_, close, options_.initial_capital);
  FillObservation(features_, options_.nlags, t_, view.position_fraction,
                  view.unrealized_over_capital,
                  static_cast<double>(s.end - 1 - t_) / (s.size() - 1), obs);
}

Status IntradayStockEnv::WriteObservationAt(const MarketDataset& data,
                                            const IntradayOptions& options, int32_t bar,
                                            const PortfolioView& view, int32_t session_bars,
                                            float* obs) {
  const market::Bars& bars = data.bars;
  if (bar < 0 || bar >= static_cast<int64_t>(bars.size())) {
    return Status::InvalidArgument("bar " + std::to_string(bar) + " is outside the " +
                                   std::to_string(bars.size()) + " bars of the data");
  }
  if (options.nlags < 0) return Status::InvalidArgument("[env] nlags must be >= 0");
  const int64_t first_valid = data.FirstValidOfSession(bars.session[bar]);
  const int64_t first_observable = first_valid + options.nlags;
  if (bar < first_observable) {
    return Status::InvalidArgument(
        "bar " + std::to_string(bar) + " has no full observation window: it needs bar >= " +
        std::to_string(first_observable) + " (feature warm-up " + std::to_string(first_valid) +
        " + nlags " + std::to_string(options.nlags) + ")");
  }
  const market::Session& s = bars.sessions[bars.session[bar]];
  const int32_t size = session_bars > 0 ? session_bars : s.size();
  const int32_t in_session = bar - s.begin;
  if (size < 2 || in_session >= size) {
    return Status::InvalidArgument("session of " + std::to_string(size) +
                                   " bars: needs >= 2 bars and more than the bar's index " +
                                   std::to_string(in_session) + " in its session");
  }
  FillObservation(data.features, options.nlags, bar, view.position_fraction,
                  view.unrealized_over_capital,
                  static_cast<double>(size - 1 - in_session) / (size - 1), obs);
  return Status::Ok();
}

void IntradayStockEnv::WriteInfo(double* info) const {
  const double close = LotPrice(bars_.close[t_]);
  info[kInfoNetWorth] = NetWorth(close);
  info[kInfoCash] = book_.cash;
  info[kInfoShares] = static_cast<double>(book_.shares) * options_.lot_size;
  info[kInfoCostsPaid] = book_.costs;
  info[kInfoRealizedPnl] = book_.realized;
  info[kInfoUnrealizedPnl] = static_cast<double>(book_.shares) * (close - book_.avg_price);
  info[kInfoFillPrice] = last_fill_;
  info[kInfoTradedShares] = static_cast<double>(last_traded_) * options_.lot_size;
  info[kInfoBar] = t_;
  info[kInfoSessionDate] = bars_.sessions[bars_.session[t_]].date;
  info[kInfoTrades] = static_cast<double>(book_.trades);
}

Result<std::unique_ptr<Env>> MakeIntradayEnv(const std::map<std::string, std::string>& settings,
                                             std::shared_ptr<const MarketDataset> data) {
  IntradayOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  RLT_ASSIGN_OR_RETURN(auto env, IntradayStockEnv::Create(std::move(data), options));
  return std::unique_ptr<Env>(std::move(env));
}

}  // namespace rlt::env
