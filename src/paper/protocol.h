// rltrade paper: the broker protocol — line-delimited JSON orders, fills and bars over TCP.
//
// What it is: the message types a trader (client) and a broker or exchange (server)
// exchange, their JSON lines, and strict parsing. `rltrade exchange-sim` serves it
// (exchange_sim.h); TcpBroker (tcp_broker.h) is the trader's client. A bridge to a real
// broker implements the server side of this text and nothing else. What it is not: a
// transport (line_socket.h) or an order book.
//
// Framing: one JSON object per line, UTF-8, terminated by "\n" (a "\r" before it is
// tolerated), at most kMaxLineBytes. Every object has "type"; the other keys are exactly
// those listed below (an unknown key is an error naming it; keys marked optional may be
// left out). Numbers are JSON numbers within the limits of market/limits.h (one
// definition for every path bars and orders take): prices in [1e-8, 1e12], volumes in
// [0, 1e18], order and fill quantities in [1e-8, 1e12], cash, fees and position
// quantities within +-1e30, average prices 0 (flat) or a price, integers (seqs, counts) in
// [0, 2^53 - 1]; a bar keeps the rules of a bar file's row (high >= max(open, close),
// low <= min(open, close)). Ids and symbols are 1-64 bytes without whitespace or control
// characters; free text (names, reasons, messages, the token) is 1-4096 bytes. Nesting
// deeper than 128 arrays/objects is refused before the line is parsed. Times are ISO-8601
// UTC ("2024-01-02T14:30:00Z", fractional seconds allowed) next to the same instant as
// integer epoch seconds in [0, 253402300799] (years 1970-9999).
//
// Client → server:
//   hello       {client, protocol: 1, account, token (optional)}  first message of every
//               connection. `token` is a credential (RLTRADE_BROKER_TOKEN in the client's
//               environment), never logged. The server answers hello or error.
//   new_order   {client_order_id, symbol, side: "buy"|"sell", quantity > 0,
//               order_type: "market"}  answered by ack then, later, fill or cancelled;
//               or by reject.
//   cancel      {client_order_id}  answered by cancelled, or by reject (request "cancel")
//               when the order is unknown or already filled.
//   positions   {}  answered by positions.
//   ready       {after_bar}  "I have handled bar `after_bar` and sent my orders for it". In
//               lockstep mode the server streams bar after_bar + 1 only after it; otherwise
//               it is accepted and ignored.
//   heartbeat   {}  sent after one second without sending anything else.
// Server → client:
//   hello       {server, protocol: 1, session, account, symbols: [..], bars_total,
//               next_bar, heartbeat_ms, lockstep}  session id and where the stream
//               continues (a reconnecting client continues its account and the stream;
//               in lockstep mode from the bar after its last ready, so a bar it had not
//               readied comes again: a client keeps the seqs it handled and skips those).
//   bar         {seq, symbol, time, epoch, open, high, low, close, volume}  seq counts the
//               stream's bars from 0 in time order (ties by symbol); each is sent once.
//   ack         {client_order_id, order_id}  the order is accepted and pending.
//   fill        {client_order_id, order_id, symbol, side, quantity, price, fee, bar, time,
//               epoch}  the whole quantity at `price` (per unit); `bar` is the seq of the
//               bar whose open filled it; fee in cash units. Cash changes by
//               -(±quantity x price) - fee.
//   reject      {client_order_id, request: "new_order"|"cancel", reason, retryable}
//               retryable true: the same order may succeed if sent again under a NEW
//               client_order_id; false: it will not (unknown symbol, end of data, ...).
//   cancelled   {client_order_id}  the pending order will not fill.
//   positions   {account, cash, positions: [{symbol, quantity, average_price}],
//               open_orders: [client_order_id, ..]}  quantity is signed (short < 0);
//               average_price of the open position (0 when flat).
//   heartbeat   {}  after heartbeat_ms without sending anything else.
//   error       {message}  a line the server could not accept (malformed JSON, a bad or
//               missing field, an unknown type, hello missing or refused); says what was
//               wrong. The connection stays open unless the hello was refused.
//   end         {reason: "end_of_data"|"shutdown", bars}  the stream is over (bars: its
//               length). After end_of_data the server still answers requests (positions,
//               a repeated new_order) until the client closes or a linger time passes;
//               after shutdown it closes at once.
//
// Idempotency (the server's contract): a client_order_id names one order for the life of
// the account. A new_order repeating a known id is answered with the original outcome
// again — ack, plus the original fill or cancelled when there was one, or the original
// reject — and never fills twice; a client may therefore re-send every order it is unsure
// about after a reconnect. The same id with a different symbol, side or quantity is
// rejected (retryable false) and the original order stands.
//
// Delivery: messages for a client that is not connected are dropped, and what was in
// flight when a connection broke may be lost. A reconnecting client reconciles: it asks
// for positions (open_orders lists what is still pending) and re-sends, with the same
// ids, the orders it journaled but has no outcome for. The simulator fills a market
// order at the open of the next bar of its symbol that it streams after accepting the
// order (see exchange_sim.h); a real broker's fills are whatever its market gives.
//
// Example (client lines start with >, server lines with <):
//   > {"type":"hello","client":"rltrade","protocol":1,"account":"paper-1"}
//   < {"type":"hello","server":"rltrade exchange-sim","protocol":1,"session":"9f3c..",
//      "account":"paper-1","symbols":["SPY"],"bars_total":390,"next_bar":0,
//      "heartbeat_ms":1000,"lockstep":false}
//   < {"type":"bar","seq":0,"symbol":"SPY","time":"2024-01-02T14:30:00Z",
//      "epoch":1704205800,"open":472.16,"high":472.5,"low":471.9,"close":472.3,"volume":912}
//   > {"type":"new_order","client_order_id":"run7-0001","symbol":"SPY","side":"buy",
//      "quantity":10,"order_type":"market"}
//   < {"type":"ack","client_order_id":"run7-0001","order_id":"ord-1"}
//   < {"type":"fill","client_order_id":"run7-0001","order_id":"ord-1","symbol":"SPY",
//      "side":"buy","quantity":10,"price":472.31,"fee":0.0,"bar":1,
//      "time":"2024-01-02T14:31:00Z","epoch":1704205860}
//   < {"type":"bar","seq":1,"symbol":"SPY","time":"2024-01-02T14:31:00Z",...}
// Thread safety: plain functions and value types.
#ifndef RLT_PAPER_PROTOCOL_H_
#define RLT_PAPER_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/status.h"

namespace rlt::paper {

inline constexpr int kProtocolVersion = 1;
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;  // 1 MiB
inline constexpr size_t kMaxIdBytes = 64;
// Free text (names, reasons, error messages, the token): at most this many bytes.
inline constexpr size_t kMaxTextBytes = 4096;
// hello's heartbeat_ms: at most an hour.
inline constexpr int64_t kMaxHeartbeatMs = 3'600'000;

enum class Side { kBuy, kSell };
const char* SideName(Side side);  // "buy" | "sell"

// ---- client → server ----
struct ClientHello {
  std::string client;
  int protocol = kProtocolVersion;
  std::string account;
  std::string token;  // "" = not sent
};
struct NewOrder {
  std::string client_order_id;
  std::string symbol;
  Side side = Side::kBuy;
  double quantity = 0;  // > 0
  // order_type is always "market" in protocol 1.
};
struct Cancel {
  std::string client_order_id;
};
struct PositionsRequest {};
struct Ready {
  int64_t after_bar = -1;
};
struct Heartbeat {};

// ---- server → client ----
struct ServerHello {
  std::string server;
  int protocol = kProtocolVersion;
  std::string session;
  std::string account;
  std::vector<std::string> symbols;
  int64_t bars_total = 0;
  int64_t next_bar = 0;
  int64_t heartbeat_ms = 1000;
  bool lockstep = false;
};
struct BarMessage {
  int64_t seq = 0;
  std::string symbol;
  int64_t epoch = 0;  // seconds since 1970-01-01 UTC; `time` on the wire
  double open = 0, high = 0, low = 0, close = 0, volume = 0;
};
struct Ack {
  std::string client_order_id;
  std::string order_id;
};
struct Fill {
  std::string client_order_id;
  std::string order_id;
  std::string symbol;
  Side side = Side::kBuy;
  double quantity = 0, price = 0, fee = 0;
  int64_t bar = 0;    // seq of the bar whose open filled it
  int64_t epoch = 0;  // that bar's time
};
struct Reject {
  std::string client_order_id;
  std::string request = "new_order";  // "new_order" | "cancel"
  std::string reason;
  bool retryable = false;
};
struct Cancelled {
  std::string client_order_id;
};
struct PositionLine {
  std::string symbol;
  double quantity = 0;  // signed: short < 0
  double average_price = 0;
};
struct Positions {
  std::string account;
  double cash = 0;
  std::vector<PositionLine> positions;   // sorted by symbol; flat symbols left out
  std::vector<std::string> open_orders;  // client_order_ids acked, not filled/cancelled
};
struct ErrorMessage {
  std::string message;
};
struct End {
  std::string reason;  // "end_of_data" | "shutdown"
  int64_t bars = 0;    // bars streamed in the session
};

using ClientMessage =
    std::variant<ClientHello, NewOrder, Cancel, PositionsRequest, Ready, Heartbeat>;
using ServerMessage = std::variant<ServerHello, BarMessage, Ack, Fill, Reject, Cancelled, Positions,
                                   Heartbeat, ErrorMessage, End>;

// One JSON line, without the trailing "\n". Writes whatever the message holds (tests use
// it to write bad lines); senders use CheckedLine.
std::string ToLine(const ClientMessage& message);
std::string ToLine(const ServerMessage& message);
// The line of a message the receiving side would accept — checked by the same reader
// that parses received lines, so nothing out of range (an infinite or NaN number, a
// quantity of 1e308, an over-long reason) is ever sent. Errors (InvalidArgument) start
// "not sent:" and name the type and the field; a token's value is never shown.
Result<std::string> CheckedLine(const ClientMessage& message);
Result<std::string> CheckedLine(const ServerMessage& message);

// `text` made fit for a free-text field: printable (core/printable.h), cut well below
// kMaxTextBytes, "(empty)" for an empty text. For reasons and error messages that quote
// what a peer sent.
std::string ProtocolText(std::string_view text);

// Parses one line (trailing "\r" or "\n" ignored). Errors are InvalidArgument messages
// naming the message type, the field and what was expected, e.g. "new_order: field
// 'quantity' must be a number > 0, got -5". A type of the other direction or an unknown
// type is an error naming it and listing the valid ones.
Result<ClientMessage> ParseClientMessage(std::string_view line);
Result<ServerMessage> ParseServerMessage(std::string_view line);

// The "type" of a message ("hello", "new_order", ...).
const char* TypeName(const ClientMessage& message);
const char* TypeName(const ServerMessage& message);

// The ISO-8601 UTC text of epoch seconds: "2024-01-02T14:30:00Z".
std::string IsoTime(int64_t epoch);

}  // namespace rlt::paper

#endif  // RLT_PAPER_PROTOCOL_H_
