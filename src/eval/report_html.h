// rltrade eval: the pieces every HTML report page shares (internal to eval/): number
// formatting, SVG chart frames and series, the legend, the style sheet and JSON lookups.
// Used by report.cc (one evaluation) and report_runs.cc (across seeds, walk-forward).
// Not part of the eval API.
#ifndef RLT_EVAL_REPORT_HTML_H_
#define RLT_EVAL_REPORT_HTML_H_

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/json_text.h"
#include "eval/metrics_table.h"
#include "eval/report.h"

namespace rlt::eval::html {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr size_t kMaxPointsPerSeries = 2000;

// ---------------------------------------------------------------- formatting

inline std::string Esc(const std::string& s) { return HtmlEscape(s); }

// 1234567.8 → "1,234,568" (grouped, rounded to `decimals`).
inline std::string Grouped(double v, int decimals) {
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

inline std::string Percent(double v, int decimals = 2) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "\u221e" : "\u2212\u221e");
  std::string s = fmt::format("{:.{}f}%", 100.0 * v, decimals);
  if (s[0] == '-') s = "\u2212" + s.substr(1);
  return s;
}

enum class Kind { kRatio, kPercent, kInteger, kMoney, kPlain };

inline Kind ToKind(MetricKind kind) {
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

inline std::string FormatValue(const nlohmann::json& v, Kind kind) {
  if (v.is_null()) return "n/a";
  if (!v.is_number()) return Esc(v.is_string() ? v.get<std::string>() : JsonText(v));
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
      return Esc(JsonText(v));
  }
  return "";
}

// ---------------------------------------------------------------- benchmarks

// A metrics object's "few_observations" flag (false when absent or not a boolean).
inline bool FewObservationsOf(const nlohmann::json& metrics) {
  return metrics.is_object() && metrics.contains("few_observations") &&
         metrics["few_observations"].is_boolean() && metrics["few_observations"].get<bool>();
}

// Under a metrics table: "Did it beat the benchmark?" from summary.json's "significance"
// (per benchmark the annualised Sharpe difference, its bootstrap p-value and interval),
// the flag of ratios from fewer than 30 daily returns, and the annualisation.
inline std::string BenchmarkNotes(const nlohmann::json& summary) {
  if (!summary.is_object()) return "";
  std::string s;
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& sig =
      summary.contains("significance") && summary["significance"].is_object()
          ? summary["significance"]
          : none;
  if (sig.contains("flat") || sig.contains("buy_and_hold")) {
    s += "<h3>Did it beat the benchmark?</h3>\n<table class=\"metrics\" id=\"significance\"><tr>"
         "<th>policy against</th><th>Sharpe difference</th><th>p-value</th><th>95% interval</th>"
         "<th>observations</th></tr>\n";
    for (const char* name : {"flat", "buy_and_hold"}) {
      const nlohmann::json& x = sig.contains(name) && sig[name].is_object() ? sig[name] : none;
      auto get = [&](const char* k, Kind kind) {
        return x.contains(k) ? FormatValue(x[k], kind) : std::string("n/a");
      };
      s += fmt::format("<tr><th>{}</th><td>{}</td><td>{}</td><td>[{}, {}]</td><td>{}</td></tr>\n",
                       std::string(name) == "flat" ? "flat" : "buy-and-hold",
                       get("sharpe_difference", Kind::kRatio), get("p_value", Kind::kRatio),
                       get("ci_low", Kind::kRatio), get("ci_high", Kind::kRatio),
                       get("observations", Kind::kInteger));
    }
    s += "</table>\n<p class=\"note\">Sharpe difference: annualised Sharpe ratio of the policy "
         "minus the benchmark's, on the same sessions (flat counts as Sharpe 0). p-value: "
         "two-sided, for equal Sharpe ratios, from 2,000 resamples of a stationary bootstrap "
         "(Politis &amp; Romano 1994) of the paired daily returns with a fixed seed; the "
         "interval is the resamples' 95% percentile interval.</p>\n";
  }
  const nlohmann::json& m = summary.contains("metrics") ? summary["metrics"] : none;
  if (FewObservationsOf(m)) {
    s += fmt::format(
        "<p class=\"note few\" id=\"few-observations\"><b>Few observations:</b> the ratios "
        "(Sharpe, Sortino, Calmar, PSR) rest on {} daily returns, fewer than 30: too few to "
        "trust.</p>\n",
        m.contains("observations") ? FormatValue(m["observations"], Kind::kInteger) : "n/a");
  }
  if (summary.contains("periods_per_year") && summary["periods_per_year"].is_number()) {
    s += fmt::format("<p class=\"note\">Ratios annualised with {} periods per year.</p>\n",
                     FormatValue(summary["periods_per_year"], Kind::kInteger));
  }
  return s;
}

// "Nice" axis ticks covering [lo, hi]: steps of 1, 2, 2.5 or 5 × 10^k, about `target` of them.
inline std::vector<double> NiceTicks(double lo, double hi, int target = 6, double min_step = 0) {
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
inline int DecimalsFor(const std::vector<double>& ticks, double scale) {
  if (ticks.size() < 2) return 2;
  const double step = (ticks[1] - ticks[0]) * scale;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(step) + 1e-9)), 0, 6);
}

// ---------------------------------------------------------------- charts

using TickFormat = std::function<std::string(double value, const std::vector<double>& ticks)>;

inline std::string MoneyTick(double v, const std::vector<double>& ticks) {
  return Grouped(v, DecimalsFor(ticks, 1.0));
}
inline std::string PercentTick(double v, const std::vector<double>& ticks) {
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
inline std::pair<double, double> YRange(const std::vector<const std::vector<double>*>& series,
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
inline std::vector<size_t> Downsample(const std::vector<double>& y) {
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
inline std::string Polyline(const Frame& f, const std::vector<double>& y,
                            const std::string& css_class) {
  std::string points;
  for (size_t i : Downsample(y)) {
    if (std::isfinite(y[i])) points += fmt::format("{:.1f},{:.1f} ", f.X(i), f.Y(y[i]));
  }
  if (!points.empty()) points.pop_back();
  return fmt::format("<polyline class=\"{}\" points=\"{}\"/>\n", css_class, points);
}

inline std::string Legend(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string s = "<div class=\"legend\">";
  for (const auto& [css_class, name] : entries) {
    s += fmt::format("<span><i class=\"swatch {}\"></i>{}</span>", css_class, Esc(name));
  }
  return s + "</div>\n";
}

inline std::string StringOr(const nlohmann::json& obj, const char* key,
                            const std::string& fallback) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string()) return fallback;
  return obj[key].get<std::string>();
}
inline bool BoolOr(const nlohmann::json& obj, const char* key, bool fallback) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_boolean()) return fallback;
  return obj[key].get<bool>();
}

inline constexpr const char* kStyle = R"(
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
.selected-point{fill:none;stroke:#c62828;stroke-width:2}
.legend{font-size:13px;color:#445}.legend span{margin-right:16px}
.swatch{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:middle}
.swatch.strategy{background:#1f5fbf}.swatch.hold{background:#e08a00}.swatch.price{background:#222}
.swatch.pos-long{background:rgba(30,160,80,.3)}.swatch.pos-short{background:rgba(210,40,40,.3)}
)";

// The page up to its first section: doctype, head with the style sheet (plus
// `extra_css`), the heading and the subtitle, and the IN-SAMPLE banner when `in_sample`.
inline std::string PageHead(const std::string& title_prefix, const std::string& heading,
                            const std::string& subtitle, const std::string& extra_css,
                            bool in_sample) {
  std::string s = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
      "<title>{}: {}</title>\n<style>{}{}</style></head>\n<body>\n"
      "<h1>{}</h1>\n<p class=\"sub\">{}</p>\n",
      Esc(title_prefix), Esc(subtitle), kStyle, extra_css, Esc(heading), Esc(subtitle));
  if (in_sample) {
    s += "<div class=\"banner\" id=\"in-sample-banner\">IN-SAMPLE: this range overlaps the "
         "training range. These results do not measure out-of-sample performance.</div>\n";
  }
  return s;
}

}  // namespace rlt::eval::html

#endif  // RLT_EVAL_REPORT_HTML_H_
