// rltrade eval: terminal tables of evaluation summaries (see console_table.h).
#include "eval/console_table.h"

#include <fmt/format.h>

#include <cmath>

#include "eval/metrics_json.h"
#include "eval/metrics_table.h"
#include "eval/significance.h"

namespace rlt::eval {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kRow = "{:<40}{:>16}{:>16}{:>16}\n";

bool Flagged(const Json* metrics) {
  return metrics != nullptr && metrics->contains(kFewObservationsKey) &&
         metrics->at(kFewObservationsKey).is_boolean() &&
         metrics->at(kFewObservationsKey).get<bool>();
}

// A metric's cell: 6 significant digits, "nan" for null or absent, '*' on a ratio from
// too few periods.
std::string Cell(const Json* metrics, const MetricInfo& row) {
  if (metrics == nullptr || !metrics->contains(row.key) || !metrics->at(row.key).is_number()) {
    return "nan";
  }
  const bool mark = row.kind == MetricKind::kRatio && row.from_returns && Flagged(metrics);
  return fmt::format("{:.6g}{}", metrics->at(row.key).get<double>(), mark ? "*" : "");
}

std::string Number(const Json& j, const char* key, const char* spec = "{:.4g}") {
  if (!j.contains(key) || !j.at(key).is_number()) return "nan";
  return fmt::format(fmt::runtime(spec), j.at(key).get<double>());
}

std::string Interval(const Json& j) {
  if (!j.contains("ci_low") || !j["ci_low"].is_number() || !j["ci_high"].is_number()) {
    return "nan";
  }
  return fmt::format("[{:.3g}, {:.3g}]", j["ci_low"].get<double>(), j["ci_high"].get<double>());
}

// The significance rows: per benchmark column, the test of the policy against it.
std::string SignificanceRows(const Json& s) {
  const Json none = Json::object();
  const Json& flat = s.contains("flat") ? s["flat"] : none;
  const Json& bh = s.contains("buy_and_hold") ? s["buy_and_hold"] : none;
  const int confidence = static_cast<int>(std::lround(100 * s.value("confidence", 0.95)));
  std::string out = fmt::format(kRow, "Sharpe difference, policy - benchmark", "",
                                Number(flat, "sharpe_difference", "{:.6g}"),
                                Number(bh, "sharpe_difference", "{:.6g}"));
  out += fmt::format(kRow, "  p-value (bootstrap, H0: equal Sharpe)", "", Number(flat, "p_value"),
                     Number(bh, "p_value"));
  out += fmt::format(kRow, fmt::format("  {}% interval of the difference", confidence), "",
                     Interval(flat), Interval(bh));
  return out;
}

std::string FewObservationsNote(const BenchmarkTableInput& in) {
  if (!Flagged(in.policy) && !Flagged(in.flat) && !Flagged(in.buy_and_hold)) return "";
  return fmt::format(
      "* a ratio from fewer than {} daily returns ({} here): too few to trust\n",
      kMinRatioObservations,
      in.policy->contains("observations") ? in.policy->at("observations").dump() : "?");
}

}  // namespace

std::string BenchmarkTable(const BenchmarkTableInput& in) {
  std::string out = fmt::format(kRow, in.first_header, "policy", "flat", "buy-and-hold");
  for (const MetricInfo& row : MetricTable()) {
    if (!in.policy->contains(row.key)) continue;
    out += fmt::format(kRow, row.label, Cell(in.policy, row), Cell(in.flat, row),
                       Cell(in.buy_and_hold, row));
    if (std::string(row.key) == "num_trades" && in.fills != nullptr) {
      const Json& f = *in.fills;
      out += fmt::format(kRow, "Fills (orders executed)", f.value("strategy", int64_t{0}),
                         f.value("flat", int64_t{0}), f.value("buy_and_hold", int64_t{0}));
    }
  }
  if (in.significance != nullptr && in.significance->is_object()) {
    out += SignificanceRows(*in.significance);
  }
  return out + FewObservationsNote(in);
}

std::string AnnualisationNote(int periods_per_year, bool overridden) {
  const char* why = overridden ? "--periods"
                    : periods_per_year == kCalendarDaysPerYear
                        ? "a market that trades every day: [data] session = \"24h\", or a "
                          "fifth or more of the sessions on weekends"
                        : "weekday sessions: exchange days";
  return fmt::format(
      "ratios annualised with {} periods per year ({})\n"
      "significance: stationary bootstrap of the Sharpe difference on paired daily returns "
      "(flat counts as Sharpe 0), 2,000 resamples, fixed seed\n",
      periods_per_year, why);
}

}  // namespace rlt::eval
