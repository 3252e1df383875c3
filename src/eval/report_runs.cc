// rltrade eval: the report pages of several evaluations at once — across the seeds of a
// run (WriteSeedsReport) and the concatenated walk-forward (WriteWalkforwardReport); see
// report.h. Built from the shared pieces of report_html.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/csv_line.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "eval/eval_files.h"
#include "eval/metrics_table.h"
#include "eval/outputs.h"
#include "eval/report.h"
#include "eval/report_html.h"

namespace rlt::eval {
namespace {
using namespace html;  // NOLINT(google-build-using-namespace): the page's shared pieces
using DailyRow = DailyReturnRow;
}  // namespace

// ---------------------------------------------------------------- across seeds

namespace {

// Growth of 1 compounded from daily returns (a NaN return counts as 0 %).
std::vector<double> GrowthOfOne(const std::vector<double>& returns) {
  std::vector<double> out{1.0};
  for (double r : returns) out.push_back(out.back() * (1.0 + (std::isnan(r) ? 0.0 : r)));
  return out;
}

// seeds_daily_returns.csv: date,seed_<s>,... → the seed names and one column per seed.
Status ReadSeedsDaily(const std::string& path, std::vector<std::string>* names,
                      std::vector<std::vector<double>>* columns) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::vector<std::string> cells = SplitCsvLine(line);
    if (line_no == 1) {
      if (cells.size() < 2 || cells[0] != "date") {
        return Status::DataError(path + ":1: expected the header date,seed_<s>,...");
      }
      names->assign(cells.begin() + 1, cells.end());
      columns->assign(names->size(), {});
      continue;
    }
    if (cells.size() != names->size() + 1) {
      return Status::DataError(fmt::format("{}:{}: expected {} cells, found {}", path, line_no,
                                           names->size() + 1, cells.size()));
    }
    for (size_t i = 0; i < names->size(); ++i) {
      char* end = nullptr;
      const double v = std::strtod(cells[i + 1].c_str(), &end);
      (*columns)[i].push_back(end != cells[i + 1].c_str() && *end == '\0' ? v : kNaN);
    }
  }
  if (names->empty()) return Status::DataError(path + ": empty (expected a header and rows)");
  return Status::Ok();
}

// The metrics the per-seed table shows, one column each (every metric's spread is in the
// across-seed table, and every seed's own report has the rest).
constexpr const char* kPerSeedKeys[] = {"sharpe_ratio", "sortino_ratio", "annual_return",
                                        "max_drawdown", "psr",           "cum_returns_final",
                                        "num_trades",   "costs_paid"};

// One row per seed (so any number of seeds fits the page), the key metrics as columns;
// `runs` holds each one's "metrics" (summary "runs", or a portfolio's "symbols"), named
// `names` (`heading`, `first` name the table and its first column).
std::string PerSeedTable(const nlohmann::json& runs, const std::vector<std::string>& names,
                         const char* heading = "Each seed", const char* first = "seed") {
  std::vector<const MetricInfo*> rows;
  for (const char* key : kPerSeedKeys) {
    for (const MetricInfo& row : MetricTable()) {
      if (key == std::string(row.key)) rows.push_back(&row);
    }
  }
  std::string s =
      fmt::format("<h3>{}</h3>\n<table class=\"metrics seeds\"><tr><th>{}</th>", heading, first);
  for (const MetricInfo* row : rows) {
    s += fmt::format("<th title=\"{}\">{}</th>", row->key, row->label);
  }
  s += "</tr>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& r = runs[i];
    const std::string name =
        i < names.size() ? names[i] : "seed " + JsonText(r.value("seed", nlohmann::json(0)));
    s += "<tr><th>" + Esc(name) + "</th>";
    for (const MetricInfo* row : rows) {
      const bool has = r.contains("metrics") && r["metrics"].contains(row->key);
      s +=
          "<td>" + (has ? FormatValue(r["metrics"][row->key], ToKind(row->kind)) : "n/a") + "</td>";
    }
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string SeedsTableSection(const nlohmann::json& summary,
                              const std::vector<std::string>& names) {
  std::string s =
      "<h2>Across seeds</h2>\n<table class=\"metrics\"><tr><th></th><th>mean</th>"
      "<th>std</th><th>min</th><th>max</th></tr>\n";
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& across = summary.contains("across_seeds") ? summary["across_seeds"] : empty;
  for (const MetricInfo& row : MetricTable()) {
    if (!across.contains(row.key)) continue;
    const Kind kind = ToKind(row.kind);
    const nlohmann::json& a = across[row.key];
    auto get = [&](const char* k) {
      return a.contains(k) ? FormatValue(a[k], kind == Kind::kInteger ? Kind::kRatio : kind)
                           : std::string("n/a");
    };
    s += fmt::format(
        "<tr><th title=\"{}\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", row.key,
        row.label, get("mean"), get("std"), get("min"), get("max"));
  }
  s += "</table>\n" +
       PerSeedTable(summary.contains("runs") ? summary["runs"] : nlohmann::json::array(), names);
  if (summary.contains("deflated_sharpe_detail")) {
    const nlohmann::json& d = summary["deflated_sharpe_detail"];
    auto num = [](const nlohmann::json& o, const char* k) {
      return o.contains(k) ? FormatValue(o[k], Kind::kRatio) : std::string("n/a");
    };
    s += fmt::format(
        "<p class=\"note\">Seed-averaged daily returns (an equal-weight portfolio of the seeds): "
        "Sharpe ratio {}, probabilistic Sharpe ratio {}. The best seed ({}) has Sharpe ratio {}; "
        "its <b>deflated Sharpe ratio is {}</b> given {} trials (Bailey &amp; L&oacute;pez de "
        "Prado 2014): the best of that many trials without skill would be expected to show a "
        "Sharpe ratio of {}.</p>\n",
        summary.contains("metrics") ? num(summary["metrics"], "sharpe_ratio") : "n/a",
        num(summary, "psr"),
        d.contains("best_seed") ? Esc(JsonText(d["best_seed"])) : std::string("n/a"),
        num(d, "sharpe_ratio"), num(summary, "deflated_sharpe"),
        d.contains("trials") ? Esc(JsonText(d["trials"])) : std::string("?"),
        num(d, "sr0_annualised"));
  }
  return s + BenchmarkNotes(summary);
}

// What the equity chart calls its lines: the seeds' (default) or a portfolio's symbols'.
struct EquityLabels {
  const char* title = "Equity of every seed";
  const char* combined = "seed average";
  const char* each = "each seed";
};

std::string SeedsEquitySection(const std::vector<DailyRow>& average,
                               const std::vector<std::string>& names,
                               const std::vector<std::vector<double>>& columns,
                               const EquityLabels& labels = {}) {
  std::vector<double> avg, hold, flat;
  for (const DailyRow& r : average) {
    avg.push_back(r.strategy), hold.push_back(r.buy_and_hold), flat.push_back(r.flat);
  }
  std::vector<std::vector<double>> seeds;
  for (const auto& c : columns) seeds.push_back(GrowthOfOne(c));
  const std::vector<double> avg_g = GrowthOfOne(avg), hold_g = GrowthOfOne(hold),
                            flat_g = GrowthOfOne(flat);
  std::vector<const std::vector<double>*> all{&avg_g, &hold_g, &flat_g};
  for (const auto& g : seeds) all.push_back(&g);
  const auto [lo, hi] = YRange(all);
  const Frame f{0, std::max<double>(1, static_cast<double>(avg_g.size()) - 1), lo, hi};
  std::vector<std::pair<double, std::string>> ticks;
  const size_t stride = std::max<size_t>(1, (average.size() + 7) / 8);
  for (size_t k = 0; k < average.size(); k += stride) ticks.emplace_back(k + 1, average[k].date);
  auto growth_tick = [](double v, const std::vector<double>& t) { return MoneyTick(v, t); };
  std::string s = fmt::format(
                      "<h2>{}</h2>\n<p class=\"note\">Growth of 1 from the daily returns; thin "
                      "lines: {} ({}).</p>\n",
                      labels.title, labels.each, names.size()) +
                  Legend({{"strategy", labels.combined},
                          {"seed", labels.each},
                          {"hold", "buy-and-hold"},
                          {"price", "flat"}});
  s += f.Open(labels.title, growth_tick, ticks);
  for (const auto& g : seeds) s += Polyline(f, g, "series seed");
  s += Polyline(f, flat_g, "series price") + Polyline(f, hold_g, "series hold") +
       Polyline(f, avg_g, "series strategy");
  return s + "</svg>\n";
}

// The seeds' ensemble, evaluated as one policy (evalrun/ensemble.h): its key metrics beside
// the seed average's, and where its own report is.
std::string EnsembleSection(const nlohmann::json& summary) {
  if (!summary.contains("ensemble") || !summary["ensemble"].is_object()) return "";
  const nlohmann::json& e = summary["ensemble"];
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& em = e.contains("metrics") ? e["metrics"] : empty;
  const nlohmann::json& am = summary.contains("metrics") ? summary["metrics"] : empty;
  std::string s = fmt::format(
      "<h2>The seeds' ensemble ({})</h2>\n<p class=\"note\">One policy acting with the "
      "combined actions of every seed (<code>--ensemble {}</code>), evaluated as a run is; "
      "the seed average is the portfolio of the seeds traded separately.</p>\n"
      "<table class=\"metrics\"><tr><th></th><th>ensemble</th><th>seed average</th></tr>\n",
      Esc(StringOr(e, "method", "?")), Esc(StringOr(e, "method", "?")));
  for (const MetricInfo& row : MetricTable()) {
    if (!em.contains(row.key)) continue;
    const Kind kind = ToKind(row.kind);
    s += fmt::format("<tr><th title=\"{}\">{}</th><td>{}</td><td>{}</td></tr>\n", row.key,
                     row.label, FormatValue(em[row.key], kind),
                     am.contains(row.key) ? FormatValue(am[row.key], kind) : std::string("n/a"));
  }
  return s + "</table>\n<p class=\"note\">Its own report: RUN/" +
         Esc(StringOr(e, "eval_dir", "eval/?")) +
         "/report.html; its daily returns: ensemble_daily_returns.csv.</p>\n";
}

}  // namespace

Status WriteSeedsReport(const std::string& dir) {
  Result<nlohmann::json> summary = ReadSummaryJson(dir);
  if (!summary.ok()) return summary.status();
  Result<std::vector<DailyRow>> average = ReadDailyReturnsCsv(dir + "/" + kDailyReturnsFile);
  if (!average.ok()) return average.status();
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  RLT_RETURN_IF_ERROR(ReadSeedsDaily(dir + "/seeds_daily_returns.csv", &names, &columns));
  const nlohmann::json& j = *summary;
  const bool in_sample = BoolOr(j, "in_sample", false);
  const nlohmann::json range = j.contains("range") ? j["range"] : nlohmann::json::object();
  const std::string title = fmt::format(
      "{} \u00b7 {} seeds \u00b7 {} ({} to {})", StringOr(j, "run_dir", "?"), names.size(),
      StringOr(range, "name", "?"), StringOr(range, "first", "?"), StringOr(range, "last", "?"));
  std::string s = PageHead("rltrade report", "rltrade evaluation across seeds", title,
                           "polyline.seed{stroke:#7f9cc9;stroke-width:.8;opacity:.75}"
                           ".swatch.seed{background:#7f9cc9}"
                           "table.seeds td{min-width:90px}table.seeds th{font-size:13px}",
                           in_sample);
  s += SeedsTableSection(j, names) + SeedsEquitySection(*average, names, columns);
  s += EnsembleSection(j);
  s += "<p class=\"note\">Each seed's own report: RUN/seed_&lt;seed&gt;/eval/&lt;range&gt;/"
       "report.html.</p>\n";
  return WriteFileAtomic(dir + "/" + kReportFile, s + "</body></html>\n");
}

// ---------------------------------------------------------------- walk-forward

namespace {

// One row of a walk-forward daily_returns.csv (evalrun/walkforward.h).
struct FoldDailyRow {
  std::string date;
  double strategy, buy_and_hold, flat;
  int fold;
};

constexpr const char* kFoldDailyHeader = "date,return,buy_and_hold,flat,fold";

Result<std::vector<FoldDailyRow>> ReadFoldDaily(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  std::string line;
  std::vector<FoldDailyRow> rows;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (line_no == 1) {
      if (line != kFoldDailyHeader) {
        return Status::DataError(fmt::format("{}:1: expected the header '{}', found '{:.80}'", path,
                                             kFoldDailyHeader, line));
      }
      continue;
    }
    const std::vector<std::string> cells = SplitCsvLine(line);
    if (cells.size() != 5) {
      return Status::DataError(fmt::format("{}:{}: expected 5 cells ({}), found {}", path, line_no,
                                           kFoldDailyHeader, cells.size()));
    }
    FoldDailyRow r{cells[0], kNaN, kNaN, kNaN, 0};
    double* values[3] = {&r.strategy, &r.buy_and_hold, &r.flat};
    for (int i = 0; i < 3; ++i) {
      char* end = nullptr;
      const double v = std::strtod(cells[i + 1].c_str(), &end);
      *values[i] = end != cells[i + 1].c_str() && *end == '\0' ? v : kNaN;
    }
    char* end = nullptr;
    r.fold = static_cast<int>(std::strtol(cells[4].c_str(), &end, 10));
    if (end == cells[4].c_str() || *end != '\0' || r.fold < 1) {
      return Status::DataError(
          fmt::format("{}:{}: fold '{:.20}' must be a number >= 1", path, line_no, cells[4]));
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return Status::DataError(path + ": no rows (expected one per session)");
  return rows;
}

// The concatenated metrics (return metrics only) against flat and buy-and-hold.
std::string WalkforwardMetricsSection(
    const nlohmann::json& summary,
    const char* heading = "Out-of-sample metrics (folds concatenated)") {
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& m = summary.contains("metrics") ? summary["metrics"] : empty;
  const nlohmann::json& b = summary.contains("benchmarks") ? summary["benchmarks"] : empty;
  const nlohmann::json& flat = b.contains("flat") ? b["flat"] : empty;
  const nlohmann::json& hold = b.contains("buy_and_hold") ? b["buy_and_hold"] : empty;
  std::string s = fmt::format(
      "<h2>{}</h2>\n<table class=\"metrics\"><tr><th></th><th>strategy</th><th>flat</th>"
      "<th>buy-and-hold</th></tr>\n",
      heading);
  for (const MetricInfo& row : MetricTable()) {
    if (!m.is_object() || !m.contains(row.key)) continue;
    const Kind kind = ToKind(row.kind);
    auto cell = [&](const nlohmann::json& o) {
      return o.is_object() && o.contains(row.key) ? FormatValue(o[row.key], kind)
                                                  : std::string("n/a");
    };
    s += fmt::format("<tr><th title=\"{}\">{}</th><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     row.key, row.label, cell(m), cell(flat), cell(hold));
  }
  return s + "</table>\n" + BenchmarkNotes(summary);
}

// Growth of 1 of the strategy and the benchmarks, one point per session, with each fold's
// test window shaded (alternating), bounded by a line at its first session and labelled.
std::string WalkforwardEquitySection(const std::vector<FoldDailyRow>& rows) {
  std::vector<double> strategy, hold, flat;
  for (const FoldDailyRow& r : rows) {
    strategy.push_back(r.strategy), hold.push_back(r.buy_and_hold), flat.push_back(r.flat);
  }
  // GrowthOfOne starts at 1 before the first session; point i + 1 is after session i.
  std::vector<double> g_strategy = GrowthOfOne(strategy), g_hold = GrowthOfOne(hold),
                      g_flat = GrowthOfOne(flat);
  for (auto* g : {&g_strategy, &g_hold, &g_flat}) g->erase(g->begin());
  const auto [lo, hi] = YRange({&g_strategy, &g_hold, &g_flat});
  const double n = static_cast<double>(rows.size());
  const Frame f{-0.5, n - 0.5, lo, hi};
  // Folds in order of appearance: [first row, last row].
  std::vector<std::pair<size_t, size_t>> spans;
  std::vector<int> numbers;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == 0 || rows[i].fold != rows[i - 1].fold) {
      spans.emplace_back(i, i);
      numbers.push_back(rows[i].fold);
    }
    spans.back().second = i;
  }
  std::vector<std::pair<double, std::string>> ticks;
  for (const auto& [first, last] : spans) ticks.emplace_back(first, rows[first].date);
  std::string s =
      "<h2>Equity</h2>\n<p class=\"note\">Growth of 1 from the daily returns of the folds' test "
      "windows, concatenated in time order; each shaded band is one fold's test window (its "
      "first session on the axis).</p>\n" +
      Legend({{"strategy", "strategy"}, {"hold", "buy-and-hold"}, {"price", "flat"}});
  s += f.Open("walk-forward equity", MoneyTick, ticks);
  for (size_t k = 0; k < spans.size(); ++k) {
    const auto [first, last] = spans[k];
    const double x0 = f.X(first - 0.5), x1 = f.X(last + 0.5);
    s += fmt::format(
        "<rect class=\"fold-band {}\" data-fold=\"{}\" data-first=\"{}\" data-last=\"{}\" "
        "x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"><title>fold {}: {} to {}, {} "
        "sessions</title></rect>\n",
        k % 2 == 0 ? "even" : "odd", numbers[k], Esc(rows[first].date), Esc(rows[last].date), x0,
        f.top, x1 - x0, f.height - f.top - f.bottom, numbers[k], Esc(rows[first].date),
        Esc(rows[last].date), last - first + 1);
    s += fmt::format(
        "<line class=\"fold-boundary\" data-fold=\"{}\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" "
        "y2=\"{}\"/><text class=\"fold-label\" x=\"{:.1f}\" y=\"{}\">fold {}</text>\n",
        numbers[k], x0, x0, f.top, f.height - f.bottom, (x0 + x1) / 2, f.top + 14, numbers[k]);
  }
  s += Polyline(f, g_flat, "series price") + Polyline(f, g_hold, "series hold") +
       Polyline(f, g_strategy, "series strategy");
  return s + "</svg>\n";
}

std::string WalkforwardFoldsSection(const nlohmann::json& summary) {
  std::string s =
      "<h2>Folds</h2>\n<p class=\"note\">Windows with their sessions; the fold's test-window "
      "metrics, and the benchmarks' cumulative returns on the same window.</p>\n"
      "<table class=\"folds\"><tr><th>fold</th><th>train</th><th>test</th><th>Sharpe</th>"
      "<th>return</th><th>max drawdown</th><th>buy-and-hold</th><th>flat</th>"
      "<th>run directory</th></tr>\n";
  if (!summary.contains("folds") || !summary["folds"].is_array()) return s + "</table>\n";
  const nlohmann::json empty = nlohmann::json::object();
  auto text = [](const nlohmann::json& o, const char* key) {
    if (!o.is_object() || !o.contains(key)) return std::string("?");
    return Esc(o[key].is_string() ? o[key].get<std::string>() : JsonText(o[key]));
  };
  auto metric = [](const nlohmann::json& o, const char* key, Kind kind) {
    return o.is_object() && o.contains(key) ? FormatValue(o[key], kind) : std::string("n/a");
  };
  for (const nlohmann::json& f : summary["folds"]) {
    const nlohmann::json& train = f.contains("train") ? f["train"] : empty;
    const nlohmann::json& test = f.contains("test") ? f["test"] : empty;
    const nlohmann::json& m = f.contains("metrics") ? f["metrics"] : empty;
    const nlohmann::json& b = f.contains("benchmarks") ? f["benchmarks"] : empty;
    const nlohmann::json& bf = b.is_object() && b.contains("flat") ? b["flat"] : empty;
    const nlohmann::json& bh =
        b.is_object() && b.contains("buy_and_hold") ? b["buy_and_hold"] : empty;
    s += fmt::format(
        "<tr class=\"fold\" data-fold=\"{0}\"><th>fold {0}</th><td>{1} to {2} ({3})</td>"
        "<td>{4} to {5} ({6})</td><td>{7}</td><td>{8}</td><td>{9}</td><td>{10}</td><td>{11}</td>"
        "<td class=\"path\">{12}</td></tr>\n",
        text(f, "fold"), text(train, "first"), text(train, "last"), text(train, "sessions"),
        text(test, "first"), text(test, "last"), text(test, "sessions"),
        metric(m, "sharpe_ratio", Kind::kRatio), metric(m, "cum_returns_final", Kind::kPercent),
        metric(m, "max_drawdown", Kind::kPercent), metric(bh, "cum_returns_final", Kind::kPercent),
        metric(bf, "cum_returns_final", Kind::kPercent), text(f, "run_dir"));
  }
  return s + "</table>\n";
}

constexpr const char* kWalkforwardStyle =
    ".fold-band.even{fill:rgba(90,110,160,.07)}.fold-band.odd{fill:rgba(90,110,160,.15)}"
    ".fold-boundary{stroke:#7a86a8;stroke-dasharray:4 3}"
    ".fold-label{text-anchor:middle;fill:#3a4466;font-weight:600}"
    "table.folds th,table.folds td{white-space:nowrap;font-size:13px}"
    "td.path{text-align:left;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}";

}  // namespace

Status WriteWalkforwardReport(const std::string& dir) {
  Result<nlohmann::json> summary = ReadSummaryJson(dir);
  if (!summary.ok()) return summary.status();
  Result<std::vector<FoldDailyRow>> rows = ReadFoldDaily(dir + "/" + kDailyReturnsFile);
  if (!rows.ok()) return rows.status();
  const nlohmann::json& j = *summary;
  const nlohmann::json range =
      j.contains("range") && j["range"].is_object() ? j["range"] : nlohmann::json::object();
  const int folds =
      j.contains("num_folds") && j["num_folds"].is_number_integer() ? j["num_folds"].get<int>() : 0;
  const std::string title = fmt::format(
      "{} \u00b7 {} folds, {} \u00b7 out of sample {} to {}", StringOr(j, "config", "?"), folds,
      StringOr(j, "mode", "?"), StringOr(range, "first", "?"), StringOr(range, "last", "?"));
  std::string s = PageHead("rltrade walk-forward report", "rltrade walk-forward report", title,
                           kWalkforwardStyle, /*in_sample=*/false);
  s += "<p class=\"note\">Each fold trains on the sessions before its test window and is "
       "evaluated on that window only; the windows follow one another, so the concatenated "
       "series is out of sample throughout. Each fold's own report: "
       "OUT/fold_&lt;k&gt;/eval/test/report.html.</p>\n";
  if (j.contains("notes") && j["notes"].is_array() && !j["notes"].empty()) {
    s += "<ul class=\"note\">";
    for (const nlohmann::json& n : j["notes"]) {
      s += "<li>" + Esc(n.is_string() ? n.get<std::string>() : JsonText(n)) + "</li>";
    }
    s += "</ul>\n";
  }
  s += WalkforwardMetricsSection(j) + WalkforwardEquitySection(*rows) + WalkforwardFoldsSection(j);
  return WriteFileAtomic(dir + "/" + kReportFile, s + "</body></html>\n");
}

// ---------------------------------------------------------------- across symbols

Status WriteSymbolsReport(const std::string& dir) {
  Result<nlohmann::json> summary = ReadSummaryJson(dir);
  if (!summary.ok()) return summary.status();
  Result<std::vector<DailyRow>> portfolio = ReadDailyReturnsCsv(dir + "/" + kDailyReturnsFile);
  if (!portfolio.ok()) return portfolio.status();
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  RLT_RETURN_IF_ERROR(ReadSeedsDaily(dir + "/symbols_daily_returns.csv", &names, &columns));
  const nlohmann::json& j = *summary;
  const nlohmann::json range = j.contains("range") ? j["range"] : nlohmann::json::object();
  const std::string title = fmt::format(
      "{} \u00b7 {} symbols \u00b7 {} ({} to {})", StringOr(j, "run_dir", "?"), names.size(),
      StringOr(range, "name", "?"), StringOr(range, "first", "?"), StringOr(range, "last", "?"));
  std::string s = PageHead("rltrade report", "rltrade evaluation of several symbols", title,
                           "polyline.seed{stroke:#7f9cc9;stroke-width:.8;opacity:.75}"
                           ".swatch.seed{background:#7f9cc9}"
                           "table.seeds td{min-width:90px}table.seeds th{font-size:13px}",
                           BoolOr(j, "in_sample", false));
  s += WalkforwardMetricsSection(j, "The equal-weight portfolio of the symbols");
  s += PerSeedTable(j.contains("symbols") ? j["symbols"] : nlohmann::json::array(), names,
                    "Each symbol", "symbol");
  EquityLabels labels;
  labels.title = "Equity of every symbol";
  labels.combined = "equal-weight portfolio";
  labels.each = "each symbol";
  s += SeedsEquitySection(*portfolio, names, columns, labels);
  s += "<p class=\"note\">The portfolio holds 1/N of its capital in each symbol's strategy, "
       "rebalanced daily. Each symbol's own report: "
       "RUN/eval/&lt;range&gt;.symbol-&lt;symbol&gt;/report.html.</p>\n";
  return WriteFileAtomic(dir + "/" + kReportFile, s + "</body></html>\n");
}

}  // namespace rlt::eval
