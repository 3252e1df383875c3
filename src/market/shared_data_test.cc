// End-to-end checks of the CSV reader on the real files in ../shared/data (skipped when
// that folder is absent). Expected counts come from MANIFEST.csv, README.md and an
// independent Python count of the files, never from this reader's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "core/status_test_util.h"
#include "market/csv.h"

namespace rlt::market {
namespace {

namespace fs = std::filesystem;
const std::string kData = RLT_SHARED_DIR "/data";

// local_file -> data rows (lines_incl_header - 1).
std::map<std::string, int64_t> ManifestRows() {
  std::map<std::string, int64_t> rows;
  std::ifstream in(kData + "/MANIFEST.csv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    rows[line.substr(0, a)] = std::stoll(line.substr(b + 1, c - b - 1)) - 1;
  }
  return rows;
}

std::string TimezoneFor(const std::string& rel) {
  if (rel.find("NSE_") != std::string::npos) return "Asia/Kolkata";
  if (rel.find("SPY_1min") != std::string::npos) return "America/New_York";
  return "UTC";
}

struct Read {
  Result<MarketData> data = Status::DataError("not read");
  DataReport report;
};

Read ReadDrop(const std::string& rel) {
  CsvReadOptions o;
  o.timezone = TimezoneFor(rel);
  o.on_bad_rows = BadRowPolicy::kDrop;
  Read r;
  r.data = ReadBarsCsv(kData + "/" + rel, o, &r.report);
  return r;
}

int64_t CountRule(const DataReport& r, const std::string& rule, bool distinct_lines = false) {
  std::set<int64_t> lines;
  int64_t n = 0;
  for (const DataProblem& p : r.problems) {
    if (p.rule != rule) continue;
    ++n;
    lines.insert(p.line);
  }
  return distinct_lines ? static_cast<int64_t>(lines.size()) : n;
}

class SharedData : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kData)) GTEST_SKIP() << kData << " not present";
  }
};

TEST_F(SharedData, EveryBarFileReadsWithTheManifestRowCount) {
  const auto manifest = ManifestRows();
  int files = 0;
  for (const char* sub : {"daily_multi", "index", "intraday"}) {
    for (const auto& entry : fs::directory_iterator(kData + "/" + sub)) {
      const std::string rel = std::string(sub) + "/" + entry.path().filename().string();
      SCOPED_TRACE(rel);
      ++files;
      Read r = ReadDrop(rel);
      if (rel.find("industry_map") != std::string::npos) {
        ASSERT_TRUE(IsError(r.data, Status::Code::kDataError, "no time column"));
        continue;
      }
      ASSERT_TRUE(r.data.ok()) << r.data.status().ToString();
      ASSERT_TRUE(manifest.count(rel));
      EXPECT_EQ(r.report.rows_read, manifest.at(rel));
      int64_t kept = 0;
      for (const Bars& b : r.data->symbols) kept += static_cast<int64_t>(b.size());
      EXPECT_EQ(kept + r.report.rows_dropped, r.report.rows_read);
    }
  }
  EXPECT_EQ(files, 13);  // 4 + 4 + 5 files
}

TEST_F(SharedData, CleanFilesReadWithoutProblemsUnderTheFailPolicy) {
  for (const char* rel : {"daily_multi/dow30_yf_adj_2010-01-04_2023-12-29_long.csv",
                          "index/DJI_yf_2010-01-04_2023-12-29.csv",
                          "index/GSPC_yahoo_1927-12-30_2026-08-21_close_volume.csv",
                          "index/SPY_ETF_2009_2020_finrl.csv",
                          "intraday/SPY_1min_2025-07-01_2025-07-30_ext_hours.csv",
                          "intraday/BTCUSDT_bybit_linear_1min_2025-05-30_2025-06-29.csv",
                          "intraday/NSE_BPCL_5min_2023-07-03_2024-06-28_clean.csv",
                          "intraday/NSE_HDFCLIFE_5min_2023-07-03_2024-06-28_clean.csv",
                          "intraday/NSE_TATASTEEL_5min_2023-07-03_2024-06-28_clean.csv"}) {
    SCOPED_TRACE(rel);
    CsvReadOptions o;
    o.timezone = TimezoneFor(rel);
    DataReport report;
    Result<MarketData> data = ReadBarsCsv(kData + "/" + std::string(rel), o, &report);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    EXPECT_TRUE(report.problems.empty());
  }
}

TEST_F(SharedData, Dow30HasTwentyNineSymbolsOf3522DaysAndReadsFast) {
  const auto start = std::chrono::steady_clock::now();
  Read r = ReadDrop("daily_multi/dow30_yf_adj_2010-01-04_2023-12-29_long.csv");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "dow30 (102k rows) read in " << seconds * 1000 << " ms\n";
  RecordProperty("dow30_read_ms", static_cast<int>(seconds * 1000));
  ASSERT_TRUE(r.data.ok());
  ASSERT_EQ(r.data->symbols.size(), 29u);
  for (const Bars& b : r.data->symbols) {
    EXPECT_EQ(b.size(), 3522u) << b.symbol;
    EXPECT_EQ(b.sessions.size(), 3522u) << b.symbol;
  }
#ifdef NDEBUG
  EXPECT_LT(seconds, 1.0);
#endif
}

TEST_F(SharedData, NseFilesHave247IstSessionsMostlyOf75Bars) {
  for (const char* name : {"BPCL", "HDFCLIFE", "TATASTEEL"}) {
    const std::string rel =
        std::string("intraday/NSE_") + name + "_5min_2023-07-03_2024-06-28_clean.csv";
    Read r = ReadDrop(rel);
    ASSERT_TRUE(r.data.ok());
    const Bars& b = r.data->symbols[0];
    ASSERT_EQ(b.sessions.size(), 247u) << name;
    const auto full = std::count_if(b.sessions.begin(), b.sessions.end(),
                                    [](const Session& s) { return s.size() == 75; });
    EXPECT_EQ(full, 244) << name;  // 2 sessions of 21 bars and 1 of 12
    EXPECT_EQ(b.sessions[0].date, 20230703);
    EXPECT_EQ(b.utc_offset[0], 19800);
  }
}

TEST_F(SharedData, SpyMinuteBarsInNewYorkHave21Sessions) {
  Read r = ReadDrop("intraday/SPY_1min_2025-07-01_2025-07-30_ext_hours.csv");
  ASSERT_TRUE(r.data.ok());
  const Bars& b = r.data->symbols[0];
  EXPECT_EQ(b.sessions.size(), 21u);
  EXPECT_EQ(b.sessions.front().date, 20250701);
  EXPECT_EQ(b.utc_offset[0], -4 * 3600);  // EDT in July
}

// The README of ../shared/data: 390 regular bars a day (09:30..15:59 by bar start).
TEST_F(SharedData, SpyRegularSessionKeeps390MinuteBarsPerDay) {
  CsvReadOptions o;
  o.timezone = "America/New_York";
  o.session = *ParseSessionHours("09:30-16:00", "--session");
  DataReport report;
  Result<MarketData> data =
      ReadBarsCsv(kData + "/intraday/SPY_1min_2025-07-01_2025-07-30_ext_hours.csv", o, &report);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Bars& b = data->symbols[0];
  ASSERT_EQ(b.sessions.size(), 21u);
  for (const Session& s : b.sessions) EXPECT_EQ(s.size(), 390) << s.date;
  EXPECT_GT(report.rows_outside_session, 0);
  EXPECT_EQ(report.rows_read - report.rows_outside_session, 21 * 390);
}

TEST_F(SharedData, BitcoinMinuteBarsSpan31UtcDates) {
  Read r = ReadDrop("intraday/BTCUSDT_bybit_linear_1min_2025-05-30_2025-06-29.csv");
  ASSERT_TRUE(r.data.ok());
  EXPECT_EQ(r.data->symbols[0].sessions.size(), 31u);  // May 30 16:39 .. Jun 29 16:38
}

TEST_F(SharedData, DefectiveDjiaFileReportsItsKnownDefects) {
  const std::string rel = "daily_multi/djia31_googlefinance_2006-01-03_2017-12-29_long.csv";
  CsvReadOptions o;
  DataReport report;
  Result<MarketData> fail = ReadBarsCsv(kData + "/" + rel, o, &report);
  ASSERT_TRUE(IsError(fail, Status::Code::kDataError, "rltrade data check"));
  EXPECT_EQ(CountRule(report, "empty field", /*distinct_lines=*/true), 25);
  EXPECT_EQ(CountRule(report, "empty field"), 55);  // 25 open + 10 high + 20 low
  EXPECT_EQ(CountRule(report, "high<max(open,close)") + CountRule(report, "low>min(open,close)"),
            151);
  EXPECT_EQ(CountRule(report, "high<max(open,close)"), 65);
  EXPECT_EQ(CountRule(report, "low>min(open,close)"), 86);
  EXPECT_EQ(CountRule(report, "non-positive price"), 1);  // HD 2009-04-17 low 0.0
  Read r = ReadDrop(rel);
  ASSERT_TRUE(r.data.ok());
  EXPECT_EQ(r.data->symbols.size(), 31u);
  EXPECT_EQ(r.report.rows_dropped, 25 + 151 + 1);
}

TEST_F(SharedData, FinrlTradeDataReportsClosesBelowTheLow) {
  Read r = ReadDrop("daily_multi/finrl_neurips2018_trade_data_2020-07-01_2021-10-27.csv");
  ASSERT_TRUE(r.data.ok());
  EXPECT_EQ(CountRule(r.report, "low>min(open,close)"), 8345);
  EXPECT_EQ(CountRule(r.report, "high<max(open,close)"), 0);
  // Every one of those rows has close < low (independent count); 18 of the 29 tickers
  // keep at least one consistent row.
  EXPECT_NE(r.report.problems[0].detail.find("close="), std::string::npos);
  EXPECT_EQ(r.data->symbols.size(), 18u);
}

TEST_F(SharedData, GspcOhlcvReportsZeroOpensFrom1962To1982) {
  Read r = ReadDrop("index/GSPC_yahoo_1927-12-30_2023-12-28_ohlcv.csv");
  ASSERT_TRUE(r.data.ok());
  EXPECT_EQ(CountRule(r.report, "non-positive price"), 5075);
  EXPECT_EQ(r.report.problems.size(), 5075u);
  EXPECT_EQ(r.report.problems.front().column, "Open");
}

TEST_F(SharedData, CloseOnlyGspcFileIsNotedAndReads) {
  Read r = ReadDrop("index/GSPC_yahoo_1927-12-30_2026-08-21_close_volume.csv");
  ASSERT_TRUE(r.data.ok());
  ASSERT_FALSE(r.report.notes.empty());
  EXPECT_NE(r.report.notes[0].find("set to close"), std::string::npos);
  const Bars& b = r.data->symbols[0];
  EXPECT_EQ(b.open, b.close);
}

TEST_F(SharedData, CompustatSpyEtfReadsCleanly) {
  Read r = ReadDrop("index/SPY_ETF_2009_2020_finrl.csv");
  ASSERT_TRUE(r.data.ok());
  EXPECT_TRUE(r.report.problems.empty());
  ASSERT_NE(r.data->Find("SPY"), nullptr);
  EXPECT_EQ(r.data->Find("SPY")->size(), 2886u);
  EXPECT_EQ(r.data->Find("SPY")->open[0], 90.44);  // prcod on 20090102
}

}  // namespace
}  // namespace rlt::market
