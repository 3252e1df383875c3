// rltrade paper: the trader's client of the broker protocol (tcp_broker.h).
//
// Key decisions: one connection state (conn_) and one pending "disconnected" report, so
// that Poll() reports every break exactly once before it reconnects; the backoff doubles
// from backoff_initial_ms up to backoff_max_ms; only transport failures (IoError) are
// retried — a server that refuses the hello would refuse it again.
#include "paper/tcp_broker.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace rlt::paper {

Result<BrokerAddress> ParseBrokerAddress(const std::string& spec) {
  const std::string form = "expected tcp:HOST:PORT, e.g. tcp:127.0.0.1:7001";
  if (spec.rfind("tcp:", 0) != 0) return Status::InvalidArgument("'" + spec + "': " + form);
  const std::string rest = spec.substr(4);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::InvalidArgument("'" + spec + "': " + form);
  }
  BrokerAddress a;
  a.host = rest.substr(0, colon);
  if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']') {
    a.host = a.host.substr(1, a.host.size() - 2);  // [::1]
  }
  const std::string port = rest.substr(colon + 1);
  const bool digits =
      !port.empty() && port.size() <= 5 &&
      std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
  a.port = digits ? std::atoi(port.c_str()) : 0;
  if (a.port < 1 || a.port > 65535) {
    return Status::InvalidArgument("'" + spec + "': the port must be 1-65535 (" + form + ")");
  }
  return a;
}

TcpBroker::TcpBroker(TcpBrokerOptions options) : options_(std::move(options)) {
  RLT_CHECK(options_.port >= 1 && options_.port <= 65535);
  RLT_CHECK(options_.heartbeat_ms > 0 && options_.stale_timeout_ms > 0);
  RLT_CHECK(options_.max_attempts >= 1);
}

namespace {

// "2 s", "1.5 s", "250 ms".
std::string Duration(int ms) {
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  if (ms > 1000) return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
  return std::to_string(ms) + " ms";
}

}  // namespace

Status TcpBroker::ConnectOnce() {
  RLT_ASSIGN_OR_RETURN(LineConnection conn, LineConnection::Connect(options_.host, options_.port,
                                                                    options_.connect_timeout_ms));
  ClientHello hello;
  hello.client = options_.client_name;
  hello.account = options_.account;
  if (const char* token = std::getenv(kBrokerTokenVariable)) hello.token = token;
  // Checked like every message sent: a token above the protocol's limit is refused here,
  // without its value.
  RLT_ASSIGN_OR_RETURN(const std::string hello_line, CheckedLine(ClientMessage{hello}));
  RLT_RETURN_IF_ERROR(conn.SendNow(hello_line, options_.connect_timeout_ms));
  const int64_t deadline = MonotonicMs() + options_.connect_timeout_ms;
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  while (true) {
    std::string line;
    const int64_t left = deadline - MonotonicMs();
    const auto r = conn.ReceiveLine(static_cast<int>(std::max<int64_t>(left, 0)), &line);
    if (r == LineConnection::Receive::kTimeout) {
      hello_unanswered_ = true;
      return Status::IoError(
          "the server at " + where +
          " accepted the connection but did not answer the hello within " +
          Duration(options_.connect_timeout_ms) +
          ": is it a server of the rltrade broker protocol (`rltrade exchange-sim` or a "
          "bridge), and is it not stuck?");
    }
    if (r == LineConnection::Receive::kClosed) {
      if (conn.line_too_long()) {
        // Not a transport failure: the server does not speak the protocol. Not retried.
        return Status::InvalidArgument("the server at " + where +
                                       " answered hello with a line longer than the protocol's "
                                       "limit of " +
                                       std::to_string(kMaxLineBytes) +
                                       " bytes (1 MiB per line): is it a server of the rltrade "
                                       "broker protocol?");
      }
      return Status::IoError("the broker at " + where + " closed the connection during hello (" +
                             conn.closed_reason() + ")");
    }
    Result<ServerMessage> m = ParseServerMessage(line);
    if (!m.ok()) {
      return Status::InvalidArgument(
          "the broker at " + where +
          " answered hello with a malformed line: " + m.status().message());
    }
    if (std::holds_alternative<Heartbeat>(*m)) continue;
    if (const auto* error = std::get_if<ErrorMessage>(&*m)) {
      return Status::InvalidArgument("the broker at " + where +
                                     " refused hello: " + PrintableText(error->message, 1000));
    }
    const auto* reply = std::get_if<ServerHello>(&*m);
    if (reply == nullptr) {
      return Status::InvalidArgument("the broker at " + where + " answered hello with " +
                                     TypeName(*m) + " (expected hello)");
    }
    if (reply->protocol != kProtocolVersion) {
      return Status::InvalidArgument("the broker at " + where + " speaks protocol " +
                                     std::to_string(reply->protocol) + "; this client speaks " +
                                     std::to_string(kProtocolVersion));
    }
    hello_ = *reply;
    conn_ = std::move(conn);
    last_sent_ms_ = last_heard_ms_ = MonotonicMs();
    disconnect_reported_ = true;
    ever_connected_ = true;
    return Status::Ok();
  }
}

Status TcpBroker::ConnectWithBackoff() {
  Status last;
  // The failure that says most: a server that took the connection and then said nothing
  // explains the attempts after it (which may time out in connect() once its backlog is
  // full) better than they do.
  Status telling;
  int wait_ms = options_.backoff_initial_ms;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    hello_unanswered_ = false;
    last = ConnectOnce();
    if (last.ok() || last.code() != Status::Code::kIoError) return last;
    if (hello_unanswered_ && telling.ok()) telling = last;
    if (attempt == options_.max_attempts) break;
    usleep(static_cast<useconds_t>(wait_ms) * 1000);
    wait_ms = std::min(wait_ms * 2, options_.backoff_max_ms);
  }
  std::string message =
      "cannot reach the broker after " + std::to_string(options_.max_attempts) + " attempts";
  if (!disconnect_reason_.empty() && ever_connected_) {
    message += " (the connection broke: " + disconnect_reason_ + ")";
  }
  message += ": " + (telling.ok() ? last.message() : telling.message());
  if (!telling.ok() && telling.message() != last.message()) {
    message += "; the last attempt: " + last.message();
  }
  return Status::IoError(message);
}

Status TcpBroker::Connect() { return ConnectWithBackoff(); }

void TcpBroker::Close() {
  conn_.Close();
  disconnect_reported_ = true;
}

Status TcpBroker::Send(const ClientMessage& message) {
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  if (!connected()) {
    return Status::IoError(std::string(TypeName(message)) + " not sent: not connected to " + where +
                           " (Poll() reconnects; then send it again)");
  }
  // Nothing out of the protocol's limits is sent (a NaN or 1e308 quantity, an id of 65
  // bytes): refused here, the connection stays up.
  RLT_ASSIGN_OR_RETURN(const std::string line, CheckedLine(message));
  const Status s = conn_.SendNow(line, options_.connect_timeout_ms);
  last_sent_ms_ = MonotonicMs();
  if (!s.ok() || conn_.closed()) {
    disconnect_reason_ = conn_.closed() ? conn_.closed_reason() : s.message();
    disconnect_reported_ = false;
    conn_.Close();
    return Status::IoError(std::string("sending ") + TypeName(message) + " to " + where +
                           " failed (" + disconnect_reason_ +
                           "); the broker may or may not have it: after the reconnect, send it "
                           "again with the same client_order_id");
  }
  return Status::Ok();
}

Status TcpBroker::SendOrder(const NewOrder& order) { return Send(order); }
Status TcpBroker::CancelOrder(const std::string& id) { return Send(Cancel{id}); }
Status TcpBroker::RequestPositions() { return Send(PositionsRequest{}); }
Status TcpBroker::Ready(int64_t after_bar) { return Send(paper::Ready{after_bar}); }

Result<std::optional<BrokerEvent>> TcpBroker::Poll(int timeout_ms) {
  RLT_CHECK_MSG(ever_connected_, "TcpBroker::Poll() before a successful Connect()");
  const int64_t deadline = MonotonicMs() + std::max(timeout_ms, 0);
  while (true) {
    // Lines that arrived before a close are delivered first: conn_ stays open until
    // ReceiveLine() reports the close.
    if (!conn_.open()) {
      if (!disconnect_reported_) {
        disconnect_reported_ = true;
        if (!ended_) {
          return std::optional<BrokerEvent>(
              BrokerEvent{BrokerEvent::Kind::kDisconnected, ServerMessage{}, disconnect_reason_});
        }
      }
      if (ended_) return std::optional<BrokerEvent>();
      RLT_RETURN_IF_ERROR(ConnectWithBackoff());
      ++reconnects_;
      return std::optional<BrokerEvent>(
          BrokerEvent{BrokerEvent::Kind::kReconnected, ServerMessage{hello_}, ""});
    }
    const int64_t now = MonotonicMs();
    int64_t wait = 0;  // a closed connection: only what is buffered
    if (!conn_.closed()) {
      if (now - last_sent_ms_ >= options_.heartbeat_ms) {
        (void)Send(Heartbeat{});  // a failure is reported as the disconnect above
        continue;
      }
      if (now - last_heard_ms_ >= options_.stale_timeout_ms) {
        disconnect_reason_ =
            "stale: nothing received for " + std::to_string(options_.stale_timeout_ms) + " ms";
        disconnect_reported_ = false;
        conn_.Close();
        continue;
      }
      wait = std::min({deadline - now, last_sent_ms_ + options_.heartbeat_ms - now,
                       last_heard_ms_ + options_.stale_timeout_ms - now});
    }
    std::string line;
    const auto r = conn_.ReceiveLine(static_cast<int>(std::max<int64_t>(wait, 0)), &line);
    if (r == LineConnection::Receive::kClosed) {
      disconnect_reason_ = conn_.closed_reason();
      disconnect_reported_ = false;
      conn_.Close();
      continue;
    }
    if (r == LineConnection::Receive::kTimeout) {
      if (MonotonicMs() >= deadline) return std::optional<BrokerEvent>();
      continue;
    }
    last_heard_ms_ = MonotonicMs();
    Result<ServerMessage> m = ParseServerMessage(line);
    if (!m.ok()) {
      return std::optional<BrokerEvent>(BrokerEvent{
          BrokerEvent::Kind::kMessage,
          ServerMessage{ErrorMessage{"malformed line from the broker: " + m.status().message()}},
          ""});
    }
    if (std::holds_alternative<Heartbeat>(*m)) continue;
    if (std::holds_alternative<End>(*m)) ended_ = true;
    // Text from the server is printed by the caller: printable, and never the credential.
    if (auto* error = std::get_if<ErrorMessage>(&*m)) error->message = ProtocolText(error->message);
    if (auto* reject = std::get_if<paper::Reject>(&*m))
      reject->reason = ProtocolText(reject->reason);
    return std::optional<BrokerEvent>(BrokerEvent{BrokerEvent::Kind::kMessage, *m, ""});
  }
}

}  // namespace rlt::paper
