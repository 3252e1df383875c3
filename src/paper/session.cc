// rltrade paper: the session's construction and its bar (see session.h).
#include "paper/session.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/civil_time.h"
#include "market/sessions.h"

namespace rlt::paper {
namespace {

template <typename T>
T Mode(const std::vector<T>& values) {
  std::map<T, int> counts;
  for (const T& v : values) ++counts[v];
  T best{};
  int n = 0;
  for (const auto& [v, c] : counts) {
    if (c >= n) {
      n = c;
      best = v;
    }
  }
  return best;
}

// Minutes since the trading day began (local midnight, or bars.day_boundary for a market
// that never closes and is cut elsewhere).
int MinuteOfBar(const market::Bars& bars, size_t t) {
  const int64_t local = bars.time[t] + bars.utc_offset[t] - bars.day_boundary;
  return static_cast<int>(((local % 86400) + 86400) % 86400 / 60);
}

}  // namespace

SessionShape ShapeOf(const market::Bars& bars) {
  SessionShape shape;
  std::vector<int32_t> sizes;
  std::vector<int> last;
  shape.first_minute = 24 * 60;
  for (const market::Session& s : bars.sessions) {
    sizes.push_back(s.size());
    last.push_back(MinuteOfBar(bars, static_cast<size_t>(s.end - 1)));
    shape.first_minute = std::min(shape.first_minute, MinuteOfBar(bars, s.begin));
  }
  shape.bars = Mode(sizes);
  shape.last_minute = Mode(last);
  if (bars.sessions.empty()) shape.first_minute = 0;
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < bars.size(); ++i) {
    if (bars.session[i] == bars.session[i - 1]) gaps.push_back(bars.time[i] - bars.time[i - 1]);
  }
  if (!gaps.empty()) {
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    shape.bar_seconds = std::max<int64_t>(1, gaps[gaps.size() / 2]);
  }
  return shape;
}

PaperSession::PaperSession(SessionSetup setup, features::IncrementalFeatures stream,
                           std::unique_ptr<SessionPolicy> policy,
                           std::unique_ptr<LineFeed> line_feed, std::unique_ptr<TcpBroker> broker)
    : setup_(std::move(setup)),
      r_(setup_.request),
      o_(setup_.options),
      stream_(std::move(stream)),
      policy_(std::move(policy)),
      line_feed_(std::move(line_feed)),
      broker_(std::move(broker)) {
  live_ = setup_.feed.kind != FeedSpec::Kind::kReplay;
  external_ = setup_.external != nullptr;
  tcp_broker_ = !external_ && r_.broker != "sim";
  const market::Bars& data_bars = *setup_.data_bars;
  live_bars_.symbol = data_bars.symbol;
  live_bars_.timezone = data_bars.timezone;
  live_bars_.day_boundary = data_bars.day_boundary;
  live_bars_.around_the_clock = data_bars.around_the_clock;
  bars_ = live_ ? &live_bars_ : &data_bars;
  shape_ = ShapeOf(data_bars);
  if (setup_.limits) gate_.emplace(*setup_.limits);
  sizing_ = env::SizingOf(o_);
  lot_ = o_.lot_size;
  c0_ = o_.initial_capital;
  window_ = o_.nlags + 1;
  cols_ = stream_.cols() + static_cast<int64_t>(setup_.symbol_id.size());
  const env::EnvSpec spec = env::IntradayStockEnv::MakeSpec(cols_, o_);
  act_dim_ = static_cast<int>(spec.action.dim);
  for (Walker& w : walkers_) {
    w.book.cash = c0_;
    w.session_start_worth = c0_;
  }
  rows_.assign(static_cast<size_t>(window_ * cols_), 0.0f);  // the last `window` rows
  obs_.assign(spec.obs_dim, 0.0f);
  action_.assign(act_dim_, 0.0f);
  day_start_worth_ = c0_;
  last_arrival_ = wall_start_ = Clock::now();
  last_status_ = Clock::now() - std::chrono::hours(1);
  started_time_ = static_cast<int64_t>(std::time(nullptr));
}

PaperSession::~PaperSession() = default;

int PaperSession::MinuteOfDay(int32_t t) const {
  return MinuteOfBar(*bars_, static_cast<size_t>(t));
}

// Live sessions end at the run's usual last bar (its local minute); a replay's at the
// file's own last bar of each session.
bool PaperSession::IsLast(int32_t t) const {
  if (!live_) return bars_->last_in_session[t] != 0;
  return MinuteOfDay(t) >= LastMinuteOf(t);
}

bool PaperSession::NextIsLast(int32_t t) const {
  return MinuteOfDay(t) + static_cast<int>(shape_.bar_seconds / 60) >= LastMinuteOf(t);
}

// The start minute of the last bar of bar t's session: the calendar's close of that day
// less one bar (an early close ends the session early), else the run's usual last minute.
int PaperSession::LastMinuteOf(int32_t t) const {
  if (setup_.calendar == nullptr) return shape_.last_minute;
  const int32_t date = bars_->sessions[bars_->session[t]].date;
  if (!setup_.calendar->Covers(date)) return shape_.last_minute;
  const std::optional<market::SessionHours> h = setup_.calendar->HoursOn(date);
  if (!h.has_value()) return shape_.last_minute;
  return h->close_minute - static_cast<int>(shape_.bar_seconds / 60);
}

// The observation's time left in the session: bars to its last, over its length - 1.
double PaperSession::TimeLeft(int32_t t, const market::Session& s) const {
  if (!live_) return static_cast<double>(s.end - 1 - t) / (s.size() - 1);
  const int32_t k = bars_->bar_in_session[t];
  return static_cast<double>(std::max(0, shape_.bars - 1 - k)) / (shape_.bars - 1);
}

Status PaperSession::PushFeatures(int32_t t) {
  RLT_ASSIGN_OR_RETURN(std::span<const float> row, stream_.Push(features::StreamBarAt(*bars_, t)));
  if (first_valid_ < 0 && stream_.warmed_up()) first_valid_ = t;
  std::copy(rows_.begin() + cols_, rows_.end(), rows_.begin());
  const auto last = rows_.end() - cols_;
  std::copy(row.begin(), row.end(), last);
  std::copy(setup_.symbol_id.begin(), setup_.symbol_id.end(), last + std::ssize(row));
  return Status::Ok();
}

// The previous session ended before its usual last bar (a half day, a feed that
// stopped): it is closed at its last bar t, as if that bar had been its last.
Status PaperSession::CloseSessionEarly(int32_t t, bool clear_pending) {
  for (int k = 0; k < 3; ++k) {
    Walker& w = walkers_[k];
    if (w.stopped || w.result.equity.empty()) continue;
    w.result.equity.pop_back();
    w.result.exposures.pop_back();
    if (clear_pending) w.pending.clear();
    RLT_RETURN_IF_ERROR(FinishBar(k, t, true));
  }
  session_open_ = false;
  return Status::Ok();
}

// The first bar of a session: the previous one closed if it ended early; trading starts
// when the session is on or after --start and has a full observation window.
Status PaperSession::OpenSessionAt(int32_t t) {
  const market::Bars& bars = *bars_;
  if (session_open_ && t > 0) RLT_RETURN_IF_ERROR(CloseSessionEarly(t - 1, true));
  active_session_ = -1;
  const int32_t si = bars.session[t];
  const market::Session& s = bars.sessions[si];
  const int32_t length = live_ ? shape_.bars : s.size();
  if (s.date >= setup_.start_date && length >= 2 && first_valid_ >= 0 &&
      s.begin >= first_valid_ + o_.nlags) {
    active_session_ = si;
    session_open_ = true;
    orders_today_ = 0;
    day_start_worth_ = walkers_[0].book.NetWorth(bars.close[t] * lot_);
    for (Walker& w : walkers_) {
      w.halted = w.flatten_next = false;
      if (w.stopped) continue;
      w.result.equity.push_back(
          {t, shares(w.book.shares), w.book.cash, w.book.NetWorth(bars.close[t] * lot_)});
      w.result.exposures.push_back(0.0);
    }
    if (policy_->recurrent()) policy_->ResetState();
  }
  return Status::Ok();
}

Status PaperSession::OnBar(int32_t t, Clock::time_point arrived, int64_t seq) {
  const market::Bars& bars = *bars_;
  // A bar that comes after stale_feed_seconds without one: the feed was stale.
  if (gate_ && t > 0 && session_open_ &&
      std::chrono::duration<double>(arrived - last_arrival_).count() >
          gate_->limits().stale_feed_seconds) {
    RLT_RETURN_IF_ERROR(OnStale(t - 1));
  }
  last_arrival_ = arrived;
  Json bar_line = {{"type", "bar"},
                   {"bar", t},
                   {"time", evalrun::BarTime(bars, t)},
                   {"epoch", bars.time[t]},
                   {"open", bars.open[t]},
                   {"high", bars.high[t]},
                   {"low", bars.low[t]},
                   {"close", bars.close[t]},
                   {"volume", bars.volume[t]}};
  if (seq >= 0) bar_line["seq"] = seq;
  RLT_RETURN_IF_ERROR(journal_->Emit(bar_line));
  // A restart's journaled tcp fills of this bar (they came before it).
  RLT_RETURN_IF_ERROR(BookJournaledFills(t));
  RLT_RETURN_IF_ERROR(PushFeatures(t));
  ++bars_seen_;
  const int32_t si = bars.session[t];
  const bool first_bar = bars.bar_in_session[t] == 0;
  const bool last_bar = IsLast(t);
  if (live_ && last_bar) live_bars_.last_in_session[t] = 1;
  if (first_bar) RLT_RETURN_IF_ERROR(OpenSessionAt(t));
  if (active_session_ != si) return Status::Ok();
  if (!first_bar) RLT_RETURN_IF_ERROR(FillPending(t, last_bar));
  stale_ = false;  // a bar came: the feed is fresh again
  if (!last_bar) RLT_RETURN_IF_ERROR(Decide(t, arrived, first_bar));
  if (r_.fsync == "bar") RLT_RETURN_IF_ERROR(journal_->Sync());
  if (last_bar || Clock::now() - last_status_ > std::chrono::seconds(1)) {
    RLT_RETURN_IF_ERROR(WriteStatus(t, "running"));
  }
  return Status::Ok();
}

// The in-process broker fills the previous bar's decision at this bar's open (or typical
// price), sized at that price by the environment's rules; the tcp broker's fills came
// before this bar. Then each walker's bar ends (FinishBar).
Status PaperSession::FillPending(int32_t t, bool last_bar) {
  const market::Bars& bars = *bars_;
  const double fill =
      o_.fill == "next_typical" ? (bars.high[t] + bars.low[t] + bars.close[t]) / 3.0 : bars.open[t];
  for (int k = 0; k < 3; ++k) {
    Walker& w = walkers_[k];
    if (w.stopped) {
      // A stopped account trades no more: its later sessions count as flat (return 0), as
      // `rltrade eval` counts them.
      const int32_t date = bars.sessions[bars.session[t]].date;
      if (last_bar && (w.result.session_dates.empty() || w.result.session_dates.back() < date)) {
        w.result.session_dates.push_back(date);
        w.result.session_returns.push_back(0.0);
      }
      continue;
    }
    if (k > 0 || !tcp_broker_) {
      env::ActionKind kind;
      float a0 = 0;
      int64_t qty = w.pending.empty()
                        ? 0
                        : w.book.OrderQuantity(sizing_, w.pending.data(), fill * lot_, &kind, &a0);
      w.pending.clear();
      std::string suffix;
      if (w.flatten_next) {  // the risk limits' flatten replaces the decision
        w.flatten_next = false;
        qty = -w.book.shares;
        suffix = stale_ ? "-stale" : "-risk";
      }
      const std::string id = OrderId(t) + suffix;
      if (k == 0 && stale_ && suffix.empty() && qty != 0 &&
          std::llabs(w.book.shares + qty) > std::llabs(w.book.shares)) {
        // Decided before the feed went stale: not sent (reducing orders pass).
        RLT_RETURN_IF_ERROR(RiskLine(t, id, "stale_feed", "decided on a stale feed"));
        qty = 0;
      }
      qty = BoundedLots(qty, fill * lot_, bars.close[t - 1] * lot_, w.book);
      if (k == 0) {
        RLT_ASSIGN_OR_RETURN(qty, Checked(t, qty, id, fill, bars.close[t - 1], t));
      }
      if (k == 0 && external_) {  // the outside broker gets the order the sim would fill
        RLT_RETURN_IF_ERROR(
            SubmitExternal(t, qty, fill, id, suffix.empty() ? "decision" : suffix.substr(1)));
      } else if (qty != 0) {
        const double cash_before = w.book.cash;
        const double cost = w.book.Execute(sizing_, qty, fill * lot_);
        RLT_RETURN_IF_ERROR(
            RecordFill(w, t, qty, fill, cost, cash_before, k == 0, id, Json::object()));
      }
    }
    RLT_RETURN_IF_ERROR(FinishBar(k, t, last_bar));
  }
  if (last_bar) session_open_ = false;
  return Status::Ok();
}

// One decision: the policy's, and the benchmarks' fixed exposures.
Status PaperSession::Decide(int32_t t, Clock::time_point arrived, bool first_bar) {
  const market::Bars& bars = *bars_;
  const market::Session& s = bars.sessions[bars.session[t]];
  Walker& w = walkers_[0];
  const bool may_decide = !w.stopped && !w.halted &&
                          (!gate_ || gate_->limits().trading_start < 0 ||
                           gate_->MayOpen(MinuteOfDay(t)) || w.book.shares != 0);
  if (may_decide) {
    const env::IntradayStockEnv::PortfolioView view =
        env::IntradayStockEnv::ViewOf(w.book, bars.close[t] * lot_, c0_);
    env::IntradayStockEnv::WriteObservationFromRows(rows_.data(), cols_, o_.nlags, view,
                                                    TimeLeft(t, s), obs_.data());
    policy_->Act(obs_.data(), action_.data());
    const double latency_us =
        std::chrono::duration<double, std::micro>(Clock::now() - arrived).count();
    latencies_.push_back(latency_us);
    w.pending = action_;
    ++decisions_;
    Json a = Json::array();
    for (float v : action_) a.push_back(v);
    RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "decision"},
                                        {"bar", t},
                                        {"time", evalrun::BarTime(bars, t)},
                                        {"action", a},
                                        {"latency_us", latency_us}}));
  }
  if (tcp_broker_ && !w.stopped) RLT_RETURN_IF_ERROR(SendDecision(t, may_decide));
  walkers_[1].pending.assign(act_dim_, 0.0f);  // flat: exposure 0 (inside the hold band)
  walkers_[2].pending.assign(act_dim_, 0.0f);
  walkers_[2].pending[0] = sizing_.target_mode || first_bar ? 1.0f : 0.0f;  // buy-and-hold
  if (!sizing_.target_mode) {
    walkers_[1].pending[1] = 1.0f;
    walkers_[2].pending[1] = 1.0f;
  }
  return Status::Ok();
}

// The tcp broker: the order goes out now, sized at this bar's close; the session's close
// order at the bar before its last (it fills at the last bar's open).
Status PaperSession::SendDecision(int32_t t, bool may_decide) {
  Walker& w = walkers_[0];
  const double close_lot = bars_->close[t] * lot_;
  int64_t qty = 0;
  std::string suffix;
  if (w.flatten_next) {
    w.flatten_next = false;
    qty = -w.book.shares;
    suffix = "-risk";
  } else if (NextIsLast(t) && o_.flatten_at_close) {
    qty = -w.book.shares;
    suffix = "-close";
  } else if (may_decide) {
    env::ActionKind kind;
    float a0 = 0;
    qty = w.book.OrderQuantity(sizing_, action_.data(), close_lot, &kind, &a0);
    qty = BoundedLots(qty, close_lot, bars_->close[t > 0 ? t - 1 : t] * lot_, w.book);
  }
  w.pending.clear();
  const std::string id = OrderId(t + 1) + suffix;
  RLT_ASSIGN_OR_RETURN(qty, Checked(t, qty, id, bars_->close[t], bars_->close[t], t));
  return SendOrder(t, qty, suffix);
}

int64_t PaperSession::BoundedLots(int64_t lots, double lot_price, double trusted_lot_price,
                                  const env::IntradayBook& book) const {
  const int64_t after = book.shares + lots;
  if (lots == 0 || std::llabs(after) <= std::llabs(book.shares)) return lots;
  const double ref = std::max(lot_price, trusted_lot_price);
  if (!(ref > 0) || !std::isfinite(ref)) return 0;
  const double worth = std::max(0.0, book.NetWorth(trusted_lot_price));
  const double limit =
      after > 0 ? 2.0 * worth : 2.0 * worth + std::max(0.0, sizing_.max_short_value);
  constexpr double kMaxLots = 9007199254740992.0;  // 2^53: exact in a double
  const auto cap = static_cast<int64_t>(std::min(std::floor(limit / ref), kMaxLots));
  if (std::llabs(after) <= cap) return lots;
  // Never below what is held on that side (the order only adds less).
  const bool same_side = (after > 0) == (book.shares > 0) && book.shares != 0;
  const int64_t size = same_side ? std::max<int64_t>(cap, std::llabs(book.shares)) : cap;
  const int64_t bounded = size * (after > 0 ? 1 : -1);
  return bounded - book.shares;
}

// The end of bar t for walker k: the session's close flattens (in process; with the tcp
// broker the policy's close order went out at the bar before), the equity is marked, the
// session's return recorded, the risk limits' daily loss and flatten time checked.
Status PaperSession::FinishBar(int k, int32_t t, bool last_bar) {
  Walker& w = walkers_[k];
  const double close_lot = bars_->close[t] * lot_;
  const int64_t held = w.book.shares;  // marked as held over the bar (the evaluation's rule)
  if (last_bar && w.book.shares != 0 && o_.flatten_at_close) {
    if (k == 0 && tcp_broker_) {
      RLT_RETURN_IF_ERROR(
          RiskLine(t, OrderId(t + 1) + "-close", "session_close",
                   "the session ended with a position of " + evalrun::Num(shares(w.book.shares)) +
                       " shares (its closing order did not fill): flatten at the next bar"));
      RLT_RETURN_IF_ERROR(SendOrder(t, -w.book.shares, "-close"));
    } else if (k == 0 && external_) {  // a market order at the close, booked in this bar
      RLT_RETURN_IF_ERROR(
          SubmitExternal(t, -held, bars_->close[t], OrderId(t) + "-close", "close"));
    } else {
      const double cash_before = w.book.cash;
      const double cost = w.book.Execute(sizing_, -held, close_lot);
      RLT_RETURN_IF_ERROR(RecordFill(w, t, -held, bars_->close[t], cost, cash_before, k == 0,
                                     OrderId(t) + "-close", Json::object()));
    }
  }
  const double worth = w.book.NetWorth(close_lot);
  w.result.equity.push_back({t, shares(held), w.book.cash, worth});
  w.result.exposures.push_back(worth > 0 ? static_cast<double>(held) * close_lot / worth : 0.0);
  return EndOfBar(k, t, last_bar, worth);
}

// The session's return at its last bar (or at the stop), the snapshot, the daily limits.
Status PaperSession::EndOfBar(int k, int32_t t, bool last_bar, double worth) {
  Walker& w = walkers_[k];
  const market::Session& s = bars_->sessions[bars_->session[t]];
  const bool stop = worth <= o_.stop_fraction * c0_;
  if (last_bar || stop) {
    w.result.session_dates.push_back(s.date);
    w.result.session_returns.push_back(worth / w.session_start_worth - 1.0);
    w.result.net_pnl += worth - w.session_start_worth;
    w.session_start_worth = worth;
  }
  if (stop) {
    w.stopped = true;
    if (k == 0 && tcp_broker_ && w.book.shares != 0) {
      RLT_RETURN_IF_ERROR(SendOrder(t, -w.book.shares, "-stop"));
    } else if (k == 0 && external_ && w.book.shares != 0) {
      RLT_RETURN_IF_ERROR(
          SubmitExternal(t, -w.book.shares, bars_->close[t], OrderId(t + 1) + "-stop", "stop"));
    }
  }
  if (k == 0 && (last_bar || stop)) {
    ++sessions_;
    RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "snapshot"},
                                        {"bar", t},
                                        {"date", FormatDate(s.date)},
                                        {"net_worth", worth},
                                        {"cash", w.book.cash},
                                        {"position", shares(w.book.shares)},
                                        {"return", w.result.session_returns.back()},
                                        {"costs_paid", w.book.costs},
                                        {"stopped", stop}}));
    if (r_.fsync == "session") RLT_RETURN_IF_ERROR(journal_->Sync());
  }
  if (k == 0 && gate_ && !last_bar && !stop && !w.halted) {
    RLT_RETURN_IF_ERROR(CheckDailyLimits(t, worth));
  }
  return Status::Ok();
}

Status PaperSession::CheckDailyLimits(int32_t t, double worth) {
  Walker& w = walkers_[0];
  const double loss = w.session_start_worth - worth;
  if (loss >= gate_->limits().max_daily_loss) {
    w.halted = true;
    w.flatten_next = w.book.shares != 0;
    return RiskLine(t, OrderId(t + 1) + "-risk", "max_daily_loss",
                    "session loss " + evalrun::Num(loss) + ": flatten, no new orders today");
  }
  if (gate_->MustFlatten(MinuteOfDay(t))) {
    w.halted = true;
    w.flatten_next = w.book.shares != 0;
    return RiskLine(t, OrderId(t + 1) + "-risk", "flatten_before_close",
                    "flatten time reached: flatten, no new exposure");
  }
  return Status::Ok();
}

}  // namespace rlt::paper
