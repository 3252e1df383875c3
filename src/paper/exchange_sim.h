// rltrade paper: the exchange simulator behind `rltrade exchange-sim` — a server of the
// broker protocol (protocol.h) that streams a bar file and fills market orders.
//
// What it is: one object that listens on 127.0.0.1 (port 0: any free port, port() tells
// which), serves one client at a time from one thread (poll() loop in Run()), and keeps
// every account's cash, positions and accepted orders for the life of the process, within
// the bounds below.
//
// The exact rules (tests check each):
//  - The stream: every bar of every symbol of the file, in time order (ties by symbol
//    name), numbered seq 0.. . It advances only while a client that said hello is
//    connected, as fast as the client reads (a bar is written once the previous one has
//    left the send buffer), or at `speed` x real time, or — with `lockstep` — only after the
//    client's ready {after_bar: seq - 1}.
//  - Fills: a market order accepted when bars 0..t have been sent is filled at the open of
//    the next bar of its symbol to be streamed (bar t+1 when the file has one symbol), for
//    its whole quantity, fee = fee_rate x |quantity x price|. The fill is sent before that
//    bar. In lockstep mode "orders sent before ready {after_bar: t}" fill at bar t+1: the
//    fill bar is deterministic. Orders still pending at the end of the data are rejected
//    (retryable false).
//  - Accounts: chosen by hello's account; cash starts at initial_cash and changes by
//    -(signed quantity x price) - fee per fill; average_price is that of the open
//    position (weighted when it grows, kept when it shrinks, the fill price when it
//    flips). Orders of an account fill whether or not its client is connected; messages
//    for a client that is gone are dropped (it reconciles with positions and by re-sending
//    orders: idempotent client_order_ids, protocol.h).
//  - Connections: a reconnecting client continues its account and the stream where it
//    stopped; in lockstep mode, from the bar after its last ready (a bar sent and not
//    readied is sent again, once, to the new connection: a client that died while
//    handling it loses nothing; the fills before it are not repeated). A new connection while a
//    client is connected takes over (the old one gets an error and is closed): a client that died
//    without closing its socket cannot lock the simulator. A client silent for client_timeout_ms is
//    dropped.
//  - Faults: latency_ms delays every response (hello, ack, fill, reject, cancelled,
//    positions, error, end), not bars (responses still delayed when disconnect_every
//    strikes are sent before the disconnect); reject_rate rejects that fraction of new orders
//    (drawn from `seed`, retryable true; the outcome is that id's for good: retry under a
//    new id); disconnect_every N closes the connection gracefully after every N-th bar of
//    the stream (not after the last), so everything sent before reaches the client, and
//    the next bar goes to the next connection: no bar is lost or sent twice (in lockstep
//    mode the last bar, unless the client readied it in time, is sent again). A client that
//    breaks its own connection may lose what was in flight (at-most-once delivery).
//  - pause_after N, pause_ms M: after bar N the next bar waits M ms more (a feed that
//    goes quiet: heartbeats go on, orders are still answered).
//  - Bounds (what a client can make the simulator keep): at most kMaxAccounts accounts (a
//    hello for one more is refused with an error); at most kMaxSessionOrders accepted
//    orders in the session (further orders are rejected, retryable false) and
//    kMaxOpenOrders pending ones per account (rejected, retryable true). Accepted orders
//    are kept for good, so a repeated id is never filled twice; rejected orders are kept in
//    a window of the kRejectedOrderWindow most recent rejects of all accounts: a repeat
//    inside it gets the original reject, a repeat of an older rejected id is a new order
//    (a rejected order never filled, so this cannot fill anything twice). While the client
//    leaves more than 4 MiB of what was sent to it unread, or 10,000 responses wait for
//    --latency, its requests are not read (they wait in the kernel). Every message sent
//    keeps the protocol's limits (protocol.h, market/limits.h): a fill that would take an
//    account's cash or position beyond +-1e30 is rejected instead (retryable false).
//  - Heartbeats after heartbeat_ms without sending. At the end of the data: pending
//    orders rejected, then end {reason: "end_of_data"}; requests are still answered until
//    the client closes or end_linger_ms passes; then Run() returns. Stop() (any thread, or
//    a signal handler) sends end {reason: "shutdown"} and makes Run() return.
// Thread safety: Run() on one thread; port(), Stop() from any; stats() after Run().
#ifndef RLT_PAPER_EXCHANGE_SIM_H_
#define RLT_PAPER_EXCHANGE_SIM_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "market/csv.h"

namespace rlt::paper {

// The bounds (see the file comment).
inline constexpr size_t kMaxAccounts = 1000;
inline constexpr int64_t kMaxSessionOrders = 200'000;
inline constexpr size_t kMaxOpenOrders = 10'000;
inline constexpr size_t kRejectedOrderWindow = 10'000;
// --speed: 0 (as fast as the client reads) or within these.
inline constexpr double kMinSpeed = 0.001;
inline constexpr double kMaxSpeed = 1e6;

struct ExchangeSimOptions {
  int port = 0;                  // 0: any free port (read it with port())
  int latency_ms = 0;            // delay of every response, ms
  double reject_rate = 0;        // fraction of new orders rejected (retryable), in [0, 1]
  int64_t disconnect_every = 0;  // close the connection after every N-th bar; 0: never
  double speed = 0;  // 0: as fast as the client reads; X in [kMinSpeed, kMaxSpeed]: X x real time
  bool lockstep = false;          // stream bar t+1 only after the client's ready {after_bar: t}
  int64_t pause_after = -1;       // hold the stream for pause_ms after this bar's seq; -1: never
  int pause_ms = 0;               // (a stale feed, for tests; heartbeats go on)
  uint64_t seed = 0;              // the reject draws
  double fee_rate = 0;            // fee per fill as a fraction of traded value
  double initial_cash = 0;        // every account's cash before its first fill
  int heartbeat_ms = 1000;        // heartbeat after this long without sending
  int client_timeout_ms = 10000;  // drop a client that sent nothing for this long
  int end_linger_ms = 5000;       // after end: wait this long for the client to close
  std::string token;              // "" = no authentication; else hello.token must equal it
  // Called with one line per event (connections, faults, the end); never holds the token.
  std::function<void(const std::string&)> log;
};

struct ExchangeSimStats {
  int64_t bars_sent = 0, connections = 0, orders = 0, fills = 0, rejects = 0;
  int64_t disconnects = 0;  // by disconnect_every
};

class ExchangeSim {
 public:
  // Validates the options, lays out the stream and binds the listening socket.
  static Result<std::unique_ptr<ExchangeSim>> Create(market::MarketData data,
                                                     const ExchangeSimOptions& options);
  ~ExchangeSim();
  ExchangeSim(const ExchangeSim&) = delete;
  ExchangeSim& operator=(const ExchangeSim&) = delete;

  int port() const;
  // Serves until the end of the data (see the file comment) or Stop(). Errors: the
  // listening socket failed.
  Status Run();
  // Makes Run() send end {reason: "shutdown"} and return. Async-signal-safe.
  void Stop() { stop_.store(true, std::memory_order_relaxed); }
  bool ended_at_end_of_data() const;
  ExchangeSimStats stats() const;

 private:
  class Impl;
  explicit ExchangeSim(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_{false};
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_EXCHANGE_SIM_H_
