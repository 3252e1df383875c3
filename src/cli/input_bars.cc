#include "cli/input_bars.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/printable.h"

namespace rlt::cli {

Result<market::MarketData> ReadInputBars(const std::string& path, const std::string& timezone,
                                         bool timezone_given, const std::string& symbol,
                                         const std::string& on_bad_rows,
                                         const std::string& session) {
  market::CsvReadOptions options;
  options.timezone = timezone;
  RLT_ASSIGN_OR_RETURN(options.session, market::ParseSessionHours(session, "--session"));
  options.symbol = symbol;
  options.on_bad_rows =
      on_bad_rows == "drop" ? market::BadRowPolicy::kDrop : market::BadRowPolicy::kFail;
  market::DataReport report;
  RLT_ASSIGN_OR_RETURN(market::MarketData data, market::ReadBarsCsv(path, options, &report));
  if (report.naive_times && !timezone_given) {
    fmt::print(stderr, "{}\n", PrintableText(market::NaiveTimesNote(path, timezone)));
  }
  if (report.rows_dropped > 0) {
    fmt::print(stderr, "dropped {} of {} rows of {} with problems:\n", report.rows_dropped,
               report.rows_read, path);
    for (const auto& p : report.problems) fmt::print(stderr, "  {}\n", p.ToString());
  }
  if (data.symbols.empty()) {
    return Status::DataError(path + ": no bars" +
                             (symbol.empty() ? std::string() : " for symbol '" + symbol + "'"));
  }
  return data;
}

}  // namespace rlt::cli
