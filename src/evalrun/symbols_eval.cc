// rltrade evalrun: the evaluation of a run of several symbols (see symbols_eval.h).
#include "evalrun/symbols_eval.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/file_io.h"
#include "core/json_text.h"
#include "core/options.h"
#include "eval/console_table.h"
#include "eval/eval_files.h"
#include "eval/metrics.h"
#include "eval/metrics_json.h"
#include "eval/outputs.h"
#include "eval/report.h"
#include "eval/significance.h"
#include "evalrun/backtest.h"
#include "evalrun/cost_sweep.h"
#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Cell(const Json& v, const char* fmt_spec = "{:.4g}") {
  return v.is_number() ? fmt::format(fmt::runtime(fmt_spec), v.get<double>()) : "-";
}

Json Ordered(const nlohmann::json& j) { return Json::parse(JsonText(j)); }

// The mean of the finite values (NaN when none).
double MeanOf(const std::vector<double>& values) {
  double sum = 0;
  int n = 0;
  for (double v : values) {
    if (std::isfinite(v)) sum += v, ++n;
  }
  return n > 0 ? sum / n : kNaN;
}

struct Portfolio {
  std::vector<std::string> dates;
  std::vector<double> strategy, buy_and_hold, flat;
  std::string daily_csv, symbols_csv;
};

// The equal-weight portfolio of the symbols' daily returns, on the union of their dates.
Portfolio EqualWeight(const std::vector<std::string>& symbols,
                      const std::vector<std::vector<eval::DailyReturnRow>>& daily) {
  // date -> per symbol: its row (or none).
  std::map<std::string, std::vector<const eval::DailyReturnRow*>> by_date;
  for (size_t i = 0; i < daily.size(); ++i) {
    for (const eval::DailyReturnRow& row : daily[i]) {
      auto& slot = by_date[row.date];
      slot.resize(symbols.size(), nullptr);
      slot[i] = &row;
    }
  }
  Portfolio p;
  p.daily_csv = std::string(eval::kDailyReturnsHeader) + "\n";
  p.symbols_csv = "date";
  for (const std::string& s : symbols) p.symbols_csv += "," + s;
  p.symbols_csv += "\n";
  for (const auto& [date, rows] : by_date) {
    std::vector<double> s, bh, flat;
    p.symbols_csv += date;
    for (const eval::DailyReturnRow* row : rows) {
      p.symbols_csv += "," + (row != nullptr ? row->cells[0] : std::string());
      if (row == nullptr) continue;
      s.push_back(row->strategy);
      bh.push_back(row->buy_and_hold);
      flat.push_back(row->flat);
    }
    p.symbols_csv += "\n";
    p.dates.push_back(date);
    p.strategy.push_back(MeanOf(s));
    p.buy_and_hold.push_back(MeanOf(bh));
    p.flat.push_back(MeanOf(flat));
    p.daily_csv += fmt::format("{},{},{},{}\n", date, Num(p.strategy.back()),
                               Num(p.buy_and_hold.back()), Num(p.flat.back()));
  }
  return p;
}

std::string Table(const Json& summary, bool periods_given) {
  const Json& range = summary["range"];
  std::string t =
      fmt::format("{} symbols of {}, {} ({} .. {}){}\n", summary["symbols"].size(),
                  summary["run_dir"].get<std::string>(), range.value("name", std::string()),
                  range.value("first", std::string()), range.value("last", std::string()),
                  summary["in_sample"].get<bool>() ? "  IN-SAMPLE" : "");
  t += fmt::format("{:<14} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "symbol", "return",
                   "sharpe", "max_dd", "b&h ret", "b&h sharpe", "trades");
  for (const Json& s : summary["symbols"]) {
    const Json& m = s["metrics"];
    const Json& bh =
        s["benchmarks"].contains("buy_and_hold") ? s["benchmarks"]["buy_and_hold"] : Json::object();
    t += fmt::format(
        "{:<14} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", s["symbol"].get<std::string>(),
        Cell(m.value("cum_returns_final", Json())), Cell(m.value("sharpe_ratio", Json())),
        Cell(m.value("max_drawdown", Json())), Cell(bh.value("cum_returns_final", Json())),
        Cell(bh.value("sharpe_ratio", Json())), Cell(m.value("num_trades", Json()), "{}"));
  }
  eval::BenchmarkTableInput in;
  in.first_header = "equal-weight portfolio";
  in.policy = &summary["metrics"];
  in.flat = &summary["benchmarks"]["flat"];
  in.buy_and_hold = &summary["benchmarks"]["buy_and_hold"];
  in.significance = summary.contains("significance") ? &summary["significance"] : nullptr;
  t += eval::BenchmarkTable(in);
  t += eval::AnnualisationNote(summary["periods_per_year"].get<int>(), periods_given);
  return t;
}

// --costs: the equal-weight portfolio at each cost level, from every symbol's
// costs_daily_returns.csv (the portfolio's return metrics) and costs.json (turnover, costs
// and P&L: the mean of the symbols' accounts; fills: their sum).
Result<CostSweep> PortfolioCosts(const std::vector<std::string>& dirs,
                                 const std::vector<double>& bps, int periods) {
  const size_t n = dirs.size(), levels_count = bps.size();
  std::vector<CostLevel> levels(levels_count);
  // level -> date -> the symbols' returns that date.
  std::vector<std::map<std::string, std::vector<double>>> by_date(levels_count);
  for (const std::string& dir : dirs) {
    const std::string daily = (fs::path(dir) / kCostsDailyFile).string();
    RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(daily));
    size_t line_no = 0;
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(at, end - at);
      at = end + 1;
      if (line_no++ == 0 || line.empty()) continue;
      Result<std::vector<std::string>> cells = SplitList(line);
      if (!cells.ok() || cells->size() != levels_count + 1) {
        return Status::DataError(
            fmt::format("{}:{}: expected a date and {} returns", daily, line_no, levels_count));
      }
      for (size_t k = 0; k < levels_count; ++k) {
        double r = kNaN;
        if ((*cells)[k + 1] != "nan" && !ParseValue((*cells)[k + 1], &r).ok()) {
          return Status::DataError(
              fmt::format("{}:{}: '{}' is not a number", daily, line_no, (*cells)[k + 1]));
        }
        by_date[k][(*cells)[0]].push_back(r);
      }
    }
    const std::string costs = (fs::path(dir) / eval::kCostsJsonFile).string();
    RLT_ASSIGN_OR_RETURN(const std::string json_text, ReadFile(costs));
    try {
      const nlohmann::json j = nlohmann::json::parse(json_text);
      for (size_t k = 0; k < levels_count; ++k) {
        const nlohmann::json& l = j.at("levels").at(k);
        const auto num = [](const nlohmann::json& v) {
          return v.is_number() ? v.get<double>() : kNaN;
        };
        levels[k].turnover += num(l.at("turnover")) / static_cast<double>(n);
        levels[k].costs_paid += num(l.at("costs_paid")) / static_cast<double>(n);
        levels[k].net_pnl += num(l.at("pnl").at("net")) / static_cast<double>(n);
        levels[k].fills += l.at("fills").get<int64_t>();
      }
    } catch (const nlohmann::json::exception& e) {
      return Status::DataError(costs + ": " + e.what());
    }
  }
  for (size_t k = 0; k < levels_count; ++k) {
    std::vector<double> returns;
    for (const auto& [date, values] : by_date[k]) returns.push_back(MeanOf(values));
    const eval::ReturnMetrics m =
        eval::ComputeReturnMetrics(returns, eval::MetricsOptions{periods});
    CostLevel& l = levels[k];
    l.bps = bps[k];
    l.total_return = m.cum_returns_final;
    l.annual_return = m.annual_return;
    l.sharpe_ratio = m.sharpe_ratio;
    l.max_drawdown = m.max_drawdown;
  }
  CostSweep out = FormatCostSweep(
      levels,
      "equal-weight portfolio of the symbols' daily returns at each level; turnover, costs "
      "paid and P&L are the mean of the symbols' accounts (each with the run's capital), "
      "fills their sum");
  out.table = "Equal-weight portfolio: " + out.table;
  out.daily_csv = "date";
  for (const double b : bps) out.daily_csv += "," + Num(b);
  out.daily_csv += "\n";
  for (const auto& [date, values] : by_date.front()) {
    out.daily_csv += date;
    for (size_t k = 0; k < levels_count; ++k) out.daily_csv += "," + Num(MeanOf(by_date[k][date]));
    out.daily_csv += "\n";
  }
  return out;
}

}  // namespace

Result<EvalOutcome> RunSymbolsEvaluation(const EvalRequest& request,
                                         const std::vector<std::string>& symbols,
                                         const EvaluateOne& evaluate_one) {
  RLT_CHECK(symbols.size() >= 2 && request.symbol.empty());
  std::vector<EvalOutcome> outcomes;
  std::vector<nlohmann::json> summaries;
  std::vector<std::vector<eval::DailyReturnRow>> daily;
  for (const std::string& symbol : symbols) {
    EvalRequest one = request;
    one.symbol = symbol;
    Result<EvalOutcome> out = evaluate_one(one);
    if (!out.ok()) {
      return Annotate(out.status(), "symbol " + symbol + ": ");
    }
    RLT_ASSIGN_OR_RETURN(nlohmann::json summary, eval::ReadSummaryJson(out->out_dir));
    RLT_ASSIGN_OR_RETURN(
        std::vector<eval::DailyReturnRow> rows,
        eval::ReadDailyReturnsCsv((fs::path(out->out_dir) / eval::kDailyReturnsFile).string()));
    summaries.push_back(std::move(summary));
    daily.push_back(std::move(rows));
    outcomes.push_back(std::move(*out));
  }
  const Portfolio p = EqualWeight(symbols, daily);
  const int periods = summaries[0].value("periods_per_year", eval::kExchangeSessionsPerYear);
  bool in_sample = false;
  for (const EvalOutcome& o : outcomes) in_sample = in_sample || o.in_sample;
  // The portfolio's name: the symbols' own without the ".symbol-<SYMBOL>" suffix.
  std::string name = outcomes.front().name;
  if (const size_t at = name.rfind(".symbol-"); at != std::string::npos) name.erase(at);
  // Where the portfolio is written: the run, or a seed ensemble's multi-seed run.
  const std::string root = request.output_root.empty() ? request.run_dir : request.output_root;
  Json summary;
  summary["run_dir"] = root;
  Json range = summaries[0].contains("range") ? Ordered(summaries[0]["range"]) : Json::object();
  range["name"] = outcomes.front().range_name;
  range["first"] = p.dates.empty() ? "" : p.dates.front();
  range["last"] = p.dates.empty() ? "" : p.dates.back();
  summary["range"] = range;
  summary["in_sample"] = in_sample;
  summary["policy"] = summaries[0].value("policy", std::string("trained"));
  for (const char* key : {"checkpoint", "ensemble"}) {
    if (summaries[0].contains(key)) summary[key] = Ordered(summaries[0][key]);
  }
  summary["portfolio"] = "equal_weight";
  Json list = Json::array();
  for (size_t i = 0; i < symbols.size(); ++i) {
    Json s;
    s["symbol"] = symbols[i];
    s["eval_dir"] = fs::relative(outcomes[i].out_dir, root).string();
    s["metrics"] = summaries[i].contains("metrics") ? Ordered(summaries[i]["metrics"]) : Json();
    s["benchmarks"] =
        summaries[i].contains("benchmarks") ? Ordered(summaries[i]["benchmarks"]) : Json::object();
    list.push_back(std::move(s));
  }
  summary["symbols"] = list;
  const eval::MetricsOptions options{periods};
  const eval::ReturnMetrics m = eval::ComputeReturnMetrics(p.strategy, options);
  summary["metrics"] = eval::ReturnMetricsJson<Json>(m);
  summary["psr"] = m.psr;
  summary["benchmarks"]["flat"] =
      eval::ReturnMetricsJson<Json>(eval::ComputeReturnMetrics(p.flat, options));
  summary["benchmarks"]["buy_and_hold"] =
      eval::ReturnMetricsJson<Json>(eval::ComputeReturnMetrics(p.buy_and_hold, options));
  summary["significance"] =
      eval::SignificanceJson<Json>(p.strategy, p.flat, p.buy_and_hold, periods);
  summary["periods_per_year"] = periods;
  eval::NullNonFinite(summary);
  EvalOutcome outcome;
  outcome.in_sample = in_sample;
  outcome.range_name = outcomes.front().range_name;
  outcome.name = name;
  outcome.ensemble_method = outcomes.front().ensemble_method;
  outcome.summary_json = JsonText(summary, 2) + "\n";
  outcome.table = Table(summary, request.periods_per_year > 0);
  CostSweep costs;
  if (!request.cost_levels_bps.empty()) {
    std::vector<std::string> dirs;
    for (const EvalOutcome& o : outcomes) dirs.push_back(o.out_dir);
    RLT_ASSIGN_OR_RETURN(costs, PortfolioCosts(dirs, request.cost_levels_bps, periods));
    outcome.table += costs.table;
  }
  const fs::path eval_root = fs::path(root) / "eval";
  // One writer per run directory; a seed ensemble's caller already holds its root's lock.
  std::optional<runlog::RunLock> lock;
  if (request.output_root.empty()) {
    RLT_ASSIGN_OR_RETURN(lock, runlog::RunLock::Acquire(root, "rltrade eval"));
  }
  const fs::path out_dir = eval_root / name;
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging, runlog::StagingDir::Create(out_dir.string()));
  const fs::path stage(staging.path());
  RLT_RETURN_IF_ERROR(WriteFileAtomic((stage / eval::kSummaryFile).string(), outcome.summary_json));
  RLT_RETURN_IF_ERROR(WriteFileAtomic((stage / eval::kDailyReturnsFile).string(), p.daily_csv));
  RLT_RETURN_IF_ERROR(
      WriteFileAtomic((stage / "symbols_daily_returns.csv").string(), p.symbols_csv));
  if (!request.cost_levels_bps.empty()) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((stage / eval::kCostsCsvFile).string(), costs.csv));
    RLT_RETURN_IF_ERROR(WriteFileAtomic((stage / eval::kCostsJsonFile).string(), costs.json));
    RLT_RETURN_IF_ERROR(WriteFileAtomic((stage / kCostsDailyFile).string(), costs.daily_csv));
  }
  RLT_RETURN_IF_ERROR(eval::WriteSymbolsReport(stage.string()));
  outcome.report_written = true;
  RLT_RETURN_IF_ERROR(staging.Commit(/*replace=*/true));
  outcome.out_dir = out_dir.string();
  return outcome;
}

}  // namespace rlt::evalrun
