// End-to-end tests of markets as they are: a run on an exchange calendar (NYSE's early
// close of 2025-07-03 is a session of its real length, its holiday of 2025-07-04 has no
// session though the file has bars then), a market that never closes (trading days cut
// at midnight across a month boundary, positions carried, 365 periods a year, funding
// payments), and the bad calendar files and settings that must leave nothing behind.
// Expected values come from the exchanges' published hours and from the files the tests
// write, recomputed here, never from our own earlier output.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "core/civil_time.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunCli;

// A smooth, deterministic price path with consistent OHLC.
std::string Bar(const std::string& time, int i) {
  const double p = 100.0 * (1.0 + 0.01 * std::sin(i / 37.0) + 0.004 * std::sin(i / 5.3));
  const double q =
      100.0 * (1.0 + 0.01 * std::sin((i + 1) / 37.0) + 0.004 * std::sin((i + 1) / 5.3));
  return fmt::format("{},{:.4f},{:.4f},{:.4f},{:.4f},{}\n", time, p, std::max(p, q) + 0.01,
                     std::min(p, q) - 0.01, q, 1000 + i % 17);
}

// NYSE-style 1-minute bars 04:00-19:59 (naive New York times, as the SPY file) on each
// weekday from 2025-06-23 to 2025-07-09, the holiday 2025-07-04 included.
std::string NyseMinuteFile() {
  std::string s = "date,open,high,low,close,volume\n";
  int i = 0;
  for (int64_t d = DaysFromCivil(2025, 6, 23); d <= DaysFromCivil(2025, 7, 9); ++d) {
    if (Weekday(d) == 0 || Weekday(d) == 6) continue;
    const std::string date = FormatDate(DateKey(CivilFromDays(d)));
    for (int m = 4 * 60; m < 20 * 60; ++m) {
      s += Bar(fmt::format("{} {:02}:{:02}:00", date, m / 60, m % 60), i++);
    }
  }
  return s;
}

// 5-minute bars around the clock (UTC) from 2025-05-29 12:00 to 2025-06-06 11:55: the
// first and last days are partial.
std::string AroundTheClockFile() {
  std::string s = "timestamp,open,high,low,close,volume\n";
  int i = 0;
  const int64_t start = DaysFromCivil(2025, 5, 29) * 86400 + 12 * 3600;
  const int64_t end = DaysFromCivil(2025, 6, 6) * 86400 + 12 * 3600;
  for (int64_t t = start; t < end; t += 300) s += Bar(FormatIso8601(t, 0), i++);
  return s;
}

constexpr const char* kNyseConfig = R"([run]
total_steps = 1024
seed = 1
threads = 1
[data]
source = "file"
file = "spy.csv"
calendar = "XNYS"
[split]
train = "2025-06-23:2025-07-01"
test = "2025-07-02:2025-07-09"
[env]
id = "intraday"
action_mode = "target_position"
num_envs = 4
[algo]
n_steps = 64
batch_size = 128
n_epochs = 1
)";

constexpr const char* kCryptoConfig = R"([run]
total_steps = 1024
seed = 1
threads = 1
[data]
source = "file"
file = "btc.csv"
session = "24h"
[split]
train = "2025-05-30:2025-06-02"
test = "2025-06-03:2025-06-05"
[env]
id = "intraday"
action_mode = "target_position"
num_envs = 4
lot_size = 0.001
EXTRA
[algo]
n_steps = 64
batch_size = 128
n_epochs = 1
)";

class MarketsCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(rlt::testing::NewScratchDir("rlt_markets_"));
    rlt::testing::WriteFile(*dir_ / "spy.csv", NyseMinuteFile());
    rlt::testing::WriteFile(*dir_ / "btc.csv", AroundTheClockFile());
    rlt::testing::WriteFile(*dir_ / "spy.toml", kNyseConfig);
    rlt::testing::WriteFile(*dir_ / "btc.toml", Crypto(""));
    rlt::testing::WriteFile(*dir_ / "btc_flat.toml", Crypto("flatten_at_close = true"));
    // Funding at the midnight boundary of 2025-06-04 (the first bar of that trading day)
    // and at 08:00 and 16:00 that day.
    rlt::testing::WriteFile(*dir_ / "funding.csv",
                            "time,rate\n2025-06-04T00:00:00Z,0.001\n2025-06-04 08:00:00,-0.0005\n"
                            "2025-06-04T16:00:00+00:00,0.0002\n");
    rlt::testing::WriteFile(*dir_ / "btc_funding.toml", Crypto("funding_file = \"funding.csv\""));
    for (const char* run : {"spy", "btc", "btc_flat", "btc_funding"}) {
      auto trained = RunCli(fmt::format("train {0}.toml --run-dir run_{0} --quiet", run),
                            "cd " + dir_->string() + " &&");
      ASSERT_EQ(trained.exit_code, 0) << run << ": " << trained.out;
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string Crypto(const std::string& extra) {
    std::string c = kCryptoConfig;
    const bool sets_flatten = extra.find("flatten_at_close") != std::string::npos;
    c.replace(c.find("EXTRA"), 5, sets_flatten ? extra : "flatten_at_close = false\n" + extra);
    return c;
  }
  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }
  static testing_util::CmdResult In(const std::string& args) {
    return RunCli(args, "cd " + dir_->string() + " &&");
  }
  // Rows of a CSV as cells, header first.
  static std::vector<std::vector<std::string>> Rows(const std::string& path) {
    std::vector<std::vector<std::string>> out;
    for (const std::string& l : rlt::testing::Lines(ReadFile(path))) {
      out.push_back(rlt::testing::Cells(l));
    }
    return out;
  }
  static fs::path* dir_;
};
fs::path* MarketsCli::dir_ = nullptr;

TEST_F(MarketsCli, TheRunRecordsTheCalendarAndItsZone) {
  const std::string config = ReadFile(Path("run_spy/config.toml"));
  EXPECT_NE(config.find("calendar = \"XNYS\""), std::string::npos) << config;
  EXPECT_NE(config.find("timezone = \"America/New_York\""), std::string::npos) << config;
}

// The early close of 2025-07-03 (13:00) is a session of 210 one-minute bars that the
// environment flattens at its last bar, 12:59; 2025-07-04 (Independence Day) has no
// session although the file has bars then.
TEST_F(MarketsCli, AnEarlyCloseIsASessionOfItsRealLength) {
  auto eval = In("eval run_spy --range test --policy buy-and-hold");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  const fs::path ev = *dir_ / "run_spy/eval/test.buy-and-hold";
  std::map<std::string, int> bars_per_day;
  for (const auto& row : Rows((ev / "equity.csv").string())) {
    if (row[0] != "timestamp") ++bars_per_day[row[1]];
  }
  const std::map<std::string, int> expected = {{"2025-07-02", 390},
                                               {"2025-07-03", 210},
                                               {"2025-07-07", 390},
                                               {"2025-07-08", 390},
                                               {"2025-07-09", 390}};
  EXPECT_EQ(bars_per_day, expected);
  // Buy-and-hold holds through the day and is flattened at the session's close: the
  // closing SELL of 2025-07-03 is at 12:59 New York time.
  bool flattened_at_early_close = false;
  for (const auto& row : Rows((ev / "trades.csv").string())) {
    if (row[0] == "2025-07-03T12:59:00-04:00") {
      flattened_at_early_close = row[1] == "SELL" && std::stod(row[5]) == 0;
    }
    EXPECT_EQ(row[0].find("2025-07-04"), std::string::npos) << row[0];
  }
  EXPECT_TRUE(flattened_at_early_close);
  const auto summary = nlohmann::json::parse(ReadFile((ev / "summary.json").string()));
  EXPECT_EQ(summary.at("periods_per_year"), 252);
}

// data check --calendar on the fixture: the holiday with bars, the early close and the
// bars after it, no missing session.
TEST_F(MarketsCli, DataCheckReportsHolidaysWithBarsAndEarlyCloses) {
  auto check = In("data check spy.csv --calendar XNYS --json");
  ASSERT_EQ(check.exit_code, 0) << check.out;
  const auto j = nlohmann::json::parse(check.out.substr(check.out.find('{')));
  ASSERT_EQ(j.at("holidays_with_bars").size(), 1u);
  EXPECT_EQ(j.at("holidays_with_bars")[0].at("date"), "2025-07-04");
  EXPECT_EQ(j.at("holidays_with_bars")[0].at("rows"), 16 * 60);
  ASSERT_EQ(j.at("early_closes").size(), 1u);
  EXPECT_EQ(j.at("early_closes")[0].at("date"), "2025-07-03");
  EXPECT_EQ(j.at("early_closes")[0].at("rows_after_close"), 180);
  EXPECT_EQ(j.at("missing_sessions").size(), 0u);
  EXPECT_EQ(j.at("timezone"), "America/New_York");
}

// A market that never closes: trading days are cut at midnight UTC across the month
// boundary, the partial first and last days are dropped, positions are carried from one
// day to the next (no fill at any day's last bar), and ratios are annualised with 365.
TEST_F(MarketsCli, AroundTheClockCarriesPositionsAcrossDays) {
  auto eval = In("eval run_btc --range test --policy buy-and-hold");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  const fs::path ev = *dir_ / "run_btc/eval/test.buy-and-hold";
  std::vector<std::string> days;
  for (const auto& row : Rows((ev / "daily_returns.csv").string())) {
    if (row[0] != "date") days.push_back(row[0]);
  }
  EXPECT_EQ(days, (std::vector<std::string>{"2025-06-03", "2025-06-04", "2025-06-05"}));
  std::set<std::string> day_ends;  // the last bar of each trading day: 23:55 UTC
  for (const std::string& d : days) day_ends.insert(d + "T23:55:00+00:00");
  for (const auto& row : Rows((ev / "trades.csv").string())) {
    EXPECT_EQ(day_ends.count(row[0]), 0u) << "a fill at a day's close: " << row[0];
  }
  for (const auto& row : Rows((ev / "equity.csv").string())) {
    if (day_ends.count(row[0]) != 0) {
      EXPECT_GT(std::stod(row[4]), 0) << row[0];  // still held
    }
  }
  const auto summary = nlohmann::json::parse(ReadFile((ev / "summary.json").string()));
  EXPECT_EQ(summary.at("periods_per_year"), 365);
  // The run's days: 2025-05-29 (from 12:00) and 2025-06-06 (to 11:55) were partial.
  const auto record = nlohmann::json::parse(ReadFile(Path("run_btc/data.json")));
  const auto& sessions = record.at("files")[0].at("sessions");
  EXPECT_EQ(sessions.front().at("date"), "2025-05-30");

  // With flatten_at_close = true the same policy sells at every day's last bar.
  auto flat = In("eval run_btc_flat --range test --policy buy-and-hold");
  ASSERT_EQ(flat.exit_code, 0) << flat.out;
  int closes = 0;
  for (const auto& row : Rows(Path("run_btc_flat/eval/test.buy-and-hold/trades.csv"))) {
    closes += day_ends.count(row[0]) && row[1] == "SELL";
  }
  EXPECT_EQ(closes, 3);
}

// Funding: the cash each bar loses beyond its fills is the funding due then, rate x the
// position held into the bar x the bar's open — at the midnight boundary (carried across
// it, paid at the day's first step), at 08:00 and at 16:00 — and nothing at any other bar.
TEST_F(MarketsCli, FundingIsPaidOnThePositionHeldAtEachPaymentTime) {
  auto eval = In("eval run_btc_funding --range test --policy buy-and-hold");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  const fs::path ev = *dir_ / "run_btc_funding/eval/test.buy-and-hold";
  std::map<std::string, double> opens;
  for (const auto& row : Rows(Path("btc.csv"))) {
    if (row[0] == "timestamp") continue;  // Z written, +00:00 in equity.csv
    opens[row[0].substr(0, row[0].size() - 1) + "+00:00"] = std::stod(row[1]);
  }
  std::map<std::string, double> fill_cash;  // cash change of the fills at each time
  for (const auto& row : Rows((ev / "trades.csv").string())) {
    if (row[0] == "time") continue;
    const double qty = std::stod(row[2]) * (row[1] == "BUY" ? 1 : -1);
    fill_cash[row[0]] += -qty * std::stod(row[3]) - std::stod(row[4]);
  }
  // The midnight payment falls on the first bar of 2025-06-04, which has no step of its
  // own: it is paid at the next bar's open, 00:05.
  const std::map<std::string, double> rates = {{"2025-06-04T00:05:00+00:00", 0.001},
                                               {"2025-06-04T08:00:00+00:00", -0.0005},
                                               {"2025-06-04T16:00:00+00:00", 0.0002}};
  const auto rows = Rows((ev / "equity.csv").string());
  int paid = 0;
  for (size_t i = 2; i < rows.size(); ++i) {
    const std::string& t = rows[i][0];
    const double cash_change = std::stod(rows[i][5]) - std::stod(rows[i - 1][5]);
    const double residual = cash_change - fill_cash[t];
    const double held = std::stod(rows[i - 1][4]);
    const auto it = rates.find(t);
    // The open in the file is rounded to 4 decimals, as the environment read it.
    const double expected = it == rates.end() ? 0.0 : -it->second * held * opens.at(t);
    const double scale = std::fabs(held) * opens.at(t) + 1.0;
    EXPECT_NEAR(residual, expected, 1e-9 * scale) << t;
    if (it != rates.end() && held != 0) ++paid;
  }
  EXPECT_EQ(paid, 3);
}

// A paper replay of the carried-position run trades exactly as eval did.
TEST_F(MarketsCli, PaperReplayOfAnAroundTheClockRunMatchesEval) {
  auto eval = In("eval run_btc --range test");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  auto paper = In("paper run_btc --feed replay:btc.csv --start 2025-06-03 --quiet --journal j");
  ASSERT_EQ(paper.exit_code, 0) << paper.out;
  std::string ev;
  for (const auto& e : fs::directory_iterator(Path("run_btc/eval"))) {
    if (e.path().filename().string().rfind("test", 0) == 0 &&
        e.path().filename().string().find("buy-and-hold") == std::string::npos) {
      ev = e.path().string();
    }
  }
  ASSERT_FALSE(ev.empty());
  // The replay walks to the file's end (2025-06-05 is its last full day).
  EXPECT_EQ(ReadFile(Path("j/daily_returns.csv")), ReadFile(ev + "/daily_returns.csv"));
  EXPECT_EQ(ReadFile(Path("j/trades.csv")), ReadFile(ev + "/trades.csv"));
}

TEST_F(MarketsCli, BadCalendarsAndSettingsAreClearErrorsAndLeaveNoRun) {
  struct Case {
    std::string name, data_lines, calendar_text, expect;
  };
  const Case cases[] = {
      {"reversed", "calendar = \"cal.csv\"",
       "date,open,close\n2025-06-23,09:30,16:00\n2025-06-24,16:00,09:30\n",
       "cal.csv:3: field 'close': the session is reversed"},
      {"overlap", "calendar = \"cal.csv\"",
       "# base = XNYS\ndate,open,close\n2025-06-23,09:30,12:00\n2025-06-23,11:00,16:00\n",
       "cal.csv:4: field 'date': 2025-06-23 is listed twice"},
      {"zone", "calendar = \"XNYS\"\ntimezone = \"UTC\"", "",
       "keeps the hours of America/New_York"},
      {"both", "calendar = \"XNYS\"\nsession = \"09:30-16:00\"", "", "remove session"},
      {"unknown", "calendar = \"XLON\"", "", "name a built-in calendar (XNYS, XNSE)"},
      {"boundary", "day_boundary = \"17:00\"", "", "set [data] session = \"24h\""},
  };
  for (const Case& c : cases) {
    std::string config = kNyseConfig;
    config.replace(config.find("calendar = \"XNYS\""), 17, c.data_lines);
    rlt::testing::WriteFile(*dir_ / ("bad_" + c.name + ".toml"), config);
    if (!c.calendar_text.empty()) rlt::testing::WriteFile(*dir_ / "cal.csv", c.calendar_text);
    auto r = In("train bad_" + c.name + ".toml --run-dir bad_run --quiet");
    EXPECT_NE(r.exit_code, 0) << c.name;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.name << ": " << r.out;
    EXPECT_FALSE(fs::exists(Path("bad_run"))) << c.name;
  }
  // A funding file with a time out of order names its line and column.
  rlt::testing::WriteFile(*dir_ / "bad_funding.csv",
                          "time,rate\n2025-06-04T08:00:00Z,0.001\n2025-06-04T00:00:00Z,0.001\n");
  rlt::testing::WriteFile(*dir_ / "bad_funding.toml", Crypto("funding_file = \"bad_funding.csv\""));
  auto r = In("train bad_funding.toml --run-dir bad_run --quiet");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("bad_funding.csv:3: column 'time'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("bad_run")));
}

// The shipped configs on the shared files (skipped without them): SPY on the NYSE calendar
// (2025-07-03, in the training range, is a session of 210 bars) and BTCUSDT around the
// clock (the partial 2025-05-30 dropped; 365 periods a year).
TEST_F(MarketsCli, ShippedConfigsOnTheSharedFiles) {
  const fs::path data = fs::path(RLT_SHARED_DIR) / "data" / "intraday";
  if (!fs::exists(data / "SPY_1min_2025-07-01_2025-07-30_ext_hours.csv") ||
      !fs::exists(data / "BTCUSDT_bybit_linear_1min_2025-05-30_2025-06-29.csv")) {
    GTEST_SKIP() << "the shared intraday files are absent";
  }
  const fs::path configs = fs::path(RLT_SOURCE_DIR) / "configs";
  for (const char* name : {"intraday_spy_xnys", "intraday_btc_24h"}) {
    auto r = In(fmt::format("train {} --set run.total_steps=2048 --run-dir shipped_{} --quiet",
                            (configs / (std::string(name) + ".toml")).string(), name));
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.out;
    r = In(fmt::format("eval shipped_{} --range test", name));
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.out;
  }
  const auto spy = nlohmann::json::parse(ReadFile(Path("shipped_intraday_spy_xnys/data.json")));
  int early = 0;
  for (const auto& s : spy.at("files")[0].at("sessions")) {
    if (s.at("date") == "2025-07-03") early = s.at("bars");
  }
  EXPECT_EQ(early, 210);
  const auto btc = nlohmann::json::parse(ReadFile(Path("shipped_intraday_btc_24h/data.json")));
  EXPECT_EQ(btc.at("files")[0].at("sessions")[0].at("date"), "2025-05-31");
  const auto summary =
      nlohmann::json::parse(ReadFile(Path("shipped_intraday_btc_24h/eval/test/summary.json")));
  EXPECT_EQ(summary.at("periods_per_year"), 365);
}

}  // namespace
}  // namespace rlt::cli
