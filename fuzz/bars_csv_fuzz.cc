// Fuzzes the bar CSV reader (market/csv.h) on in-memory text.
// Input: one control byte (bit 0: BadRowPolicy::kDrop; bits 1-2: the time zone; bit 3:
// keep only symbol "B"), then the CSV text. An accepted file must satisfy the rules the
// reader promises to enforce (csv.h, "Validation rules").
#include <algorithm>
#include <cmath>
#include <string>

#include "fuzz_util.h"
#include "market/csv.h"

namespace {

using rlt::market::Bars;

void CheckBars(const Bars& b) {
  const size_t n = b.size();
  FUZZ_REQUIRE(b.open.size() == n && b.high.size() == n && b.low.size() == n &&
                   b.close.size() == n && b.volume.size() == n && b.utc_offset.size() == n,
               "column lengths differ");
  FUZZ_REQUIRE(
      b.session.size() == n && b.bar_in_session.size() == n && b.last_in_session.size() == n,
      "session columns have the wrong length");
  for (size_t i = 0; i < n; ++i) {
    const double o = b.open[i], h = b.high[i], l = b.low[i], c = b.close[i], v = b.volume[i];
    FUZZ_REQUIRE(std::isfinite(o) && std::isfinite(h) && std::isfinite(l) && std::isfinite(c) &&
                     std::isfinite(v),
                 "non-finite value accepted");
    FUZZ_REQUIRE(o > 0 && h > 0 && l > 0 && c > 0, "non-positive price accepted");
    FUZZ_REQUIRE(h >= std::max(o, c) && l <= std::min(o, c), "high/low rule broken");
    FUZZ_REQUIRE(v >= 0, "negative volume accepted");
    if (i > 0) FUZZ_REQUIRE(b.time[i] > b.time[i - 1], "timestamps not strictly increasing");
  }
  int32_t covered = 0;
  for (size_t s = 0; s < b.sessions.size(); ++s) {
    const auto& ses = b.sessions[s];
    FUZZ_REQUIRE(ses.begin == covered && ses.end > ses.begin, "sessions do not tile the bars");
    for (int32_t i = ses.begin; i < ses.end; ++i) {
      FUZZ_REQUIRE(b.session[i] == static_cast<int32_t>(s), "bar has the wrong session");
      FUZZ_REQUIRE(b.bar_in_session[i] == i - ses.begin, "bar_in_session wrong");
      FUZZ_REQUIRE(b.last_in_session[i] == (i + 1 == ses.end), "last_in_session wrong");
    }
    covered = ses.end;
  }
  FUZZ_REQUIRE(static_cast<size_t>(covered) == n, "sessions do not cover the bars");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kZones[] = {"UTC", "America/New_York", "Asia/Kolkata",
                                       "Australia/Lord_Howe"};
  const uint8_t control = rlt::fuzz::TakeByte(data, size);
  rlt::market::CsvReadOptions options;
  options.on_bad_rows =
      (control & 1) ? rlt::market::BadRowPolicy::kDrop : rlt::market::BadRowPolicy::kFail;
  options.timezone = kZones[(control >> 1) & 3];
  if (control & 8) options.symbol = "B";
  rlt::market::DataReport report;
  auto result =
      rlt::market::ParseBarsCsv(rlt::fuzz::AsText(data, size), "fuzz.csv", options, &report);
  if (!result.ok()) {
    FUZZ_REQUIRE(!result.status().message().empty(), "error without a message");
    return 0;
  }
  FUZZ_REQUIRE(report.rows_dropped >= 0 && report.rows_dropped <= report.rows_read,
               "rows_dropped out of range");
  for (size_t i = 0; i < result->symbols.size(); ++i) {
    const Bars& b = result->symbols[i];
    if (!options.symbol.empty()) FUZZ_REQUIRE(b.symbol == options.symbol, "symbol filter");
    if (i > 0) FUZZ_REQUIRE(result->symbols[i - 1].symbol < b.symbol, "symbols not sorted");
    CheckBars(b);
  }
  return 0;
}
