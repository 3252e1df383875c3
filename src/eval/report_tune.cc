// rltrade eval: the report page of a hyperparameter study (`rltrade tune`'s OUT/report.html;
// see report.h). Built from the shared pieces of report_html.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "eval/outputs.h"
#include "eval/report.h"
#include "eval/report_html.h"

namespace rlt::eval {
namespace {

using namespace html;  // NOLINT(google-build-using-namespace): the page's shared pieces
using Json = nlohmann::json;

constexpr const char* kTuneCss = R"(
.pt{stroke:#fff;stroke-width:.8}.pt.rung0{fill:#8aa4cf}.pt.rung1{fill:#1f5fbf}
.pt.rung2{fill:#0b3a80}.pt.rung3{fill:#e08a00}.pt.rung4{fill:#b04a00}.pt.best{stroke:#c62828;stroke-width:2.2}
polyline.running-best{stroke:#c62828;fill:none;stroke-width:1.4}
.swatch.rung0{background:#8aa4cf}.swatch.rung1{background:#1f5fbf}.swatch.rung2{background:#0b3a80}
.swatch.rung3{background:#e08a00}.swatch.rung4{background:#b04a00}.swatch.running-best{background:#c62828}
.params{display:flex;flex-wrap:wrap;gap:8px}.params figure{margin:0;width:calc(50% - 4px)}
.params figcaption{font-size:13px;font-weight:600;color:#334}
table.trials td.param{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.oos{border:2px solid #1f5fbf;border-radius:4px;padding:8px 12px;margin:10px 0}
)";

struct Line {
  int trial = -1, rung = 0;
  int64_t steps = 0;
  std::string status;
  double objective = kNaN, seconds = kNaN;
  std::vector<std::string> params;  // in the study's key order
};

// The test evaluation's benchmarks beside the best trial's figure, and the significance of
// its Sharpe ratio against them ("" when the evaluation has none).
std::string TestBenchmarks(const Json& t, const std::string& objective) {
  if (!t.contains("benchmarks") || !t["benchmarks"].is_object()) return "";
  const Json none = Json::object();
  auto value = [&](const char* name) {
    const Json& b = t["benchmarks"].contains(name) ? t["benchmarks"][name] : none;
    return b.is_object() && b.contains(objective) ? FormatValue(b[objective], Kind::kRatio)
                                                  : std::string("n/a");
  };
  std::string s = fmt::format(" Benchmarks on the same range: flat {}, buy-and-hold {}.",
                              value("flat"), value("buy_and_hold"));
  const Json& sig =
      t.contains("significance") && t["significance"].is_object() ? t["significance"] : none;
  for (const char* name : {"flat", "buy_and_hold"}) {
    if (!sig.contains(name) || !sig[name].is_object()) continue;
    const Json& x = sig[name];
    s += fmt::format(
        " Sharpe difference against {}: {} (stationary bootstrap p-value {}).",
        std::string(name) == "flat" ? "flat" : "buy-and-hold",
        x.contains("sharpe_difference") ? FormatValue(x["sharpe_difference"], Kind::kRatio) : "n/a",
        x.contains("p_value") ? FormatValue(x["p_value"], Kind::kRatio) : "n/a");
  }
  if (t.contains("metrics") && t["metrics"].is_object() &&
      t["metrics"].contains("few_observations") && t["metrics"]["few_observations"] == true) {
    s += " <b>Few observations:</b> the ratios rest on fewer than 30 daily returns.";
  }
  return s;
}

// trials.jsonl: every parsed line; a line cut by a kill ends the journal, as for --resume.
Status ReadJournal(const std::string& path, const std::vector<std::string>& keys,
                   std::vector<Line>* lines) {
  RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::istringstream in(text);
  std::string row;
  while (std::getline(in, row)) {
    const Json j = ParseJsonOrDiscarded<Json>(row);
    if (j.is_discarded() || !j.is_object()) break;
    Line l;
    l.trial = j.value("trial", -1);
    l.rung = j.value("rung", 0);
    l.steps = j.value("steps", int64_t{0});
    l.status = j.value("status", "");
    if (j.contains("objective") && j["objective"].is_number()) {
      l.objective = j["objective"].get<double>();
    }
    if (j.contains("seconds") && j["seconds"].is_number()) l.seconds = j["seconds"].get<double>();
    for (const std::string& k : keys) {
      const Json& p = j.contains("params") ? j["params"] : Json::object();
      l.params.push_back(p.contains(k) && p[k].is_string() ? p[k].get<std::string>() : "");
    }
    lines->push_back(std::move(l));
  }
  return Status::Ok();
}

bool Numeric(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*v);
}

bool Better(double a, double b, bool minimize) { return minimize ? a < b : a > b; }

// Objective against the journal's order: one dot per finished trial (per rung with
// successive halving, coloured by rung), the running best as a line.
std::string ObjectiveChart(const std::vector<Line>& lines, bool minimize, bool asha,
                           int best_line) {
  std::vector<double> y, best;
  double running = kNaN;
  for (const Line& l : lines) {
    y.push_back(l.objective);
    if (std::isfinite(l.objective) &&
        (std::isnan(running) || Better(l.objective, running, minimize)))
      running = l.objective;
    best.push_back(running);
  }
  const auto [lo, hi] = YRange({&y});
  Frame f{0, static_cast<double>(std::max<size_t>(lines.size(), 2) - 1), lo, hi};
  std::vector<std::pair<double, std::string>> x_ticks;
  for (double t : NiceTicks(0, f.x_hi, 10, 1))
    x_ticks.emplace_back(t, fmt::format("{:.0f}", t + 1));
  std::string s = f.Open("objective by finished trial", MoneyTick, x_ticks);
  if (!asha) s += Polyline(f, best, "series running-best");
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!std::isfinite(y[i])) continue;
    s += fmt::format(
        "<circle class=\"pt rung{}{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" "
        "data-trial=\"{}\"><title>trial {}{}: {}</title></circle>\n",
        std::min(lines[i].rung, 4), static_cast<int>(i) == best_line ? " best" : "", f.X(i),
        f.Y(y[i]), static_cast<int>(i) == best_line ? 5 : 3.5, lines[i].trial, lines[i].trial,
        asha ? fmt::format(" rung {}", lines[i].rung) : std::string(), JsonText(Json(y[i])));
  }
  return s + "</svg>\n";
}

// Objective against one parameter's values: a numeric axis (logarithmic when the values are
// positive and span more than a factor of 20), or one column per distinct text value.
std::string ParamChart(const std::vector<Line>& lines, size_t k, const std::string& key,
                       int best_line) {
  std::vector<double> x(lines.size(), kNaN), y;
  bool numeric = true;
  double lo_x = INFINITY, hi_x = -INFINITY;
  for (size_t i = 0; i < lines.size(); ++i) {
    y.push_back(lines[i].objective);
    double v = 0;
    if (!Numeric(lines[i].params[k], &v)) {
      numeric = numeric && lines[i].params[k].empty();
      continue;
    }
    x[i] = v;
    lo_x = std::min(lo_x, v);
    hi_x = std::max(hi_x, v);
  }
  const bool log_axis = numeric && lo_x > 0 && hi_x / lo_x > 20;
  std::vector<std::string> categories;
  if (!numeric) {
    std::set<std::string> seen;
    for (const Line& l : lines) {
      if (seen.insert(l.params[k]).second) categories.push_back(l.params[k]);
    }
    std::sort(categories.begin(), categories.end());
    for (size_t i = 0; i < lines.size(); ++i) {
      x[i] = static_cast<double>(
          std::find(categories.begin(), categories.end(), lines[i].params[k]) - categories.begin());
    }
    lo_x = -0.5;
    hi_x = static_cast<double>(categories.size()) - 0.5;
  } else if (log_axis) {
    for (double& v : x) v = std::log10(v);
    lo_x = std::log10(lo_x);
    hi_x = std::log10(hi_x);
  }
  if (!(hi_x > lo_x)) {
    lo_x -= 0.5;
    hi_x += 0.5;
  }
  const double pad = numeric ? (hi_x - lo_x) * 0.03 : 0;
  const auto [lo, hi] = YRange({&y});
  Frame f{lo_x - pad, hi_x + pad, lo, hi};
  f.width = 570;
  f.height = 230;
  f.left = 70;
  std::vector<std::pair<double, std::string>> x_ticks;
  if (!numeric) {
    for (size_t c = 0; c < categories.size(); ++c) x_ticks.emplace_back(c, categories[c]);
  } else {
    const std::vector<double> ticks = NiceTicks(lo_x, hi_x, log_axis ? 4 : 5, log_axis ? 1 : 0);
    for (double t : ticks) {
      x_ticks.emplace_back(t, log_axis ? fmt::format("1e{:.0f}", t) : fmt::format("{:g}", t));
    }
  }
  std::string s = f.Open("objective against " + key, MoneyTick, x_ticks);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!std::isfinite(y[i]) || !std::isfinite(x[i])) continue;
    s += fmt::format(
        "<circle class=\"pt rung{}{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"><title>trial {}: {} = "
        "{}</title></circle>\n",
        std::min(lines[i].rung, 4), static_cast<int>(i) == best_line ? " best" : "", f.X(x[i]),
        f.Y(y[i]), static_cast<int>(i) == best_line ? 5 : 3.5, lines[i].trial, Esc(key),
        Esc(lines[i].params[k]));
  }
  return fmt::format("<figure><figcaption>{}{}</figcaption>\n{}</svg></figure>\n", Esc(key),
                     log_axis ? " (log scale)" : "", s);
}

}  // namespace

Status WriteTuneReport(const std::string& dir) {
  const std::string study_path = dir + "/study.json";
  RLT_ASSIGN_OR_RETURN(std::string study_text, ReadFile(study_path));
  const Json study = ParseJsonOrDiscarded<Json>(study_text);
  if (study.is_discarded() || !study.is_object()) {
    return Status::DataError(study_path + ": not a study header (JSON object expected)");
  }
  const std::string method = StringOr(study, "method", "?");
  const std::string objective = StringOr(study, "objective", "objective");
  const bool minimize = BoolOr(study, "minimize", false);
  const bool asha = method == "asha" || StringOr(study, "prune", "none") == "asha";
  // The parameter keys, in the order of the space's text ("key" = { ... } lines).
  std::vector<std::string> keys;
  {
    std::istringstream in(StringOr(study, "space", ""));
    std::string row;
    while (std::getline(in, row)) {
      const size_t eq = row.find('=');
      if (row.empty() || row[0] == '#' || eq == std::string::npos) continue;
      std::string key = row.substr(0, eq);
      key.erase(key.find_last_not_of(" \t") + 1);
      key.erase(0, key.find_first_not_of(" \t"));
      if (key.size() >= 2 && key.front() == '"' && key.back() == '"') {
        key = key.substr(1, key.size() - 2);
      }
      if (!key.empty()) keys.push_back(key);
    }
  }
  std::vector<Line> lines;
  RLT_RETURN_IF_ERROR(ReadJournal(dir + "/trials.jsonl", keys, &lines));
  // The best: at the highest rung any trial reached with a score (every line is rung 0
  // except with successive halving), as the study picks it.
  int top = -1, best_line = -1, rejected = 0, failed = 0;
  for (const Line& l : lines) {
    if (std::isfinite(l.objective)) top = std::max(top, l.rung);
    rejected += l.status == "rejected";
    failed += l.status == "failed";
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    if (!std::isfinite(l.objective) || l.rung != top) continue;
    if (best_line < 0 || Better(l.objective, lines[best_line].objective, minimize)) {
      best_line = static_cast<int>(i);
    }
  }
  std::set<int> trials;
  for (const Line& l : lines) trials.insert(l.trial);
  const std::string subtitle = fmt::format(
      "{} search, {} of {} trials finished{}; objective: {} on the validation range ({}). "
      "{} rejected, {} failed.",
      method, trials.size(), study.value("trials", 0),
      asha ? fmt::format(" ({} rungs run)", lines.size()) : std::string(), objective,
      minimize ? "minimised" : "maximised", rejected, failed);
  std::string page = PageHead("rltrade tune", "Hyperparameter study " + dir, subtitle, kTuneCss,
                              /*in_sample=*/false);
  page += "<h2>Best trial</h2>\n";
  if (best_line < 0) {
    page += "<p class=\"note\">No trial finished with a score.</p>\n";
  } else {
    const Line& b = lines[best_line];
    page += fmt::format(
        "<table class=\"metrics\" id=\"best\"><tr><th>trial</th><td>{}</td></tr>"
        "<tr><th>validation {}</th><td>{}</td></tr>",
        b.trial, Esc(objective), FormatValue(Json(b.objective), Kind::kRatio));
    if (asha) {
      page += fmt::format("<tr><th>rung (steps)</th><td>{} ({})</td></tr>", b.rung,
                          Grouped(static_cast<double>(b.steps), 0));
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      page += fmt::format("<tr><th>{}</th><td class=\"param\">{}</td></tr>", Esc(keys[k]),
                          Esc(b.params[k]));
    }
    page += "</table>\n";
  }
  // The out-of-sample figure, kept apart from everything the search saw.
  if (Result<std::string> test = ReadFile(dir + "/test_evaluation.json"); test.ok()) {
    const Json t = ParseJsonOrDiscarded<Json>(*test);
    const Json m = !t.is_discarded() && t.contains("metrics") ? t["metrics"] : Json::object();
    if (m.contains(objective)) {
      page += fmt::format(
          "<div class=\"oos\" id=\"out-of-sample\"><b>Out of sample:</b> the best trial's {} on "
          "the test range is <b>{}</b>. It was evaluated once, after the search; no trial read "
          "the test range. This is the study's only out-of-sample number.{}</div>\n",
          Esc(objective), FormatValue(m[objective], Kind::kRatio), TestBenchmarks(t, objective));
    }
  }
  page += "<h2>Objective by trial</h2>\n";
  page += fmt::format(
      "<p class=\"note\">Each dot is a finished {} in the order {} (x); the validation {} (y). "
      "Rejected and failed trials have no dot.</p>\n",
      asha ? "rung of a trial" : "trial", asha ? "they finished" : "of the trials", Esc(objective));
  page += ObjectiveChart(lines, minimize, asha, best_line);
  if (asha) {
    std::vector<std::pair<std::string, std::string>> legend;
    std::set<int> rungs;
    for (const Line& l : lines) rungs.insert(std::min(l.rung, 4));
    for (int r : rungs) legend.emplace_back(fmt::format("rung{}", r), fmt::format("rung {}", r));
    page += Legend(legend);
  } else {
    page += Legend({{"running-best", "best so far"}});
  }
  page += "<h2>Objective against each parameter</h2>\n<div class=\"params\">\n";
  for (size_t k = 0; k < keys.size(); ++k) page += ParamChart(lines, k, keys[k], best_line);
  page += "</div>\n";
  // The best trials (each at its highest rung), best first.
  std::map<int, size_t> last_of_trial;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (std::isfinite(lines[i].objective)) {
      auto it = last_of_trial.find(lines[i].trial);
      if (it == last_of_trial.end() || lines[i].rung >= lines[it->second].rung) {
        last_of_trial[lines[i].trial] = i;
      }
    }
  }
  std::vector<size_t> ranked;
  for (const auto& [trial, i] : last_of_trial) ranked.push_back(i);
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    if (lines[a].rung != lines[b].rung) return lines[a].rung > lines[b].rung;
    return Better(lines[a].objective, lines[b].objective, minimize);
  });
  const size_t shown = std::min<size_t>(ranked.size(), 15);
  page +=
      fmt::format("<h2>The {} best trials</h2>\n<table class=\"trials\"><tr><th>trial</th>", shown);
  if (asha) page += "<th>rung</th><th>steps</th>";
  page += fmt::format("<th>{}</th>", Esc(objective));
  for (const std::string& k : keys) page += fmt::format("<th>{}</th>", Esc(k));
  page += "<th>seconds</th></tr>\n";
  for (size_t r = 0; r < shown; ++r) {
    const Line& l = lines[ranked[r]];
    page += fmt::format("<tr><td>{}</td>", l.trial);
    if (asha) {
      page +=
          fmt::format("<td>{}</td><td>{}</td>", l.rung, Grouped(static_cast<double>(l.steps), 0));
    }
    page += fmt::format("<td>{}</td>", FormatValue(Json(l.objective), Kind::kRatio));
    for (const std::string& p : l.params)
      page += fmt::format("<td class=\"param\">{}</td>", Esc(p));
    page += fmt::format("<td>{}</td></tr>\n",
                        std::isfinite(l.seconds) ? fmt::format("{:.2f}", l.seconds) : "");
  }
  page += "</table>\n</body></html>\n";
  return WriteFileAtomic(dir + "/" + kReportFile, page);
}

}  // namespace rlt::eval
