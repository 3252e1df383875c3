// rltrade paper: a session whose broker is outside the process's own code (see session.h
// and external_broker.h) — the Python package's bridge to a user's broker.
//
// Timing: an order goes to the broker when the in-process broker would fill it — the
// decision of bar t when bar t+1 arrives, sized at its open (or typical price) by the same
// code; the session's closing flatten at its last bar's close — so a broker that fills each
// order at the price it was sized at, charging the run's costs (fee NaN), gives the
// in-process broker's, and evaluation's, results to the byte. Fills reported during the call
// to the broker belong to that bar (journaled with "during_bar": true, which a restart uses
// to book them at the same point); fills reported between bars are booked before the next.
#include <cmath>
#include <utility>
#include <vector>

#include "paper/session.h"

namespace rlt::paper {

Status PaperSession::SubmitExternal(int32_t t, int64_t lots, double price, const std::string& id,
                                    const std::string& reason) {
  if (lots == 0) return Status::Ok();
  // A restart re-running a journaled bar: the order went out before; its fills come back
  // from the journal where the broker's answer came.
  if (journal_->Has("order:" + id)) return BookJournaledFillsOf(id);
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "order"},
                                      {"client_order_id", id},
                                      {"bar", t},
                                      {"side", lots > 0 ? "BUY" : "SELL"},
                                      {"quantity", std::fabs(shares(lots))},
                                      {"price", price},
                                      {"reason", reason}}));
  const OpenOrder order{lots, t, price, reason};
  open_orders_[id] = order;
  unanswered_.insert(id);
  ++orders_today_;
  RLT_RETURN_IF_ERROR(Transmit(id, order));
  return DrainExternal(t, /*during_bar=*/true);
}

// An order to the broker: the tcp server's (a failed send is re-sent after the reconnect),
// or the outside broker's (its error stops the session; the journal keeps the order).
Status PaperSession::Transmit(const std::string& id, const OpenOrder& order) {
  if (!external_) {
    (void)broker_->SendOrder(NewOrder{id, bars_->symbol, order.lots > 0 ? Side::kBuy : Side::kSell,
                                      std::fabs(shares(order.lots))});
    return Status::Ok();
  }
  ExternalOrder o;
  o.client_order_id = id;
  o.symbol = bars_->symbol;
  o.buy = order.lots > 0;
  o.quantity = std::fabs(shares(order.lots));
  o.bar = order.bar;
  o.time = order.bar < static_cast<int32_t>(bars_->size()) ? bars_->time[order.bar] : 0;
  o.price = order.price;
  o.reason = order.reason;
  return CallExternal(o);
}

Status PaperSession::CallExternal(const ExternalOrder& order) {
  const bool outer = !in_broker_call_;
  in_broker_call_ = true;
  Status sent = setup_.external->Submit(order);
  if (outer) in_broker_call_ = false;
  if (sent.ok()) return sent;
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "broker"},
                                      {"event", "error"},
                                      {"client_order_id", order.client_order_id},
                                      {"detail", sent.message()}}));
  return sent;
}

// The reports made during calls to the broker, in their order (a reject's retry may add
// more).
Status PaperSession::DrainExternal(int32_t b, bool during_bar) {
  while (!external_reports_.empty()) {
    const ExternalReport r = std::move(external_reports_.front());
    external_reports_.pop_front();
    if (r.fill) {
      RLT_RETURN_IF_ERROR(BookExternalFill(r, b, during_bar));
    } else {
      Reject rj;
      rj.client_order_id = r.id;
      rj.reason = r.reason;
      rj.retryable = r.retryable;
      RLT_RETURN_IF_ERROR(OnReject(rj));
    }
  }
  return Status::Ok();
}

Status PaperSession::BookExternalFill(const ExternalReport& r, int32_t b, bool during_bar) {
  return BookFill(r.id, r.lots, r.price, r.fee, b, Json{{"during_bar", during_bar}}, false);
}

// A restart: the journaled fills of `id` (and of its retries) that came during the call to
// the broker, booked where they were.
Status PaperSession::BookJournaledFillsOf(const std::string& id) {
  const std::string retry_prefix = id + "-r";
  for (auto it = journaled_fills_.begin(); it != journaled_fills_.end();) {
    const std::string of = it->value("client_order_id", "");
    if (!it->value("during_bar", false) || (of != id && of.rfind(retry_prefix, 0) != 0)) {
      ++it;
      continue;
    }
    const Json f = *it;
    it = journaled_fills_.erase(it);
    RLT_RETURN_IF_ERROR(BookFill(of, JournaledLots(f), f.value("price", 0.0), f.value("cost", 0.0),
                                 f.value("bar", 0), Json{{"during_bar", true}}, true));
  }
  return Status::Ok();
}

Status PaperSession::StartExternal() {
  RLT_RETURN_IF_ERROR(ReplayJournaledBars());
  const int32_t next = static_cast<int32_t>(bars_->size());
  // Orders the journal has no outcome for: sent again under the same ids (the broker is
  // expected to answer a client order id it has seen with that order's outcome).
  RLT_RETURN_IF_ERROR(ResendOpenOrders());
  RLT_RETURN_IF_ERROR(DrainExternal(next, /*during_bar=*/false));
  in_broker_call_ = true;
  Result<std::map<std::string, double>> held = setup_.external->Positions();
  in_broker_call_ = false;
  if (!held.ok()) {
    RLT_RETURN_IF_ERROR(journal_->Emit(
        {{"type", "broker"}, {"event", "error"}, {"detail", held.status().message()}}));
    return held.status();
  }
  RLT_RETURN_IF_ERROR(DrainExternal(next, /*during_bar=*/false));
  Positions p;
  for (const auto& [symbol, quantity] : *held) {
    if (!std::isfinite(quantity)) {
      return Status::InvalidArgument("broker.positions(): the position in " + symbol + " is " +
                                     evalrun::Num(quantity) +
                                     ": expected a finite number of shares");
    }
    p.positions.push_back(PositionLine{symbol, quantity, 0.0});
  }
  awaiting_positions_ = true;
  return OnPositions(p);
}

Status PaperSession::OnExternalFill(const std::string& id, double quantity, double price,
                                    double fee) {
  if (!journal_->Has("order:" + id)) {
    ++unknown_fills_;
    RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "broker"},
                                        {"event", "unknown_fill"},
                                        {"client_order_id", id},
                                        {"quantity", quantity},
                                        {"price", price}}));
    return Status::Refused("on_fill(" + id +
                           "): this session never sent that order (not booked; journaled as "
                           "an unknown fill): report only the session's own client order ids");
  }
  const auto it = open_orders_.find(id);
  if (it == open_orders_.end()) return Status::Ok();  // answered before: booked once
  if (!(price > 0) || !std::isfinite(price)) {
    return Status::InvalidArgument("on_fill(" + id + "): price " + evalrun::Num(price) +
                                   ": expected a positive finite price per share");
  }
  if (!std::isnan(fee) && (!(fee >= 0) || !std::isfinite(fee))) {
    return Status::InvalidArgument("on_fill(" + id + "): fee " + evalrun::Num(fee) +
                                   ": expected a finite fee >= 0, or None for the run's costs");
  }
  const double ordered = std::fabs(shares(it->second.lots));
  if (!(std::fabs(quantity - ordered) <= 1e-9 * ordered)) {
    return Status::InvalidArgument(
        "on_fill(" + id + "): quantity " + evalrun::Num(quantity) + " is not the order's " +
        evalrun::Num(ordered) +
        " shares: report an order's fill once, whole (add up partial fills in the bridge), "
        "or reject what will not fill");
  }
  ExternalReport r;
  r.id = id;
  r.lots = it->second.lots;
  r.price = price;
  r.fee = fee;
  if (in_broker_call_) {
    external_reports_.push_back(r);
    return Status::Ok();
  }
  return BookExternalFill(r, static_cast<int32_t>(bars_->size()), /*during_bar=*/false);
}

Status PaperSession::OnExternalReject(const std::string& id, const std::string& reason,
                                      bool retryable) {
  if (!journal_->Has("order:" + id)) {
    return Status::Refused("on_reject(" + id +
                           "): this session never sent that order: report only the "
                           "session's own client order ids");
  }
  if (!open_orders_.count(id)) return Status::Ok();  // answered before
  ExternalReport r;
  r.fill = false;
  r.id = id;
  r.reason = reason;
  r.retryable = retryable;
  if (in_broker_call_) {
    external_reports_.push_back(r);
    return Status::Ok();
  }
  Reject rj;
  rj.client_order_id = id;
  rj.reason = reason;
  rj.retryable = retryable;
  RLT_RETURN_IF_ERROR(OnReject(rj));
  return DrainExternal(static_cast<int32_t>(bars_->size()), /*during_bar=*/false);
}

// Every order of an earlier bar has its outcome before the next bar is handled.
Status PaperSession::CheckAnswered() const {
  const int32_t next = static_cast<int32_t>(bars_->size());
  for (const auto& [id, order] : open_orders_) {
    if (order.bar >= next) continue;
    return Status::IoError(
        "the broker has not answered order " + id + " (" + (order.lots > 0 ? "BUY " : "SELL ") +
        evalrun::Num(std::fabs(shares(order.lots))) + " " + bars_->symbol + ", bar " +
        std::to_string(order.bar) +
        ") before the next bar: every order needs a fill or a reject (on_fill / on_reject) "
        "before the session's next bar. The journal keeps the order; a restart with the same "
        "journal sends it again under the same id");
  }
  return Status::Ok();
}

}  // namespace rlt::paper
