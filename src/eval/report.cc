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

#include "eval/eval_files.h"
#include "eval/metrics_table.h"
#include "eval/outputs.h"
#include "runlog/atomic_dir.h"

namespace rlt::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kMaxPointsPerSeries = 2000;

using EvalData = EvalFiles;
using DailyRow = DailyReturnRow;

// ---------------------------------------------------------------- formatting

std::string Esc(const std::string& s) { return HtmlEscape(s); }

// 1234567.8 → "1,234,568" (grouped, rounded to `decimals`).
std::string Grouped(double v, int decimals) {
  std::string digits = fmt::format("{:.{}f}", std::fabs(v), decimals);
  const size_t dot = digits.find('.');
  std::string whole = digits.substr(0, dot), out;
  for (size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
    out += whole[i];
  }
  if (dot != std::string::npos) out += digits.substr(dot);
  return (v < 0 && std::stod(digits) != 0 ? "\u2212" : "") + out;
}

std::string Percent(double v, int decimals = 2) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "\u221e" : "\u2212\u221e");
  std::string s = fmt::format("{:.{}f}%", 100.0 * v, decimals);
  if (s[0] == '-') s = "\u2212" + s.substr(1);
  return s;
}

enum class Kind { kRatio, kPercent, kInteger, kMoney, kPlain };

Kind ToKind(MetricKind kind) {
  switch (kind) {
    case MetricKind::kRatio:
      return Kind::kRatio;
    case MetricKind::kPercent:
      return Kind::kPercent;
    case MetricKind::kInteger:
      return Kind::kInteger;
    case MetricKind::kMoney:
      return Kind::kMoney;
  }
  return Kind::kPlain;
}

std::string FormatValue(const nlohmann::json& v, Kind kind) {
  if (v.is_null()) return "n/a";
  if (!v.is_number()) return Esc(v.is_string() ? v.get<std::string>() : v.dump());
  const double x = v.get<double>();
  switch (kind) {
    case Kind::kPercent:
      return Percent(x);
    case Kind::kInteger:
      return Grouped(x, 0);
    case Kind::kMoney:
      return Grouped(x, 2);
    case Kind::kRatio:
      return Grouped(x, std::fabs(x) < 10 ? 3 : 2);
    case Kind::kPlain:
      return Esc(v.dump());
  }
  return "";
}

// "Nice" axis ticks covering [lo, hi]: steps of 1, 2, 2.5 or 5 × 10^k, about `target` of them.
std::vector<double> NiceTicks(double lo, double hi, int target = 6, double min_step = 0) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / target, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude * 10;
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  }
  step = std::max(step, min_step);
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

// Decimals that tell ticks `step` apart when printed in units of `scale`.
int DecimalsFor(const std::vector<double>& ticks, double scale) {
  if (ticks.size() < 2) return 2;
  const double step = (ticks[1] - ticks[0]) * scale;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(step) + 1e-9)), 0, 6);
}

// ---------------------------------------------------------------- charts

using TickFormat = std::function<std::string(double value, const std::vector<double>& ticks)>;

std::string MoneyTick(double v, const std::vector<double>& ticks) {
  return Grouped(v, DecimalsFor(ticks, 1.0));
}
std::string PercentTick(double v, const std::vector<double>& ticks) {
  return Percent(v, DecimalsFor(ticks, 100.0));
}

// Maps data (x, y) to SVG pixels inside margins and draws the axes.
struct Frame {
  double x_lo, x_hi, y_lo, y_hi;
  double width = 1160, height = 320;
  double left = 84, right = 16, top = 14, bottom = 36;
  double y_min_step = 0;  // 1 for counts: no fractional ticks

  double X(double x) const {
    return left + (x - x_lo) / std::max(x_hi - x_lo, 1e-12) * (width - left - right);
  }
  double Y(double y) const {
    return top + (y_hi - y) / std::max(y_hi - y_lo, 1e-300) * (height - top - bottom);
  }
  // Opens the <svg>, draws the grid, the y ticks (formatted) and the x ticks (labelled).
  std::string Open(const std::string& label, const TickFormat& y_format,
                   const std::vector<std::pair<double, std::string>>& x_ticks) const {
    std::string s =
        fmt::format("<svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
                    width, height, Esc(label));
    const std::vector<double> ticks = NiceTicks(y_lo, y_hi, 6, y_min_step);
    for (double t : ticks) {
      s += fmt::format(
          "<line class=\"grid\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
          "<text class=\"ytick\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
          left, width - right, Y(t), Y(t), left - 6, Y(t) + 4, y_format(t, ticks));
    }
    for (const auto& [x, text] : x_ticks) {
      s += fmt::format(
          "<line class=\"tick\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>"
          "<text class=\"xtick\" x=\"{0:.1f}\" y=\"{3:.1f}\">{4}</text>\n",
          X(x), height - bottom, height - bottom + 5, height - bottom + 18, Esc(text));
    }
    s += fmt::format(
        "<line class=\"axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
        "<line class=\"axis\" x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\"/>\n",
        left, top, height - bottom, width - right);
    return s;
  }
};

// The y range of some series with a little padding; NaNs ignored.
std::pair<double, double> YRange(const std::vector<const std::vector<double>*>& series,
                                 double pad_fraction = 0.04) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto* v : series) {
    for (double y : *v) {
      if (std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
    }
  }
  if (!std::isfinite(lo)) return {0.0, 1.0};
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) {
    const double d = std::max(std::fabs(hi) * 0.01, 1e-6);
    return {lo - d, hi + d};
  }
  const double pad = (hi - lo) * pad_fraction;
  return {lo - pad, hi + pad};
}

// Indices of at most kMaxPointsPerSeries points of `y`: per bucket its min and max, in
// time order (every index when the series is short).
std::vector<size_t> Downsample(const std::vector<double>& y) {
  std::vector<size_t> keep;
  if (y.size() <= kMaxPointsPerSeries) {
    for (size_t i = 0; i < y.size(); ++i) keep.push_back(i);
    return keep;
  }
  const size_t buckets = kMaxPointsPerSeries / 2;
  for (size_t b = 0; b < buckets; ++b) {
    const size_t begin = b * y.size() / buckets, end = (b + 1) * y.size() / buckets;
    size_t lo = begin, hi = begin;
    for (size_t i = begin; i < end; ++i) {
      if (y[i] < y[lo]) lo = i;
      if (y[i] > y[hi]) hi = i;
    }
    keep.push_back(std::min(lo, hi));
    if (hi != lo) keep.push_back(std::max(lo, hi));
  }
  return keep;
}

// A <polyline> of y against its index (downsampled); NaN points are skipped.
std::string Polyline(const Frame& f, const std::vector<double>& y, const std::string& css_class) {
  std::string points;
  for (size_t i : Downsample(y)) {
    if (std::isfinite(y[i])) points += fmt::format("{:.1f},{:.1f} ", f.X(i), f.Y(y[i]));
  }
  if (!points.empty()) points.pop_back();
  return fmt::format("<polyline class=\"{}\" points=\"{}\"/>\n", css_class, points);
}

std::string Legend(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string s = "<div class=\"legend\">";
  for (const auto& [css_class, name] : entries) {
    s += fmt::format("<span><i class=\"swatch {}\"></i>{}</span>", css_class, Esc(name));
  }
  return s + "</div>\n";
}

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
std::string StringOr(const nlohmann::json& obj, const char* key, const std::string& fallback) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string()) return fallback;
  return obj[key].get<std::string>();
}
bool BoolOr(const nlohmann::json& obj, const char* key, bool fallback) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_boolean()) return fallback;
  return obj[key].get<bool>();
}

std::string MetricsSection(const nlohmann::json& summary, bool in_sample) {
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
  }
  return s + "</table>\n";
}

std::string SettingsSection(const nlohmann::json& summary) {
  std::string s = "<h2>Settings</h2>\n<table class=\"settings\">\n";
  if (summary.contains("settings") && summary["settings"].is_object()) {
    for (const auto& [key, value] : summary["settings"].items()) {
      s += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", Esc(key),
                       Esc(value.is_string() ? value.get<std::string>() : value.dump()));
    }
  }
  return s + "</table>\n";
}

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1d2330;
 background:#fff;max-width:1180px;margin:0 auto;padding:16px 10px 40px}
h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #dde;
 padding-bottom:3px}h3{font-size:15px;margin:18px 0 4px}
.sub{color:#556;margin:0 0 8px}.note{color:#556;margin:2px 0 6px;font-size:13px}
.banner{background:#c62828;color:#fff;font-weight:700;font-size:18px;padding:10px 14px;
 border-radius:4px;margin:10px 0}
.tag{background:#c62828;color:#fff;font-size:12px;padding:2px 6px;border-radius:3px;vertical-align:middle}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid #eef;text-align:right}th{text-align:left;font-weight:600}
table.metrics td{min-width:120px}table.monthly td{min-width:52px;font-size:13px}
table.settings td{text-align:left;font-family:ui-monospace,Menlo,Consolas,monospace}
svg.chart{width:100%;height:auto;display:block;font-size:11px}
.grid{stroke:#e6e8ef}.axis{stroke:#556}.tick{stroke:#556}.zero{stroke:#333;stroke-dasharray:3 3}
.ytick{text-anchor:end;fill:#445}.xtick{text-anchor:middle;fill:#445}
.series{fill:none;stroke-width:1.4;stroke-linejoin:round}
polyline.strategy{stroke:#1f5fbf}polyline.hold{stroke:#e08a00}polyline.price{stroke:#222}
.drawdown-area{fill:rgba(31,95,191,.18);stroke:none}
.hist-bar.pos{fill:#3b9d5d}.hist-bar.neg{fill:#cf4b4b}
.pos-long{fill:rgba(30,160,80,.14)}.pos-short{fill:rgba(210,40,40,.14)}
.trade-marker.buy{fill:#138a3e}.trade-marker.sell{fill:#c62828}
.legend{font-size:13px;color:#445}.legend span{margin-right:16px}
.swatch{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:middle}
.swatch.strategy{background:#1f5fbf}.swatch.hold{background:#e08a00}.swatch.price{background:#222}
.swatch.pos-long{background:rgba(30,160,80,.3)}.swatch.pos-short{background:rgba(210,40,40,.3)}
)";

std::string RenderPage(const EvalData& d) {
  const nlohmann::json& j = d.summary;
  const bool in_sample = BoolOr(j, "in_sample", false);
  const nlohmann::json range =
      j.is_object() && j.contains("range") ? j["range"] : nlohmann::json::object();
  auto text = [](const nlohmann::json& obj, const char* key) {
    if (!obj.is_object() || !obj.contains(key)) return std::string("?");
    return obj[key].is_string() ? obj[key].get<std::string>() : obj[key].dump();
  };
  const std::string title =
      fmt::format("{} \u00b7 {} ({} to {})", text(j, "run_dir"), text(range, "name"),
                  text(range, "first"), text(range, "last"));
  std::string s = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
      "<title>rltrade report: {}</title>\n<style>{}</style></head>\n<body>\n"
      "<h1>rltrade evaluation report</h1>\n<p class=\"sub\">{}</p>\n",
      Esc(title), kStyle, Esc(title));
  if (in_sample) {
    s += "<div class=\"banner\" id=\"in-sample-banner\">IN-SAMPLE: this range overlaps the "
         "training range. These results do not measure out-of-sample performance.</div>\n";
  }
  s += fmt::format("<p class=\"note\">{} bars, {} sessions, {} fills.</p>\n", d.equity.size(),
                   d.daily.size(), d.trades.size());
  s += MetricsSection(j, in_sample) + EquitySection(d) + DrawdownSection(d) + HistogramSection(d) +
       MonthlySection(d) + SessionsSection(d) + SettingsSection(j);
  return s + "</body></html>\n";
}

}  // namespace

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
                             "false, found " + data->summary["in_sample"].dump().substr(0, 80) +
                             " (run `rltrade eval` again)");
  }
  return WriteFileAtomic(eval_dir + "/" + kReportFile, RenderPage(*data));
}

}  // namespace rlt::eval
