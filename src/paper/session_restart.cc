// rltrade paper: the session's journal, its restart and the reconciliation with the broker
// (see session.h).
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>

#include "core/civil_time.h"
#include "paper/session.h"

namespace rlt::paper {

namespace fs = std::filesystem;

Status PaperSession::OpenJournal() {
  const fs::path dir(setup_.journal_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(dir.string() + ": " + ec.message());
  RLT_ASSIGN_OR_RETURN(Journal journal, Journal::Open((dir / "journal.jsonl").string()));
  journal_.emplace(std::move(journal));
  const Json start_line = {
      {"type", "start"},       {"run_dir", r_.run_dir},   {"checkpoint", setup_.checkpoint},
      {"feed", r_.feed},       {"broker", r_.broker},     {"start", r_.start},
      {"account", r_.account}, {"symbol", bars_->symbol}, {"initial_capital", o_.initial_capital}};
  if (!journal_->previous().empty()) {
    // A restart: the session re-runs the bars it had (a replay from the feed's first bar,
    // a live feed from the journal's bars) and journals only what the previous process
    // did not (no order id is sent twice); it must be the same session.
    RLT_RETURN_IF_ERROR(CheckSameSession(start_line));
    RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "restart"},
                                        {"journaled_lines", journal_->previous().size()},
                                        {"time", FormatIso8601(std::time(nullptr), 0)}}));
    if (!r_.quiet) {
      std::fprintf(stderr, "restarting the session of %s from its %zu journaled events\n",
                   dir.c_str(), journal_->previous().size());
    }
  }
  RLT_RETURN_IF_ERROR(journal_->Emit(start_line));
  LoadJournaledOrders();
  return Status::Ok();
}

Status PaperSession::CheckSameSession(const Json& start_line) {
  const Json& was = journal_->previous().front();
  for (const char* key : {"run_dir", "checkpoint", "feed", "broker", "start", "account"}) {
    if (!was.contains(key) || was[key] != start_line[key]) {
      return Status::Refused(journal_->path() + " is the journal of " + "another session: its " +
                             key + " is " +
                             (was.contains(key) ? was[key].dump() : std::string("missing")) +
                             ", this one's " + start_line[key].dump() +
                             "; restart it with its own arguments or choose another --journal");
    }
  }
  return Status::Ok();
}

// A restart's orders without an outcome (re-sent after the connect), and its tcp fills
// (booked again before the bar they filled at).
void PaperSession::LoadJournaledOrders() {
  for (const Json& line : journal_->previous()) {
    const std::string type = line.value("type", "");
    const std::string id = line.value("client_order_id", "");
    if (type == "order" && tcp_broker_ && !finished_.count(id)) {
      const double q = line.value("quantity", 0.0) / lot_;
      open_orders_[id] = {
          static_cast<int64_t>(std::llround(line.value("side", "") == "BUY" ? q : -q)),
          line.value("bar", 0)};
    } else if (type == "fill" || type == "reject" || type == "cancelled") {
      finished_.insert(id);
      open_orders_.erase(id);
    }
  }
  if (tcp_broker_) {
    for (const Json& line : journal_->previous()) {
      if (line.value("type", "") == "fill") journaled_fills_.push_back(line);
    }
  }
}

// A live feed's restart first re-runs the journal's bars (features, decisions, the
// journal's fills); the feed then continues after them.
Status PaperSession::ReplayJournaledBars() {
  for (const Json& line : journal_->previous()) {
    if (line.value("type", "") != "bar") continue;
    FeedBar b;
    b.time = line.value("epoch", int64_t{0});
    b.open = line.value("open", 0.0);
    b.high = line.value("high", 0.0);
    b.low = line.value("low", 0.0);
    b.close = line.value("close", 0.0);
    b.volume = line.value("volume", 0.0);
    b.seq = line.value("seq", int64_t{-1});
    last_seq_ = std::max(last_seq_, b.seq);
    RLT_RETURN_IF_ERROR(TakeLiveBar(b));
  }
  // Fills journaled after the last journaled bar came before the next bar: booked now,
  // before the positions are reconciled.
  return BookJournaledFills(std::numeric_limits<int32_t>::max());
}

// After every (re)connect: the orders without an outcome are re-sent (same ids: the server
// answers them again, never a second fill), the last bar handled is readied, and the
// positions are asked for (bars wait until they came).
Status PaperSession::Resync() {
  for (const auto& [id, order] : open_orders_) {
    unanswered_.insert(id);
    (void)broker_->SendOrder(NewOrder{id, bars_->symbol, order.lots > 0 ? Side::kBuy : Side::kSell,
                                      std::fabs(shares(order.lots))});
  }
  ready_due_ = last_seq_;
  awaiting_positions_ = broker_->RequestPositions().ok();
  return Status::Ok();
}

// The broker's positions must agree with the journal's fills.
Status PaperSession::OnPositions(const Positions& p) {
  if (!awaiting_positions_) return Status::Ok();
  awaiting_positions_ = false;
  double held = 0;
  for (const PositionLine& pl : p.positions) {
    if (pl.symbol == bars_->symbol) held = pl.quantity;
  }
  const double booked = tcp_broker_ ? shares(walkers_[0].book.shares) : held;
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "reconcile"},
                                      {"broker_position", held},
                                      {"journal_position", booked},
                                      {"match", held == booked}}));
  if (held != booked) {
    return Status::Refused(
        "the broker's position in " + bars_->symbol + " is " + evalrun::Num(held) +
        " shares, but the fills in " + journal_->path() + " give " + evalrun::Num(booked) +
        ": the account was traded outside this session, or a fill was lost. Flatten the "
        "account at the broker and start a new journal, or use another --account");
  }
  return Status::Ok();
}

}  // namespace rlt::paper
