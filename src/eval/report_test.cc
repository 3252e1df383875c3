// Tests of eval/report.h: a hand-written evaluation directory (eval/outputs.h format) is
// turned into report.html, which is checked as text (self-contained, escaped, expected SVG
// elements, monthly returns against independently compounded values) and, when Debian's
// chromium is installed, rendered headless: a non-blank screenshot and no page errors.
#include "eval/report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/status_test_util.h"
#include "eval/metrics_table.h"
#include "eval/outputs.h"
#include "testing/chromium.h"
#include "testing/testing.h"

namespace rlt::eval {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

using rlt::testing::CountOf;

fs::path FreshDir(const std::string& name) {
  return rlt::testing::NewScratchDir("rlt_report_test_" + name + "_");
}

// "2024-03-DD" for day 1..31 of March 2024.
std::string MarchDate(int day) {
  return "2024-03-" + std::string(day < 10 ? "0" : "") + std::to_string(day);
}

// "2024-01-30T09:30:00-05:00" plus `bar` minutes.
std::string BarTime(const std::string& date, int bar) {
  return date + "T09:3" + std::to_string(bar) + ":00-05:00";
}

// Four sessions of four bars across a month boundary. Daily returns (strategy):
// 01-30 +1 %, 01-31 −2 % (worst), 02-01 +3 % (best), 02-02 +0.5 % (last).
const std::vector<std::pair<std::string, double>> kDaily = {
    {"2024-01-30", 0.01}, {"2024-01-31", -0.02}, {"2024-02-01", 0.03}, {"2024-02-02", 0.005}};

// Writes the synthetic evaluation files; `in_sample` sets summary.in_sample.
fs::path WriteEvalDir(const std::string& name, bool in_sample) {
  const fs::path dir = FreshDir(name);
  WriteAll(
      dir / kSummaryFile,
      std::string(R"({"run_dir": "runs/<b>&\"x\"", )") +
          R"("range": {"name": "test", "first": "2024-01-30", "last": "2024-02-02"}, )" +
          R"("in_sample": )" + (in_sample ? "true" : "false") + ", " + R"("policy": "trained", )" +
          R"("metrics": {"sharpe_ratio": 1.2345, "annual_return": 0.5, "max_drawdown": -0.02, "calmar_ratio": null, "num_trades": 6}, )" +
          R"("benchmarks": {"flat": {"sharpe_ratio": null, "annual_return": 0.0}, )" +
          R"("buy_and_hold": {"sharpe_ratio": 0.5, "annual_return": 0.1}}, )" +
          R"("settings": {"env": "intraday", "note": "<script>alert(1)</script>", "cost": 0.0005}})");
  std::string equity = std::string(kEquityHeader) + "\n";
  std::string daily = std::string(kDailyReturnsHeader) + "\n";
  double worth = 100000, hold = 100000, close = 100;
  for (const auto& [date, r] : kDaily) {
    const double start = worth;
    for (int bar = 0; bar < 4; ++bar) {
      worth = start * (1 + r * (bar + 1) / 4.0);
      close *= 1.001;
      hold *= 1.001;
      const int position = bar == 0 ? 0 : (date == "2024-01-31" ? -10 : 10);
      equity += BarTime(date, bar) + "," + date + "," + std::to_string(bar) + "," +
                std::to_string(close) + "," + std::to_string(position) + ",0," +
                std::to_string(worth) + "," + std::to_string(hold) + "\n";
    }
    daily += date + "," + std::to_string(r) + ",0.001,0\n";
  }
  WriteAll(dir / kEquityFile, equity);
  WriteAll(dir / kDailyReturnsFile, daily);
  // Two fills in each of 01-31, 02-01, 02-02 (shown) and two in 01-30 (not shown: neither
  // best, worst nor last).
  std::string trades = std::string(kTradesHeader) + "\n";
  for (const auto& [date, r] : kDaily) {
    const bool shortd = date == "2024-01-31";
    trades += BarTime(date, 1) +
              (shortd ? ",SELL,10,100.1,0.5,-10,1001" : ",BUY,10,100.1,0.5,10,-1001") + "\n";
    trades +=
        BarTime(date, 3) + (shortd ? ",BUY,10,100.3,0.5,0,0" : ",SELL,10,100.3,0.5,0,0") + "\n";
  }
  WriteAll(dir / kTradesFile, trades);
  return dir;
}

struct Report {
  std::string html;
  fs::path dir;
};

Report MakeReport(const std::string& name, bool in_sample) {
  Report r;
  r.dir = WriteEvalDir(name, in_sample);
  const Status status = WriteReport(r.dir.string());
  EXPECT_TRUE(status.ok()) << status.ToString();
  r.html = ReadAll(r.dir / kReportFile);
  return r;
}

TEST(Report, IsOneSelfContainedFile) {
  const Report r = MakeReport("self_contained", /*in_sample=*/false);
  ASSERT_FALSE(r.html.empty());
  EXPECT_EQ(r.html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* external :
       {"http://", "https://", "<script", "<link", "url(", "@import", "src="}) {
    EXPECT_EQ(r.html.find(external), std::string::npos) << external;
  }
  // No temporary file is left behind.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(r.dir)) files += entry.is_regular_file();
  EXPECT_EQ(files, 5u);
}

TEST(Report, DrawsEquityDrawdownHistogramAndSessionCharts) {
  const Report r = MakeReport("charts", /*in_sample=*/false);
  EXPECT_GE(CountOf(r.html, "<polyline class=\"series strategy\""), 2u);  // equity, drawdown
  EXPECT_GE(CountOf(r.html, "<polyline class=\"series hold\""), 2u);
  EXPECT_EQ(CountOf(r.html, "<polygon class=\"drawdown-area\""), 1u);
  EXPECT_GE(CountOf(r.html, "<rect class=\"hist-bar"), 5u);
  // Sessions shown: 02-01 (best), 01-31 (worst), 02-02 (last); not 01-30.
  EXPECT_EQ(CountOf(r.html, "<polyline class=\"series price\""), 3u);
  EXPECT_NE(r.html.find("2024-02-01 &middot; best session"), std::string::npos);
  EXPECT_NE(r.html.find("2024-01-31 &middot; worst session"), std::string::npos);
  EXPECT_NE(r.html.find("2024-02-02 &middot; last session"), std::string::npos);
  EXPECT_EQ(r.html.find("2024-01-30 &middot;"), std::string::npos);
  // One marker per fill of the shown sessions: 3 sessions × 2 fills (trades.csv has 8).
  EXPECT_EQ(CountOf(r.html, "class=\"trade-marker "), 6u);
  EXPECT_EQ(CountOf(r.html, "class=\"trade-marker buy\""), 3u);
  EXPECT_EQ(CountOf(r.html, "class=\"trade-marker sell\""), 3u);
  // Positions: long in two shown sessions, short in one (bars 1..3 each).
  EXPECT_EQ(CountOf(r.html, "<rect class=\"pos-long\""), 2u);
  EXPECT_EQ(CountOf(r.html, "<rect class=\"pos-short\""), 1u);
}

TEST(Report, InSampleBannerAppearsOnlyForInSampleRanges) {
  const Report in = MakeReport("in_sample", /*in_sample=*/true);
  EXPECT_NE(in.html.find("id=\"in-sample-banner\""), std::string::npos);
  EXPECT_NE(in.html.find("Metrics <span class=\"tag\">IN-SAMPLE</span>"), std::string::npos);
  const Report out = MakeReport("out_of_sample", /*in_sample=*/false);
  EXPECT_EQ(out.html.find("IN-SAMPLE"), std::string::npos);
  EXPECT_EQ(out.html.find("in-sample-banner"), std::string::npos);
}

TEST(Report, MonthlyTableCompoundsDailyReturnsPerCalendarMonth) {
  const Report r = MakeReport("monthly", /*in_sample=*/false);
  std::map<std::string, double> expected = {{"2024-01", 1.0}, {"2024-02", 1.0}, {"2024-00", 1.0}};
  for (const auto& [date, ret] : kDaily) {
    expected[date.substr(0, 7)] *= 1 + ret;
    expected["2024-00"] *= 1 + ret;
  }
  const std::regex cell("data-month=\"([0-9-]+)\" data-return=\"([^\"]+)\"");
  std::map<std::string, double> found;
  for (auto it = std::sregex_iterator(r.html.begin(), r.html.end(), cell);
       it != std::sregex_iterator(); ++it) {
    found[(*it)[1]] = std::stod((*it)[2]);
  }
  ASSERT_EQ(found.size(), expected.size());
  for (const auto& [month, growth] : expected) {
    ASSERT_TRUE(found.count(month)) << month;
    EXPECT_NEAR(found[month], growth - 1.0, 1e-9) << month;
  }
  EXPECT_NE(r.html.find(">−1.02%<"), std::string::npos);  // Jan: 1.01·0.98 − 1
}

TEST(Report, EscapesTextFromTheFiles) {
  const Report r = MakeReport("escape", /*in_sample=*/false);
  EXPECT_EQ(r.html.find("<b>"), std::string::npos);
  EXPECT_EQ(r.html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(r.html.find("runs/&lt;b&gt;&amp;&quot;x&quot;"), std::string::npos);
  EXPECT_NE(r.html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(HtmlEscape("a<b>&'\""), "a&lt;b&gt;&amp;&#39;&quot;");
}

TEST(Report, MetricsTableShowsStrategyAndBenchmarks) {
  const Report r = MakeReport("metrics", /*in_sample=*/false);
  EXPECT_NE(r.html.find("<td>1.234</td><td>n/a</td><td>0.500</td>"), std::string::npos);
  EXPECT_NE(r.html.find("<td>50.00%</td><td>0.00%</td><td>10.00%</td>"), std::string::npos);
}

TEST(Report, MissingOrMalformedFilesAreErrorsNamingTheFile) {
  const fs::path dir = WriteEvalDir("errors", /*in_sample=*/false);
  WriteAll(dir / kTradesFile, "time,side\n");
  Status s = WriteReport(dir.string());
  EXPECT_TRUE(IsError(s, Status::Code::kDataError, "trades.csv:1"));
  fs::remove(dir / kSummaryFile);
  s = WriteReport(dir.string());
  EXPECT_TRUE(IsError(s, Status::Code::kNotFound, "summary.json"));
  EXPECT_FALSE(fs::exists(dir / kReportFile));
}

// Found by fuzz/eval_dir_fuzz ("report on a summary with nulls"): a null or
// wrongly typed "policy", "in_sample" or "range" threw nlohmann's type_error out of
// WriteReport (an abort in `rltrade report`). Now: nulls and odd types are shown as
// "?" / the default, and an in_sample flag that is not a bool is an error (the IN-SAMPLE
// banner must not vanish because of it).
TEST(Report, SummaryWithNullsOrWrongTypesIsNeverAnException) {
  const fs::path dir = WriteEvalDir("nulls", /*in_sample=*/false);
  for (const char* summary :
       {R"({"policy": null, "in_sample": false, "range": null, "metrics": null,
            "benchmarks": [1], "settings": {"a": null}})",
        R"({"policy": 7, "range": {"name": null, "first": 3}, "metrics": {"sharpe_ratio": "x"}})",
        "[]"}) {
    WriteAll(dir / kSummaryFile, summary);
    Status s;
    EXPECT_NO_THROW(s = WriteReport(dir.string())) << summary;
    if (std::string(summary) == "[]") {
      EXPECT_TRUE(IsError(s, Status::Code::kDataError, "summary.json: not a JSON object"));
    } else {
      EXPECT_TRUE(s.ok()) << summary << ": " << s.ToString();
    }
  }
  WriteAll(dir / kSummaryFile, R"({"in_sample": null, "policy": "trained"})");
  Status s;
  EXPECT_NO_THROW(s = WriteReport(dir.string()));
  EXPECT_EQ(s.code(), Status::Code::kDataError);
  EXPECT_NE(s.message().find("\"in_sample\" must be true or false"), std::string::npos)
      << s.message();
}

TEST(Report, DownsamplesLongRangesToAtMost2000PointsPerSeries) {
  const fs::path dir = WriteEvalDir("long", /*in_sample=*/false);
  std::string equity = std::string(kEquityHeader) + "\n";
  for (int i = 0; i < 10000; ++i) {
    const std::string date =
        "2024-03-" + std::string(i / 1000 < 9 ? "0" : "") + std::to_string(i / 1000 + 1);
    equity += date + "T10:00:00-05:00," + date + "," + std::to_string(i % 1000) + ",100,0,0," +
              std::to_string(100000 + std::sin(i * 0.01) * 1000) + ",100000\n";
  }
  WriteAll(dir / kEquityFile, equity);
  ASSERT_TRUE(WriteReport(dir.string()).ok());
  const std::string html = ReadAll(dir / kReportFile);
  // Plain find, not std::regex: libstdc++'s regex recurses once per matched character and
  // overflowed the stack on this ~30 kB attribute under AddressSanitizer.
  const std::string open = "<polyline class=\"series strategy\" points=\"";
  const size_t begin = html.find(open);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = html.find('"', begin + open.size());
  ASSERT_NE(end, std::string::npos);
  const size_t points = CountOf(html.substr(begin + open.size(), end - begin - open.size()), ",");
  EXPECT_LE(points, 2000u);
  EXPECT_GE(points, 1000u);
}

// ------------------------------------------------------------ headless chromium

using rlt::testing::DistinctPixelValues;
using rlt::testing::kChromium;
using rlt::testing::PageErrors;
using rlt::testing::RunChromium;

TEST(ReportInChromium, RendersChartsWithoutPageErrors) {
  if (access(kChromium, X_OK) != 0)
    GTEST_SKIP() << kChromium << " is absent (scripts/install-deps.sh installs it)";
  const Report r = MakeReport("chromium", /*in_sample=*/true);
  const fs::path png = r.dir / "report.png";
  ASSERT_EQ(RunChromium(r.dir / kReportFile, "--screenshot=" + png.string(), r.dir / "shot.out",
                        r.dir / "shot.err"),
            0)
      << ReadAll(r.dir / "shot.err");
  ASSERT_TRUE(fs::exists(png)) << ReadAll(r.dir / "shot.err");
  EXPECT_GT(fs::file_size(png), 10000u);
  // Text, lines in several colours, tinted cells: far more than a blank page's one colour.
  EXPECT_GT(DistinctPixelValues(png, r.dir), 20);
  EXPECT_EQ(ReadAll(r.dir / "shot.err").find(":CONSOLE("), std::string::npos);
  EXPECT_EQ(PageErrors(r.dir, r.html, "probe"), "");
  // The probe catches errors: a page with a failing script is reported.
  EXPECT_NE(
      PageErrors(r.dir, "<html><head></head><body><script>noSuchFunction();</script></body></html>",
                 "broken"),
      "");
}

TEST(TuneReport, TextChoicesGetAColumnEachAndRejectedTrialsAreCounted) {
  const fs::path dir = FreshDir("tune");
  WriteAll(dir / "study.json",
           R"({"method": "asha", "objective": "sharpe_ratio", "minimize": false, "trials": 4, )"
           R"("space": "\"policy.activation\" = { choice = [\"tanh\", \"relu\"] }\n# note\n)"
           R"(\"algo.learning_rate\" = { log_uniform = [1e-5, 1e-3] }\n"})");
  auto line = [](int trial, int rung, const char* status, const char* objective, const char* act,
                 const char* lr) {
    return fmt::format(
        R"({{"trial": {}, "rung": {}, "steps": {}, "status": "{}", "objective": {}, )"
        R"("seconds": 1.5, "params": {{"policy.activation": "{}", "algo.learning_rate": "{}"}}}})",
        trial, rung, 1000 << rung, status, objective, act, lr);
  };
  WriteAll(dir / "trials.jsonl", line(0, 0, "ok", "0.5", "tanh", "1e-4") + "\n" +
                                     line(1, 0, "rejected", "null", "relu", "2e-5") + "\n" +
                                     line(2, 0, "ok", "1.5", "relu", "5e-4") + "\n" +
                                     line(2, 1, "ok", "1.2", "relu", "5e-4") + "\n" +
                                     R"({"trial": 3, "rung": 0, "sta)");  // cut by a kill
  ASSERT_TRUE(WriteTuneReport(dir.string()).ok());
  const std::string html = ReadAll(dir / kReportFile);
  // Text values are the x ticks of their chart, sorted; the numeric one is on a log axis
  // (1e-4 / 2e-5 ... 5e-4 spans a factor 25).
  EXPECT_NE(html.find(">relu</text>"), std::string::npos);
  EXPECT_NE(html.find(">tanh</text>"), std::string::npos);
  EXPECT_NE(html.find("algo.learning_rate (log scale)"), std::string::npos);
  EXPECT_NE(html.find("1 rejected, 0 failed"), std::string::npos);
  // Three scored rungs: three dots per chart; the best is trial 2 at rung 1 (1.2), not its
  // rung-0 1.5: the highest rung reached decides, as in the study.
  EXPECT_EQ(CountOf(html, "<circle class=\"pt"), 9u);
  const size_t best = html.find("<table class=\"metrics\" id=\"best\">");
  ASSERT_NE(best, std::string::npos);
  EXPECT_NE(html.find("<td>1.200</td>", best), std::string::npos);
  // A study directory without a journal is an error naming the file.
  const fs::path empty = FreshDir("tune_empty");
  WriteAll(empty / "study.json", "{}");
  const Status st = WriteTuneReport(empty.string());
  EXPECT_TRUE(IsError(st, Status::Code::kNotFound, "trials.jsonl"));
}

// The settings table of a report whose summary.settings are `settings` (JSON object text).
std::string SettingsTableOf(const std::string& name, const std::string& settings) {
  const fs::path dir = WriteEvalDir(name, /*in_sample=*/false);
  WriteAll(dir / kSummaryFile,
           R"({"run_dir": "r", "range": {"name": "test", "first": "2024-01-30", "last": )"
           R"("2024-02-02"}, "in_sample": false, "policy": "trained", "metrics": {}, )"
           R"("settings": )" +
               settings + "}");
  EXPECT_TRUE(WriteReport(dir.string()).ok());
  const std::string html = ReadAll(dir / kReportFile);
  const size_t at = html.find("<table class=\"settings\">");
  EXPECT_NE(at, std::string::npos);
  return html.substr(at, html.find("</table>", at) - at);
}

TEST(Report, SettingsShowOnlyTheDataKeysThatApplyToTheSource) {
  const std::string all_data =
      R"("data.file": "bars/SPY.csv", "data.timezone": "America/New_York", )"
      R"("data.symbol": "SPY", "data.on_bad_rows": "fail", "data.session": "", )"
      R"("data.days": "250", "data.bar_minutes": "5", "data.seed": "7", )"
      R"("data.signal_to_noise": "0", "features.preset": "scaled")";
  const std::string file =
      SettingsTableOf("file_settings", R"({"data.source": "file", )" + all_data + "}");
  for (const char* shown : {"data.source", "data.file", "data.timezone", "data.symbol",
                            "data.on_bad_rows", "features.preset"}) {
    EXPECT_NE(file.find(std::string(">") + shown + "<"), std::string::npos) << shown;
  }
  for (const char* hidden :
       {"data.days", "data.bar_minutes", "data.seed", "data.signal_to_noise"}) {
    EXPECT_EQ(file.find(hidden), std::string::npos) << hidden << "\n" << file;
  }
  const std::string synthetic =
      SettingsTableOf("synthetic_settings", R"({"data.source": "synthetic", )" + all_data + "}");
  for (const char* shown : {"data.days", "data.bar_minutes", "data.seed", "data.signal_to_noise"}) {
    EXPECT_NE(synthetic.find(std::string(">") + shown + "<"), std::string::npos) << shown;
  }
  for (const char* hidden :
       {"data.file", "data.timezone", "data.symbol", "data.on_bad_rows", "data.session"}) {
    EXPECT_EQ(synthetic.find(hidden), std::string::npos) << hidden << "\n" << synthetic;
  }
}

TEST(Report, RoundTripsAndFillsAreLabelledApart) {
  const Report r = MakeReport("fills", /*in_sample=*/false);
  // summary num_trades = 6 round trips; trades.csv has 8 fills (no "fills" in the summary:
  // the strategy's count comes from trades.csv).
  const std::regex trips(R"(<th title="num_trades">Round trips \(flat to flat\)</th><td>6</td>)");
  const std::regex fills(R"(<th title="fills">Fills \(orders executed\)</th><td>8</td>)");
  EXPECT_TRUE(std::regex_search(r.html, trips)) << r.html;
  EXPECT_TRUE(std::regex_search(r.html, fills)) << r.html;
  EXPECT_EQ(r.html.find(">Trades<"), std::string::npos);
  EXPECT_NE(r.html.find("Fills (orders executed, trades.csv"), std::string::npos);
}

// Net and gross P&L (summary "pnl") sit under the costs paid; a summary without them (an
// older evaluation) shows neither row.
TEST(Report, ShowsNetAndGrossPnlBesideTheCostsPaid) {
  const fs::path dir = WriteEvalDir("pnl", /*in_sample=*/false);
  WriteAll(dir / kSummaryFile,
           R"({"run_dir": "r", "range": {"name": "test", "first": "2024-01-30", "last": )"
           R"("2024-02-02"}, "in_sample": false, "policy": "trained", )"
           R"("metrics": {"costs_paid": 12.5}, "pnl": {"strategy": {"net": 100, "costs": 12.5, )"
           R"("gross": 112.5}, "flat": {"net": 0, "costs": 0, "gross": 0}, "buy_and_hold": )"
           R"({"net": -50, "costs": 3, "gross": -47}}})");
  ASSERT_TRUE(WriteReport(dir.string()).ok());
  std::string html = ReadAll(dir / kReportFile);
  const std::regex costs(R"(<th title="costs_paid">Costs paid</th><td>12.50</td>)");
  const std::regex net(
      R"(<th title="pnl.net">Net P&amp;L \(after costs\)</th><td>100.00</td><td>0.00</td>)"
      R"(<td>(−|-)50.00</td>)");
  const std::regex gross(R"(<th title="pnl.gross">Gross P&amp;L [^<]*</th><td>112.50</td>)"
                         R"(<td>0.00</td><td>(−|-)47.00</td>)");
  EXPECT_TRUE(std::regex_search(html, costs)) << html;
  EXPECT_TRUE(std::regex_search(html, net)) << html;
  EXPECT_TRUE(std::regex_search(html, gross)) << html;
  EXPECT_LT(html.find("title=\"costs_paid\""), html.find("title=\"pnl.gross\""));
  html = MakeReport("no_pnl", /*in_sample=*/false).html;
  EXPECT_EQ(html.find("pnl.gross"), std::string::npos);
}

// A walk-forward summary directory as evalrun/walkforward.h writes it: `folds` folds of
// `days` sessions each, from 2024-03-01 on (one session a calendar day, for simplicity).
fs::path WriteWalkforwardDir(int folds, int days) {
  const fs::path dir = FreshDir("walkforward");
  std::string daily = "date,return,buy_and_hold,flat,fold\n";
  std::string folds_json;
  int day = 1;
  for (int k = 1; k <= folds; ++k) {
    const std::string first = MarchDate(day), last = MarchDate(day + days - 1);
    for (int i = 0; i < days; ++i, ++day) {
      daily += MarchDate(day) + "," + std::to_string(0.001 * ((day % 3) - 1)) + ",0.002,0," +
               std::to_string(k) + "\n";
    }
    folds_json += std::string(k > 1 ? ", " : "") + R"({"fold": )" + std::to_string(k) +
                  R"(, "run_dir": "wf/fold_)" + std::to_string(k) +
                  R"(", "train": {"first": "2024-01-02", "last": "2024-02-28", "sessions": 40}, )" +
                  R"("test": {"first": ")" + first + R"(", "last": ")" + last +
                  R"(", "sessions": )" + std::to_string(days) +
                  R"(}, "metrics": {"sharpe_ratio": 1.5, "cum_returns_final": 0.01, )"
                  R"("max_drawdown": -0.02}, "benchmarks": {"flat": {"cum_returns_final": 0}, )"
                  R"("buy_and_hold": {"cum_returns_final": 0.02}}})";
  }
  WriteAll(dir / kDailyReturnsFile, daily);
  WriteAll(dir / kSummaryFile,
           R"({"config": "wf.toml", "mode": "expanding", "num_folds": )" + std::to_string(folds) +
               R"(, "notes": [], "range": {"first": "2024-03-01", "last": ")" + MarchDate(day - 1) +
               R"("}, "metrics": {"sharpe_ratio": 1.1, "cum_returns_final": 0.03}, )"
               R"("benchmarks": {"flat": {"sharpe_ratio": null}, "buy_and_hold": )"
               R"({"sharpe_ratio": 0.4}}, "folds": [)" +
               folds_json + "]}");
  return dir;
}

TEST(WalkforwardReport, MarksEveryFoldsTestWindowWithItsDates) {
  const fs::path dir = WriteWalkforwardDir(/*folds=*/3, /*days=*/5);
  ASSERT_TRUE(WriteWalkforwardReport(dir.string()).ok());
  const std::string html = ReadAll(dir / kReportFile);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* external : {"http://", "https://", "<script", "<link", "url(", "src="}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  const std::regex band(
      R"re(<rect class="fold-band [a-z]+" data-fold="(\d+)" data-first="([0-9-]+)" data-last="([0-9-]+)" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)")re");
  std::vector<double> xs;
  int k = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), band); it != std::sregex_iterator();
       ++it, ++k) {
    const std::smatch& m = *it;
    EXPECT_EQ(std::stoi(m[1]), k + 1);
    EXPECT_EQ(m[2].str(), MarchDate(1 + 5 * k));
    EXPECT_EQ(m[3].str(), MarchDate(5 + 5 * k));
    xs.push_back(std::stod(m[4]));
    if (k > 0) {
      EXPECT_NEAR(std::stod(m[5]), xs[k] - xs[k - 1], 0.2);  // equal windows, adjacent
    }
    EXPECT_NE(html.find(">fold " + std::to_string(k + 1) + "</text>"), std::string::npos);
    EXPECT_NE(html.find("<th>fold " + std::to_string(k + 1) + "</th>"), std::string::npos);
  }
  EXPECT_EQ(k, 3);
  EXPECT_EQ(html.find("fold 0"), std::string::npos);
  // Benchmarks in the metrics table and on the chart.
  EXPECT_NE(html.find("<th>flat</th><th>buy-and-hold</th>"), std::string::npos);
  EXPECT_NE(html.find("polyline class=\"series hold\""), std::string::npos);
}

TEST(WalkforwardReport, AFoldColumnThatIsNotANumberIsAnErrorNamingTheLine) {
  const fs::path dir = WriteWalkforwardDir(/*folds=*/2, /*days=*/3);
  WriteAll(dir / kDailyReturnsFile, "date,return,buy_and_hold,flat,fold\n2024-03-01,0,0,0,x\n");
  const Status s = WriteWalkforwardReport(dir.string());
  ASSERT_TRUE(IsError(s, Status::Code::kDataError, std::string(kDailyReturnsFile) + ":2:"));
}

}  // namespace
}  // namespace rlt::eval

namespace rlt::eval {
namespace {

// An evaluation across `seeds` seeds with a value for every metric of the table.
fs::path WriteSeedsDir(int seeds) {
  const fs::path dir = FreshDir("seeds_" + std::to_string(seeds));
  nlohmann::json metrics = nlohmann::json::object(), across = nlohmann::json::object();
  for (const MetricInfo& row : MetricTable()) {
    const double v = row.kind == MetricKind::kPercent ? -0.123456 : -1234.5678;
    metrics[row.key] = v;
    across[row.key] = {{"mean", v}, {"std", v}, {"min", v}, {"max", v}};
  }
  nlohmann::json runs = nlohmann::json::array();
  std::string seeds_csv = "date";
  for (int s = 0; s < seeds; ++s) {
    runs.push_back({{"seed", 1000 + s}, {"eval_dir", "seed_x"}, {"metrics", metrics}});
    seeds_csv += ",seed_" + std::to_string(1000 + s);
  }
  seeds_csv += "\n";
  std::string daily = std::string(kDailyReturnsHeader) + "\n";
  for (int d = 1; d <= 5; ++d) {
    daily += MarchDate(d) + ",0.01,0.002,0\n";
    seeds_csv += MarchDate(d);
    for (int s = 0; s < seeds; ++s) seeds_csv += ",0.01";
    seeds_csv += "\n";
  }
  const nlohmann::json summary = {
      {"run_dir", "runs/many"},
      {"range", {{"name", "test"}, {"first", MarchDate(1)}, {"last", MarchDate(5)}}},
      {"in_sample", false},
      {"seeds", seeds},
      {"runs", runs},
      {"across_seeds", across},
      {"metrics", metrics},
      {"benchmarks", {{"flat", metrics}, {"buy_and_hold", metrics}}}};
  WriteAll(dir / kSummaryFile, summary.dump(2));
  WriteAll(dir / kDailyReturnsFile, daily);
  WriteAll(dir / "seeds_daily_returns.csv", seeds_csv);
  return dir;
}

// The text of the first <table> whose opening tag contains `tag`.
std::string TableOf(const std::string& html, const std::string& tag) {
  const size_t begin = html.find(tag);
  if (begin == std::string::npos) return "";
  return html.substr(begin, html.find("</table>", begin) - begin);
}

// The across-seed page grows down, not across, with the number of seeds: the spread table
// has its four columns and the per-seed table one row per seed under the same header, so
// ten seeds fit a 1280 px page as three do (the column-per-seed table it replaces was
// cut off with five; measured in headless Chromium at 1200 px with ten seeds).
TEST(SeedsReport, MoreSeedsAddRowsNotColumns) {
  std::string header[2];
  for (int k = 0; k < 2; ++k) {
    const int seeds = k == 0 ? 3 : 10;
    const fs::path dir = WriteSeedsDir(seeds);
    ASSERT_TRUE(WriteSeedsReport(dir.string()).ok());
    const std::string html = ReadAll(dir / kReportFile);
    const std::string spread = TableOf(html, "<h2>Across seeds</h2>");
    EXPECT_NE(spread.find("<tr><th></th><th>mean</th><th>std</th><th>min</th><th>max</th></tr>"),
              std::string::npos);
    EXPECT_EQ(spread.find("seed_"), std::string::npos);
    const std::string per_seed = TableOf(html, "<table class=\"metrics seeds\">");
    EXPECT_EQ(CountOf(per_seed, "<tr>"), static_cast<size_t>(seeds + 1));
    EXPECT_NE(per_seed.find("<th>seed_" + std::to_string(999 + seeds) + "</th>"),
              std::string::npos);
    header[k] = per_seed.substr(0, per_seed.find("</tr>"));
    EXPECT_LE(CountOf(header[k], "<th"), 9u);
  }
  EXPECT_EQ(header[0], header[1]);
}

}  // namespace
}  // namespace rlt::eval
