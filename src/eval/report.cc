// rltrade eval: report.html from an evaluation directory (see report.h).
//
// Reading (the eval/outputs.h files → plain structs), then one function per section of the
// page. Charts are SVG with a fixed 1160-unit-wide viewBox scaled to the page width; a
// Frame maps data coordinates to pixels and draws the axes.
#include "eval/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/json_text.h"
#include "eval/eval_files.h"
#include "eval/metrics_table.h"
#include "eval/outputs.h"
#include "eval/report_html.h"
#include "runlog/atomic_dir.h"

namespace rlt::eval {
namespace {

using namespace html;  // NOLINT(google-build-using-namespace): the page's shared pieces
using EvalData = EvalFiles;
using DailyRow = DailyReturnRow;

// X ticks at session starts: about `count` dates evenly spread over the bars.
std::vector<std::pair<double, std::string>> SessionTicks(const std::vector<EquityRow>& eq,
                                                         int count = 8) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < eq.size(); ++i) {
    if (i == 0 || eq[i].session_date != eq[i - 1].session_date) starts.push_back(i);
  }
  std::vector<std::pair<double, std::string>> ticks;
  const size_t stride = std::max<size_t>(1, (starts.size() + count - 1) / count);
  for (size_t k = 0; k < starts.size(); k += stride) {
    ticks.emplace_back(starts[k], eq[starts[k]].session_date);
  }
  return ticks;
}

std::string EquitySection(const EvalData& d) {
  std::vector<double> strategy, hold;
  for (const auto& r : d.equity) strategy.push_back(r.net_worth), hold.push_back(r.buy_and_hold);
  const auto [lo, hi] = YRange({&strategy, &hold});
  const Frame f{0, std::max<double>(1, d.equity.size() - 1), lo, hi};
  std::string s =
      "<h2>Equity</h2>\n" + Legend({{"strategy", "strategy net worth"}, {"hold", "buy-and-hold"}});
  s += f.Open("equity curve", MoneyTick, SessionTicks(d.equity));
  s += Polyline(f, hold, "series hold") + Polyline(f, strategy, "series strategy");
  return s + "</svg>\n";
}

std::vector<double> Drawdown(const std::vector<double>& worth) {
  std::vector<double> dd;
  double peak = -INFINITY;
  for (double w : worth) {
    if (std::isfinite(w)) peak = std::max(peak, w);
    dd.push_back(std::isfinite(w) && peak > 0 ? w / peak - 1.0 : kNaN);
  }
  return dd;
}

std::string DrawdownSection(const EvalData& d) {
  std::vector<double> strategy, hold;
  for (const auto& r : d.equity) strategy.push_back(r.net_worth), hold.push_back(r.buy_and_hold);
  strategy = Drawdown(strategy), hold = Drawdown(hold);
  auto [lo, hi] = YRange({&strategy, &hold});
  const Frame f{0, std::max<double>(1, d.equity.size() - 1), std::min(lo, -1e-4), 0.0, 1160, 240};
  std::string s =
      "<h2>Drawdown</h2>\n" + Legend({{"strategy", "strategy"}, {"hold", "buy-and-hold"}});
  s += f.Open("drawdown", PercentTick, SessionTicks(d.equity));
  std::string area = fmt::format("{:.1f},{:.1f} ", f.X(0), f.Y(0));
  size_t last = 0;
  for (size_t i : Downsample(strategy)) {
    if (!std::isfinite(strategy[i])) continue;
    area += fmt::format("{:.1f},{:.1f} ", f.X(i), f.Y(strategy[i]));
    last = i;
  }
  area += fmt::format("{:.1f},{:.1f}", f.X(last), f.Y(0));
  s += fmt::format("<polygon class=\"drawdown-area\" points=\"{}\"/>\n", area);
  s += Polyline(f, hold, "series hold") + Polyline(f, strategy, "series strategy");
  return s + "</svg>\n";
}

std::string HistogramSection(const EvalData& d) {
  std::vector<double> r;
  for (const auto& row : d.daily) {
    if (std::isfinite(row.strategy)) r.push_back(row.strategy);
  }
  std::string s = "<h2>Daily returns</h2>\n";
  if (r.empty()) return s + "<p class=\"note\">No daily returns.</p>\n";
  auto [lo, hi] = YRange({&r}, 0.0);
  const int bins = std::clamp(static_cast<int>(std::ceil(std::sqrt(r.size()))) * 2, 5, 40);
  const double width = (hi - lo) / bins;
  std::vector<int> counts(bins, 0);
  for (double x : r) counts[std::clamp(static_cast<int>((x - lo) / width), 0, bins - 1)]++;
  const int top = *std::max_element(counts.begin(), counts.end());
  Frame f{lo, hi, 0.0, top * 1.08, 1160, 260};
  f.y_min_step = 1;
  std::vector<std::pair<double, std::string>> x_ticks;
  const std::vector<double> ticks = NiceTicks(lo, hi, 8);
  for (double t : ticks) x_ticks.emplace_back(t, Percent(t, DecimalsFor(ticks, 100.0)));
  s += fmt::format("<p class=\"note\">{} sessions, {} bins of {}.</p>\n", r.size(), bins,
                   Percent(width, 3));
  s += f.Open(
      "daily return histogram", [](double v, auto&) { return Grouped(v, 0); }, x_ticks);
  for (int b = 0; b < bins; ++b) {
    const double x0 = lo + b * width;
    s += fmt::format(
        "<rect class=\"hist-bar {}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
        "height=\"{:.1f}\"><title>{} to {}: {}</title></rect>\n",
        x0 + width / 2 < 0 ? "neg" : "pos", f.X(x0) + 0.5, f.Y(counts[b]),
        std::max(0.5, f.X(x0 + width) - f.X(x0) - 1), f.Y(0) - f.Y(counts[b]), Percent(x0),
        Percent(x0 + width), counts[b]);
  }
  if (lo < 0 && hi > 0) {
    s += fmt::format("<line class=\"zero\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\"/>\n",
                     f.X(0), f.top, f.height - f.bottom);
  }
  return s + "</svg>\n";
}

// A background colour for a return: green for gains, red for losses, stronger with size
// (full strength at ±`full`).
std::string Tint(double r, double full) {
  if (!std::isfinite(r)) return "transparent";
  const double a = std::min(1.0, std::fabs(r) / full) * 0.55 + 0.05;
  return r >= 0 ? fmt::format("rgba(22,150,70,{:.2f})", a)
                : fmt::format("rgba(210,40,40,{:.2f})", a);
}

std::string MonthlySection(const EvalData& d) {
  // (year, month 1..12) → ∏(1 + r); month 0 holds the year.
  std::map<std::string, std::map<int, double>> growth;
  for (const auto& row : d.daily) {
    if (row.date.size() < 7 || !std::isfinite(row.strategy)) continue;
    const std::string year = row.date.substr(0, 4);
    const int month = std::atoi(row.date.substr(5, 2).c_str());
    for (int key : {month, 0}) {
      auto [it, inserted] = growth[year].try_emplace(key, 1.0);
      it->second *= 1.0 + row.strategy;
    }
  }
  std::string s =
      "<h2>Monthly returns</h2>\n<p class=\"note\">Daily returns compounded per calendar "
      "month, &prod;(1 + r) &minus; 1.</p>\n<table class=\"monthly\"><tr><th>Year</th>";
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (const char* m : kMonths) s += fmt::format("<th>{}</th>", m);
  s += "<th>Year</th></tr>\n";
  for (const auto& [year, months] : growth) {
    s += fmt::format("<tr><th>{}</th>", Esc(year));
    for (int m = 1; m <= 13; ++m) {
      const int key = m == 13 ? 0 : m;
      auto it = months.find(key);
      if (it == months.end()) {
        s += "<td></td>";
        continue;
      }
      const double r = it->second - 1.0;
      s += fmt::format(
          "<td class=\"month\" data-month=\"{}-{:02d}\" data-return=\"{:.10g}\" "
          "style=\"background:{}\">{}</td>",
          Esc(year), key, r, Tint(r, key == 0 ? 0.3 : 0.1), Percent(r));
    }
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

// The sessions shown in detail: best, worst (strategy daily return), last.
std::vector<std::pair<std::string, std::string>> ChosenSessions(const EvalData& d) {
  std::vector<std::pair<std::string, std::string>> chosen;
  auto add = [&](const std::string& date, const std::string& why) {
    for (auto& [existing, reasons] : chosen) {
      if (existing == date) {
        reasons += ", " + why;
        return;
      }
    }
    chosen.emplace_back(date, why);
  };
  const DailyRow* best = nullptr;
  const DailyRow* worst = nullptr;
  for (const auto& row : d.daily) {
    if (!std::isfinite(row.strategy)) continue;
    if (!best || row.strategy > best->strategy) best = &row;
    if (!worst || row.strategy < worst->strategy) worst = &row;
  }
  if (best) add(best->date, "best session");
  if (worst) add(worst->date, "worst session");
  if (!d.equity.empty()) add(d.equity.back().session_date, "last session");
  return chosen;
}

double DailyReturnOf(const EvalData& d, const std::string& date) {
  for (const auto& row : d.daily) {
    if (row.date == date) return row.strategy;
  }
  return kNaN;
}

// "2024-01-02T09:31:00-05:00" → "09:31".
std::string ClockOf(const std::string& timestamp) {
  return timestamp.size() >= 16 ? timestamp.substr(11, 5) : timestamp;
}

std::string SessionChart(const EvalData& d, const std::string& date, const std::string& why) {
  std::vector<const EquityRow*> bars;
  for (const auto& r : d.equity) {
    if (r.session_date == date) bars.push_back(&r);
  }
  std::string s = fmt::format("<h3>{} &middot; {} &middot; strategy {}</h3>\n", Esc(date), Esc(why),
                              Percent(DailyReturnOf(d, date)));
  if (bars.empty()) return s + "<p class=\"note\">No bars for this session in equity.csv.</p>\n";
  std::vector<double> close;
  for (const auto* b : bars) close.push_back(b->close);
  std::vector<const TradeRow*> trades;
  for (const auto& t : d.trades) {
    if (t.time.compare(0, 10, date) == 0) trades.push_back(&t);
  }
  std::vector<double> prices = close;
  for (const auto* t : trades) prices.push_back(t->price);
  auto [lo, hi] = YRange({&prices}, 0.12);
  const Frame f{-0.5, bars.size() - 0.5, lo, hi, 1160, 280};
  std::vector<std::pair<double, std::string>> x_ticks;
  const size_t stride = std::max<size_t>(1, bars.size() / 10);
  for (size_t i = 0; i < bars.size(); i += stride)
    x_ticks.emplace_back(i, ClockOf(bars[i]->timestamp));
  s += f.Open("session " + date, MoneyTick, x_ticks);
  // Position shading: one rect per run of bars with the same sign of position.
  for (size_t i = 0; i < bars.size();) {
    const double p = bars[i]->position;
    const int sign = p > 0 ? 1 : (p < 0 ? -1 : 0);
    size_t j = i + 1;
    while (j < bars.size() &&
           (bars[j]->position > 0 ? 1 : (bars[j]->position < 0 ? -1 : 0)) == sign)
      ++j;
    if (sign != 0) {
      s +=
          fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"/>\n",
                      sign > 0 ? "pos-long" : "pos-short", f.X(i - 0.5), f.top,
                      f.X(j - 0.5) - f.X(i - 0.5), f.height - f.top - f.bottom);
    }
    i = j;
  }
  s += Polyline(f, close, "series price");
  for (const auto* t : trades) {
    // The bar the fill belongs to: the first bar at or after its time (same UTC offset
    // within a session, so ISO strings compare in time order).
    size_t i = 0;
    while (i + 1 < bars.size() && bars[i]->timestamp < t->time) ++i;
    const bool buy = t->side == "BUY";
    const double x = f.X(i), y = f.Y(t->price);
    s += fmt::format(
        "<path class=\"trade-marker {}\" d=\"{}\"><title>{} {} @ {} ({}), cost {}, position "
        "after {}</title></path>\n",
        buy ? "buy" : "sell",
        buy ? fmt::format("M{:.1f},{:.1f}l-6,11h12z", x, y + 3)
            : fmt::format("M{:.1f},{:.1f}l-6,-11h12z", x, y - 3),
        Esc(t->side), Grouped(t->quantity, 0), Grouped(t->price, 2), Esc(t->time),
        Grouped(t->cost, 2), Grouped(t->position_after, 0));
  }
  return s + "</svg>\n";
}

std::string SessionsSection(const EvalData& d) {
  std::string s =
      "<h2>Sessions</h2>\n<p class=\"note\">The best and the worst session by the strategy's "
      "daily return, and the last session. Close per bar; green background: long, red: "
      "short; &#9650; buy, &#9660; sell (fills from trades.csv).</p>\n";
  s += Legend({{"price", "close"}, {"pos-long", "long"}, {"pos-short", "short"}});
  for (const auto& [date, why] : ChosenSessions(d)) s += SessionChart(d, date, why);
  return s;
}

// summary[key] when it is a string (a bool for BoolOr), else `fallback`: summary.json
// is input, and nlohmann's value() throws on a null or a value of another type.
// Net and gross P&L after the costs paid (summary "pnl": per walk net, costs and gross =
// net + costs); "" when the summary has none (written before it was recorded).
std::string PnlRows(const nlohmann::json& summary) {
  if (!summary.contains("pnl") || !summary["pnl"].is_object()) return "";
  const nlohmann::json& p = summary["pnl"];
  std::string s;
  const std::pair<const char*, const char*> rows[] = {
      {"net", "Net P&amp;L (after costs)"}, {"gross", "Gross P&amp;L (before costs: net + costs)"}};
  for (const auto& [key, label] : rows) {
    auto cell = [&p, key = key](const char* who) {
      const bool has = p.contains(who) && p[who].is_object() && p[who].contains(key);
      return has ? FormatValue(p[who][key], Kind::kMoney) : std::string("n/a");
    };
    s += fmt::format("<tr><th title=\"pnl.{}\">{}</th><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     key, label, cell("strategy"), cell("flat"), cell("buy_and_hold"));
  }
  return s;
}

std::string MetricsSection(const nlohmann::json& summary, bool in_sample, size_t fills) {
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& m = summary.contains("metrics") ? summary["metrics"] : empty;
  const nlohmann::json& b = summary.contains("benchmarks") ? summary["benchmarks"] : empty;
  const nlohmann::json& flat = b.contains("flat") ? b["flat"] : empty;
  const nlohmann::json& hold = b.contains("buy_and_hold") ? b["buy_and_hold"] : empty;
  auto cell = [](const nlohmann::json& obj, const char* key, Kind kind) {
    return obj.is_object() && obj.contains(key) ? FormatValue(obj[key], kind) : std::string("n/a");
  };
  std::string s =
      fmt::format("<h2>Metrics{}</h2>\n", in_sample ? " <span class=\"tag\">IN-SAMPLE</span>" : "");
  const std::string policy = StringOr(summary, "policy", "trained");
  s += fmt::format(
      "<table class=\"metrics\"><tr><th></th><th>strategy ({})</th><th>flat</th>"
      "<th>buy-and-hold</th></tr>\n",
      Esc(policy));
  for (const MetricInfo& row : MetricTable()) {
    const Kind kind = ToKind(row.kind);
    s += fmt::format("<tr><th title=\"{}\">{}</th><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     row.key, row.label, cell(m, row.key, kind), cell(flat, row.key, kind),
                     cell(hold, row.key, kind));
    if (std::string(row.key) == "num_trades") {
      // Fills next to round trips: summary "fills", else the strategy's trades.csv rows.
      const nlohmann::json& f = summary.contains("fills") ? summary["fills"] : empty;
      s += fmt::format(
          "<tr><th title=\"fills\">Fills (orders executed)</th><td>{}</td><td>{}</td>"
          "<td>{}</td></tr>\n",
          f.is_object() && f.contains("strategy") ? cell(f, "strategy", Kind::kInteger)
                                                  : Grouped(static_cast<double>(fills), 0),
          cell(f, "flat", Kind::kInteger), cell(f, "buy_and_hold", Kind::kInteger));
    }
    if (std::string(row.key) == "costs_paid") s += PnlRows(summary);
  }
  return s + "</table>\n" + BenchmarkNotes(summary);
}

// The checkpoint selected on validation (summary "selection", present when the evaluated
// checkpoint is the run's best/): a note with the selected step and score, the trials and
// the deflated Sharpe ratio, and the validation curve (score per evaluation against env
// steps) with the selected point circled. "" without a selection.
std::string SelectionSection(const nlohmann::json& summary) {
  if (!summary.is_object() || !summary.contains("selection") || !summary["selection"].is_object()) {
    return "";
  }
  const nlohmann::json& sel = summary["selection"];
  auto number = [](const nlohmann::json& obj, const char* key) {
    return obj.contains(key) && obj[key].is_number() ? obj[key].get<double>() : kNaN;
  };
  const std::string metric = StringOr(sel, "metric", "score");
  std::string s = "<h2>Selection on validation</h2>\n";
  s += fmt::format(
      "<p class=\"note\">Checkpoint best/: validation {} {} at step {}, the best of {} "
      "evaluations ({} trials). Deflated Sharpe ratio of this range given those trials: {}.</p>\n",
      Esc(metric), FormatValue(sel.value("best_score", nlohmann::json()), Kind::kRatio),
      FormatValue(sel.value("best_step", nlohmann::json()), Kind::kInteger),
      FormatValue(sel.value("evaluations", nlohmann::json()), Kind::kInteger),
      FormatValue(sel.value("trials", nlohmann::json()), Kind::kInteger),
      FormatValue(sel.value("deflated_sharpe", nlohmann::json()), Kind::kRatio));
  std::vector<double> steps, scores;
  if (sel.contains("curve") && sel["curve"].is_array()) {
    for (const nlohmann::json& p : sel["curve"]) {
      if (!p.is_object() || !std::isfinite(number(p, "step"))) continue;
      steps.push_back(number(p, "step"));
      scores.push_back(number(p, "score"));
    }
  }
  if (steps.empty()) return s;
  const auto [lo, hi] = YRange({&scores});
  const Frame f{steps.front(), std::max(steps.back(), steps.front() + 1), lo, hi, 1160, 240};
  std::vector<std::pair<double, std::string>> ticks;
  for (double t : NiceTicks(f.x_lo, f.x_hi, 8)) ticks.emplace_back(t, Grouped(t, 0));
  s += f.Open(
      "validation " + metric + " per evaluation",
      [](double v, const auto& t) { return Grouped(v, DecimalsFor(t, 1.0)); }, ticks);
  std::string points;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (std::isfinite(scores[i]))
      points += fmt::format("{:.1f},{:.1f} ", f.X(steps[i]), f.Y(scores[i]));
  }
  s += fmt::format("<polyline class=\"series strategy\" points=\"{}\"/>\n", points);
  const double best_step = number(sel, "best_step"), best = number(sel, "best_score");
  if (std::isfinite(best_step) && std::isfinite(best)) {
    s += fmt::format(
        "<circle class=\"selected-point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\"><title>selected: "
        "step {}</title></circle>\n",
        f.X(best_step), f.Y(best), Grouped(best_step, 0));
  }
  return s + "</svg>\n";
}

std::string SettingsSection(const nlohmann::json& summary) {
  std::string s = "<h2>Settings</h2>\n<table class=\"settings\">\n";
  if (summary.contains("settings") && summary["settings"].is_object()) {
    const std::string source = StringOr(summary["settings"], "data.source", "");
    for (const auto& [key, value] : summary["settings"].items()) {
      if (key.rfind("data.", 0) == 0 && !source.empty() &&
          !DataSettingApplies(source, key.substr(5))) {
        continue;
      }
      s += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", Esc(key),
                       Esc(value.is_string() ? value.get<std::string>() : JsonText(value)));
    }
  }
  return s + "</table>\n";
}

std::string RenderPage(const EvalData& d) {
  const nlohmann::json& j = d.summary;
  const bool in_sample = BoolOr(j, "in_sample", false);
  const nlohmann::json range =
      j.is_object() && j.contains("range") ? j["range"] : nlohmann::json::object();
  auto text = [](const nlohmann::json& obj, const char* key) {
    if (!obj.is_object() || !obj.contains(key)) return std::string("?");
    return obj[key].is_string() ? obj[key].get<std::string>() : JsonText(obj[key]);
  };
  std::string title = fmt::format("{} \u00b7 {} ({} to {})", text(j, "run_dir"),
                                  text(range, "name"), text(range, "first"), text(range, "last"));
  // What was evaluated: the policy (and checkpoint) and the data.
  title += " \u00b7 policy " + StringOr(j, "policy", "trained");
  if (j.is_object() && j.contains("checkpoint") && j["checkpoint"].is_string()) {
    title += " (checkpoint " + j["checkpoint"].get<std::string>() + ")";
  }
  if (j.is_object() && j.contains("data") && j["data"].is_object()) {
    const nlohmann::json& data = j["data"];
    title += " \u00b7 data " + (StringOr(data, "source", "") == "file"
                                    ? StringOr(data, "file", "?")
                                    : "synthetic (seed " + text(data, "seed") + ")");
  }
  std::string s = PageHead("rltrade report", "rltrade evaluation report", title, "", in_sample);
  const nlohmann::json metrics =
      j.is_object() && j.contains("metrics") ? j["metrics"] : nlohmann::json::object();
  s += fmt::format(
      "<p class=\"note\">{} bars, {} sessions. Fills (orders executed, trades.csv, each "
      "session's closing flatten included): {}. Round trips (flat to flat): {}.</p>\n",
      d.equity.size(), d.daily.size(), d.trades.size(),
      metrics.is_object() && metrics.contains("num_trades")
          ? FormatValue(metrics["num_trades"], Kind::kInteger)
          : std::string("n/a"));
  s += MetricsSection(j, in_sample, d.trades.size()) + EquitySection(d) + DrawdownSection(d) +
       HistogramSection(d) + MonthlySection(d) + SessionsSection(d) + SelectionSection(j) +
       SettingsSection(j);
  return s + "</body></html>\n";
}

}  // namespace

bool DataSettingApplies(const std::string& source, const std::string& key) {
  static const char* const kSynthetic[] = {"days", "bar_minutes", "seed", "signal_to_noise"};
  static const char* const kFile[] = {"file", "timezone", "symbol", "on_bad_rows", "session"};
  for (const char* k : kSynthetic) {
    if (key == k) return source == "synthetic";
  }
  for (const char* k : kFile) {
    if (key == k) return source == "file";
  }
  return true;
}

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Status WriteReport(const std::string& eval_dir) {
  Result<EvalFiles> data = ReadEvalFiles(eval_dir);
  if (!data.ok()) return data.status();
  // The IN-SAMPLE banner must not vanish because the flag has the wrong type.
  if (data->summary.contains("in_sample") && !data->summary["in_sample"].is_boolean()) {
    return Status::DataError(eval_dir + "/" + kSummaryFile + ": \"in_sample\" must be true or " +
                             "false, found " + JsonText(data->summary["in_sample"]).substr(0, 80) +
                             " (run `rltrade eval` again)");
  }
  return WriteFileAtomic(eval_dir + "/" + kReportFile, RenderPage(*data));
}

}  // namespace rlt::eval
