// Tests of the broker protocol's JSON lines (paper/protocol.h): every message survives a
// round trip, lines written by hand as the documentation describes them parse to the
// documented fields, and every malformed field is refused with a message naming the
// message type, the field and what was expected.
#include "paper/protocol.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/status_test_util.h"

namespace rlt::paper {
namespace {

template <typename Message, typename Parse>
void ExpectRoundTrip(const Message& m, Parse parse) {
  const std::string line = ToLine(m);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto parsed = parse(line);
  ASSERT_TRUE(parsed.ok()) << line << ": " << parsed.status().ToString();
  EXPECT_EQ(parsed->index(), m.index()) << line;
  EXPECT_EQ(ToLine(*parsed), line);
}

TEST(Protocol, EveryClientMessageSurvivesARoundTrip) {
  const std::vector<ClientMessage> messages = {ClientHello{"trader", 1, "acct-1", ""},
                                               ClientHello{"trader", 1, "acct-1", "t0ken"},
                                               NewOrder{"c-1", "SPY", Side::kSell, 12.5},
                                               Cancel{"c-1"},
                                               PositionsRequest{},
                                               Ready{41},
                                               Heartbeat{}};
  for (const ClientMessage& m : messages) ExpectRoundTrip(m, ParseClientMessage);
}

TEST(Protocol, EveryServerMessageSurvivesARoundTrip) {
  const std::vector<ServerMessage> messages = {
      ServerHello{"sim", 1, "abc123", "acct-1", {"AAA", "BBB"}, 120, 7, 1000, true},
      BarMessage{3, "AAA", 1704205800, 100.5, 101, 99.75, 100.25, 1200},
      Ack{"c-1", "ord-1"},
      Fill{"c-1", "ord-1", "AAA", Side::kBuy, 10, 100.5, 0.1005, 4, 1704205860},
      Reject{"c-2", "cancel", "unknown client_order_id", false},
      Cancelled{"c-3"},
      Positions{"acct-1", -1005.5, {{"AAA", 10, 100.5}, {"BBB", -3, 20}}, {"c-4"}},
      Heartbeat{},
      ErrorMessage{"new_order: field 'quantity' is missing"},
      End{"end_of_data", 120}};
  for (const ServerMessage& m : messages) ExpectRoundTrip(m, ParseServerMessage);
}

TEST(Protocol, HandWrittenLinesParseToTheDocumentedFields) {
  auto order = ParseClientMessage(
      R"({"type":"new_order","client_order_id":"o-17","symbol":"SPY","side":"sell",)"
      R"("quantity":3,"order_type":"market"})"
      "\r\n");
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  const NewOrder& o = std::get<NewOrder>(*order);
  EXPECT_EQ(o.client_order_id, "o-17");
  EXPECT_EQ(o.symbol, "SPY");
  EXPECT_EQ(o.side, Side::kSell);
  EXPECT_EQ(o.quantity, 3.0);
  // 2024-01-02 14:30:00 UTC is 1704205800 (19724 days x 86400 + 52200 s); fractional
  // seconds in `time` are accepted.
  auto bar = ParseServerMessage(
      R"({"type":"bar","seq":0,"symbol":"SPY","time":"2024-01-02T14:30:00.000Z",)"
      R"("epoch":1704205800,"open":470.1,"high":470.5,"low":469.9,"close":470.2,"volume":5e5})");
  ASSERT_TRUE(bar.ok()) << bar.status().ToString();
  EXPECT_EQ(std::get<BarMessage>(*bar).epoch, 1704205800);
  EXPECT_EQ(std::get<BarMessage>(*bar).volume, 500000.0);
  EXPECT_EQ(IsoTime(1704205800), "2024-01-02T14:30:00Z");
  // The fill of protocol.h's example.
  auto fill = ParseServerMessage(
      R"({"type":"fill","client_order_id":"run7-0001","order_id":"ord-1","symbol":"SPY",)"
      R"("side":"buy","quantity":10,"price":472.31,"fee":0.0,"bar":1,)"
      R"("time":"2024-01-02T14:31:00Z","epoch":1704205860})");
  ASSERT_TRUE(fill.ok()) << fill.status().ToString();
  EXPECT_EQ(std::get<Fill>(*fill).price, 472.31);
  EXPECT_EQ(std::get<Fill>(*fill).bar, 1);
  // The optional token may be left out.
  auto hello = ParseClientMessage(R"({"type":"hello","client":"x","protocol":1,"account":"a"})");
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ(std::get<ClientHello>(*hello).token, "");
}

struct Malformed {
  std::string line;
  std::string error;  // a substring the error must contain
};

const char* kOrder = R"("type":"new_order","client_order_id":"c1","symbol":"SPY","side":"buy")";

TEST(Protocol, EveryMalformedClientFieldIsNamed) {
  const std::string o = kOrder;
  const std::vector<Malformed> cases = {
      {"not json", "not a JSON line"},
      {"[1,2]", "expected a JSON object"},
      {R"({"client_order_id":"c1"})", "field 'type' is missing"},
      {R"({"type":"buy_now"})", "unknown message type 'buy_now'"},
      {R"({"type":"bar"})", "unknown message type 'bar' from a client"},
      {R"({"type":"hello","protocol":1,"account":"a"})", "hello: field 'client' is missing"},
      {R"({"type":"hello","client":"x","protocol":0,"account":"a"})",
       "hello: field 'protocol' must be an integer in [1, 9007199254740991], got 0"},
      {R"({"type":"hello","client":"x","protocol":1})", "hello: field 'account' is missing"},
      {R"({"type":"hello","client":"x","protocol":1,"account":"a","token":7})",
       "hello: field 'token' must be a non-empty string"},
      {"{" + o + R"(,"order_type":"market"})", "new_order: field 'quantity' is missing"},
      {"{" + o + R"(,"quantity":0,"order_type":"market"})",
       "new_order: field 'quantity' must be a quantity in [1e-08, 1e+12], got 0"},
      {"{" + o + R"(,"quantity":-5,"order_type":"market"})", "got -5"},
      {"{" + o + R"(,"quantity":"5","order_type":"market"})",
       "field 'quantity' must be a quantity in [1e-08, 1e+12], got \"5\""},
      {"{" + o + R"(,"quantity":5})", "new_order: field 'order_type' is missing"},
      {"{" + o + R"(,"quantity":5,"order_type":"limit"})",
       "field 'order_type' must be \"market\", got \"limit\""},
      {"{" + o + R"(,"quantity":5,"order_type":"market","qty":5})",
       "new_order: unknown field 'qty'"},
      {R"({"type":"new_order","client_order_id":"c 1","symbol":"S","side":"buy","quantity":1,)"
       R"("order_type":"market"})",
       "field 'client_order_id' must be an id"},
      {R"({"type":"new_order","client_order_id":")" + std::string(65, 'x') +
           R"(","symbol":"S","side":"buy","quantity":1,"order_type":"market"})",
       "1-64 bytes"},
      {R"({"type":"new_order","client_order_id":"c","symbol":"","side":"buy","quantity":1,)"
       R"("order_type":"market"})",
       "field 'symbol' must be a symbol"},
      {R"({"type":"new_order","client_order_id":"c","symbol":"S","side":"long","quantity":1,)"
       R"("order_type":"market"})",
       "field 'side' must be \"buy\" or \"sell\", got \"long\""},
      {R"({"type":"cancel"})", "cancel: field 'client_order_id' is missing"},
      {R"({"type":"positions","account":"a"})", "positions: unknown field 'account'"},
      {R"({"type":"ready","after_bar":-1})",
       "ready: field 'after_bar' must be an integer in [0, 9007199254740991]"},
      {R"({"type":"ready","after_bar":1.5})", "ready: field 'after_bar' must be an integer"},
      {R"({"type":"heartbeat","time":1})", "heartbeat: unknown field 'time'"},
  };
  for (const Malformed& c : cases) {
    const auto r = ParseClientMessage(c.line);
    ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, c.error)) << c.line;
  }
  // A line above the limit is refused before it is parsed.
  const auto big = ParseClientMessage(std::string(kMaxLineBytes + 1, ' '));
  ASSERT_TRUE(IsError(big, Status::Code::kInvalidArgument, "longer than the protocol's limit"));
}

TEST(Protocol, EveryMalformedServerFieldIsNamed) {
  const std::string bar =
      R"("type":"bar","seq":0,"symbol":"S","time":"2024-01-02T14:30:00Z","epoch":1704205800)";
  const std::string fill =
      R"("type":"fill","client_order_id":"c","order_id":"o","symbol":"S","side":"buy",)"
      R"("quantity":1,"price":10,"bar":1,"time":"1970-01-01T00:00:00Z","epoch":0)";
  const std::vector<Malformed> cases = {
      {R"({"type":"new_order"})", "unknown message type 'new_order' from a server"},
      {"{" + bar + R"(,"open":10,"high":11,"low":9,"close":10.5})",
       "bar: field 'volume' is missing"},
      {"{" + bar + R"(,"open":10,"high":11,"low":9,"close":10.5,"volume":-1})",
       "bar: field 'volume' must be a volume in [0, 1e+18], got -1"},
      {"{" + bar + R"(,"open":10,"high":9.5,"low":9,"close":9.2,"volume":1})",
       "bar: field 'high' must be >= open and close, got 9.5"},
      {"{" + bar + R"(,"open":10,"high":11,"low":10.2,"close":10.5,"volume":1})",
       "bar: field 'low' must be <= open and close"},
      {"{" + bar + R"(,"open":0,"high":11,"low":9,"close":10.5,"volume":1})",
       "bar: field 'open' must be a price in [1e-08, 1e+12], got 0"},
      {R"({"type":"bar","seq":0,"symbol":"S","time":"2024-01-02T14:31:00Z","epoch":1704205800,)"
       R"("open":10,"high":11,"low":9,"close":10.5,"volume":1})",
       "bar: field 'time' must be the ISO-8601 UTC text of epoch 1704205800, "
       "\"2024-01-02T14:30:00Z\""},
      {R"({"type":"bar","seq":0,"symbol":"S","time":"2024-01-02T14:30:00Z","epoch":1704205800.5,)"
       R"("open":10,"high":11,"low":9,"close":10.5,"volume":1})",
       "bar: field 'epoch' must be an integer"},
      {R"({"type":"bar","seq":-2,"symbol":"S"})",
       "bar: field 'seq' must be an integer in [0, 9007199254740991], got -2"},
      {"{" + fill + "}", "fill: field 'fee' is missing"},
      {"{" + fill + R"(,"fee":-0.5})", "fill: field 'fee' must be a fee in [0, 1e+30], got -0.5"},
      {R"({"type":"ack","client_order_id":"c"})", "ack: field 'order_id' is missing"},
      {R"({"type":"reject","client_order_id":"c","request":"new_order","reason":"x",)"
       R"("retryable":"yes"})",
       "reject: field 'retryable' must be true or false, got \"yes\""},
      {R"({"type":"reject","client_order_id":"c","request":"modify","reason":"x",)"
       R"("retryable":true})",
       "reject: field 'request' must be \"new_order\" or \"cancel\""},
      {R"({"type":"reject","client_order_id":"c","request":"cancel","reason":"",)"
       R"("retryable":true})",
       "reject: field 'reason' must be a non-empty string"},
      {R"({"type":"positions","account":"a","cash":0,"positions":{},"open_orders":[]})",
       "positions: field 'positions' must be an array"},
      {R"({"type":"positions","account":"a","cash":0,"positions":[{"quantity":1,)"
       R"("average_price":2}],"open_orders":[]})",
       "positions[]: field 'symbol' is missing"},
      {R"({"type":"positions","account":"a","cash":0,"positions":[{"symbol":"S","quantity":1,)"
       R"("average_price":-2}],"open_orders":[]})",
       "positions[]: field 'average_price' must be 0 (flat) or a price in [1e-08, 1e+12], got -2"},
      {R"({"type":"positions","account":"a","cash":0,"positions":[],"open_orders":[3]})",
       "positions: field 'open_orders' must be an id"},
      {R"({"type":"positions","account":"a","cash":"0","positions":[],"open_orders":[]})",
       "positions: field 'cash' must be a finite amount within +-1e+30"},
      {R"({"type":"hello","server":"s","protocol":1,"session":"x","account":"a",)"
       R"("symbols":["A B"],"bars_total":1,"next_bar":0,"heartbeat_ms":1000,"lockstep":false})",
       "hello: field 'symbols' must hold symbols"},
      {R"({"type":"hello","server":"s","protocol":1,"session":"x","account":"a",)"
       R"("symbols":[],"bars_total":1,"next_bar":0,"heartbeat_ms":0,"lockstep":false})",
       "hello: field 'heartbeat_ms' must be an integer in [1, 3600000], got 0"},
      {R"({"type":"error"})", "error: field 'message' is missing"},
      {R"({"type":"end","reason":"done","bars":3})",
       "end: field 'reason' must be \"end_of_data\" or \"shutdown\""},
      {R"({"type":"cancelled","client_order_id":"c","extra":1})",
       "cancelled: unknown field 'extra'"},
  };
  for (const Malformed& c : cases) {
    const auto r = ParseServerMessage(c.line);
    ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, c.error)) << c.line;
  }
}

// The limits of market/limits.h, on every number the protocol reads (both directions).
TEST(Protocol, NumbersOutsideTheLimitsAreRefusedInBothDirections) {
  const std::string bar_head =
      R"({"type":"bar","seq":0,"symbol":"S","time":"2024-01-02T14:30:00Z","epoch":1704205800,)";
  const std::vector<Malformed> server = {
      {bar_head + R"("open":1e300,"high":1e308,"low":1e-300,"close":1,"volume":1})",
       "bar: field 'open' must be a price in [1e-08, 1e+12], got 1e+300"},
      {bar_head + R"("open":1,"high":1e308,"low":1,"close":1,"volume":1})",
       "bar: field 'high' must be a price in [1e-08, 1e+12], got 1e+308"},
      {bar_head + R"("open":1,"high":1,"low":1e-300,"close":1,"volume":1})",
       "bar: field 'low' must be a price in [1e-08, 1e+12], got 1e-300"},
      {bar_head + R"("open":1,"high":1,"low":1,"close":1,"volume":1e19})",
       "bar: field 'volume' must be a volume in [0, 1e+18], got 1e+19"},
      {R"({"type":"bar","seq":9007199254740992,"symbol":"S"})",
       "bar: field 'seq' must be an integer in [0, 9007199254740991], got 9007199254740992"},
      {R"({"type":"bar","seq":0,"symbol":"S","time":"x","epoch":253402300800})",
       "bar: field 'epoch' must be an integer in [0, 253402300799]"},
      {R"({"type":"fill","client_order_id":"c","order_id":"o","symbol":"S","side":"buy",)"
       R"("quantity":1e308,"price":10,"fee":0,"bar":1,"time":"1970-01-01T00:00:00Z","epoch":0})",
       "fill: field 'quantity' must be a quantity in [1e-08, 1e+12], got 1e+308"},
      {R"({"type":"fill","client_order_id":"c","order_id":"o","symbol":"S","side":"buy",)"
       R"("quantity":1,"price":10,"fee":1e31,"bar":1,"time":"1970-01-01T00:00:00Z","epoch":0})",
       "fill: field 'fee' must be a fee in [0, 1e+30], got 1e+31"},
      {R"({"type":"positions","account":"a","cash":-2e30,"positions":[],"open_orders":[]})",
       "positions: field 'cash' must be a finite amount within +-1e+30, got -2e+30"},
      {R"({"type":"positions","account":"a","cash":0,"positions":[{"symbol":"S",)"
       R"("quantity":1,"average_price":1e-300}],"open_orders":[]})",
       "positions[]: field 'average_price' must be 0 (flat) or a price"},
      {R"({"type":"positions","account":"a","cash":null,"positions":[],"open_orders":[]})",
       "positions: field 'cash' must be a finite amount within +-1e+30, got null"},
  };
  for (const Malformed& c : server) {
    const auto r = ParseServerMessage(c.line);
    ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, c.error)) << c.line;
  }
  const std::string order_head =
      R"({"type":"new_order","client_order_id":"c1","symbol":"SPY","side":"buy","order_type":"market",)";
  for (const char* q : {"1e308", "1e-300", "1.0000001e12", "9e-9"}) {
    const auto r = ParseClientMessage(order_head + "\"quantity\":" + q + "}");
    ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "new_order: field 'quantity'")) << q;
  }
  // The bounds themselves are inside.
  for (const char* q : {"1e-8", "1e12", "0.5"}) {
    EXPECT_TRUE(ParseClientMessage(order_head + "\"quantity\":" + q + "}").ok()) << q;
  }
  for (const char* p : {"1e-8", "1e12"}) {
    const std::string line = bar_head + "\"open\":" + p + ",\"high\":" + p + ",\"low\":" + p +
                             ",\"close\":" + p + ",\"volume\":0}";
    EXPECT_TRUE(ParseServerMessage(line).ok()) << line;
  }
}

// The same rules on what is sent: CheckedLine refuses what the other side would refuse,
// and never writes a non-finite number (nlohmann writes NaN and infinity as null).
TEST(Protocol, CheckedLineSendsNothingTheReceiverWouldRefuse) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  // Each message with the field the receiver would name.
  const std::vector<std::pair<ClientMessage, std::string>> bad_client = {
      {NewOrder{"c", "S", Side::kBuy, 1e308}, "new_order: field 'quantity'"},
      {NewOrder{"c", "S", Side::kBuy, nan}, "new_order: field 'quantity'"},
      {NewOrder{"c", "S", Side::kBuy, 1e-300}, "new_order: field 'quantity'"},
      {NewOrder{"c", "S", Side::kBuy, -1}, "new_order: field 'quantity'"},
      {NewOrder{std::string(65, 'x'), "S", Side::kBuy, 1}, "new_order: field 'client_order_id'"},
      {Ready{-5}, "ready: field 'after_bar'"}};
  for (const auto& [m, field] : bad_client) {
    const Result<std::string> line = CheckedLine(m);
    ASSERT_TRUE(IsError(line, Status::Code::kInvalidArgument, "not sent: " + field)) << ToLine(m);
    EXPECT_EQ(line.status().message().rfind("not sent: ", 0), 0u) << line.status().message();
  }
  const std::vector<std::pair<ServerMessage, std::string>> bad_server = {
      {Fill{"c", "o", "S", Side::kBuy, 1e308, 10, inf, 1, 0}, "fill: field 'quantity'"},
      {Fill{"c", "o", "S", Side::kBuy, 1, 10, nan, 1, 0}, "fill: field 'fee'"},
      {Positions{"a", nan, {}, {}}, "positions: field 'cash'"},
      {Positions{"a", 0, {{"S", inf, 10}}, {}}, "positions[]: field 'quantity'"},
      {BarMessage{0, "S", 0, 1e300, 1e308, 1e-300, 1, 1}, "bar: field 'open'"},
      {BarMessage{0, "S", 0, 10, 9, 8, 10, 1}, "bar: field 'high'"},  // high below the open
      {Reject{"c", "new_order", std::string(kMaxTextBytes + 1, 'r'), false},
       "reject: field 'reason'"}};
  for (const auto& [m, field] : bad_server) {
    const Result<std::string> line = CheckedLine(m);
    ASSERT_TRUE(IsError(line, Status::Code::kInvalidArgument, "not sent: " + field)) << TypeName(m);
    EXPECT_EQ(line.status().message().rfind("not sent: ", 0), 0u) << line.status().message();
  }
  const ServerMessage good = Fill{"c", "o", "S", Side::kBuy, 1e12, 1e12, 1e24, 3, 1704205800};
  const Result<std::string> line = CheckedLine(good);
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(*line, ToLine(good));
  EXPECT_EQ(line->find("null"), std::string::npos);
}

TEST(Protocol, TheTokenIsNeverShownInAnError) {
  const std::string secret = "s3cr3t-" + std::string(kMaxTextBytes, 'k');
  const Result<std::string> line = CheckedLine(ClientHello{"trader", 1, "acct", secret});
  ASSERT_TRUE(IsError(line, Status::Code::kInvalidArgument, "field 'token'"));
  EXPECT_EQ(line.status().message().find("s3cr3t"), std::string::npos) << line.status().message();
  const auto parsed = ParseClientMessage(
      R"({"type":"hello","client":"x","protocol":1,"account":"a","token":["s3cr3t-tok"]})");
  ASSERT_TRUE(IsError(parsed, Status::Code::kInvalidArgument, "field 'token' must be"));
  EXPECT_EQ(parsed.status().message().find("s3cr3t"), std::string::npos);
}

// One line of 400,000 brackets (under the 1 MiB limit) once crashed the reader's error
// message, which dumped the value recursively. Refused before it is built, either way.
TEST(Protocol, DeeplyNestedLinesAreRefusedWithoutRecursion) {
  const std::string deep = std::string(400000, '[') + std::string(400000, ']');
  for (const std::string& line : {deep, "{\"type\":\"heartbeat\",\"x\":" + deep + "}",
                                  "{\"type\":\"new_order\",\"client_order_id\":" + deep + "}"}) {
    ASSERT_LT(line.size(), kMaxLineBytes);
    const auto client = ParseClientMessage(line);
    const auto server = ParseServerMessage(line);
    ASSERT_TRUE(IsError(client, Status::Code::kInvalidArgument, "nested more than 128 levels"));
    ASSERT_TRUE(IsError(server, Status::Code::kInvalidArgument, "nested more than 128 levels"));
    EXPECT_LT(client.status().message().size(), 500u);
    EXPECT_LT(server.status().message().size(), 500u);
  }
  // Within the limit, a nested value is named by its size, never printed.
  const std::string nested = std::string(100, '[') + "1" + std::string(100, ']');
  const auto r = ParseClientMessage(
      R"({"type":"new_order","client_order_id":"c","symbol":"S","side":"buy","order_type":"market","quantity":)" +
      nested + "}");
  ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "got an array of 1 value"));
}

// A number beyond the double range is a parse error (nlohmann throws out_of_range for it,
// which once escaped the reader).
TEST(Protocol, NumberOverflowIsAnErrorNotACrash) {
  const auto r = ParseClientMessage(R"({"type":"heartbeat","x":1e999})");
  ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "not a JSON line"));
}

}  // namespace
}  // namespace rlt::paper
