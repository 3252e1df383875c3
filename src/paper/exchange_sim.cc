// rltrade paper: the exchange simulator (exchange_sim.h).
//
// Key decisions: one thread and one poll() loop (accept, read, answer, stream, heartbeat,
// time out), so there are no locks and the order of events is the order of the loop.
// Orders are kept per account by client_order_id with their outcome (ack, fill, reject,
// cancelled), which is what makes a repeated id answerable without a second fill.
// Responses delayed by latency_ms wait in a FIFO (one constant delay keeps it sorted);
// bars are written directly, and only when the send buffer is empty, which is the flow
// control: the stream never outruns a slow reader and never buffers without bound.
// What a client can make the simulator keep is bounded (exchange_sim.h, "Bounds"): the
// accounts, the accepted orders of the session, the open orders of an account, a window
// of recent rejected orders, the responses waiting (reading from a client pauses while
// too many are), and the connections being closed.
#include "paper/exchange_sim.h"

#include <poll.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "core/posix_io.h"
#include "core/printable.h"
#include "core/rng.h"
#include "market/limits.h"
#include "paper/line_socket.h"
#include "paper/protocol.h"

namespace rlt::paper {
namespace {

constexpr int kMaxPollMs = 50;          // the longest wait before Stop() is noticed
constexpr int kCloseDrainMs = 2000;     // how long a gracefully closed socket is drained
constexpr int kFinalDrainMs = 500;      // the same when Run() returns
constexpr double kFlatQuantity = 1e-9;  // |position| below this is flat
// Reading from the client pauses while this much output waits for it (it is not reading)
// or this many responses wait for their latency.
constexpr size_t kMaxPendingOutputBytes = size_t{4} << 20;
constexpr size_t kMaxDelayedResponses = 10000;
constexpr size_t kMaxClosingConnections = 8;
// The symbols an "unknown symbol" reject lists.
constexpr size_t kListedSymbols = 10;

struct Order {
  enum class State { kPending, kFilled, kCancelled, kRejected };
  NewOrder order;
  std::string order_id;
  State state = State::kPending;
  Fill fill;
  Reject reject;
};

struct Position {
  double quantity = 0;
  double average_price = 0;
};

struct Account {
  std::string name;
  double cash = 0;
  std::map<std::string, Position> positions;
  std::map<std::string, Order> orders;  // by client_order_id
  std::vector<std::string> pending;     // client_order_ids, in arrival order
};

// A rejected order remembered in the window of recent rejects.
struct RecentReject {
  Account* account = nullptr;
  std::string client_order_id;
};

struct Closing {
  LineConnection conn;
  int64_t deadline_ms = 0;
};

}  // namespace

class ExchangeSim::Impl {
 public:
  Impl(market::MarketData data, const ExchangeSimOptions& options, LineListener listener)
      : data_(std::move(data)),
        options_(options),
        listener_(std::move(listener)),
        rng_(options.seed),
        session_(posix_io::RandomHex(12)) {
    LayOutStream();
  }

  Status Run(const std::atomic<bool>& stop);
  int port() const { return listener_.port(); }
  ExchangeSimStats stats() const { return stats_; }
  bool ended_at_end_of_data() const { return ended_; }

 private:
  struct StreamBar {
    int symbol = 0;  // index in data_.symbols
    int index = 0;   // bar index in that symbol's Bars
  };
  struct Client {
    LineConnection conn;
    Account* account = nullptr;  // set by hello
    int64_t last_heard_ms = 0;
    int64_t last_sent_ms = 0;
    bool hello_sent = false;  // bars flow only after the hello answer went out
  };
  struct Delayed {
    int64_t due_ms = 0;
    std::string line;
    bool hello = false;
  };

  void LayOutStream();
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }
  void Accept(int64_t now);
  void Drop(const std::string& why, const ServerMessage* last);
  void ReadClient(int64_t now);
  void Handle(const ClientMessage& message, int64_t now);
  void HandleHello(const ClientHello& hello);
  void HandleNewOrder(const NewOrder& order);
  void HandleCancel(const Cancel& cancel);
  void Respond(const ServerMessage& message);
  void SendDirect(const std::string& line);
  void Reject(Account& account, Order& order, const std::string& reason, bool retryable);
  void Send(const ServerMessage& message);
  bool Paused() const;
  Positions PositionsOf(const Account& account) const;
  bool CanStream(int64_t now) const;
  void StreamNext(int64_t now);
  void FillPending(int64_t seq);
  // Fills `order` (true), or rejects it when the fill would break the account limits.
  bool ApplyFill(Account& account, Order& order, const BarMessage& bar);
  void EndOfData(int64_t now);
  int NextTimeoutMs(int64_t now) const;
  BarMessage BarAt(int64_t seq) const;
  bool greeted() const { return client_ && client_->account != nullptr; }

  market::MarketData data_;
  ExchangeSimOptions options_;
  LineListener listener_;
  Rng rng_;
  std::string session_;
  std::vector<StreamBar> stream_;
  std::map<std::string, int64_t> last_seq_of_symbol_;
  std::map<std::string, Account> accounts_;
  std::optional<Client> client_;
  std::vector<Closing> closing_;
  std::deque<Delayed> delayed_;
  std::deque<RecentReject> recent_rejects_;  // oldest first; at most kRejectedOrderWindow
  int64_t accepted_orders_ = 0;              // acked in the session, at most kMaxSessionOrders
  int64_t cursor_ = 0;                       // seq of the next bar to stream
  int64_t ready_after_ = -1;                 // lockstep: the client handled bars up to this seq
  int64_t resend_ = -1;                      // lockstep: a bar sent but not readied, to send again
  int64_t next_bar_due_ms_ = 0;              // speed > 0: not before this time
  int64_t next_order_id_ = 1;
  bool ended_ = false;
  int64_t end_deadline_ms_ = 0;
  ExchangeSimStats stats_;
};

void ExchangeSim::Impl::LayOutStream() {
  for (size_t s = 0; s < data_.symbols.size(); ++s) {
    for (size_t i = 0; i < data_.symbols[s].size(); ++i) {
      stream_.push_back({static_cast<int>(s), static_cast<int>(i)});
    }
  }
  // Symbols are sorted by name (market/csv.h): a stable sort by time breaks ties by name.
  std::stable_sort(stream_.begin(), stream_.end(), [&](const StreamBar& a, const StreamBar& b) {
    return data_.symbols[a.symbol].time[a.index] < data_.symbols[b.symbol].time[b.index];
  });
  for (size_t seq = 0; seq < stream_.size(); ++seq) {
    last_seq_of_symbol_[data_.symbols[stream_[seq].symbol].symbol] = static_cast<int64_t>(seq);
  }
}

BarMessage ExchangeSim::Impl::BarAt(int64_t seq) const {
  const StreamBar& at = stream_[seq];
  const market::Bars& b = data_.symbols[at.symbol];
  BarMessage m;
  m.seq = seq;
  m.symbol = b.symbol;
  m.epoch = b.time[at.index];
  m.open = b.open[at.index];
  m.high = b.high[at.index];
  m.low = b.low[at.index];
  m.close = b.close[at.index];
  m.volume = b.volume[at.index];
  return m;
}

void ExchangeSim::Impl::SendDirect(const std::string& line) {
  if (!client_) return;
  (void)client_->conn.Send(line);  // a failure shows as conn.closed(), handled by the loop
  client_->last_sent_ms = MonotonicMs();
}

// The checked line of `message` (protocol.h: nothing out of range is ever sent); a message
// that fails the check is a bug of the simulator, logged and replaced by an error.
static std::string LineOf(const ServerMessage& message,
                          const std::function<void(const std::string&)>& log) {
  Result<std::string> line = CheckedLine(message);
  if (line.ok()) return std::move(line).value();
  if (log) log("internal error: " + line.status().message());
  return ToLine(ServerMessage{
      ErrorMessage{ProtocolText("internal error of the simulator: " + line.status().message())}});
}

void ExchangeSim::Impl::Send(const ServerMessage& message) {
  SendDirect(LineOf(message, options_.log));
}

void ExchangeSim::Impl::Respond(const ServerMessage& message) {
  if (!client_) return;
  const bool hello = std::holds_alternative<ServerHello>(message);
  if (options_.latency_ms <= 0) {
    client_->hello_sent = client_->hello_sent || hello;
    return Send(message);
  }
  delayed_.push_back({MonotonicMs() + options_.latency_ms, LineOf(message, options_.log), hello});
}

// Reading from the client waits while it does not read what was sent to it, or while
// too many responses wait for their latency: a client cannot make the simulator buffer
// without bound (its own sends then wait in the kernel).
bool ExchangeSim::Impl::Paused() const {
  return client_ && (client_->conn.pending_output_bytes() > kMaxPendingOutputBytes ||
                     delayed_.size() >= kMaxDelayedResponses);
}

// Closes the client's connection gracefully (after `last`, when given); what is still
// delayed for it is dropped.
void ExchangeSim::Impl::Drop(const std::string& why, const ServerMessage* last) {
  if (!client_) return;
  Log("client " + client_->conn.peer() + " disconnected: " + why);
  delayed_.clear();
  if (last != nullptr && client_->conn.open() && !client_->conn.closed()) {
    (void)client_->conn.Send(LineOf(*last, options_.log));
  }
  client_->conn.CloseGracefully();
  if (closing_.size() >= kMaxClosingConnections) closing_.erase(closing_.begin());  // oldest
  closing_.push_back({std::move(client_->conn), MonotonicMs() + kCloseDrainMs});
  client_.reset();
}

void ExchangeSim::Impl::Accept(int64_t now) {
  while (true) {
    Result<LineConnection> conn = listener_.Accept();
    if (!conn.ok()) {
      Log("accept failed: " + conn.status().message());
      return;
    }
    if (!conn->open()) return;
    if (client_) {
      const ServerMessage replaced =
          ErrorMessage{"replaced by a new connection to this server (one client at a time)"};
      Drop("replaced by a new connection", &replaced);
    }
    ++stats_.connections;
    Log("client " + conn->peer() + " connected");
    client_ = Client{std::move(conn).value(), nullptr, now, now};
  }
}

void ExchangeSim::Impl::ReadClient(int64_t now) {
  if (!client_) return;
  std::string line;
  while (client_ && !Paused() &&
         client_->conn.ReceiveLine(0, &line) == LineConnection::Receive::kLine) {
    client_->last_heard_ms = now;
    Result<ClientMessage> message = ParseClientMessage(line);
    if (!message.ok()) {
      Respond(ErrorMessage{ProtocolText(message.status().message())});
      continue;
    }
    Handle(*message, now);
  }
  if (client_ && client_->conn.closed()) Drop(client_->conn.closed_reason(), nullptr);
}

void ExchangeSim::Impl::Handle(const ClientMessage& message, int64_t now) {
  if (const auto* hello = std::get_if<ClientHello>(&message)) return HandleHello(*hello);
  if (!greeted()) {
    return Respond(ErrorMessage{std::string("received ") + TypeName(message) +
                                " before hello: send hello {client, protocol, account} first"});
  }
  if (const auto* order = std::get_if<NewOrder>(&message)) return HandleNewOrder(*order);
  if (const auto* cancel = std::get_if<Cancel>(&message)) return HandleCancel(*cancel);
  if (std::holds_alternative<PositionsRequest>(message)) {
    return Respond(PositionsOf(*client_->account));
  }
  if (const auto* ready = std::get_if<Ready>(&message)) {
    if (ready->after_bar >= cursor_) {
      return Respond(ErrorMessage{"ready: field 'after_bar' is " +
                                  std::to_string(ready->after_bar) + " but the last bar sent is " +
                                  std::to_string(cursor_ - 1)});
    }
    ready_after_ = std::max(ready_after_, ready->after_bar);
  }
  // heartbeat: last_heard_ms is all it does.
}

void ExchangeSim::Impl::HandleHello(const ClientHello& hello) {
  if (greeted()) {
    return Respond(ErrorMessage{"hello was already received on this connection"});
  }
  if (hello.protocol != kProtocolVersion) {
    const ServerMessage refuse =
        ErrorMessage{"protocol " + std::to_string(hello.protocol) +
                     " is not supported: this server speaks " + std::to_string(kProtocolVersion)};
    return Drop("unsupported protocol", &refuse);
  }
  if (!options_.token.empty() && hello.token != options_.token) {
    // Never echo either token.
    const ServerMessage refuse = ErrorMessage{
        "authentication failed: hello's token is missing or wrong (the client reads it from "
        "RLTRADE_BROKER_TOKEN)"};
    return Drop("authentication failed", &refuse);
  }
  if (accounts_.size() >= kMaxAccounts && accounts_.count(hello.account) == 0) {
    const ServerMessage refuse =
        ErrorMessage{"this simulator already keeps " + std::to_string(kMaxAccounts) +
                     " accounts, its limit: use one of them, or restart it for new ones"};
    return Drop("account limit reached", &refuse);
  }
  auto [it, added] = accounts_.try_emplace(hello.account);
  if (added) {
    it->second.name = hello.account;
    it->second.cash = options_.initial_cash;
  }
  client_->account = &it->second;
  // Lockstep: a bar sent but not readied may have died with the previous connection; the
  // new connection gets it again (the fills before it are not repeated: the client re-sends
  // its unsure orders and gets their outcomes again, protocol.h).
  resend_ = options_.lockstep && ready_after_ < cursor_ - 1 ? ready_after_ + 1 : -1;
  Log("client " + client_->conn.peer() + " is '" + PrintableText(hello.client, 64) +
      "', account '" + hello.account + "', next bar " + std::to_string(cursor_));
  ServerHello reply;
  reply.server = "rltrade exchange-sim";
  reply.session = session_;
  reply.account = hello.account;
  for (const market::Bars& b : data_.symbols) reply.symbols.push_back(b.symbol);
  reply.bars_total = static_cast<int64_t>(stream_.size());
  reply.next_bar = resend_ >= 0 ? resend_ : cursor_;
  reply.heartbeat_ms = options_.heartbeat_ms;
  reply.lockstep = options_.lockstep;
  Respond(reply);
}

void ExchangeSim::Impl::Reject(Account& account, Order& order, const std::string& reason,
                               bool retryable) {
  order.state = Order::State::kRejected;
  order.reject =
      paper::Reject{order.order.client_order_id, "new_order", ProtocolText(reason), retryable};
  ++stats_.rejects;
  Respond(order.reject);
  // Rejected orders are remembered in a window of the most recent ones: a rejected order
  // never fills, so forgetting it cannot cause a second fill.
  recent_rejects_.push_back({&account, order.order.client_order_id});
  if (recent_rejects_.size() > kRejectedOrderWindow) {
    const RecentReject& oldest = recent_rejects_.front();
    const auto it = oldest.account->orders.find(oldest.client_order_id);
    if (it != oldest.account->orders.end() && it->second.state == Order::State::kRejected) {
      oldest.account->orders.erase(it);
    }
    recent_rejects_.pop_front();
  }
}

void ExchangeSim::Impl::HandleNewOrder(const NewOrder& request) {
  Account& account = *client_->account;
  const auto known = account.orders.find(request.client_order_id);
  if (known != account.orders.end()) {
    const Order& o = known->second;
    if (o.order.symbol != request.symbol || o.order.side != request.side ||
        o.order.quantity != request.quantity) {
      return Respond(paper::Reject{request.client_order_id, "new_order",
                                   "client_order_id '" + request.client_order_id +
                                       "' was already used for a different order (" +
                                       SideName(o.order.side) + " " +
                                       std::to_string(o.order.quantity) + " " + o.order.symbol +
                                       "); that order stands: use a new id for a new order",
                                   false});
    }
    // The original outcome again, never a second fill.
    if (o.state == Order::State::kRejected) return Respond(o.reject);
    Respond(Ack{o.order.client_order_id, o.order_id});
    if (o.state == Order::State::kFilled) Respond(o.fill);
    if (o.state == Order::State::kCancelled) Respond(Cancelled{o.order.client_order_id});
    return;
  }
  ++stats_.orders;
  Order& order = account.orders[request.client_order_id];
  order.order = request;
  const auto last = last_seq_of_symbol_.find(request.symbol);
  if (last == last_seq_of_symbol_.end()) {
    std::string symbols;
    for (size_t i = 0; i < data_.symbols.size() && i < kListedSymbols; ++i) {
      symbols += (i ? ", " : "") + data_.symbols[i].symbol;
    }
    if (data_.symbols.size() > kListedSymbols) {
      symbols += " and " + std::to_string(data_.symbols.size() - kListedSymbols) + " more";
    }
    return Reject(account, order,
                  "unknown symbol '" + request.symbol + "': this exchange trades " + symbols,
                  false);
  }
  if (last->second < cursor_) {
    return Reject(account, order,
                  "end of data: no bar of " + request.symbol + " is left to fill the order at",
                  false);
  }
  if (options_.reject_rate > 0 && rng_.Bernoulli(options_.reject_rate)) {
    return Reject(account, order,
                  "simulated rejection (--reject-rate): send the order again under a new "
                  "client_order_id",
                  true);
  }
  if (accepted_orders_ >= kMaxSessionOrders) {
    return Reject(account, order,
                  "the simulator accepts at most " + std::to_string(kMaxSessionOrders) +
                      " orders per session (it keeps every accepted order to answer repeats)",
                  false);
  }
  if (account.pending.size() >= kMaxOpenOrders) {
    return Reject(account, order,
                  "account '" + account.name + "' has " + std::to_string(kMaxOpenOrders) +
                      " open orders, the limit: wait for fills or cancel some, then send the "
                      "order again under a new client_order_id",
                  true);
  }
  ++accepted_orders_;
  order.order_id = "ord-" + std::to_string(next_order_id_++);
  account.pending.push_back(request.client_order_id);
  Respond(Ack{request.client_order_id, order.order_id});
}

void ExchangeSim::Impl::HandleCancel(const Cancel& cancel) {
  Account& account = *client_->account;
  const auto it = account.orders.find(cancel.client_order_id);
  auto refuse = [&](const std::string& reason) {
    Respond(paper::Reject{cancel.client_order_id, "cancel", reason, false});
  };
  if (it == account.orders.end()) {
    return refuse("unknown client_order_id '" + cancel.client_order_id + "' in account '" +
                  account.name + "'");
  }
  Order& order = it->second;
  switch (order.state) {
    case Order::State::kPending:
      order.state = Order::State::kCancelled;
      std::erase(account.pending, cancel.client_order_id);
      return Respond(Cancelled{cancel.client_order_id});
    case Order::State::kCancelled:
      return Respond(Cancelled{cancel.client_order_id});  // idempotent
    case Order::State::kFilled:
      return refuse("order '" + cancel.client_order_id + "' was already filled at bar " +
                    std::to_string(order.fill.bar));
    case Order::State::kRejected:
      return refuse("order '" + cancel.client_order_id + "' was rejected: nothing to cancel");
  }
}

Positions ExchangeSim::Impl::PositionsOf(const Account& account) const {
  Positions p;
  p.account = account.name;
  p.cash = account.cash;
  for (const auto& [symbol, position] : account.positions) {
    p.positions.push_back({symbol, position.quantity, position.average_price});
  }
  p.open_orders = account.pending;
  return p;
}

bool ExchangeSim::Impl::ApplyFill(Account& account, Order& order, const BarMessage& bar) {
  const double signed_qty =
      order.order.side == Side::kBuy ? order.order.quantity : -order.order.quantity;
  const double price = bar.open;
  const double fee = options_.fee_rate * std::fabs(signed_qty * price);
  const double cash_after = account.cash - (signed_qty * price + fee);
  const auto held = account.positions.find(order.order.symbol);
  const double after = (held == account.positions.end() ? 0.0 : held->second.quantity) + signed_qty;
  if (!market::AmountInRange(cash_after) || !market::AmountInRange(after)) {
    // Refused rather than sent as an infinite or out-of-range amount (market/limits.h).
    order.state = Order::State::kRejected;
    order.reject = paper::Reject{
        order.order.client_order_id, "new_order",
        "the fill at bar " + std::to_string(bar.seq) + " would take account '" + account.name +
            "' beyond the limit of +-1e30 for cash and positions (market/limits.h)",
        false};
    ++stats_.rejects;
    return false;
  }
  account.cash = cash_after;
  Position& p = account.positions[order.order.symbol];
  if (std::fabs(after) < kFlatQuantity) {
    account.positions.erase(order.order.symbol);
  } else if (p.quantity == 0 || (p.quantity > 0) != (after > 0)) {
    p.average_price = price;  // opened or flipped
    p.quantity = after;
  } else if (std::fabs(after) > std::fabs(p.quantity)) {
    // A weighted mean of prices; the clamp only undoes rounding at the limits.
    p.average_price =
        std::clamp((p.average_price * std::fabs(p.quantity) + price * std::fabs(signed_qty)) /
                       std::fabs(after),
                   market::kMinBarPrice, market::kMaxBarPrice);
    p.quantity = after;
  } else {
    p.quantity = after;  // reduced: the average price of what is left is unchanged
  }
  order.state = Order::State::kFilled;
  order.fill = Fill{order.order.client_order_id,
                    order.order_id,
                    order.order.symbol,
                    order.order.side,
                    order.order.quantity,
                    price,
                    fee,
                    bar.seq,
                    bar.epoch};
  ++stats_.fills;
  return true;
}

// Fills every account's pending orders of bar `seq`'s symbol at its open.
void ExchangeSim::Impl::FillPending(int64_t seq) {
  const BarMessage bar = BarAt(seq);
  for (auto& [name, account] : accounts_) {
    std::vector<std::string> still;
    for (const std::string& id : account.pending) {
      Order& order = account.orders[id];
      if (order.order.symbol != bar.symbol) {
        still.push_back(id);
        continue;
      }
      const bool filled = ApplyFill(account, order, bar);
      if (greeted() && client_->account == &account) {
        if (filled) {
          Respond(order.fill);
        } else {
          Respond(order.reject);
        }
      }
    }
    account.pending = std::move(still);
  }
}

bool ExchangeSim::Impl::CanStream(int64_t now) const {
  if (resend_ >= 0) {
    return greeted() && client_->hello_sent && !client_->conn.has_pending_output();
  }
  return greeted() && client_->hello_sent && !ended_ &&
         cursor_ < static_cast<int64_t>(stream_.size()) && !client_->conn.has_pending_output() &&
         now >= next_bar_due_ms_ && (!options_.lockstep || ready_after_ >= cursor_ - 1);
}

void ExchangeSim::Impl::StreamNext(int64_t now) {
  if (resend_ >= 0) {  // lockstep: the bar the previous connection did not ready, again
    Send(BarAt(resend_));
    resend_ = -1;
    return;
  }
  FillPending(cursor_);
  Send(BarAt(cursor_));
  ++cursor_;
  ++stats_.bars_sent;
  const int64_t total = static_cast<int64_t>(stream_.size());
  if (options_.speed > 0 && cursor_ < total) {
    const double gap_s = static_cast<double>(BarAt(cursor_).epoch - BarAt(cursor_ - 1).epoch);
    next_bar_due_ms_ = now + static_cast<int64_t>(std::llround(gap_s * 1000.0 / options_.speed));
  }
  if (cursor_ - 1 == options_.pause_after) {  // a feed that goes quiet
    next_bar_due_ms_ = std::max(next_bar_due_ms_, now + options_.pause_ms);
    Log("pausing the stream for " + std::to_string(options_.pause_ms) + " ms after bar " +
        std::to_string(options_.pause_after));
  }
  if (options_.disconnect_every > 0 && cursor_ % options_.disconnect_every == 0 &&
      cursor_ < total) {
    ++stats_.disconnects;
    // Responses still delayed would be dropped with the connection: send them first.
    for (const Delayed& d : delayed_) SendDirect(d.line);
    delayed_.clear();
    Drop("--disconnect-every " + std::to_string(options_.disconnect_every) + " after bar " +
             std::to_string(cursor_ - 1),
         nullptr);
  }
}

void ExchangeSim::Impl::EndOfData(int64_t now) {
  for (auto& [name, account] : accounts_) {
    for (const std::string& id : account.pending) {
      Order& order = account.orders[id];
      order.state = Order::State::kRejected;
      order.reject =
          paper::Reject{id, "new_order", "end of data: no bar was left to fill the order", false};
      ++stats_.rejects;
      if (client_->account == &account) Respond(order.reject);
    }
    account.pending.clear();
  }
  Respond(End{"end_of_data", static_cast<int64_t>(stream_.size())});
  ended_ = true;
  end_deadline_ms_ = now + options_.latency_ms + options_.end_linger_ms;
  Log("end of data after " + std::to_string(stream_.size()) + " bars");
}

int ExchangeSim::Impl::NextTimeoutMs(int64_t now) const {
  if (CanStream(now)) return 0;
  int64_t due = now + kMaxPollMs;
  if (!delayed_.empty()) due = std::min(due, delayed_.front().due_ms);
  if (client_) due = std::min(due, client_->last_sent_ms + options_.heartbeat_ms);
  if (greeted() && (options_.speed > 0 || options_.pause_ms > 0)) {
    due = std::min(due, std::max(now, next_bar_due_ms_));
  }
  return static_cast<int>(std::clamp<int64_t>(due - now, 0, kMaxPollMs));
}

Status ExchangeSim::Impl::Run(const std::atomic<bool>& stop) {
  Log("serving " + std::to_string(stream_.size()) + " bars on 127.0.0.1:" + std::to_string(port()));
  while (true) {
    const int64_t now = MonotonicMs();
    if (stop.load(std::memory_order_relaxed)) {
      const ServerMessage end = End{"shutdown", static_cast<int64_t>(stream_.size())};
      if (client_) Drop("the simulator was stopped", &end);
      break;
    }
    Accept(now);
    ReadClient(now);
    while (client_ && !delayed_.empty() && delayed_.front().due_ms <= now) {
      client_->hello_sent = client_->hello_sent || delayed_.front().hello;
      SendDirect(delayed_.front().line);
      delayed_.pop_front();
    }
    if (client_) (void)client_->conn.Flush(0);
    if (CanStream(now)) StreamNext(now);
    if (greeted() && !ended_ && cursor_ == static_cast<int64_t>(stream_.size()) &&
        !client_->conn.has_pending_output()) {
      EndOfData(now);
    }
    if (ended_ && delayed_.empty() && (!client_ || now >= end_deadline_ms_)) {
      if (client_) Drop("end of data", nullptr);
      break;
    }
    if (client_ && now - client_->last_heard_ms > options_.client_timeout_ms) {
      Drop("nothing received for " + std::to_string(options_.client_timeout_ms) + " ms", nullptr);
    }
    if (client_ && now - client_->last_sent_ms >= options_.heartbeat_ms) {
      SendDirect(ToLine(ServerMessage{Heartbeat{}}));
    }
    // Gracefully closed connections: read until the peer closes, or give up.
    for (Closing& c : closing_) c.conn.ReadAvailable();
    std::erase_if(closing_,
                  [&](const Closing& c) { return c.conn.closed() || now >= c.deadline_ms; });

    std::vector<pollfd> fds;
    fds.push_back({listener_.fd(), POLLIN, 0});
    if (client_) {
      // While reading is paused, only the output (or a delayed response's time) wakes us.
      const short events = static_cast<short>((Paused() ? 0 : POLLIN) |
                                              (client_->conn.has_pending_output() ? POLLOUT : 0));
      fds.push_back({client_->conn.fd(), events, 0});
    }
    for (const Closing& c : closing_) fds.push_back({c.conn.fd(), POLLIN, 0});
    if (poll(fds.data(), fds.size(), NextTimeoutMs(MonotonicMs())) < 0 && errno != EINTR) {
      return posix_io::ErrnoStatus("poll the sockets of", "127.0.0.1:" + std::to_string(port()),
                                   errno);
    }
  }
  // Let the last client read everything before its connection goes away (closing a
  // socket with unread input would reset it).
  const int64_t until = MonotonicMs() + kFinalDrainMs;
  while (!closing_.empty() && MonotonicMs() < until) {
    std::string line;
    for (Closing& c : closing_) (void)c.conn.ReceiveLine(10, &line);
    std::erase_if(closing_, [](const Closing& c) { return c.conn.closed(); });
  }
  return Status::Ok();
}

Result<std::unique_ptr<ExchangeSim>> ExchangeSim::Create(market::MarketData data,
                                                         const ExchangeSimOptions& o) {
  size_t bars = 0;
  for (const market::Bars& b : data.symbols) bars += b.size();
  if (bars == 0) {
    return Status::InvalidArgument("the bar file has no bars: the simulator needs bars to stream");
  }
  if (!(o.reject_rate >= 0 && o.reject_rate <= 1)) {
    return Status::InvalidArgument("--reject-rate " + std::to_string(o.reject_rate) +
                                   " must lie in [0, 1] (a fraction of new orders)");
  }
  if (!(o.speed == 0 || (o.speed >= kMinSpeed && o.speed <= kMaxSpeed))) {
    return Status::InvalidArgument(
        "--speed must lie in [0.001, 1000000] (times real time); leave it out for as fast as "
        "the client reads");
  }
  if (o.pause_ms < 0 || o.pause_after < -1) {
    return Status::InvalidArgument("--pause-ms must be >= 0 and --pause-after a bar seq >= 0");
  }
  if (o.latency_ms < 0 || o.disconnect_every < 0 || o.heartbeat_ms <= 0 ||
      o.client_timeout_ms <= 0 || o.end_linger_ms < 0) {
    return Status::InvalidArgument(
        "--latency and --disconnect-every must be >= 0 (and the heartbeat, client timeout and "
        "linger times positive)");
  }
  if (!(o.fee_rate >= 0 && o.fee_rate < 1) || !market::AmountInRange(o.initial_cash)) {
    return Status::InvalidArgument(
        "--fee-rate must lie in [0, 1) and --cash within +-1e30 (market/limits.h)");
  }
  RLT_ASSIGN_OR_RETURN(LineListener listener, LineListener::Listen(o.port));
  return std::unique_ptr<ExchangeSim>(
      new ExchangeSim(std::make_unique<Impl>(std::move(data), o, std::move(listener))));
}

ExchangeSim::ExchangeSim(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExchangeSim::~ExchangeSim() = default;
int ExchangeSim::port() const { return impl_->port(); }
Status ExchangeSim::Run() { return impl_->Run(stop_); }
bool ExchangeSim::ended_at_end_of_data() const { return impl_->ended_at_end_of_data(); }
ExchangeSimStats ExchangeSim::stats() const { return impl_->stats(); }

}  // namespace rlt::paper
