// rltrade paper: JSON lines of the broker protocol (protocol.h).
//
// Key decisions: parsing is strict — every field is checked for presence, JSON type and
// range, and unknown keys are errors — so a bridge that sends "qty" instead of "quantity"
// learns it from the first line instead of trading wrong sizes. One Fields reader per
// message records which keys were read; whatever is left over is named as unknown.
// Writing goes through JsonText (core/json_text.h), so no byte can make dump() throw.
#include "paper/protocol.h"

#include <cctype>
#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>

#include "core/civil_time.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "core/printable.h"
#include "market/limits.h"

namespace rlt::paper {
namespace {

using Json = nlohmann::json;

// A value as a message shows it: never dumped recursively (core/json_parse.h).
std::string Shown(const Json& value) { return JsonSummary(value, /*max_bytes=*/80); }

// Reads the fields of one message object; every error names the type and the field.
class Fields {
 public:
  Fields(const Json& object, std::string type) : object_(object), type_(std::move(type)) {}

  Status Id(const char* key, std::string* out) { return IdLike(key, out, "an id"); }
  Status Symbol(const char* key, std::string* out) { return IdLike(key, out, "a symbol"); }
  // Free text (reasons, messages, names, the token): a non-empty string of at most
  // kMaxTextBytes.
  Status Text(const char* key, std::string* out) {
    const std::string expected =
        "a non-empty string of at most " + std::to_string(kMaxTextBytes) + " bytes";
    const Json* v = nullptr;
    RLT_RETURN_IF_ERROR(Get(key, &v, expected));
    if (!v->is_string() || v->get_ref<const std::string&>().empty() ||
        v->get_ref<const std::string&>().size() > kMaxTextBytes) {
      // The value of a credential is never shown.
      if (std::string_view(key) == "token") {
        return Status::InvalidArgument(type_ + ": field 'token' must be " + expected);
      }
      return Bad(key, "must be " + expected, *v);
    }
    *out = v->get<std::string>();
    return Status::Ok();
  }
  // The kinds of numbers, each with its limits (market/limits.h).
  enum class Kind { kPrice, kVolume, kQuantity, kAmount, kFee, kAveragePrice };
  Status Number(const char* key, Kind kind, double* out) {
    const std::string expected = Expected(kind);
    const Json* v = nullptr;
    RLT_RETURN_IF_ERROR(Get(key, &v, expected));
    if (!v->is_number()) return Bad(key, "must be " + expected, *v);
    const double x = v->get<double>();
    if (!InRange(kind, x)) return Bad(key, "must be " + expected, *v);
    *out = x;
    return Status::Ok();
  }
  // An integer in [min, max] (max at most market::kMaxWireInteger).
  Status Integer(const char* key, int64_t min, int64_t* out,
                 int64_t max = market::kMaxWireInteger) {
    const std::string expected =
        "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    const Json* v = nullptr;
    RLT_RETURN_IF_ERROR(Get(key, &v, expected));
    if (!v->is_number_integer()) return Bad(key, "must be " + expected, *v);
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(max)) {
      return Bad(key, "must be " + expected, *v);
    }
    const int64_t x = v->get<int64_t>();
    if (x < min || x > max) return Bad(key, "must be " + expected, *v);
    *out = x;
    return Status::Ok();
  }
  Status Bool(const char* key, bool* out) {
    const Json* v = nullptr;
    RLT_RETURN_IF_ERROR(Get(key, &v, "true or false"));
    if (!v->is_boolean()) return Bad(key, "must be true or false", *v);
    *out = v->get<bool>();
    return Status::Ok();
  }
  // One of `choices` (strings).
  Status Choice(const char* key, std::initializer_list<const char*> choices, std::string* out) {
    std::string expected;
    for (const char* c : choices)
      expected += (expected.empty() ? "\"" : " or \"") + std::string(c) + "\"";
    const Json* v = nullptr;
    RLT_RETURN_IF_ERROR(Get(key, &v, expected));
    if (v->is_string()) {
      for (const char* c : choices) {
        if (v->get_ref<const std::string&>() == c) {
          *out = c;
          return Status::Ok();
        }
      }
    }
    return Bad(key, "must be " + expected, *v);
  }
  Status SideField(const char* key, Side* out) {
    std::string side;
    RLT_RETURN_IF_ERROR(Choice(key, {"buy", "sell"}, &side));
    *out = side == "buy" ? Side::kBuy : Side::kSell;
    return Status::Ok();
  }
  // "epoch" (integer seconds) and "time" (its ISO-8601 UTC text, fractional seconds allowed).
  Status Time(int64_t* epoch) {
    RLT_RETURN_IF_ERROR(Integer("epoch", 0, epoch, market::kMaxEpochSeconds));
    const Json* v = nullptr;
    const std::string iso = IsoTime(*epoch);
    const std::string expected =
        "the ISO-8601 UTC text of epoch " + std::to_string(*epoch) + ", \"" + iso + "\"";
    RLT_RETURN_IF_ERROR(Get("time", &v, expected));
    if (!v->is_string()) return Bad("time", "must be " + expected, *v);
    std::string text = v->get<std::string>();
    // Drop fractional seconds: "...:SS.fffZ" → "...:SSZ".
    const size_t dot = text.find('.');
    if (dot != std::string::npos && !text.empty() && text.back() == 'Z') {
      bool digits = dot + 1 < text.size() - 1;
      for (size_t i = dot + 1; i + 1 < text.size(); ++i)
        digits = digits && std::isdigit(static_cast<unsigned char>(text[i]));
      if (digits) text = text.substr(0, dot) + "Z";
    }
    if (text != iso) return Bad("time", "must be " + expected, *v);
    return Status::Ok();
  }
  // The whole value of `key`, unchecked (arrays are read by the caller).
  Status Raw(const char* key, const char* expected, const Json** out) {
    return Get(key, out, expected);
  }
  bool Has(const char* key) const { return object_.contains(key); }
  Status Bad(const std::string& key, const std::string& rule, const Json& value) const {
    return Status::InvalidArgument(type_ + ": field '" + key + "' " + rule + ", got " +
                                   Shown(value));
  }
  // Every key of the object was read; else names the first unknown one.
  Status NoOtherKeys() const {
    for (const auto& [key, value] : object_.items()) {
      if (key != "type" && used_.count(key) == 0) {
        return Status::InvalidArgument(type_ + ": unknown field '" + PrintableText(key, 64) +
                                       "' (a " + type_ +
                                       " message has no such field; see the protocol in "
                                       "paper/protocol.h or docs/paper-trading.md)");
      }
    }
    return Status::Ok();
  }

 private:
  Status Get(const char* key, const Json** out, const std::string& expected) {
    used_.insert(key);
    const auto it = object_.find(key);
    if (it == object_.end()) {
      return Status::InvalidArgument(type_ + ": field '" + key + "' is missing (expected " +
                                     expected + ")");
    }
    *out = &*it;
    return Status::Ok();
  }
  Status IdLike(const char* key, std::string* out, const char* what) {
    const std::string expected = std::string(what) + ": a string of 1-" +
                                 std::to_string(kMaxIdBytes) +
                                 " bytes without spaces or control characters";
    const Json* v = nullptr;
    RLT_RETURN_IF_ERROR(Get(key, &v, expected));
    bool ok = v->is_string();
    if (ok) {
      const std::string& s = v->get_ref<const std::string&>();
      ok = !s.empty() && s.size() <= kMaxIdBytes;
      for (unsigned char c : s) ok = ok && c > 0x20 && c != 0x7f;
    }
    if (!ok) return Bad(key, "must be " + expected, *v);
    *out = v->get<std::string>();
    return Status::Ok();
  }

  static std::string Expected(Kind kind) {
    switch (kind) {
      case Kind::kPrice:
        return market::PriceRangeText();
      case Kind::kVolume:
        return market::VolumeRangeText();
      case Kind::kQuantity:
        return market::QuantityRangeText();
      case Kind::kAmount:
        return market::AmountRangeText();
      case Kind::kFee:
        return "a fee in [0, 1e+30]";
      case Kind::kAveragePrice:
        return "0 (flat) or " + market::PriceRangeText();
    }
    return "";
  }
  static bool InRange(Kind kind, double x) {
    switch (kind) {
      case Kind::kPrice:
        return market::PriceInRange(x);
      case Kind::kVolume:
        return market::VolumeInRange(x);
      case Kind::kQuantity:
        return market::QuantityInRange(x);
      case Kind::kAmount:
        return market::AmountInRange(x);
      case Kind::kFee:
        return market::AmountInRange(x) && x >= 0;
      case Kind::kAveragePrice:
        return x == 0 || market::PriceInRange(x);
    }
    return false;
  }

  const Json& object_;
  std::string type_;
  std::set<std::string> used_;
};

// The object of a line and its "type".
Status ParseObject(std::string_view line, Json* object, std::string* type) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.size() > kMaxLineBytes) {
    return Status::InvalidArgument("line of " + std::to_string(line.size()) +
                                   " bytes is longer than the protocol's limit of " +
                                   std::to_string(kMaxLineBytes) + " bytes");
  }
  Result<Json> parsed = ParseJson<Json>(line, "the line");
  if (!parsed.ok()) {
    return Status::InvalidArgument("not a JSON line (" + parsed.status().message() +
                                   "): every line is one JSON object, e.g. {\"type\": "
                                   "\"heartbeat\"}");
  }
  *object = std::move(parsed).value();
  if (!object->is_object()) {
    return Status::InvalidArgument("expected a JSON object with a \"type\", got " + Shown(*object));
  }
  const auto it = object->find("type");
  if (it == object->end() || !it->is_string()) {
    return Status::InvalidArgument(
        "field 'type' is missing or not a string (expected the message type, e.g. "
        "\"new_order\")");
  }
  *type = it->get<std::string>();
  return Status::Ok();
}

Status UnknownType(const std::string& type, const char* direction, const char* valid) {
  return Status::InvalidArgument("unknown message type '" + PrintableText(type, 64) + "' from " +
                                 direction + " (expected one of " + valid + ")");
}

Status ReadClientHello(Fields& f, ClientHello* m) {
  RLT_RETURN_IF_ERROR(f.Text("client", &m->client));
  int64_t protocol = 0;
  RLT_RETURN_IF_ERROR(f.Integer("protocol", 1, &protocol));
  m->protocol = static_cast<int>(std::min<int64_t>(protocol, INT32_MAX));
  RLT_RETURN_IF_ERROR(f.Id("account", &m->account));
  if (f.Has("token")) RLT_RETURN_IF_ERROR(f.Text("token", &m->token));
  return Status::Ok();
}

Status ReadNewOrder(Fields& f, NewOrder* m) {
  RLT_RETURN_IF_ERROR(f.Id("client_order_id", &m->client_order_id));
  RLT_RETURN_IF_ERROR(f.Symbol("symbol", &m->symbol));
  RLT_RETURN_IF_ERROR(f.SideField("side", &m->side));
  RLT_RETURN_IF_ERROR(f.Number("quantity", Fields::Kind::kQuantity, &m->quantity));
  std::string order_type;
  return f.Choice("order_type", {"market"}, &order_type);
}

Status ReadServerHello(Fields& f, ServerHello* m) {
  RLT_RETURN_IF_ERROR(f.Text("server", &m->server));
  int64_t protocol = 0;
  RLT_RETURN_IF_ERROR(f.Integer("protocol", 1, &protocol));
  m->protocol = static_cast<int>(std::min<int64_t>(protocol, INT32_MAX));
  RLT_RETURN_IF_ERROR(f.Id("session", &m->session));
  RLT_RETURN_IF_ERROR(f.Id("account", &m->account));
  const Json* symbols = nullptr;
  RLT_RETURN_IF_ERROR(f.Raw("symbols", "an array of symbols", &symbols));
  if (!symbols->is_array()) return f.Bad("symbols", "must be an array of symbols", *symbols);
  for (const Json& s : *symbols) {
    Json holder = {{"symbol", s}};
    Fields one(holder, "hello");
    std::string symbol;
    if (!one.Symbol("symbol", &symbol).ok()) {
      return f.Bad("symbols", "must hold symbols (1-64 bytes, no spaces)", s);
    }
    m->symbols.push_back(symbol);
  }
  RLT_RETURN_IF_ERROR(f.Integer("bars_total", 0, &m->bars_total));
  RLT_RETURN_IF_ERROR(f.Integer("next_bar", 0, &m->next_bar));
  RLT_RETURN_IF_ERROR(f.Integer("heartbeat_ms", 1, &m->heartbeat_ms, kMaxHeartbeatMs));
  return f.Bool("lockstep", &m->lockstep);
}

Status ReadBar(Fields& f, BarMessage* m) {
  RLT_RETURN_IF_ERROR(f.Integer("seq", 0, &m->seq));
  RLT_RETURN_IF_ERROR(f.Symbol("symbol", &m->symbol));
  RLT_RETURN_IF_ERROR(f.Time(&m->epoch));
  using K = Fields::Kind;
  RLT_RETURN_IF_ERROR(f.Number("open", K::kPrice, &m->open));
  RLT_RETURN_IF_ERROR(f.Number("high", K::kPrice, &m->high));
  RLT_RETURN_IF_ERROR(f.Number("low", K::kPrice, &m->low));
  RLT_RETURN_IF_ERROR(f.Number("close", K::kPrice, &m->close));
  RLT_RETURN_IF_ERROR(f.Number("volume", K::kVolume, &m->volume));
  // The rules of a bar file's rows (market/limits.h), tolerance included.
  const market::BarValueProblem p =
      market::CheckBarValues(m->open, m->high, m->low, m->close, m->volume);
  if (p.field != nullptr) {
    const double got = std::string_view(p.field) == "high" ? m->high : m->low;
    return f.Bad(p.field, p.what, Json(got));
  }
  return Status::Ok();
}

Status ReadFill(Fields& f, Fill* m) {
  RLT_RETURN_IF_ERROR(f.Id("client_order_id", &m->client_order_id));
  RLT_RETURN_IF_ERROR(f.Id("order_id", &m->order_id));
  RLT_RETURN_IF_ERROR(f.Symbol("symbol", &m->symbol));
  RLT_RETURN_IF_ERROR(f.SideField("side", &m->side));
  using K = Fields::Kind;
  RLT_RETURN_IF_ERROR(f.Number("quantity", K::kQuantity, &m->quantity));
  RLT_RETURN_IF_ERROR(f.Number("price", K::kPrice, &m->price));
  RLT_RETURN_IF_ERROR(f.Number("fee", K::kFee, &m->fee));
  RLT_RETURN_IF_ERROR(f.Integer("bar", 0, &m->bar));
  return f.Time(&m->epoch);
}

Status ReadPositions(Fields& f, Positions* m) {
  RLT_RETURN_IF_ERROR(f.Id("account", &m->account));
  RLT_RETURN_IF_ERROR(f.Number("cash", Fields::Kind::kAmount, &m->cash));
  const Json* lines = nullptr;
  RLT_RETURN_IF_ERROR(f.Raw("positions", "an array of {symbol, quantity, average_price}", &lines));
  if (!lines->is_array()) {
    return f.Bad("positions", "must be an array of {symbol, quantity, average_price}", *lines);
  }
  for (const Json& line : *lines) {
    if (!line.is_object()) return f.Bad("positions", "must hold objects", line);
    Fields p(line, "positions[]");
    PositionLine out;
    RLT_RETURN_IF_ERROR(p.Symbol("symbol", &out.symbol));
    RLT_RETURN_IF_ERROR(p.Number("quantity", Fields::Kind::kAmount, &out.quantity));
    RLT_RETURN_IF_ERROR(p.Number("average_price", Fields::Kind::kAveragePrice, &out.average_price));
    RLT_RETURN_IF_ERROR(p.NoOtherKeys());
    m->positions.push_back(out);
  }
  const Json* open = nullptr;
  RLT_RETURN_IF_ERROR(f.Raw("open_orders", "an array of client_order_ids", &open));
  if (!open->is_array()) return f.Bad("open_orders", "must be an array of client_order_ids", *open);
  for (const Json& id : *open) {
    Json holder = {{"open_orders", id}};
    Fields one(holder, "positions");
    std::string s;
    RLT_RETURN_IF_ERROR(one.Id("open_orders", &s));
    m->open_orders.push_back(s);
  }
  return Status::Ok();
}

template <typename T>
Status ReadNothing(Fields&, T*) {
  return Status::Ok();
}

// Parses the fields of message type T into the variant V and checks for unknown keys.
template <typename V, typename T>
Result<V> Read(const Json& object, const std::string& type, Status (*read)(Fields&, T*)) {
  Fields f(object, type);
  T message;
  RLT_RETURN_IF_ERROR(read(f, &message));
  RLT_RETURN_IF_ERROR(f.NoOtherKeys());
  return V(std::move(message));
}

Json ToJson(const ClientHello& m) {
  Json j = {
      {"type", "hello"}, {"client", m.client}, {"protocol", m.protocol}, {"account", m.account}};
  if (!m.token.empty()) j["token"] = m.token;
  return j;
}
Json ToJson(const NewOrder& m) {
  return {{"type", "new_order"},    {"client_order_id", m.client_order_id},
          {"symbol", m.symbol},     {"side", SideName(m.side)},
          {"quantity", m.quantity}, {"order_type", "market"}};
}
Json ToJson(const Cancel& m) {
  return {{"type", "cancel"}, {"client_order_id", m.client_order_id}};
}
Json ToJson(const PositionsRequest&) { return {{"type", "positions"}}; }
Json ToJson(const Ready& m) { return {{"type", "ready"}, {"after_bar", m.after_bar}}; }
Json ToJson(const Heartbeat&) { return {{"type", "heartbeat"}}; }
Json ToJson(const ServerHello& m) {
  return {{"type", "hello"},
          {"server", m.server},
          {"protocol", m.protocol},
          {"session", m.session},
          {"account", m.account},
          {"symbols", m.symbols},
          {"bars_total", m.bars_total},
          {"next_bar", m.next_bar},
          {"heartbeat_ms", m.heartbeat_ms},
          {"lockstep", m.lockstep}};
}
Json ToJson(const BarMessage& m) {
  return {{"type", "bar"},    {"seq", m.seq},      {"symbol", m.symbol}, {"time", IsoTime(m.epoch)},
          {"epoch", m.epoch}, {"open", m.open},    {"high", m.high},     {"low", m.low},
          {"close", m.close}, {"volume", m.volume}};
}
Json ToJson(const Ack& m) {
  return {{"type", "ack"}, {"client_order_id", m.client_order_id}, {"order_id", m.order_id}};
}
Json ToJson(const Fill& m) {
  return {{"type", "fill"},
          {"client_order_id", m.client_order_id},
          {"order_id", m.order_id},
          {"symbol", m.symbol},
          {"side", SideName(m.side)},
          {"quantity", m.quantity},
          {"price", m.price},
          {"fee", m.fee},
          {"bar", m.bar},
          {"time", IsoTime(m.epoch)},
          {"epoch", m.epoch}};
}
Json ToJson(const Reject& m) {
  return {{"type", "reject"},
          {"client_order_id", m.client_order_id},
          {"request", m.request},
          {"reason", m.reason},
          {"retryable", m.retryable}};
}
Json ToJson(const Cancelled& m) {
  return {{"type", "cancelled"}, {"client_order_id", m.client_order_id}};
}
Json ToJson(const Positions& m) {
  Json lines = Json::array();
  for (const PositionLine& p : m.positions) {
    lines.push_back(
        {{"symbol", p.symbol}, {"quantity", p.quantity}, {"average_price", p.average_price}});
  }
  return {{"type", "positions"},
          {"account", m.account},
          {"cash", m.cash},
          {"positions", lines},
          {"open_orders", m.open_orders}};
}
Json ToJson(const ErrorMessage& m) { return {{"type", "error"}, {"message", m.message}}; }
Json ToJson(const End& m) { return {{"type", "end"}, {"reason", m.reason}, {"bars", m.bars}}; }

}  // namespace

const char* SideName(Side side) { return side == Side::kBuy ? "buy" : "sell"; }

std::string IsoTime(int64_t epoch) { return FormatIso8601(epoch, 0, /*utc_z=*/true); }

std::string ToLine(const ClientMessage& message) {
  return std::visit([](const auto& m) { return JsonText(ToJson(m)); }, message);
}
std::string ToLine(const ServerMessage& message) {
  return std::visit([](const auto& m) { return JsonText(ToJson(m)); }, message);
}

const char* TypeName(const ClientMessage& message) {
  static const char* kNames[] = {"hello", "new_order", "cancel", "positions", "ready", "heartbeat"};
  return kNames[message.index()];
}
const char* TypeName(const ServerMessage& message) {
  static const char* kNames[] = {"hello",     "bar",       "ack",       "fill",  "reject",
                                 "cancelled", "positions", "heartbeat", "error", "end"};
  return kNames[message.index()];
}

namespace {

// The message an object holds (its "type" is `type`): the one reader of each message, for
// lines received and for messages about to be sent (CheckedLine).
Result<ClientMessage> ClientFromJson(const Json& j, const std::string& type) {
  using V = ClientMessage;
  if (type == "hello") return Read<V>(j, type, &ReadClientHello);
  if (type == "new_order") return Read<V>(j, type, &ReadNewOrder);
  if (type == "cancel") {
    return Read<V, Cancel>(
        j, type, [](Fields& f, Cancel* m) { return f.Id("client_order_id", &m->client_order_id); });
  }
  if (type == "positions") return Read<V>(j, type, &ReadNothing<PositionsRequest>);
  if (type == "ready") {
    return Read<V, Ready>(
        j, type, [](Fields& f, Ready* m) { return f.Integer("after_bar", 0, &m->after_bar); });
  }
  if (type == "heartbeat") return Read<V>(j, type, &ReadNothing<Heartbeat>);
  return UnknownType(type, "a client", "hello, new_order, cancel, positions, ready, heartbeat");
}

Result<ServerMessage> ServerFromJson(const Json& j, const std::string& type) {
  using V = ServerMessage;
  if (type == "hello") return Read<V>(j, type, &ReadServerHello);
  if (type == "bar") return Read<V>(j, type, &ReadBar);
  if (type == "ack") {
    return Read<V, Ack>(j, type, [](Fields& f, Ack* m) {
      RLT_RETURN_IF_ERROR(f.Id("client_order_id", &m->client_order_id));
      return f.Id("order_id", &m->order_id);
    });
  }
  if (type == "fill") return Read<V>(j, type, &ReadFill);
  if (type == "reject") {
    return Read<V, Reject>(j, type, [](Fields& f, Reject* m) {
      RLT_RETURN_IF_ERROR(f.Id("client_order_id", &m->client_order_id));
      RLT_RETURN_IF_ERROR(f.Choice("request", {"new_order", "cancel"}, &m->request));
      RLT_RETURN_IF_ERROR(f.Text("reason", &m->reason));
      return f.Bool("retryable", &m->retryable);
    });
  }
  if (type == "cancelled") {
    return Read<V, Cancelled>(j, type, [](Fields& f, Cancelled* m) {
      return f.Id("client_order_id", &m->client_order_id);
    });
  }
  if (type == "positions") return Read<V>(j, type, &ReadPositions);
  if (type == "heartbeat") return Read<V>(j, type, &ReadNothing<Heartbeat>);
  if (type == "error") {
    return Read<V, ErrorMessage>(
        j, type, [](Fields& f, ErrorMessage* m) { return f.Text("message", &m->message); });
  }
  if (type == "end") {
    return Read<V, End>(j, type, [](Fields& f, End* m) {
      RLT_RETURN_IF_ERROR(f.Choice("reason", {"end_of_data", "shutdown"}, &m->reason));
      return f.Integer("bars", 0, &m->bars);
    });
  }
  return UnknownType(type, "a server",
                     "hello, bar, ack, fill, reject, cancelled, positions, heartbeat, error, end");
}

// The line of `message` when the receiving side would accept it, else why not.
template <typename Message, typename Reader>
Result<std::string> Checked(const Message& message, Reader read) {
  return std::visit(
      [&](const auto& m) -> Result<std::string> {
        const Json j = ToJson(m);
        const std::string type = j["type"].template get<std::string>();
        Result<Message> back = read(j, type);
        if (!back.ok()) {
          return Status::InvalidArgument("not sent: " + back.status().message());
        }
        return JsonText(j);
      },
      message);
}

}  // namespace

Result<ClientMessage> ParseClientMessage(std::string_view line) {
  Json j;
  std::string type;
  RLT_RETURN_IF_ERROR(ParseObject(line, &j, &type));
  return ClientFromJson(j, type);
}

Result<ServerMessage> ParseServerMessage(std::string_view line) {
  Json j;
  std::string type;
  RLT_RETURN_IF_ERROR(ParseObject(line, &j, &type));
  return ServerFromJson(j, type);
}

Result<std::string> CheckedLine(const ClientMessage& message) {
  return Checked(message, &ClientFromJson);
}
Result<std::string> CheckedLine(const ServerMessage& message) {
  return Checked(message, &ServerFromJson);
}

std::string ProtocolText(std::string_view text) {
  std::string out = PrintableText(text, kMaxTextBytes - 64);
  return out.empty() ? std::string("(empty)") : out;
}

}  // namespace rlt::paper
