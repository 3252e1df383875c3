// rltrade evalrun: the evaluation of a run of several symbols (see symbols_eval.h).
#include "evalrun/symbols_eval.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "core/json_text.h"
#include "eval/console_table.h"
#include "eval/eval_files.h"
#include "eval/metrics.h"
#include "eval/metrics_json.h"
#include "eval/outputs.h"
#include "eval/significance.h"
#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Num(double v) { return std::isfinite(v) ? fmt::format("{:.10g}", v) : "nan"; }

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
  Json summary;
  summary["run_dir"] = request.run_dir;
  Json range = summaries[0].contains("range") ? Ordered(summaries[0]["range"]) : Json::object();
  range["name"] = outcomes.front().range_name;
  range["first"] = p.dates.empty() ? "" : p.dates.front();
  range["last"] = p.dates.empty() ? "" : p.dates.back();
  summary["range"] = range;
  summary["in_sample"] = in_sample;
  summary["policy"] = summaries[0].value("policy", std::string("trained"));
  if (summaries[0].contains("checkpoint"))
    summary["checkpoint"] = Ordered(summaries[0]["checkpoint"]);
  summary["portfolio"] = "equal_weight";
  Json list = Json::array();
  for (size_t i = 0; i < symbols.size(); ++i) {
    Json s;
    s["symbol"] = symbols[i];
    s["eval_dir"] = fs::relative(outcomes[i].out_dir, request.run_dir).string();
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
  outcome.summary_json = JsonText(summary, 2) + "\n";
  outcome.table = Table(summary, request.periods_per_year > 0);
  const fs::path eval_root = fs::path(request.run_dir) / "eval";
  RLT_ASSIGN_OR_RETURN(runlog::RunLock lock,
                       runlog::RunLock::Acquire(request.run_dir, "rltrade eval"));
  const fs::path out_dir = eval_root / name;
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging, runlog::StagingDir::Create(out_dir.string()));
  const fs::path stage(staging.path());
  RLT_RETURN_IF_ERROR(WriteFileAtomic((stage / eval::kSummaryFile).string(), outcome.summary_json));
  RLT_RETURN_IF_ERROR(WriteFileAtomic((stage / eval::kDailyReturnsFile).string(), p.daily_csv));
  RLT_RETURN_IF_ERROR(
      WriteFileAtomic((stage / "symbols_daily_returns.csv").string(), p.symbols_csv));
  RLT_RETURN_IF_ERROR(staging.Commit(/*replace=*/true));
  outcome.out_dir = out_dir.string();
  return outcome;
}

}  // namespace rlt::evalrun
