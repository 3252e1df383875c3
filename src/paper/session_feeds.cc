// rltrade paper: the feeds' loops — replay, stdin, tcp (see session.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <thread>

#include "core/civil_time.h"
#include "market/sessions.h"
#include "paper/session.h"

namespace rlt::paper {
namespace {

// Appends a live bar to `bars` with its session (by local date), as AssignSessions would.
void AppendBar(market::Bars& bars, const FeedBar& b, const market::TimeZone& tz) {
  const int32_t offset = tz.OffsetAt(b.time);
  const int32_t date = market::SessionDateKey(b.time, offset, bars.day_boundary);
  const int32_t t = static_cast<int32_t>(bars.size());
  bars.time.push_back(b.time);
  bars.utc_offset.push_back(offset);
  bars.open.push_back(b.open);
  bars.high.push_back(b.high);
  bars.low.push_back(b.low);
  bars.close.push_back(b.close);
  bars.volume.push_back(b.volume);
  if (bars.sessions.empty() || bars.sessions.back().date != date) {
    bars.sessions.push_back(market::Session{date, t, t + 1});
  } else {
    bars.sessions.back().end = t + 1;
  }
  bars.session.push_back(static_cast<int32_t>(bars.sessions.size()) - 1);
  bars.bar_in_session.push_back(t - bars.sessions.back().begin);
  bars.last_in_session.push_back(0);
}

// SIGINT/SIGTERM end a session cleanly (its outputs are written); restored afterwards.
std::atomic<int> g_stop_signal{0};
void OnStopSignal(int sig) { g_stop_signal.store(sig); }
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal.store(0);
    old_int_ = std::signal(SIGINT, OnStopSignal);
    old_term_ = std::signal(SIGTERM, OnStopSignal);
  }
  ~StopSignals() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*old_int_)(int) = SIG_DFL;
  void (*old_term_)(int) = SIG_DFL;
};

}  // namespace

Result<PaperOutcome> PaperSession::Run() {
  StopSignals stop_signals;  // until the outputs are written
  if (!live_) {
    RLT_RETURN_IF_ERROR(RunReplay());
  } else {
    RLT_RETURN_IF_ERROR(ReplayJournaledBars());
    if (line_feed_) {
      RLT_RETURN_IF_ERROR(RunLineFeed());
    } else {
      RLT_RETURN_IF_ERROR(RunTcp());
    }
  }
  return Finish();
}

std::string PaperSession::LiveBarProblem(const FeedBar& b, bool* outside_session) const {
  *outside_session = false;
  for (const double p : {b.open, b.high, b.low, b.close}) {
    if (!(p > 0) || !std::isfinite(p)) return "a price that is not a positive finite number";
  }
  if (b.high < b.low) return "a high below the low";
  if (!(b.volume >= 0) || !std::isfinite(b.volume)) return "a volume that is not a number >= 0";
  const market::Bars& seen = live_bars_.empty() ? *setup_.data_bars : live_bars_;
  if (!seen.empty()) {
    const double last = seen.close.back();
    if (b.high > last * kMaxPriceJump || b.low < last / kMaxPriceJump) {
      return "a price more than " + evalrun::Num(kMaxPriceJump) + " times off the last close " +
             evalrun::Num(last);
    }
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  if (b.time > now + kMaxFutureSeconds) {
    return "a time more than a day ahead of the clock (" +
           FormatIso8601(b.time, setup_.tz.OffsetAt(b.time)) + ")";
  }
  const int64_t local = b.time + setup_.tz.OffsetAt(b.time) - setup_.data_bars->day_boundary;
  const int minute = static_cast<int>(((local % 86400) + 86400) % 86400 / 60);
  *outside_session = minute > shape_.last_minute || minute < shape_.first_minute;
  if (setup_.calendar != nullptr) {  // the day's own hours (none on a holiday)
    const int32_t date = DateKey(CivilFromDays(DaysFromSeconds(local)));
    const std::optional<market::SessionHours> h =
        setup_.calendar->Covers(date) ? setup_.calendar->HoursOn(date) : std::nullopt;
    *outside_session = !h.has_value() || minute < h->open_minute || minute >= h->close_minute;
  }
  return "";
}

Status PaperSession::TakeLiveBar(const FeedBar& b, bool from_journal) {
  if (!from_journal) ++received_;
  last_bad_bar_.clear();
  if (!live_bars_.empty() && b.time <= live_bars_.time.back()) {  // had it, or out of order
    if (b.time > journal_last_time_) ++dropped_order_;
    return Status::Ok();
  }
  bool outside = false;
  const std::string problem = LiveBarProblem(b, &outside);
  if (!problem.empty()) {
    ++dropped_bad_;
    last_bad_bar_ = problem;
    if (line_feed_ && !from_journal) line_feed_->Refuse(b);
    if (!r_.quiet && problems_shown_++ < 20) {
      std::fprintf(stderr, "dropped the bar of %s: %s\n",
                   FormatIso8601(b.time, setup_.tz.OffsetAt(b.time)).c_str(), problem.c_str());
    }
    return journal_->Emit({{"type", "feed"},
                           {"event", from_journal ? "journal_bad_bar" : "bad_bar"},
                           {"epoch", b.time},
                           {"detail", problem}});
  }
  if (outside) {  // after the run's usual last bar of a day, or before its first
    ++dropped_hours_;
    return Status::Ok();
  }
  AppendBar(live_bars_, b, setup_.tz);
  const int32_t t = static_cast<int32_t>(live_bars_.size()) - 1;
  if (b.seq >= 0) bar_of_seq_[b.seq] = t;
  return OnBar(t, Clock::now(), b.seq);
}

// Waits out the replay's pace before bar t (SPEED x real time, at most an hour), in slices
// of 20 ms so that a stop signal ends the wait at once; false when a stop signal came.
bool PaperSession::Paced(int32_t t) {
  if (setup_.feed.speed > 0 && t > 0) {
    const double gap = static_cast<double>(bars_->time[t] - bars_->time[t - 1]) / setup_.feed.speed;
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(std::min(gap, 3600.0)));
    while (g_stop_signal.load() == 0 && Clock::now() < until) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(20)));
    }
  }
  return g_stop_signal.load() == 0;
}

Status PaperSession::RunReplay() {
  for (int32_t t = 0; t < static_cast<int32_t>(bars_->size()); ++t) {
    if (!Paced(t)) {
      end_reason_ = "signal";
      break;
    }
    RLT_RETURN_IF_ERROR(OnBar(t, Clock::now(), -1));
  }
  return Status::Ok();
}

Status PaperSession::RunLineFeed() {
  while (true) {
    if (g_stop_signal.load() != 0) {
      end_reason_ = "signal";
      break;
    }
    RLT_ASSIGN_OR_RETURN(const LineFeed::Event e, line_feed_->Next(200));
    if (e.kind == LineFeed::Event::Kind::kEnd) break;
    if (e.kind == LineFeed::Event::Kind::kBadLine) {
      RLT_RETURN_IF_ERROR(
          journal_->Emit({{"type", "feed"}, {"event", "bad_line"}, {"detail", e.problem}}));
      if (!r_.quiet && problems_shown_++ < 20) {
        std::fprintf(stderr, "skipped: %s\n", e.problem.c_str());
      }
      continue;
    }
    if (e.kind == LineFeed::Event::Kind::kBar) {
      RLT_RETURN_IF_ERROR(TakeLiveBar(e.bar));
    } else {
      RLT_RETURN_IF_ERROR(CheckStale());
    }
  }
  const LineFeedStats& fs = line_feed_->stats();
  return journal_->Emit({{"type", "feed"},
                         {"event", "end"},
                         {"lines", fs.lines},
                         {"bad_lines", fs.bad_lines},
                         {"out_of_order_bars", fs.out_of_order},
                         {"ticks", fs.ticks},
                         {"late_ticks", fs.late_ticks},
                         {"bad_ticks", fs.bad_ticks}});
}

// The bars that came while the positions were asked for, in seq order.
Status PaperSession::TakeWaitingBars() {
  while (!waiting_.empty()) {
    const FeedBar b = waiting_.front();
    waiting_.pop_front();
    if (b.seq > last_seq_) {
      RLT_RETURN_IF_ERROR(TakeLiveBar(b));
      last_seq_ = b.seq;
    }
    ready_due_ = std::max(ready_due_, b.seq);
  }
  return Status::Ok();
}

// The tcp feed (and broker). After every (re)connect the session resyncs (Resync); `ready`
// for the last bar handled goes out once every order sent for it has its ack or reject (and
// a rejected one's retry its own): in lockstep the server then fills them all at the next
// bar's open.
Status PaperSession::RunTcp() {
  const ServerHello& hello = broker_->hello();
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "broker"},
                                      {"event", "connected"},
                                      {"session", hello.session},
                                      {"next_bar", hello.next_bar},
                                      {"lockstep", hello.lockstep}}));
  if (hello.next_bar > last_seq_ + 1) {
    RLT_RETURN_IF_ERROR(journal_->Emit(
        {{"type", "feed"}, {"event", "gap"}, {"missed_bars", hello.next_bar - last_seq_ - 1}}));
  }
  RLT_RETURN_IF_ERROR(Resync());
  while (true) {
    if (g_stop_signal.load() != 0) {
      end_reason_ = "signal";
      break;
    }
    if (!awaiting_positions_) RLT_RETURN_IF_ERROR(TakeWaitingBars());
    if (ready_due_ >= 0 && unanswered_.empty() && broker_->connected()) {
      if (broker_->Ready(ready_due_).ok()) ready_due_ = -1;
    }
    RLT_ASSIGN_OR_RETURN(std::optional<BrokerEvent> ev, broker_->Poll(200));
    if (!ev) {
      if (broker_->ended()) break;
      RLT_RETURN_IF_ERROR(CheckStale());
      continue;
    }
    RLT_RETURN_IF_ERROR(HandleBrokerEvent(*ev));
  }
  // Bars that came before the end but after the last positions answer.
  while (!waiting_.empty()) {
    const FeedBar b = waiting_.front();
    waiting_.pop_front();
    if (b.seq > last_seq_) {
      RLT_RETURN_IF_ERROR(TakeLiveBar(b));
      last_seq_ = b.seq;
    }
  }
  broker_->Close();
  return Status::Ok();
}

Status PaperSession::HandleBrokerEvent(const BrokerEvent& ev) {
  if (ev.kind == BrokerEvent::Kind::kDisconnected) {
    return journal_->Emit({{"type", "broker"}, {"event", "disconnected"}, {"detail", ev.detail}});
  }
  if (ev.kind == BrokerEvent::Kind::kReconnected) {
    RLT_RETURN_IF_ERROR(journal_->Emit(
        {{"type", "broker"}, {"event", "reconnected"}, {"next_bar", broker_->hello().next_bar}}));
    return Resync();
  }
  const ServerMessage& m = ev.message;
  if (const auto* bar = std::get_if<BarMessage>(&m)) {
    if (bar->symbol != bars_->symbol) {
      (void)broker_->Ready(bar->seq);  // another symbol's bar: nothing to do
      return Status::Ok();
    }
    waiting_.push_back(
        FeedBar{bar->epoch, bar->open, bar->high, bar->low, bar->close, bar->volume, bar->seq});
  } else if (const auto* ack = std::get_if<Ack>(&m)) {
    unanswered_.erase(ack->client_order_id);
    return journal_->Emit(
        {{"type", "ack"}, {"client_order_id", ack->client_order_id}, {"order_id", ack->order_id}});
  } else if (const auto* f = std::get_if<Fill>(&m)) {
    return OnBrokerFill(*f, waiting_);
  } else if (const auto* rj = std::get_if<Reject>(&m)) {
    if (rj->request == "cancel") return Status::Ok();  // a cancel that came too late: it filled
    return OnReject(*rj);
  } else if (const auto* c = std::get_if<Cancelled>(&m)) {
    unanswered_.erase(c->client_order_id);
    finished_.insert(c->client_order_id);
    open_orders_.erase(c->client_order_id);
    return journal_->Emit({{"type", "cancelled"}, {"client_order_id", c->client_order_id}});
  } else if (const auto* p = std::get_if<Positions>(&m)) {
    return OnPositions(*p);
  } else if (const auto* err = std::get_if<ErrorMessage>(&m)) {
    RLT_RETURN_IF_ERROR(
        journal_->Emit({{"type", "broker"}, {"event", "error"}, {"detail", err->message}}));
    if (!r_.quiet) std::fprintf(stderr, "broker: %s\n", err->message.c_str());
  } else if (const auto* end = std::get_if<End>(&m)) {
    end_reason_ = end->reason;
  }
  return Status::Ok();
}

}  // namespace rlt::paper
