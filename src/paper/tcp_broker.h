// rltrade paper: TcpBroker, the trader's client of the broker protocol (protocol.h) —
// the `tcp:HOST:PORT` broker and feed of `rltrade paper`.
//
// What it is: one connection to a server of the protocol (`rltrade exchange-sim`, or a
// bridge to a real broker), with the connection kept alive: hello on every (re)connect,
// a heartbeat after heartbeat_ms without sending, the connection declared stale after
// stale_timeout_ms without receiving anything (the server heartbeats every second), and
// reconnection with exponential backoff. Poll() returns the server's messages (bars,
// acks, fills, rejects, cancelled, positions, errors, end) and the connection's own
// events (disconnected, reconnected) in the order they happened; heartbeats are consumed.
//
// Key decisions:
//  - Sends never reconnect behind the caller's back: a send while disconnected fails, the
//    next Poll() reconnects and says so, and the caller re-sends what it is unsure of —
//    with the same client_order_id, which the server answers idempotently (never a second
//    fill). That keeps "which orders did the broker get?" in one place, the trader's
//    journal.
//  - Credentials come from the environment only: RLTRADE_BROKER_TOKEN, when set, is sent
//    in hello. It is not an option, never stored in a config, and never logged or put in
//    an error message.
//  - After the server's end message no reconnect is attempted.
// Thread safety: none; one owner.
#ifndef RLT_PAPER_TCP_BROKER_H_
#define RLT_PAPER_TCP_BROKER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "core/printable.h"
#include "core/status.h"
#include "paper/line_socket.h"
#include "paper/protocol.h"

namespace rlt::paper {

// The environment variable holding the broker credential.
inline constexpr const char* kBrokerTokenVariable = rlt::kBrokerTokenVariable;

struct TcpBrokerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // REQUIRES: 1..65535
  std::string client_name = "rltrade";
  std::string account = "default";  // an id: 1-64 bytes, no spaces
  int connect_timeout_ms = 2000;    // one connect + hello exchange
  int heartbeat_ms = 1000;          // send a heartbeat after this long without sending
  int stale_timeout_ms = 5000;      // nothing received for this long: reconnect
  int backoff_initial_ms = 50;      // wait before the 2nd attempt; doubles per attempt
  int backoff_max_ms = 2000;
  int max_attempts = 10;  // attempts in a row before Poll()/Connect() fail
};

// "tcp:HOST:PORT" → host and port (errors name the spec and the expected form).
struct BrokerAddress {
  std::string host;
  int port = 0;
};
Result<BrokerAddress> ParseBrokerAddress(const std::string& spec);

struct BrokerEvent {
  enum class Kind {
    kMessage,       // `message` from the server
    kDisconnected,  // the connection broke; `detail` says why. Poll() reconnects next.
    kReconnected,   // a new connection is up; `message` is the server's hello
  };
  Kind kind = Kind::kMessage;
  ServerMessage message;
  std::string detail;
};

class TcpBroker {
 public:
  explicit TcpBroker(TcpBrokerOptions options);
  TcpBroker(const TcpBroker&) = delete;
  TcpBroker& operator=(const TcpBroker&) = delete;

  // Connects and exchanges hello, retrying with backoff up to max_attempts. A refusal by
  // the server (wrong protocol, authentication) is not retried.
  Status Connect();

  // Sends one request. IoError when not connected (re-send after the reconnected event);
  // InvalidArgument ("not sent: ...", protocol.h's CheckedLine) when a field is outside the
  // protocol's limits (market/limits.h): nothing is sent then.
  Status SendOrder(const NewOrder& order);
  Status CancelOrder(const std::string& client_order_id);
  Status RequestPositions();
  Status Ready(int64_t after_bar);

  // The next event, waiting up to timeout_ms (nullopt: none in time, or the session has
  // ended and the connection is closed). Reconnecting may take longer than timeout_ms
  // (the backoff schedule); an error when it fails max_attempts times in a row or the
  // server refuses the hello.
  Result<std::optional<BrokerEvent>> Poll(int timeout_ms);

  bool connected() const { return conn_.open() && !conn_.closed(); }
  bool ended() const { return ended_; }                // end received
  const ServerHello& hello() const { return hello_; }  // the latest session's
  int reconnects() const { return reconnects_; }
  void Close();

 private:
  Status Send(const ClientMessage& message);
  Status ConnectOnce();
  Status ConnectWithBackoff();

  TcpBrokerOptions options_;
  LineConnection conn_;
  ServerHello hello_;
  int64_t last_sent_ms_ = 0, last_heard_ms_ = 0;
  bool ended_ = false;
  bool ever_connected_ = false;
  bool disconnect_reported_ = true;
  bool hello_unanswered_ = false;  // the last ConnectOnce() connected, then timed out
  std::string disconnect_reason_;
  int reconnects_ = 0;
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_TCP_BROKER_H_
