// Tests of the exchange simulator (paper/exchange_sim.h) with the trader's client
// (paper/tcp_broker.h), both in this process on an ephemeral port: fills at the next
// bar's open, cash and positions after fills, idempotent client_order_ids, retryable
// rejects, every bar exactly once across forced disconnects, a killed client that
// reconciles, stale connections, credentials, malformed lines and shutdown. No fixed
// ports and no fixed sleeps: every wait polls with a timeout.
#include "paper/exchange_sim.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "core/status_test_util.h"
#include "market/csv.h"
#include "paper/line_socket.h"
#include "paper/protocol.h"
#include "paper/tcp_broker.h"

namespace rlt::paper {
namespace {

constexpr int kWaitMs = 10000;  // upper bound of any wait; tests finish far sooner

// `n` one-minute bars per symbol from 2024-01-02 14:30 UTC; bar i of symbol k opens at
// 100 + 10 k + i + 0.25 (so every open is distinct and known to the test).
market::MarketData Bars(int n, const std::vector<std::string>& symbols = {"AAA"}) {
  std::string csv = "timestamp,symbol,open,high,low,close,volume\n";
  for (size_t k = 0; k < symbols.size(); ++k) {
    for (int i = 0; i < n; ++i) {
      const double open = 100 + 10 * static_cast<double>(k) + i + 0.25;
      csv += IsoTime(1704205800 + 60 * i) + "," + symbols[k] + "," + std::to_string(open) + "," +
             std::to_string(open + 1) + "," + std::to_string(open - 1) + "," +
             std::to_string(open + 0.5) + ",1000\n";
    }
  }
  auto data = market::ParseBarsCsv(csv, "test.csv", market::CsvReadOptions{});
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return std::move(data).value();
}

double Open(int symbol, int i) { return 100 + 10 * symbol + i + 0.25; }

// The simulator on its own thread; stopped and joined on destruction.
class RunningSim {
 public:
  RunningSim(market::MarketData data, ExchangeSimOptions options) {
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_ += line + "\n";
    };
    auto sim = ExchangeSim::Create(std::move(data), options);
    EXPECT_TRUE(sim.ok()) << sim.status().ToString();
    sim_ = std::move(sim).value();
    thread_ = std::thread([this] {
      result_ = sim_->Run();
      done_.store(true);
    });
  }
  ~RunningSim() { Join(); }
  void Join() {
    if (!thread_.joinable()) return;
    sim_->Stop();
    thread_.join();
  }
  // Waits for Run() to return on its own (end of data); false after kWaitMs.
  bool WaitForExit() {
    for (int64_t until = MonotonicMs() + kWaitMs; MonotonicMs() < until;) {
      if (exited()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const bool done = exited();
    Join();
    return done && result_.ok();
  }
  int port() const { return sim_->port(); }
  ExchangeSim& sim() { return *sim_; }
  std::string log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

 private:
  bool exited() const { return done_.load(); }
  std::unique_ptr<ExchangeSim> sim_;
  std::thread thread_;
  Status result_;
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::string log_;
};

TcpBrokerOptions Client(int port, const std::string& account = "acct") {
  TcpBrokerOptions o;
  o.port = port;
  o.account = account;
  o.client_name = "exchange_sim_test";
  return o;
}

// Polls until a message of type T arrives (the others are appended to *seen); fails the
// test after kWaitMs.
template <typename T>
T Next(TcpBroker& broker, std::vector<BrokerEvent>* seen = nullptr) {
  const int64_t until = MonotonicMs() + kWaitMs;
  while (MonotonicMs() < until) {
    auto event = broker.Poll(100);
    EXPECT_TRUE(event.ok()) << event.status().ToString();
    if (!event.ok()) break;
    if (!event->has_value()) continue;
    if ((*event)->kind == BrokerEvent::Kind::kMessage) {
      if (const T* m = std::get_if<T>(&(*event)->message)) return *m;
    }
    if (seen != nullptr) seen->push_back(**event);
  }
  ADD_FAILURE() << "no " << typeid(T).name() << " within " << kWaitMs << " ms";
  return T{};
}

Positions PositionsNow(TcpBroker& broker) {
  EXPECT_TRUE(broker.RequestPositions().ok());
  return Next<Positions>(broker);
}

NewOrder Order(const std::string& id, Side side, double quantity,
               const std::string& symbol = "AAA") {
  return NewOrder{id, symbol, side, quantity};
}

TEST(ExchangeSim, InLockstepAnOrderFillsAtTheNextBarsOpenAndBooksCashAndPositions) {
  ExchangeSimOptions options;
  options.lockstep = true;
  options.fee_rate = 0.001;
  options.initial_cash = 10000;
  RunningSim sim(Bars(6), options);
  TcpBroker broker(Client(sim.port()));
  ASSERT_TRUE(broker.Connect().ok());
  EXPECT_EQ(broker.hello().bars_total, 6);
  EXPECT_EQ(broker.hello().next_bar, 0);
  EXPECT_TRUE(broker.hello().lockstep);

  EXPECT_EQ(Next<BarMessage>(broker).seq, 0);
  ASSERT_TRUE(broker.SendOrder(Order("b1", Side::kBuy, 10)).ok());
  ASSERT_TRUE(broker.Ready(0).ok());
  EXPECT_EQ(Next<Ack>(broker).client_order_id, "b1");
  std::vector<BrokerEvent> before;
  const Fill buy = Next<Fill>(broker, &before);
  EXPECT_TRUE(before.empty()) << "the fill comes before bar 1";
  EXPECT_EQ(buy.bar, 1);
  EXPECT_EQ(buy.price, Open(0, 1));
  EXPECT_EQ(buy.epoch, 1704205800 + 60);
  EXPECT_NEAR(buy.fee, 0.001 * 10 * Open(0, 1), 1e-12);
  EXPECT_EQ(Next<BarMessage>(broker).seq, 1);

  ASSERT_TRUE(broker.Ready(1).ok());
  EXPECT_EQ(Next<BarMessage>(broker).seq, 2);
  ASSERT_TRUE(broker.SendOrder(Order("s1", Side::kSell, 4)).ok());
  ASSERT_TRUE(broker.Ready(2).ok());
  const Fill sell = Next<Fill>(broker);
  EXPECT_EQ(sell.bar, 3);
  EXPECT_EQ(sell.price, Open(0, 3));
  EXPECT_EQ(Next<BarMessage>(broker).seq, 3);

  const Positions p = PositionsNow(broker);
  EXPECT_EQ(p.account, "acct");
  ASSERT_EQ(p.positions.size(), 1u);
  EXPECT_EQ(p.positions[0].symbol, "AAA");
  EXPECT_EQ(p.positions[0].quantity, 6);
  EXPECT_EQ(p.positions[0].average_price, Open(0, 1));  // a reduced position keeps its price
  const double fees = 0.001 * (10 * Open(0, 1) + 4 * Open(0, 3));
  EXPECT_NEAR(p.cash, 10000 - 10 * Open(0, 1) + 4 * Open(0, 3) - fees, 1e-9);
  EXPECT_TRUE(p.open_orders.empty());

  // The rest of the stream, then the end; an order after it has nothing to fill at.
  for (int64_t t = 3; t < 5; ++t) {
    ASSERT_TRUE(broker.Ready(t).ok());
    EXPECT_EQ(Next<BarMessage>(broker).seq, t + 1);
  }
  const End end = Next<End>(broker);
  EXPECT_EQ(end.reason, "end_of_data");
  EXPECT_EQ(end.bars, 6);
  // After the end, requests are still answered.
  ASSERT_TRUE(broker.SendOrder(Order("late", Side::kBuy, 1)).ok());
  const Reject late = Next<Reject>(broker);
  EXPECT_EQ(late.client_order_id, "late");
  EXPECT_FALSE(late.retryable);
  EXPECT_NE(late.reason.find("end of data"), std::string::npos) << late.reason;
  EXPECT_EQ(PositionsNow(broker).positions.at(0).quantity, 6);
  broker.Close();
  EXPECT_TRUE(sim.WaitForExit()) << sim.log();
  EXPECT_TRUE(sim.sim().ended_at_end_of_data());
  EXPECT_EQ(sim.sim().stats().fills, 2);
}

TEST(ExchangeSim, WithoutLockstepTheFillIsAtTheOpenOfTheBarStreamedAfterTheOrder) {
  ExchangeSimOptions options;
  options.speed = 1200;  // one-minute bars every 50 ms: the order arrives mid-stream
  RunningSim sim(Bars(400), options);
  TcpBroker broker(Client(sim.port()));
  ASSERT_TRUE(broker.Connect().ok());
  const BarMessage first = Next<BarMessage>(broker);
  ASSERT_TRUE(broker.SendOrder(Order("o1", Side::kSell, 2)).ok());
  std::vector<BrokerEvent> seen;
  const Fill fill = Next<Fill>(broker, &seen);
  EXPECT_GT(fill.bar, first.seq);
  EXPECT_EQ(fill.price, Open(0, static_cast<int>(fill.bar)));
  // Every bar before the fill's bar, and not that bar, came before the fill.
  int64_t last_bar = first.seq;
  for (const BrokerEvent& e : seen) {
    if (const auto* b = std::get_if<BarMessage>(&e.message)) last_bar = b->seq;
  }
  EXPECT_EQ(last_bar, fill.bar - 1);
  EXPECT_EQ(Next<BarMessage>(broker).seq, fill.bar);
  const Positions p = PositionsNow(broker);
  ASSERT_EQ(p.positions.size(), 1u);
  EXPECT_EQ(p.positions[0].quantity, -2);
  EXPECT_EQ(p.cash, 2 * fill.price);
}

TEST(ExchangeSim, OrdersFillAtTheNextBarOfTheirOwnSymbol) {
  ExchangeSimOptions options;
  options.lockstep = true;
  RunningSim sim(Bars(3, {"AAA", "BBB"}), options);
  TcpBroker broker(Client(sim.port()));
  ASSERT_TRUE(broker.Connect().ok());
  EXPECT_EQ(broker.hello().symbols, (std::vector<std::string>{"AAA", "BBB"}));
  const BarMessage b0 = Next<BarMessage>(broker);  // seq 0: AAA at t0 (ties by symbol name)
  EXPECT_EQ(b0.symbol, "AAA");
  ASSERT_TRUE(broker.SendOrder(Order("x", Side::kBuy, 1, "BBB")).ok());
  ASSERT_TRUE(broker.SendOrder(Order("y", Side::kBuy, 1, "ZZZ")).ok());
  ASSERT_TRUE(broker.Ready(0).ok());
  const Reject unknown = Next<Reject>(broker);
  EXPECT_EQ(unknown.client_order_id, "y");
  EXPECT_FALSE(unknown.retryable);
  EXPECT_NE(unknown.reason.find("unknown symbol 'ZZZ'"), std::string::npos);
  const Fill fill = Next<Fill>(broker);
  EXPECT_EQ(fill.bar, 1);  // BBB at t0
  EXPECT_EQ(fill.price, Open(1, 0));
}

TEST(ExchangeSim, ARepeatedClientOrderIdIsAnsweredWithTheOriginalOutcomeNeverASecondFill) {
  ExchangeSimOptions options;
  options.lockstep = true;
  RunningSim sim(Bars(5), options);
  TcpBroker broker(Client(sim.port()));
  ASSERT_TRUE(broker.Connect().ok());
  EXPECT_EQ(Next<BarMessage>(broker).seq, 0);
  ASSERT_TRUE(broker.SendOrder(Order("dup", Side::kBuy, 3)).ok());
  const Ack ack = Next<Ack>(broker);
  // Again while pending: the same ack, still one order.
  ASSERT_TRUE(broker.SendOrder(Order("dup", Side::kBuy, 3)).ok());
  EXPECT_EQ(Next<Ack>(broker).order_id, ack.order_id);
  EXPECT_EQ(PositionsNow(broker).open_orders, std::vector<std::string>{"dup"});
  ASSERT_TRUE(broker.Ready(0).ok());
  const Fill fill = Next<Fill>(broker);
  EXPECT_EQ(Next<BarMessage>(broker).seq, 1);
  // Again after the fill: ack and the original fill, repeated.
  ASSERT_TRUE(broker.SendOrder(Order("dup", Side::kBuy, 3)).ok());
  EXPECT_EQ(Next<Ack>(broker).order_id, ack.order_id);
  const Fill again = Next<Fill>(broker);
  EXPECT_EQ(ToLine(ServerMessage{again}), ToLine(ServerMessage{fill}));
  ASSERT_TRUE(broker.Ready(1).ok());
  EXPECT_EQ(Next<BarMessage>(broker).seq, 2);
  // The same id for another order is refused; the original stands.
  ASSERT_TRUE(broker.SendOrder(Order("dup", Side::kBuy, 30)).ok());
  const Reject conflict = Next<Reject>(broker);
  EXPECT_FALSE(conflict.retryable);
  EXPECT_NE(conflict.reason.find("already used for a different order"), std::string::npos);
  const Positions p = PositionsNow(broker);
  ASSERT_EQ(p.positions.size(), 1u);
  EXPECT_EQ(p.positions[0].quantity, 3);
  EXPECT_EQ(p.cash, -3 * Open(0, 1));
  sim.Join();
  EXPECT_EQ(sim.sim().stats().fills, 1);
  EXPECT_EQ(sim.sim().stats().orders, 1);
}

TEST(ExchangeSim, CancelStopsAPendingOrderAndIsRefusedForAFilledOne) {
  ExchangeSimOptions options;
  options.lockstep = true;
  RunningSim sim(Bars(4), options);
  TcpBroker broker(Client(sim.port()));
  ASSERT_TRUE(broker.Connect().ok());
  EXPECT_EQ(Next<BarMessage>(broker).seq, 0);
  ASSERT_TRUE(broker.SendOrder(Order("c", Side::kBuy, 1)).ok());
  ASSERT_TRUE(broker.SendOrder(Order("f", Side::kBuy, 2)).ok());
  ASSERT_TRUE(broker.CancelOrder("c").ok());
  EXPECT_EQ(Next<Cancelled>(broker).client_order_id, "c");
  ASSERT_TRUE(broker.Ready(0).ok());
  EXPECT_EQ(Next<Fill>(broker).client_order_id, "f");
  ASSERT_TRUE(broker.CancelOrder("f").ok());
  const Reject late = Next<Reject>(broker);
  EXPECT_EQ(late.request, "cancel");
  EXPECT_NE(late.reason.find("already filled at bar 1"), std::string::npos) << late.reason;
  ASSERT_TRUE(broker.CancelOrder("nope").ok());
  EXPECT_NE(Next<Reject>(broker).reason.find("unknown client_order_id 'nope'"), std::string::npos);
  EXPECT_EQ(PositionsNow(broker).positions.at(0).quantity, 2);
}

TEST(ExchangeSim, RejectRateRejectsAreRetryableAndARetryUnderANewIdFills) {
  ExchangeSimOptions options;
  options.lockstep = true;
  options.reject_rate = 0.5;
  options.seed = 7;
  RunningSim sim(Bars(4), options);
  TcpBroker broker(Client(sim.port()));
  ASSERT_TRUE(broker.Connect().ok());
  EXPECT_EQ(Next<BarMessage>(broker).seq, 0);
  // Eight one-share orders; each rejected one is retried under a new id until acked.
  int rejects = 0;
  for (int k = 0; k < 8; ++k) {
    for (int attempt = 0;; ++attempt) {
      ASSERT_LT(attempt, 40) << "order " << k << " never accepted";
      const std::string id = "o" + std::to_string(k) + "-" + std::to_string(attempt);
      ASSERT_TRUE(broker.SendOrder(Order(id, Side::kBuy, 1)).ok());
      auto event = broker.Poll(kWaitMs);
      ASSERT_TRUE(event.ok() && event->has_value());
      const ServerMessage& m = (*event)->message;
      if (const auto* reject = std::get_if<Reject>(&m)) {
        EXPECT_EQ(reject->client_order_id, id);
        EXPECT_TRUE(reject->retryable);
        ++rejects;
        // The rejected id keeps its outcome.
        ASSERT_TRUE(broker.SendOrder(Order(id, Side::kBuy, 1)).ok());
        EXPECT_EQ(Next<Reject>(broker).reason, reject->reason);
        continue;
      }
      ASSERT_TRUE(std::holds_alternative<Ack>(m)) << ToLine(m);
      break;
    }
  }
  EXPECT_GT(rejects, 0);
  ASSERT_TRUE(broker.Ready(0).ok());
  for (int k = 0; k < 8; ++k) EXPECT_EQ(Next<Fill>(broker).bar, 1);
  EXPECT_EQ(PositionsNow(broker).positions.at(0).quantity, 8);
}

TEST(ExchangeSim, DisconnectEveryDeliversEveryBarExactlyOnceInOrder) {
  ExchangeSimOptions options;
  options.disconnect_every = 3;
  RunningSim sim(Bars(20), options);
  TcpBroker broker(Client(sim.port()));
  ASSERT_TRUE(broker.Connect().ok());
  std::vector<int64_t> seqs;
  int disconnects = 0, reconnects = 0;
  for (int64_t until = MonotonicMs() + kWaitMs; MonotonicMs() < until && !broker.ended();) {
    auto event = broker.Poll(100);
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    if (!event->has_value()) continue;
    const BrokerEvent& e = **event;
    if (e.kind == BrokerEvent::Kind::kDisconnected) ++disconnects;
    if (e.kind == BrokerEvent::Kind::kReconnected) {
      ++reconnects;
      // The new session continues where the stream stopped.
      EXPECT_EQ(std::get<ServerHello>(e.message).next_bar, static_cast<int64_t>(seqs.size()));
    }
    if (const auto* bar = std::get_if<BarMessage>(&e.message)) {
      seqs.push_back(bar->seq);
      EXPECT_EQ(bar->open, Open(0, static_cast<int>(bar->seq)));
    }
  }
  ASSERT_TRUE(broker.ended());
  std::vector<int64_t> expected(20);
  for (int i = 0; i < 20; ++i) expected[i] = i;
  EXPECT_EQ(seqs, expected);
  EXPECT_EQ(disconnects, 6);  // after bars 3, 6, 9, 12, 15, 18
  EXPECT_EQ(reconnects, 6);
  EXPECT_EQ(broker.reconnects(), 6);
  broker.Close();
  EXPECT_TRUE(sim.WaitForExit()) << sim.log();
  EXPECT_EQ(sim.sim().stats().disconnects, 6);
}

TEST(ExchangeSim, AKilledClientReconnectsAndItsPositionsReconcile) {
  ExchangeSimOptions options;
  options.lockstep = true;
  RunningSim sim(Bars(6), options);
  {
    TcpBroker first(Client(sim.port(), "acct-k"));
    ASSERT_TRUE(first.Connect().ok());
    EXPECT_EQ(Next<BarMessage>(first).seq, 0);
    ASSERT_TRUE(first.SendOrder(Order("k1", Side::kBuy, 5)).ok());
    EXPECT_EQ(Next<Ack>(first).client_order_id, "k1");
    first.Close();  // killed before it sent ready: the order is pending, unfilled
  }
  TcpBroker second(Client(sim.port(), "acct-k"));
  ASSERT_TRUE(second.Connect().ok());
  // Bar 0 was sent to the first client, which never readied it: it comes again, once.
  EXPECT_EQ(second.hello().next_bar, 0);
  EXPECT_EQ(Next<BarMessage>(second).seq, 0);
  Positions p = PositionsNow(second);
  EXPECT_TRUE(p.positions.empty());
  EXPECT_EQ(p.open_orders, std::vector<std::string>{"k1"});
  // The journal says k1 was sent: re-sending it is safe and gets the same order.
  ASSERT_TRUE(second.SendOrder(Order("k1", Side::kBuy, 5)).ok());
  Next<Ack>(second);
  ASSERT_TRUE(second.Ready(0).ok());
  const Fill fill = Next<Fill>(second);
  EXPECT_EQ(fill.bar, 1);
  EXPECT_EQ(Next<BarMessage>(second).seq, 1);
  p = PositionsNow(second);
  ASSERT_EQ(p.positions.size(), 1u);
  EXPECT_EQ(p.positions[0].quantity, 5);
  EXPECT_EQ(p.cash, -5 * Open(0, 1));
  EXPECT_TRUE(p.open_orders.empty());
  // Another account sees none of it.
  TcpBroker other(Client(sim.port(), "acct-other"));
  ASSERT_TRUE(other.Connect().ok());  // takes over the connection
  EXPECT_TRUE(PositionsNow(other).positions.empty());
}

TEST(ExchangeSim, AClientKilledMidStreamReconcilesByReSendingItsJournaledOrder) {
  ExchangeSimOptions options;
  options.speed = 1200;  // one-minute bars every 50 ms: the kill happens mid-stream
  RunningSim sim(Bars(400), options);
  int64_t last_seen = -1;
  {
    TcpBroker first(Client(sim.port()));
    ASSERT_TRUE(first.Connect().ok());
    last_seen = Next<BarMessage>(first).seq;
    ASSERT_TRUE(first.SendOrder(Order("m1", Side::kSell, 7)).ok());
    Next<Ack>(first);
    first.Close();  // whatever was in flight, fill included, is lost to this client
  }
  TcpBroker second(Client(sim.port()));
  ASSERT_TRUE(second.Connect().ok());
  EXPECT_GT(second.hello().next_bar, last_seen);
  ASSERT_TRUE(second.SendOrder(Order("m1", Side::kSell, 7)).ok());
  Next<Ack>(second);
  // The stream resumes with this client, so the order has filled by now or fills next.
  const Fill fill = Next<Fill>(second);
  EXPECT_GT(fill.bar, last_seen);
  EXPECT_EQ(fill.price, Open(0, static_cast<int>(fill.bar)));
  const Positions p = PositionsNow(second);
  ASSERT_EQ(p.positions.size(), 1u);
  EXPECT_EQ(p.positions[0].quantity, -7);
  EXPECT_EQ(p.cash, 7 * fill.price);
  sim.Join();
  EXPECT_EQ(sim.sim().stats().fills, 1);
}

TEST(ExchangeSim, MalformedLinesGetAnErrorNamingTheProblemAndTheConnectionStays) {
  ExchangeSimOptions options;
  options.lockstep = true;
  RunningSim sim(Bars(3), options);
  auto conn = LineConnection::Connect("127.0.0.1", sim.port(), 2000);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto expect_error = [&](const std::string& send, const std::string& part) {
    ASSERT_TRUE(conn->SendNow(send, 2000).ok());
    std::string line;
    Result<ServerMessage> m = Status::NotFound("no line");
    do {  // past bar 0 and heartbeats
      ASSERT_EQ(conn->ReceiveLine(kWaitMs, &line), LineConnection::Receive::kLine);
      m = ParseServerMessage(line);
      ASSERT_TRUE(m.ok()) << line;
    } while (std::holds_alternative<BarMessage>(*m) || std::holds_alternative<Heartbeat>(*m));
    ASSERT_TRUE(std::holds_alternative<ErrorMessage>(*m)) << line;
    EXPECT_NE(std::get<ErrorMessage>(*m).message.find(part), std::string::npos) << line;
  };
  expect_error("{oops", "not a JSON line");
  expect_error(R"({"type":"positions"})", "received positions before hello");
  expect_error(R"({"type":"hello","client":"raw","protocol":1})",
               "hello: field 'account' is missing");
  ASSERT_TRUE(
      conn->SendNow(R"({"type":"hello","client":"raw","protocol":1,"account":"r"})", 2000).ok());
  std::string line;
  ASSERT_EQ(conn->ReceiveLine(kWaitMs, &line), LineConnection::Receive::kLine);
  EXPECT_TRUE(std::holds_alternative<ServerHello>(*ParseServerMessage(line))) << line;
  expect_error(R"({"type":"fill"})", "unknown message type 'fill' from a client");
}

TEST(ExchangeSim, TheTokenComesFromTheEnvironmentAndIsNeverEchoedOrLogged) {
  ExchangeSimOptions options;
  options.token = "s3cret-token";
  RunningSim sim(Bars(3), options);
  ASSERT_EQ(unsetenv(kBrokerTokenVariable), 0);
  TcpBrokerOptions o = Client(sim.port());
  o.max_attempts = 1;
  TcpBroker without(o);
  const Status refused = without.Connect();
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument) << refused.ToString();
  EXPECT_NE(refused.message().find("authentication failed"), std::string::npos);
  ASSERT_EQ(setenv(kBrokerTokenVariable, "wrong-one", 1), 0);
  EXPECT_TRUE(
      IsError(TcpBroker(o).Connect(), Status::Code::kInvalidArgument, "authentication failed"));
  ASSERT_EQ(setenv(kBrokerTokenVariable, "s3cret-token", 1), 0);
  TcpBroker with(o);
  const Status ok = with.Connect();
  ASSERT_EQ(unsetenv(kBrokerTokenVariable), 0);
  ASSERT_TRUE(ok.ok()) << ok.ToString();
  EXPECT_EQ(Next<BarMessage>(with).seq, 0);
  sim.Join();
  EXPECT_EQ(sim.log().find("s3cret"), std::string::npos);
  EXPECT_EQ(sim.log().find("wrong-one"), std::string::npos);
}

TEST(ExchangeSim, HeartbeatsFlowAndASilentServerIsDeclaredStale) {
  // A fake server that answers hello once and then says nothing.
  auto listener = LineListener::Listen(0);
  ASSERT_TRUE(listener.ok());
  std::thread fake([&] {
    LineConnection conn;
    for (int64_t until = MonotonicMs() + kWaitMs; !conn.open() && MonotonicMs() < until;) {
      auto c = listener->Accept();
      if (c.ok() && c->open()) conn = std::move(c).value();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::string line;
    if (conn.ReceiveLine(kWaitMs, &line) != LineConnection::Receive::kLine) return;
    (void)conn.SendNow(ToLine(ServerHello{"fake", 1, "s", "acct", {"AAA"}, 1, 0, 1000, false}),
                       1000);
    // Read (heartbeats) until the client gives up on us.
    int heartbeats = 0;
    while (conn.ReceiveLine(kWaitMs, &line) == LineConnection::Receive::kLine) {
      heartbeats += line.find("\"heartbeat\"") != std::string::npos;
    }
    EXPECT_GE(heartbeats, 1);
  });
  TcpBrokerOptions o = Client(listener->port());
  o.heartbeat_ms = 50;
  o.stale_timeout_ms = 300;
  o.max_attempts = 1;
  TcpBroker broker(o);
  ASSERT_TRUE(broker.Connect().ok());
  const int64_t start = MonotonicMs();
  std::optional<BrokerEvent> event;
  while (!event && MonotonicMs() - start < kWaitMs) {
    auto e = broker.Poll(100);
    ASSERT_TRUE(e.ok());
    event = *e;
  }
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->kind, BrokerEvent::Kind::kDisconnected);
  EXPECT_NE(event->detail.find("stale"), std::string::npos) << event->detail;
  EXPECT_GE(MonotonicMs() - start, 250);
  fake.join();
  // The real simulator heartbeats an idle client (lockstep, no ready sent).
  ExchangeSimOptions options;
  options.lockstep = true;
  options.heartbeat_ms = 50;
  RunningSim sim(Bars(3), options);
  auto conn = LineConnection::Connect("127.0.0.1", sim.port(), 2000);
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(conn->SendNow(ToLine(ClientHello{"raw", 1, "a", ""}), 2000).ok());
  int heartbeats = 0;
  std::string line;
  for (int i = 0; i < 10 && heartbeats < 2; ++i) {
    ASSERT_EQ(conn->ReceiveLine(kWaitMs, &line), LineConnection::Receive::kLine);
    heartbeats += line == ToLine(ServerMessage{Heartbeat{}});
  }
  EXPECT_EQ(heartbeats, 2);
}

TEST(ExchangeSim, StopSendsEndShutdownAndRunReturns) {
  ExchangeSimOptions options;
  options.lockstep = true;
  RunningSim sim(Bars(3), options);
  TcpBroker broker(Client(sim.port()));
  ASSERT_TRUE(broker.Connect().ok());
  EXPECT_EQ(Next<BarMessage>(broker).seq, 0);
  sim.sim().Stop();
  EXPECT_EQ(Next<End>(broker).reason, "shutdown");
  sim.Join();
  EXPECT_FALSE(sim.sim().ended_at_end_of_data());
}

TEST(ExchangeSim, LatencyDelaysResponses) {
  ExchangeSimOptions options;
  options.lockstep = true;
  options.latency_ms = 150;
  RunningSim sim(Bars(3), options);
  TcpBroker broker(Client(sim.port()));
  const int64_t start = MonotonicMs();
  ASSERT_TRUE(broker.Connect().ok());
  EXPECT_GE(MonotonicMs() - start, 150);  // the hello answer
  const int64_t sent = MonotonicMs();
  ASSERT_TRUE(broker.RequestPositions().ok());
  Next<Positions>(broker);
  EXPECT_GE(MonotonicMs() - sent, 150);
}

// A raw connection that said hello; lines() collects what the simulator sends.
class RawClient {
 public:
  explicit RawClient(int port, const std::string& account = "raw") {
    auto conn = LineConnection::Connect("127.0.0.1", port, 2000);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    conn_ = std::move(conn).value();
    Send(R"({"type":"hello","client":"raw","protocol":1,"account":")" + account + "\"}");
    Expect<ServerHello>();
  }
  void Send(const std::string& line) { ASSERT_TRUE(conn_.SendNow(line, 2000).ok()); }
  // The next message of type T (others, except bars and heartbeats, are kept in seen()).
  template <typename T>
  T Expect() {
    std::string line;
    for (int64_t until = MonotonicMs() + kWaitMs; MonotonicMs() < until;) {
      if (conn_.ReceiveLine(100, &line) != LineConnection::Receive::kLine) continue;
      lines_.push_back(line);
      Result<ServerMessage> m = ParseServerMessage(line);
      EXPECT_TRUE(m.ok()) << line << ": " << m.status().ToString();
      if (!m.ok()) break;
      if (const T* t = std::get_if<T>(&*m)) return *t;
    }
    ADD_FAILURE() << "no " << typeid(T).name() << " within " << kWaitMs << " ms";
    return T{};
  }
  const std::vector<std::string>& lines() const { return lines_; }
  LineConnection& conn() { return conn_; }

 private:
  LineConnection conn_;
  std::vector<std::string> lines_;
};

// prefix + i (built by appending: `Id("r", i)` trips a false -Wrestrict of g++ 12).
std::string Id(const char* prefix, int i) {
  std::string id = prefix;
  id += std::to_string(i);
  return id;
}

std::string OrderLine(const std::string& id, const std::string& quantity,
                      const std::string& side = "buy") {
  return R"({"type":"new_order","client_order_id":")" + id + R"(","symbol":"AAA","side":")" + side +
         R"(","quantity":)" + quantity + R"(,"order_type":"market"})";
}

// A quantity of 1e308 was accepted and its fill sent "fee": null, "cash": null.
TEST(ExchangeSim, QuantitiesOutsideTheLimitsAreRefusedAndNothingNonFiniteIsSent) {
  ExchangeSimOptions options;
  options.lockstep = true;
  options.fee_rate = 0.5;
  RunningSim sim(Bars(3), options);
  RawClient c(sim.port());
  // Bar 0 first: an order accepted before any bar is sent fills at bar 0's open, one
  // accepted after it at bar 1's (exchange_sim.h), and the fill below is bar 1's.
  EXPECT_EQ(c.Expect<BarMessage>().seq, 0);
  for (const char* q : {"1e308", "1e-300", "0"}) {
    c.Send(OrderLine(std::string("q") + q, q));
    const ErrorMessage e = c.Expect<ErrorMessage>();
    EXPECT_NE(e.message.find("new_order: field 'quantity' must be a quantity in [1e-08, 1e+12]"),
              std::string::npos)
        << e.message;
  }
  c.Send(OrderLine("ok", "1e12"));  // the largest order fills at 101.25: 1e14 in value
  c.Expect<Ack>();
  c.Send(R"({"type":"ready","after_bar":0})");
  const Fill f = c.Expect<Fill>();
  EXPECT_EQ(f.quantity, 1e12);
  EXPECT_DOUBLE_EQ(f.fee, 0.5 * 1e12 * Open(0, 1));
  c.Send(R"({"type":"positions"})");
  const Positions p = c.Expect<Positions>();
  EXPECT_DOUBLE_EQ(p.cash, -1.5 * 1e12 * Open(0, 1));
  for (const std::string& line : c.lines()) EXPECT_EQ(line.find("null"), std::string::npos) << line;
}

TEST(ExchangeSim, AFillThatWouldTakeCashBeyondTheLimitIsRejectedNotSentAsInfinity) {
  ExchangeSimOptions options;
  options.lockstep = true;
  options.initial_cash = 1e30;  // the limit: a sale's proceeds would pass it
  RunningSim sim(Bars(3), options);
  RawClient c(sim.port());
  c.Send(OrderLine("s1", "1e12", "sell"));
  c.Expect<Ack>();
  c.Send(R"({"type":"ready","after_bar":0})");
  const Reject r = c.Expect<Reject>();
  EXPECT_EQ(r.client_order_id, "s1");
  EXPECT_FALSE(r.retryable);
  EXPECT_NE(r.reason.find("beyond the limit of +-1e30"), std::string::npos) << r.reason;
  c.Send(R"({"type":"positions"})");
  const Positions p = c.Expect<Positions>();
  EXPECT_EQ(p.cash, 1e30);
  EXPECT_TRUE(p.positions.empty());
  EXPECT_TRUE(p.open_orders.empty());
  // The outcome is the id's for good.
  c.Send(OrderLine("s1", "1e12", "sell"));
  EXPECT_EQ(c.Expect<Reject>().reason, r.reason);
}

// One client once grew the simulator from 163 MB to 830 MB in 15 s with rejected orders.
// Rejected orders live in a window of the most recent ones: an id inside it is answered
// as a repeat, an older one is a new order (counted again in stats().orders).
TEST(ExchangeSim, RejectedOrdersAreRememberedInABoundedWindow) {
  ExchangeSimOptions options;
  options.lockstep = true;
  options.reject_rate = 1;
  RunningSim sim(Bars(3), options);
  RawClient c(sim.port());
  const int n = static_cast<int>(kRejectedOrderWindow) + 1;
  for (int i = 0; i < n; ++i) c.Send(OrderLine(Id("r", i), "1"));
  for (int i = 0; i < n; ++i) c.Expect<Reject>();
  c.Send(OrderLine(Id("r", n - 1), "1"));  // the newest: a repeat
  c.Expect<Reject>();
  c.Send(OrderLine("r0", "1"));  // the oldest: forgotten, a new order
  c.Expect<Reject>();
  sim.Join();
  EXPECT_EQ(sim.sim().stats().orders, n + 1);
}

TEST(ExchangeSim, OpenOrdersOfAnAccountAreCapped) {
  ExchangeSimOptions options;
  options.lockstep = true;  // nothing fills before ready
  RunningSim sim(Bars(3), options);
  RawClient c(sim.port());
  const int n = static_cast<int>(kMaxOpenOrders) + 1;
  for (int i = 0; i < n; ++i) c.Send(OrderLine(Id("o", i), "1"));
  for (int i = 0; i + 1 < n; ++i) c.Expect<Ack>();
  const Reject r = c.Expect<Reject>();
  EXPECT_EQ(r.client_order_id, Id("o", n - 1));
  EXPECT_TRUE(r.retryable);
  EXPECT_NE(r.reason.find("10000 open orders"), std::string::npos) << r.reason;
}

TEST(ExchangeSim, ADeeplyNestedLineGetsAnErrorAndTheServerGoesOn) {
  ExchangeSimOptions options;
  options.lockstep = true;
  RunningSim sim(Bars(3), options);
  RawClient c(sim.port());
  c.Send(std::string(400000, '[') + std::string(400000, ']'));
  const ErrorMessage e = c.Expect<ErrorMessage>();
  EXPECT_NE(e.message.find("nested more than 128 levels"), std::string::npos) << e.message;
  c.Send(R"({"type":"positions"})");
  EXPECT_EQ(c.Expect<Positions>().account, "raw");
}

// A server that accepted the connection and never answers hello (the kernel completes
// the connection of a listener that does not accept) is named as such.
TEST(TcpBroker, AServerThatNeverAnswersHelloIsReportedAsSuch) {
  auto listener = LineListener::Listen(0);
  ASSERT_TRUE(listener.ok());
  TcpBrokerOptions o = Client(listener->port());
  o.connect_timeout_ms = 300;
  o.max_attempts = 2;
  o.backoff_initial_ms = 10;
  const Status s = TcpBroker(o).Connect();
  ASSERT_TRUE(IsError(s, Status::Code::kIoError,
                      "accepted the connection but did not answer the hello within 300 ms"));
  EXPECT_EQ(s.message().find("is the broker or"), std::string::npos) << s.message();
}

TEST(TcpBroker, AnOverLongLineIsReportedWithTheLimitNotAsARefusedConnection) {
  auto listener = LineListener::Listen(0);
  ASSERT_TRUE(listener.ok());
  // Every connection gets 3 MiB, until the client has given up (on a loaded machine an
  // attempt may time out before this thread accepts it). The connections stay open until
  // then: closing one with the client's hello unread resets it, and the reset can reach
  // the client before it has read past the limit.
  std::atomic<bool> client_done{false};
  std::thread server([&] {
    std::vector<LineConnection> open;
    for (int64_t until = MonotonicMs() + kWaitMs; !client_done && MonotonicMs() < until;) {
      auto conn = listener->Accept();
      if (!conn.ok() || !conn->open()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      (void)conn->SendNow(std::string(3 << 20, 'x'), 3000);
      open.push_back(std::move(*conn));
    }
  });
  TcpBrokerOptions o = Client(listener->port());
  o.connect_timeout_ms = 10000;  // the hello's wait: ample, so only the long line can fail it
  o.max_attempts = 3;
  o.backoff_initial_ms = 10;
  const Status s = TcpBroker(o).Connect();
  client_done = true;
  server.join();
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "longer than the protocol's limit of 1048576 bytes"));
  EXPECT_EQ(s.message().find("refused"), std::string::npos) << s.message();
}

TEST(ExchangeSim, BadOptionsAreRefusedWithTheFlagName) {
  ExchangeSimOptions options;
  options.reject_rate = 1.5;
  auto sim = ExchangeSim::Create(Bars(2), options);
  ASSERT_TRUE(IsError(sim, Status::Code::kInvalidArgument, "--reject-rate"));
  EXPECT_TRUE(IsError(ExchangeSim::Create(market::MarketData{}, ExchangeSimOptions{}),
                      Status::Code::kInvalidArgument, "the bar file has no bars"));
  for (const double speed : {1e-300, 1e-4, 2e6}) {
    options = ExchangeSimOptions{};
    options.speed = speed;
    sim = ExchangeSim::Create(Bars(2), options);
    ASSERT_TRUE(
        IsError(sim, Status::Code::kInvalidArgument, "--speed must lie in [0.001, 1000000]"))
        << speed;
  }
  options = ExchangeSimOptions{};
  options.initial_cash = 1e300;
  sim = ExchangeSim::Create(Bars(2), options);
  ASSERT_TRUE(IsError(sim, Status::Code::kInvalidArgument, "--cash within +-1e30"));
  auto address = ParseBrokerAddress("tcp:localhost");
  ASSERT_TRUE(IsError(address, Status::Code::kInvalidArgument, "expected tcp:HOST:PORT"));
  address = ParseBrokerAddress("tcp:127.0.0.1:7001");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(address->host, "127.0.0.1");
  EXPECT_EQ(address->port, 7001);
}

}  // namespace
}  // namespace rlt::paper
