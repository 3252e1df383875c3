// rltrade cli: `rltrade metrics --returns FILE [--periods N] [--risk-free R] [--json]`.
//
// Reads a one-column returns file (eval/returns_csv.h) and prints the performance
// metrics of eval/metrics.h as a table, or with --json as one object whose keys are the
// metric names (non-finite values, e.g. an undefined ratio, are null). Flag parsing and
// formatting only; the work is in eval/.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "core/json_text.h"
#include "eval/eval.h"
#include "eval/metrics_json.h"
#include "eval/metrics_table.h"

namespace rlt::cli {
namespace {

struct MetricsFlags {
  std::string returns_file;
  int periods = 252;
  double risk_free = 0.0;
  bool json = false;
};

// A table cell: "n/a" for NaN, "inf"/"-inf", else fixed-point (as a percentage if asked).
std::string Cell(double v, bool percent = false) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return percent ? fmt::format("{:.2f}%", 100.0 * v) : fmt::format("{:.4f}", v);
}

void PrintTable(const MetricsFlags& f, const eval::ReturnMetrics& m, size_t rows) {
  fmt::print("{}: {} periods ({} observed), {} periods per year, risk-free {} per period\n",
             f.returns_file, rows, m.observations, f.periods, f.risk_free);
  auto row = [](const char* name, const std::string& value, const std::string& note) {
    fmt::print("  {:<22} {:>12}{}\n", name, value, note.empty() ? "" : "  " + note);
  };
  eval::StrategyMetrics sm;
  sm.returns = m;
  for (const eval::MetricInfo& info : eval::MetricTable()) {
    if (!info.from_returns) continue;
    const double v = info.value(sm);
    const std::string value = info.kind == eval::MetricKind::kInteger
                                  ? std::to_string(static_cast<int64_t>(v))
                                  : Cell(v, /*percent=*/info.kind == eval::MetricKind::kPercent);
    row(info.key, value, info.note);
  }
}

int RunMetrics(const MetricsFlags& f) {
  Result<std::vector<double>> returns = eval::ReadReturnsCsv(f.returns_file);
  if (!returns.ok()) return ReportError(returns.status());
  const eval::MetricsOptions options{.periods_per_year = f.periods, .risk_free = f.risk_free};
  const eval::ReturnMetrics m = eval::ComputeReturnMetrics(*returns, options);
  if (!f.json) {
    PrintTable(f, m, returns->size());
    return 0;
  }
  nlohmann::json j = eval::ReturnMetricsJson(m);
  j["periods"] = returns->size();
  j["periods_per_year"] = f.periods;
  j["risk_free"] = f.risk_free;
  eval::NullNonFinite(j);
  fmt::print("{}\n", JsonText(j, 2));
  return 0;
}

}  // namespace

void RegisterMetricsCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<MetricsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "metrics", "Performance metrics of a returns file (empyrical's definitions)");
  cmd->add_option("--returns", f->returns_file,
                  "CSV with header `return`, one per-period simple return per line "
                  "(0.01 = +1%); empty or nan = missing")
      ->required();
  cmd->add_option("--periods", f->periods,
                  "periods per year: 252 daily, 52 weekly, 12 monthly (default 252)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--risk-free", f->risk_free,
                  "risk-free return per period, in (-1, 1) (default 0)")
      ->check(CLI::Validator(
          [](std::string& v) {
            double r = 0;
            return CLI::detail::lexical_cast(v, r) && std::isfinite(r) && r > -1 && r < 1
                       ? std::string()
                       : "must be a finite number in (-1, 1), the return per period";
          },
          "RATE"));
  cmd->add_flag("--json", f->json, "print JSON");
  cmd->callback([f, action] { *action = [f] { return RunMetrics(*f); }; });
}

}  // namespace rlt::cli
