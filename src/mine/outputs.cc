#include "mine/outputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "eval/report.h"
#include "runlog/atomic_dir.h"

namespace rlt::mine {
namespace {

std::string Num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

nlohmann::json JsonNum(double v) { return std::isfinite(v) ? nlohmann::json(v) : nullptr; }

std::string CsvCell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string TomlString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string StatusOf(const SignalResult& r) {
  return r.constant ? "constant" : (r.kept ? "kept" : "correlated");
}

// Mean and half-width of the 95 % normal interval of the fold scores.
std::pair<double, double> FoldInterval(const std::vector<double>& folds) {
  const double k = static_cast<double>(folds.size());
  double mean = 0;
  for (double v : folds) mean += v / k;
  double ss = 0;
  for (double v : folds) ss += (v - mean) * (v - mean);
  const double sd = folds.size() > 1 ? std::sqrt(ss / (k - 1)) : 0.0;
  return {mean, 1.959963984540054 * sd / std::sqrt(k)};
}

}  // namespace

std::string SignalsCsv(const MineResult& result, const MineOptions& options) {
  fmt::memory_buffer out;
  auto put = [&](const std::string& s) { fmt::format_to(std::back_inserter(out), "{}", s); };
  put("rank,name,kind,sign,cv_score,cv_score_other_sign");
  for (int f = 0; f < options.folds; ++f) put(fmt::format(",fold_{}", f + 1));
  put(",q_lo,q_hi,train_mean,train_sharpe,kept,cluster,cluster_corr,dsr,val_mean,val_sharpe,"
      "val_total,val_units,tuned_lower_q,tuned_upper_q,tuned_smoothing,tuned_strength,"
      "tuned_cv_score,tuned_train_sharpe,tuned_dsr,tune_evaluations,status\n");
  std::vector<int> order = result.ranked;
  for (size_t i = 0; i < result.signals.size(); ++i) {
    if (result.signals[i].constant) order.push_back(static_cast<int>(i));
  }
  for (int i : order) {
    const SignalResult& r = result.signals[i];
    put(fmt::format("{},{},{}", r.constant ? std::string() : std::to_string(r.rank),
                    CsvCell(r.name), r.regime ? "regime" : "continuous"));
    if (r.constant) {
      put(",,,");
      for (int f = 0; f < options.folds; ++f) put(",");
      put(",,,,,,,,,,,,,,,,,,,,");
    } else {
      put(fmt::format(",{},{},{}", r.sign, Num(r.cv_score), Num(r.cv_score_other)));
      for (double v : r.fold_scores) put(fmt::format(",{}", Num(v)));
      put(fmt::format(",{},{},{},{},{},{},{},{}", Num(r.q_lo), Num(r.q_hi), Num(r.train_mean),
                      Num(r.train_sharpe), r.kept ? 1 : 0, CsvCell(r.cluster),
                      r.kept ? std::string() : Num(r.cluster_corr), Num(r.dsr)));
      if (options.has_validation) {
        put(fmt::format(",{},{},{},{}", Num(r.val_mean), Num(r.val_sharpe), Num(r.val_total),
                        r.val_units));
      } else {
        put(",,,,");
      }
      if (r.tuned) {
        put(fmt::format(",{},{},{},{},{},{},{},{}", Num(r.tuned_lower_q), Num(r.tuned_upper_q),
                        r.tuned_smoothing, r.tuned_strength, Num(r.tuned_cv_score),
                        Num(r.tuned_train_sharpe), Num(r.tuned_dsr), r.tune_evaluations));
      } else {
        put(",,,,,,,,");
      }
    }
    put(fmt::format(",{}\n", StatusOf(r)));
  }
  return fmt::to_string(out);
}

std::string PresetToml(const MineResult& result, const MineOptions& options, const Provenance& p) {
  std::string out;
  out += "# The signals kept by `rltrade mine`, best first: ranked by purged k-fold\n";
  out += "# cross-validated P&L of the quantile rule on the training range, then filtered so no\n";
  out += "# two have |correlation| above max_corr (docs/mining.md). Use it as\n";
  out += "# [features] preset = \"<this file>\". The [mine] table records how it was made.\n";
  out += "signals = [";
  for (size_t i = 0; i < result.kept.size(); ++i) {
    out += (i ? ", " : "") + TomlString(result.signals[result.kept[i]].name);
  }
  out += "]\n";
  out += "# The sign of each kept signal's rule (+1: long when low, short when high).\n";
  out += "signs = [";
  for (size_t i = 0; i < result.kept.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(result.signals[result.kept[i]].sign);
  }
  out += "]\n\n[mine]\n";
  out += "command = " + TomlString(p.command) + "\n";
  out += "source = " + TomlString(p.source) + "\n";
  out += "candidates = " + TomlString(p.candidates) + "\n";
  out += "symbols = [";
  for (size_t i = 0; i < p.symbols.size(); ++i) out += (i ? ", " : "") + TomlString(p.symbols[i]);
  out += "]\n";
  out += "train = " + TomlString(options.train.ToString()) + "\n";
  if (options.has_validation) {
    out += "validation = " + TomlString(options.validation.ToString()) + "\n";
  }
  out += fmt::format("lower_q = {}\nupper_q = {}\ncost_rate = {}\nfolds = {}\nembargo = {}\n",
                     options.lower_q, options.upper_q, options.cost_rate, options.folds,
                     options.embargo);
  out += "metric = " + TomlString(options.metric) + "\n";
  out +=
      fmt::format("max_corr = {}\ndsr_threshold = {}\n", options.max_corr, options.dsr_threshold);
  out += fmt::format("trials = {}\nsurvivors = {}\nexpected_false_discoveries = {}\n",
                     result.trials, result.survivors, result.expected_false);
  return out;
}

std::string SummaryJson(const MineResult& result, const MineOptions& options, const Provenance& p) {
  nlohmann::json j;
  j["command"] = p.command;
  j["source"] = p.source;
  j["candidates"] = p.candidates;
  j["symbols"] = p.symbols;
  j["train"] = options.train.ToString();
  j["validation"] = options.has_validation ? nlohmann::json(options.validation.ToString())
                                           : nlohmann::json(nullptr);
  j["options"] = {{"lower_q", options.lower_q},     {"upper_q", options.upper_q},
                  {"cost_rate", options.cost_rate}, {"folds", options.folds},
                  {"embargo", options.embargo},     {"metric", options.metric},
                  {"max_corr", options.max_corr},   {"dsr_threshold", options.dsr_threshold},
                  {"tune_top", options.tune_top},   {"tune_iterations", options.tune_iterations},
                  {"tune_seed", options.tune_seed}};
  nlohmann::json folds = nlohmann::json::array();
  for (size_t f = 0; f < result.fold_first.size(); ++f) {
    folds.push_back({{"first", result.fold_first[f]}, {"last", result.fold_last[f]}});
  }
  j["folds"] = folds;
  j["train_dates"] = result.train_dates;
  j["train_units"] = result.train_units;
  j["validation_units"] = result.validation_units;
  j["candidates_total"] = result.signals.size();
  int64_t constant = 0;
  nlohmann::json constants = nlohmann::json::array();
  for (const SignalResult& r : result.signals) {
    if (r.constant) {
      ++constant;
      constants.push_back(r.name);
    }
  }
  j["constant"] = constants;
  j["ranked"] = result.ranked.size();
  j["trials"] = result.trials;
  j["sharpe_variance"] = JsonNum(result.sharpe_variance);
  j["null_sharpe_variance"] = JsonNum(result.null_sharpe_variance);
  j["sr0"] = JsonNum(result.sr0);
  j["survivors"] = result.survivors;
  j["expected_false_discoveries"] = JsonNum(result.expected_false);
  nlohmann::json kept = nlohmann::json::array();
  for (int i : result.kept) {
    const SignalResult& r = result.signals[i];
    kept.push_back({{"name", r.name},
                    {"rank", r.rank},
                    {"sign", r.sign},
                    {"cv_score", JsonNum(r.cv_score)},
                    {"train_sharpe", JsonNum(r.train_sharpe)},
                    {"dsr", JsonNum(r.dsr)},
                    {"survives", std::isfinite(r.dsr) && r.dsr >= options.dsr_threshold},
                    {"val_mean", JsonNum(options.has_validation ? r.val_mean : NAN)}});
  }
  j["kept"] = kept;
  return JsonText(j, 2) + "\n";
}

std::string ReportHtml(const MineResult& result, const MineOptions& options, const Provenance& p) {
  using eval::HtmlEscape;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += "<title>rltrade mine</title><style>"
       "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}"
       "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
       "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;border-bottom:1px "
       "solid #ddd;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}"
       ".note{color:#555;font-size:13px}svg text{font-size:11px;font-family:system-ui,sans-serif}"
       "</style></head><body>\n";
  h += "<h1>Signal mining</h1>\n<p class=\"note\">" + HtmlEscape(p.source) + " &middot; " +
       HtmlEscape(p.candidates) + " &middot; training " + HtmlEscape(options.train.ToString());
  if (options.has_validation)
    h += " &middot; validation " + HtmlEscape(options.validation.ToString());
  h += "</p>\n";
  h += fmt::format(
      "<table><tr><th class=l>figure</th><th>value</th></tr>"
      "<tr><td class=l>candidates (ranked / constant)</td><td>{} / {}</td></tr>"
      "<tr><td class=l>training dates, units</td><td>{}, {}</td></tr>"
      "<tr><td class=l>folds, embargo (dates)</td><td>{}, {}</td></tr>"
      "<tr><td class=l>metric, cost rate</td><td>{}, {}</td></tr>"
      "<tr><td class=l>kept after |corr| &le; {}</td><td>{}</td></tr>"
      "<tr><td class=l>trials N; Sharpe variance of a skill-less trial V (of the trials)</td>"
      "<td>{}; {:.4g} ({:.4g})</td></tr>"
      "<tr><td class=l>SR0 (expected max Sharpe of N skill-less trials)</td><td>{:.4g}</td></tr>"
      "<tr><td class=l>kept with DSR &ge; {}</td><td>{}</td></tr>"
      "<tr><td class=l>expected false discoveries under the null (&le;)</td><td>{:.3g}</td></tr>"
      "</table>\n",
      result.ranked.size(), result.signals.size() - result.ranked.size(), result.train_dates,
      result.train_units, options.folds, options.embargo, HtmlEscape(options.metric),
      options.cost_rate, options.max_corr, result.kept.size(), result.trials,
      result.null_sharpe_variance, result.sharpe_variance, result.sr0, options.dsr_threshold,
      result.survivors, result.expected_false);

  // Ranking: one bar per ranked signal with its 95 % interval from the fold scores.
  h += "<h2>Ranking by cross-validated score</h2>\n<p class=\"note\">Bar: CV score (mean of the "
       "fold scores); whisker: mean &plusmn; 1.96 &middot; sd(folds)/&radic;k. Dark bars are "
       "kept, light bars dropped by the correlation filter.</p>\n";
  {
    const int rows = static_cast<int>(result.ranked.size());
    const int row_h = 16, label_w = 180, plot_w = 720, top = 10;
    double lo = 0, hi = 0;
    for (int i : result.ranked) {
      const auto [m, half] = FoldInterval(result.signals[i].fold_scores);
      lo = std::min(lo, m - half);
      hi = std::max(hi, m + half);
    }
    if (!(hi > lo)) hi = lo + 1;
    auto xpos = [&](double v) { return label_w + (v - lo) / (hi - lo) * plot_w; };
    h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">",
                     label_w + plot_w + 20, top + rows * row_h + 30);
    const double x0 = xpos(0);
    h += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#888\"/>", x0,
                     top, x0, top + rows * row_h);
    for (int k = 0; k < rows; ++k) {
      const SignalResult& r = result.signals[result.ranked[k]];
      const auto [m, half] = FoldInterval(r.fold_scores);
      const double y = top + k * row_h;
      const double a = xpos(std::min(0.0, m)), b = xpos(std::max(0.0, m));
      h += fmt::format(
          "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}{}</text>"
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>"
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#222\"/>",
          label_w - 6, y + 12, HtmlEscape(r.name), r.sign < 0 ? " (&minus;)" : "", a, y + 2,
          std::max(b - a, 0.5), row_h - 4, r.kept ? "#2c6fbb" : "#b7cce6", xpos(m - half),
          y + row_h / 2.0, xpos(m + half), y + row_h / 2.0);
    }
    h += fmt::format(
        "<text x=\"{}\" y=\"{}\">{:.3g}</text><text x=\"{}\" y=\"{}\" "
        "text-anchor=\"end\">{:.3g}</text></svg>\n",
        label_w, top + rows * row_h + 20, lo, label_w + plot_w, top + rows * row_h + 20, hi);
  }

  // Kept signals: table and correlation heat map.
  h += "<h2>Kept signals</h2>\n<table><tr><th>rank</th><th class=l>signal</th><th>sign</th>"
       "<th>CV score</th><th>train Sharpe / unit</th><th>DSR</th>";
  if (options.has_validation) h += "<th>validation mean</th><th>validation units</th>";
  h += "</tr>\n";
  for (int i : result.kept) {
    const SignalResult& r = result.signals[i];
    h += fmt::format(
        "<tr><td>{}</td><td class=l>{}</td><td>{:+d}</td><td>{:.4g}</td><td>{:.4g}"
        "</td><td>{:.3f}</td>",
        r.rank, HtmlEscape(r.name), r.sign, r.cv_score, r.train_sharpe, r.dsr);
    if (options.has_validation) {
      h += fmt::format("<td>{:.4g}</td><td>{}</td>", r.val_mean, r.val_units);
    }
    h += "</tr>\n";
  }
  h += "</table>\n";
  h += "<h2>Correlation of the kept signals (training bars)</h2>\n<p class=\"note\">Blue: "
       "positive, red: negative; pairs where a correlation is undefined are grey.</p>\n";
  {
    const int n = static_cast<int>(result.kept.size());
    const int cell = std::max(8, std::min(28, 640 / std::max(n, 1))), label_w = 180;
    h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">",
                     label_w + n * cell + 10, label_w + n * cell + 10);
    for (int a = 0; a < n; ++a) {
      const std::string name = HtmlEscape(result.signals[result.kept[a]].name);
      h += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", label_w - 4,
                       label_w + a * cell + cell * 0.7, name);
      h += fmt::format("<text transform=\"translate({:.1f},{}) rotate(-60)\">{}</text>",
                       label_w + a * cell + cell * 0.6, label_w - 4, name);
      for (int b = 0; b < n; ++b) {
        const double c = result.kept_corr[a][b];
        std::string fill = "#ccc";
        if (std::isfinite(c)) {
          const int t = static_cast<int>(std::lround(255 * (1 - std::min(1.0, std::fabs(c)))));
          fill = c >= 0 ? fmt::format("rgb({},{},255)", t, t) : fmt::format("rgb(255,{},{})", t, t);
        }
        h += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} / {}: {:.3f}"
            "</title></rect>",
            label_w + b * cell, label_w + a * cell, cell, cell, fill, name,
            HtmlEscape(result.signals[result.kept[b]].name), c);
      }
    }
    h += "</svg>\n";
  }
  h += "<p class=\"note\">Made by: <code>" + HtmlEscape(p.command) + "</code></p>\n";
  h += "</body></html>\n";
  return h;
}

Status WriteMineDir(const std::string& dir, const MineResult& result, const MineOptions& options,
                    const Provenance& provenance) {
  namespace fs = std::filesystem;
  std::error_code ec;
  bool replace = false;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec) || !fs::exists(fs::path(dir) / "signals.csv", ec) ||
        !fs::exists(fs::path(dir) / "preset.toml", ec)) {
      return Status::InvalidArgument(
          dir + " exists and is not the output of an earlier `rltrade mine`; choose another --out");
    }
    replace = true;
  }
  const fs::path parent = fs::path(dir).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    return Status::IoError("cannot write " + dir + ": the directory " + parent.string() +
                           " does not exist; create it or choose another --out");
  }
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging, runlog::StagingDir::Create(dir));
  const std::pair<const char*, std::string> files[] = {
      {"signals.csv", SignalsCsv(result, options)},
      {"preset.toml", PresetToml(result, options, provenance)},
      {"report.html", ReportHtml(result, options, provenance)},
      {"summary.json", SummaryJson(result, options, provenance)}};
  for (const auto& file : files) {
    RLT_RETURN_IF_ERROR(
        WriteFileAtomic((fs::path(staging.path()) / file.first).string(), file.second));
  }
  return staging.Commit(replace);
}

}  // namespace rlt::mine
