// rltrade paper: the session's orders and fills (see session.h).
//
// Client order ids: "b<bar>" for the decision order that fills at bar b, "b<bar>-close" for
// the session's closing flatten, "b<bar>-risk" for a flatten the risk limits ordered,
// "b<bar>-stale" for the stale feed's; a retry after a retryable reject adds "-r<n>"
// (unique, and the same on every run of the session).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/civil_time.h"
#include "paper/session.h"

namespace rlt::paper {

std::string OrderId(int32_t bar) {
  std::string id = "b";
  id += std::to_string(bar);
  return id;
}

Status PaperSession::RiskLine(int32_t b, const std::string& id, const std::string& rule,
                              const std::string& detail) {
  ++refusals_[rule];
  return journal_->Emit({{"type", "risk"},
                         {"bar", b},
                         {"time", evalrun::BarTime(*bars_, b)},
                         {"client_order_id", id},
                         {"rule", rule},
                         {"detail", detail}});
}

Status PaperSession::RecordFill(Walker& w, int32_t b, int64_t qty, double price, double cost,
                                double cash_before, bool is_policy, const std::string& id,
                                const Json& extra) {
  const evalrun::FillRow f{b, shares(qty), price, cost, shares(w.book.shares), w.book.cash};
  w.trips.Fill(f, cash_before, w.result.round_trip_pnls);
  w.result.fills.push_back(f);
  if (!is_policy) return Status::Ok();
  const char* side = qty > 0 ? "BUY" : "SELL";
  if (!tcp_broker_ && !external_) {  // the in-process broker: the order is sent as it fills
    ++orders_today_;
    RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "order"},
                                        {"client_order_id", id},
                                        {"bar", b},
                                        {"side", side},
                                        {"quantity", std::fabs(f.quantity)}}));
  }
  Json fill = {{"type", "fill"},
               {"client_order_id", id},
               {"bar", b},
               {"time", b < static_cast<int32_t>(bars_->size()) ? evalrun::BarTime(*bars_, b)
                                                                : std::string()},
               {"side", side},
               {"quantity", std::fabs(f.quantity)},
               {"price", price},
               {"cost", cost},
               {"position_after", f.position_after},
               {"cash_after", f.cash_after}};
  for (const auto& [k, v] : extra.items()) fill[k] = v;
  return journal_->Emit(fill);
}

// A fill the broker reported (or, from_journal, the journal holds): booked at its price
// and fee. The broker may report an outcome again (idempotent re-sends): booked once.
Status PaperSession::BookFill(const std::string& id, int64_t lots, double price, double fee,
                              int32_t b, const Json& extra, bool from_journal) {
  if (!from_journal) unanswered_.erase(id);
  if (!finished_.insert(id).second && !from_journal) return Status::Ok();
  open_orders_.erase(id);
  Walker& w = walkers_[0];
  const double cash_before = w.book.cash;
  const double cost = std::isnan(fee) ? w.book.Execute(sizing_, lots, price * lot_)
                                      : w.book.ExecuteAt(lots, price * lot_, fee);
  return RecordFill(w, b, lots, price, cost, cash_before, true, id, extra);
}

// The journal's fills up to bar `up_to`, booked again on a restart (tcp broker).
Status PaperSession::BookJournaledFills(int32_t up_to) {
  while (!journaled_fills_.empty() && journaled_fills_.front().value("bar", 0) <= up_to) {
    const Json f = journaled_fills_.front();
    // An outside broker's fill that came while its order was being submitted: booked
    // where the order is submitted again (BookJournaledFillsOf), inside the bar.
    if (external_ && f.value("during_bar", false) && f.value("bar", 0) == up_to) break;
    journaled_fills_.pop_front();
    RLT_RETURN_IF_ERROR(BookFill(f.value("client_order_id", ""), JournaledLots(f),
                                 f.value("price", 0.0), f.value("cost", 0.0), f.value("bar", up_to),
                                 Json::object(), true));
  }
  return Status::Ok();
}

Status PaperSession::SendOrder(int32_t t, int64_t lots, const std::string& suffix) {
  const std::string id = OrderId(t + 1) + suffix;
  if (lots == 0 || journal_->Has("order:" + id)) return Status::Ok();  // sent before
  const char* side = lots > 0 ? "BUY" : "SELL";
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "order"},
                                      {"client_order_id", id},
                                      {"bar", t + 1},
                                      {"decided_bar", t},
                                      {"side", side},
                                      {"quantity", std::fabs(shares(lots))}}));
  open_orders_[id] = {lots, t + 1, 0.0, ""};
  unanswered_.insert(id);
  ++orders_today_;
  return Transmit(id, open_orders_[id]);
}

// Risk limits on an order the policy (or a flatten) is about to send; 0 when refused.
Result<int64_t> PaperSession::Checked(int32_t t, int64_t qty, const std::string& id, double price,
                                      double last_price, int32_t order_bar) {
  if (!gate_ || qty == 0) return qty;
  const Walker& w = walkers_[0];
  OrderCheck check;
  check.quantity = shares(qty);
  check.position = shares(w.book.shares);
  check.price = price;
  check.last_price = last_price;
  check.net_worth = w.book.NetWorth(last_price * lot_);
  check.minute_of_day = MinuteOfDay(order_bar);
  check.time = bars_->time[order_bar];
  std::string detail;
  const std::string rule = gate_->Check(check, &detail);
  if (rule.empty()) return qty;
  RLT_RETURN_IF_ERROR(RiskLine(t, id, rule, detail));
  return int64_t{0};
}

// No bar for stale_feed_seconds while a session is traded: no new orders until the next
// bar; the tcp broker's working orders are cancelled; with flatten_on_stale, a flatten.
Status PaperSession::OnStale(int32_t t) {
  if (stale_ || !gate_ || t < 0 || !session_open_) return Status::Ok();
  stale_ = true;
  Walker& w = walkers_[0];
  const bool flatten = gate_->limits().flatten_on_stale && w.book.shares != 0;
  RLT_RETURN_IF_ERROR(RiskLine(t, "", "stale_feed",
                               "no bar for " + evalrun::Num(gate_->limits().stale_feed_seconds) +
                                   " s: no new orders" + (flatten ? ", flatten" : "")));
  if (tcp_broker_) {  // working orders are cancelled; a flatten goes out now
    for (const auto& [id, order] : open_orders_) (void)broker_->CancelOrder(id);
    if (flatten) RLT_RETURN_IF_ERROR(SendOrder(t, -w.book.shares, "-stale"));
  } else if (external_) {
    for (const auto& [id, order] : open_orders_) {
      RLT_RETURN_IF_ERROR(
          journal_->Emit({{"type", "broker"}, {"event", "cancel"}, {"client_order_id", id}}));
      RLT_RETURN_IF_ERROR(setup_.external->Cancel(id));
    }
    if (flatten) {
      RLT_RETURN_IF_ERROR(
          SubmitExternal(t, -w.book.shares, bars_->close[t], OrderId(t + 1) + "-stale", "stale"));
    }
  } else if (flatten) {
    w.flatten_next = true;
  }
  return Status::Ok();
}

Status PaperSession::CheckStale() {
  const double stale_seconds = gate_ ? gate_->limits().stale_feed_seconds : RiskLimits::kNone;
  if (std::chrono::duration<double>(Clock::now() - last_arrival_).count() > stale_seconds) {
    return OnStale(static_cast<int32_t>(bars_->size()) - 1);
  }
  return Status::Ok();
}

// A fill reported by the tcp broker, booked at the bar it filled at: handled, waiting (a
// bar sent again after a reconnect comes before the re-sent order's fill), or still to
// come.
Status PaperSession::OnBrokerFill(const Fill& f, const std::deque<FeedBar>& waiting) {
  if (!tcp_broker_ || f.symbol != bars_->symbol) return Status::Ok();
  if (!journal_->Has("order:" + f.client_order_id)) {
    // Not an order of this session: never booked (nor journaled as a fill, which a restart
    // would book); reported, and the positions' reconciliation stops the session.
    ++unknown_fills_;
    if (!r_.quiet) {
      std::fprintf(stderr, "refused a fill for %s: this session never sent that order\n",
                   f.client_order_id.c_str());
    }
    return journal_->Emit({{"type", "broker"},
                           {"event", "unknown_fill"},
                           {"client_order_id", f.client_order_id},
                           {"seq", f.bar},
                           {"side", f.side == Side::kBuy ? "BUY" : "SELL"},
                           {"quantity", f.quantity},
                           {"price", f.price}});
  }
  int32_t b = static_cast<int32_t>(bars_->size());
  if (const auto at = bar_of_seq_.find(f.bar); at != bar_of_seq_.end()) {
    b = at->second;
  } else {
    int64_t seen = last_seq_;
    for (const FeedBar& w : waiting) {
      if (w.seq <= seen) continue;
      if (w.seq >= f.bar) break;
      seen = w.seq;
      ++b;
    }
  }
  const double q = std::llround(f.quantity / lot_);
  const int64_t lots = static_cast<int64_t>(f.side == Side::kBuy ? q : -q);
  return BookFill(f.client_order_id, lots, f.price, f.fee, b,
                  Json{{"seq", f.bar},
                       {"order_id", f.order_id},
                       {"time", FormatIso8601(f.epoch, setup_.tz.OffsetAt(f.epoch),
                                              /*utc_z=*/false)}},
                  false);
}

// A reject: journaled; a retryable one is retried at once under a new id, up to 5 times.
Status PaperSession::OnReject(const Reject& rj) {
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "reject"},
                                      {"client_order_id", rj.client_order_id},
                                      {"reason", rj.reason},
                                      {"retryable", rj.retryable}}));
  finished_.insert(rj.client_order_id);
  unanswered_.erase(rj.client_order_id);
  auto it = open_orders_.find(rj.client_order_id);
  if (it == open_orders_.end()) return Status::Ok();
  const OpenOrder order = it->second;
  open_orders_.erase(it);
  const std::string& id = rj.client_order_id;
  const size_t r_at = id.rfind("-r");
  int tries = 0;
  std::string base = id;
  if (r_at != std::string::npos && r_at + 2 < id.size() &&
      id.find_first_not_of("0123456789", r_at + 2) == std::string::npos) {
    tries = std::atoi(id.c_str() + r_at + 2);
    base = id.substr(0, r_at);
  }
  if (!rj.retryable || tries >= 5) {
    if (!r_.quiet) std::fprintf(stderr, "order %s rejected: %s\n", id.c_str(), rj.reason.c_str());
    return Status::Ok();
  }
  const std::string retry = base + "-r" + std::to_string(tries + 1);
  if (journal_->Has("order:" + retry)) return Status::Ok();
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "order"},
                                      {"client_order_id", retry},
                                      {"bar", order.bar},
                                      {"retry_of", id},
                                      {"side", order.lots > 0 ? "BUY" : "SELL"},
                                      {"quantity", std::fabs(shares(order.lots))}}));
  open_orders_[retry] = order;
  unanswered_.insert(retry);
  return Transmit(retry, order);
}

}  // namespace rlt::paper
