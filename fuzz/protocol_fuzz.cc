// Fuzzes the broker protocol's parsers (paper/protocol.h) in both directions: the lines a
// server reads from a client (ParseClientMessage) and those a client reads from a server
// (ParseServerMessage).
// Input: one control byte (bit 0: 0 = a client's line, 1 = a server's line), then the line.
// An accepted message must keep the protocol's promises: every number finite and within
// market/limits.h, a bar keeping the rules of a bar file's row, and the message sendable
// again (CheckedLine accepts it and its line parses back to the same type).
#include <string>
#include <variant>

#include "fuzz_util.h"
#include "market/limits.h"
#include "paper/protocol.h"

namespace {

namespace paper = rlt::paper;
namespace market = rlt::market;

void CheckServer(const paper::ServerMessage& m) {
  if (const auto* bar = std::get_if<paper::BarMessage>(&m)) {
    FUZZ_REQUIRE(
        market::CheckBarValues(bar->open, bar->high, bar->low, bar->close, bar->volume).field ==
            nullptr,
        "a bar outside the limits was accepted");
    FUZZ_REQUIRE(bar->epoch >= 0 && bar->epoch <= market::kMaxEpochSeconds, "epoch out of range");
  }
  if (const auto* fill = std::get_if<paper::Fill>(&m)) {
    FUZZ_REQUIRE(market::QuantityInRange(fill->quantity), "fill quantity out of range");
    FUZZ_REQUIRE(market::PriceInRange(fill->price), "fill price out of range");
    FUZZ_REQUIRE(market::AmountInRange(fill->fee) && fill->fee >= 0, "fee out of range");
  }
  if (const auto* p = std::get_if<paper::Positions>(&m)) {
    FUZZ_REQUIRE(market::AmountInRange(p->cash), "cash out of range");
    for (const paper::PositionLine& line : p->positions) {
      FUZZ_REQUIRE(market::AmountInRange(line.quantity), "position out of range");
      FUZZ_REQUIRE(line.average_price == 0 || market::PriceInRange(line.average_price),
                   "average price out of range");
    }
  }
  const rlt::Result<std::string> again = paper::CheckedLine(m);
  FUZZ_REQUIRE(again.ok(),
               "an accepted server message cannot be sent: " + again.status().message());
  const rlt::Result<paper::ServerMessage> back = paper::ParseServerMessage(*again);
  FUZZ_REQUIRE(back.ok() && back->index() == m.index(), "a server message does not round-trip");
}

void CheckClient(const paper::ClientMessage& m) {
  if (const auto* order = std::get_if<paper::NewOrder>(&m)) {
    FUZZ_REQUIRE(market::QuantityInRange(order->quantity), "order quantity out of range");
  }
  const rlt::Result<std::string> again = paper::CheckedLine(m);
  FUZZ_REQUIRE(again.ok(),
               "an accepted client message cannot be sent: " + again.status().message());
  const rlt::Result<paper::ClientMessage> back = paper::ParseClientMessage(*again);
  FUZZ_REQUIRE(back.ok() && back->index() == m.index(), "a client message does not round-trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t control = rlt::fuzz::TakeByte(data, size);
  const std::string_view line = rlt::fuzz::AsText(data, size);
  if (control & 1) {
    const rlt::Result<paper::ServerMessage> m = paper::ParseServerMessage(line);
    if (!m.ok()) {
      FUZZ_REQUIRE(!m.status().message().empty(), "error without a message");
      FUZZ_REQUIRE(m.status().message().size() < 2 * paper::kMaxTextBytes,
                   "an error message quotes too much of the line");
      return 0;
    }
    CheckServer(*m);
  } else {
    const rlt::Result<paper::ClientMessage> m = paper::ParseClientMessage(line);
    if (!m.ok()) {
      FUZZ_REQUIRE(!m.status().message().empty(), "error without a message");
      FUZZ_REQUIRE(m.status().message().size() < 2 * paper::kMaxTextBytes,
                   "an error message quotes too much of the line");
      return 0;
    }
    CheckClient(*m);
  }
  return 0;
}
