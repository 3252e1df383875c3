// Tests for market/csv: small fixtures written here, each checked against facts we
// state in the fixture itself (times, line numbers, columns).
#include "market/csv.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "core/civil_time.h"
#include "core/status_test_util.h"

namespace rlt::market {
namespace {

int64_t Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

class CsvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "rlt_csv_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // Reads with drop semantics so that the problems can be inspected.
  Result<MarketData> ReadDrop(const std::string& path, DataReport* report,
                              const std::string& tz = "UTC") {
    CsvReadOptions o;
    o.timezone = tz;
    o.on_bad_rows = BadRowPolicy::kDrop;
    return ReadBarsCsv(path, o, report);
  }
  std::string dir_;
};

TEST_F(CsvTest, ReadsDatesWithCapitalisedHeadersAndIgnoresExtraColumns) {
  const std::string path = Write("GSPC.csv",
                                 "Date,Open,High,Low,Close,Adj Close,Volume\n"
                                 "2024-01-02,10,11,9,10.5,10.4,1000\n"
                                 "2024-01-03,10.5,12,10,11,10.9,2000\n");
  DataReport report;
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions(), &report);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->symbols.size(), 1u);
  const Bars& b = data->symbols[0];
  EXPECT_EQ(b.symbol, "GSPC");  // named after the file
  EXPECT_EQ(b.time, (std::vector<int64_t>{Utc(2024, 1, 2), Utc(2024, 1, 3)}));
  EXPECT_EQ(b.close, (std::vector<double>{10.5, 11}));  // close, not Adj Close
  EXPECT_EQ(b.volume, (std::vector<double>{1000, 2000}));
  EXPECT_EQ(b.sessions.size(), 2u);
  EXPECT_EQ(report.rows_read, 2);
  EXPECT_TRUE(report.problems.empty());
}

// ParseBarsCsv (text in memory, used by fuzz/bars_csv_fuzz) reads exactly as ReadBarsCsv
// reads the same text from a file at `source`.
TEST_F(CsvTest, ParsingTextEqualsReadingTheFile) {
  const std::string text =
      "timestamp,symbol,open,high,low,close,volume\n"
      "2024-01-02 09:30,A,10,11,9,10.5,100\n"
      "2024-01-02 09:31,B,20,21,19,20.5,200\n"
      "2024-01-02 09:32,A,10.5,10.5,10,10.1,-1\n";
  const std::string path = Write("multi.csv", text);
  CsvReadOptions o;
  o.timezone = "America/New_York";
  o.on_bad_rows = BadRowPolicy::kDrop;
  DataReport from_file, from_text;
  Result<MarketData> a = ReadBarsCsv(path, o, &from_file);
  Result<MarketData> b = ParseBarsCsv(text, path, o, &from_text);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->symbols.size(), 2u);
  ASSERT_EQ(b->symbols.size(), 2u);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(a->symbols[s].symbol, b->symbols[s].symbol);
    EXPECT_EQ(a->symbols[s].time, b->symbols[s].time);
    EXPECT_EQ(a->symbols[s].close, b->symbols[s].close);
  }
  ASSERT_EQ(from_text.problems.size(), 1u);  // the negative volume
  EXPECT_EQ(from_text.problems[0].ToString(), from_file.problems[0].ToString());
  o.on_bad_rows = BadRowPolicy::kFail;
  Result<MarketData> failed = ParseBarsCsv(text, "in-memory.csv", o);
  ASSERT_TRUE(IsError(failed, Status::Code::kDataError, "in-memory.csv:4"));
}

// A file without a symbol column is one symbol: named after the file, or the symbol asked
// for; with a symbol column, asking for a symbol keeps only its rows.
TEST_F(CsvTest, AFileWithoutASymbolColumnIsTheSymbolAskedFor) {
  const std::string text =
      "timestamp,open,high,low,close,volume\n"
      "2024-01-02 09:30,10,11,9,10.5,100\n";
  DataReport report;
  Result<MarketData> named = ParseBarsCsv(text, "data/bpcl.csv", CsvReadOptions(), &report);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(named->symbols.at(0).symbol, "bpcl");
  EXPECT_FALSE(report.symbol_column);
  CsvReadOptions o;
  o.symbol = "BPCL";
  Result<MarketData> asked = ParseBarsCsv(text, "data/bpcl.csv", o);
  ASSERT_TRUE(asked.ok()) << asked.status().ToString();
  ASSERT_EQ(asked->symbols.size(), 1u);
  EXPECT_EQ(asked->symbols[0].symbol, "BPCL");
  const std::string with_column =
      "timestamp,symbol,open,high,low,close,volume\n"
      "2024-01-02 09:30,HDFCLIFE,10,11,9,10.5,100\n";
  Result<MarketData> other = ParseBarsCsv(with_column, "data/x.csv", o, &report);
  EXPECT_TRUE(report.symbol_column);
  EXPECT_TRUE(!other.ok() || other->symbols.empty());
}

TEST_F(CsvTest, ReadsCompustatColumnsAndYyyymmddDates) {
  const std::string path = Write("spy.csv",
                                 "datadate,tic,prccd,ajexdi,prcod,prchd,prcld,cshtrd\n"
                                 "20090102,SPY,92.96,1.0,90.44,93.44,89.85,227563000.0\n");
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Bars* b = data->Find("SPY");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->time[0], Utc(2009, 1, 2));
  EXPECT_EQ(b->open[0], 90.44);
  EXPECT_EQ(b->high[0], 93.44);
  EXPECT_EQ(b->low[0], 89.85);
  EXPECT_EQ(b->close[0], 92.96);
  EXPECT_EQ(b->volume[0], 227563000.0);
}

TEST_F(CsvTest, OffsetTimestampsBecomeUtcAndSessionsFollowTheGivenZone) {
  // 09:15 IST = 03:45 UTC; 00:10 IST on Jul 4 = 18:40 UTC on Jul 3.
  const std::string path = Write("nse.csv",
                                 "date,open,high,low,close,volume\n"
                                 "2023-07-03 09:15:00+05:30,1,1,1,1,5\n"
                                 "2023-07-04 00:10:00+05:30,1,1,1,1,5\n");
  CsvReadOptions o;
  o.timezone = "Asia/Kolkata";
  Result<MarketData> ist = ReadBarsCsv(path, o);
  ASSERT_TRUE(ist.ok()) << ist.status().ToString();
  const Bars& b = ist->symbols[0];
  EXPECT_EQ(b.time[0], Utc(2023, 7, 3, 3, 45));
  EXPECT_EQ(b.time[1], Utc(2023, 7, 3, 18, 40));
  EXPECT_EQ(b.utc_offset[0], 19800);
  ASSERT_EQ(b.sessions.size(), 2u);
  EXPECT_EQ(b.sessions[1].date, 20230704);
  Result<MarketData> utc = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(utc.ok());
  EXPECT_EQ(utc->symbols[0].sessions.size(), 1u);  // both are on Jul 3 in UTC
}

TEST_F(CsvTest, AcceptsTSeparatorZuluNegativeOffsetsAndMinutesOnly) {
  const std::string path = Write("forms.csv",
                                 "timestamp,open,high,low,close,volume\n"
                                 "2025-05-30T16:39:00Z,1,1,1,1,1\n"
                                 "2025-05-30 16:40:00+00:00,1,1,1,1,1\n"
                                 "2025-05-30T12:41:00-04:00,1,1,1,1,1\n"
                                 "2025-05-30 16:42,1,1,1,1,1\n"
                                 "2025-05-30T16:43:00.000Z,1,1,1,1,1\n");
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const auto& t = data->symbols[0].time;
  ASSERT_EQ(t.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(t[i], Utc(2025, 5, 30, 16, 39 + i)) << i;
}

TEST_F(CsvTest, NaiveTimesAreReadInTheGivenZone) {
  const std::string path = Write("spy1m.csv",
                                 "date,Open,High,Low,Close,Volume\n"
                                 "2025-07-01 09:30:00,1,1,1,1,1\n"
                                 "2025-12-01 09:30:00,1,1,1,1,1\n");
  CsvReadOptions o;
  o.timezone = "America/New_York";
  Result<MarketData> data = ReadBarsCsv(path, o);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Bars& b = data->symbols[0];
  EXPECT_EQ(b.time[0], Utc(2025, 7, 1, 13, 30));   // EDT
  EXPECT_EQ(b.time[1], Utc(2025, 12, 1, 14, 30));  // EST
  EXPECT_EQ(b.utc_offset[0], -4 * 3600);
  EXPECT_EQ(b.utc_offset[1], -5 * 3600);
  EXPECT_EQ(b.timezone, "America/New_York");
}

TEST_F(CsvTest, SplitsLongFilesPerSymbolAndIgnoresALeadingIndexColumn) {
  const std::string path = Write("long.csv",
                                 ",date,tic,open,high,low,close,volume,macd\n"
                                 "0,2020-07-01,MSFT,5,6,4,5,10,0.1\n"
                                 "0,2020-07-01,AAPL,1,2,1,2,10,0.1\n"
                                 "1,2020-07-02,MSFT,5,6,4,6,10,0.1\n"
                                 "1,2020-07-02,AAPL,2,3,2,3,10,0.1\n"
                                 "2,2020-07-06,AAPL,3,3,2,2,10,0.1\n");
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->symbols.size(), 2u);
  EXPECT_EQ(data->symbols[0].symbol, "AAPL");  // sorted by name
  EXPECT_EQ(data->symbols[0].close, (std::vector<double>{2, 3, 2}));
  EXPECT_EQ(data->symbols[1].close, (std::vector<double>{5, 6}));
  CsvReadOptions only;
  only.symbol = "MSFT";
  Result<MarketData> msft = ReadBarsCsv(path, only);
  ASSERT_TRUE(msft.ok());
  ASSERT_EQ(msft->symbols.size(), 1u);
  EXPECT_EQ(msft->symbols[0].symbol, "MSFT");
}

TEST_F(CsvTest, HandlesByteOrderMarkCrlfLineEndsAndQuotedFields) {
  const std::string path = Write("win.csv",
                                 "\xEF\xBB\xBF\"Date\",\"Symbol\",Open,High,Low,Close,Volume\r\n"
                                 "\"2024-01-02\",\"BRK,A\",1,2,1,2,\"3\"\r\n"
                                 "\r\n");
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_NE(data->Find("BRK,A"), nullptr);
  EXPECT_EQ(data->Find("BRK,A")->volume[0], 3);
}

TEST_F(CsvTest, AskingForAnAbsentSymbolIsAnError) {
  const std::string path = Write("two.csv", "date,tic,close\n2024-01-02,A,1\n");
  CsvReadOptions o;
  o.symbol = "B";
  Result<MarketData> data = ReadBarsCsv(path, o);
  ASSERT_TRUE(IsError(data, Status::Code::kNotFound, "no rows for symbol 'B'"));
}

TEST_F(CsvTest, CloseOnlyFilesGetOpenHighLowFromCloseAndZeroVolumeWithNotes) {
  const std::string path = Write("closes.csv",
                                 "Date,Close\n"
                                 "1928-01-03,17.76\n");
  DataReport report;
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions(), &report);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Bars& b = data->symbols[0];
  EXPECT_EQ(b.open[0], 17.76);
  EXPECT_EQ(b.high[0], 17.76);
  EXPECT_EQ(b.low[0], 17.76);
  EXPECT_EQ(b.volume[0], 0);
  ASSERT_EQ(report.notes.size(), 2u);
  EXPECT_NE(report.notes[0].find("set to close"), std::string::npos);
  EXPECT_NE(report.notes[1].find("volume"), std::string::npos);
}

// One row per rule; line numbers count the header as line 1.
constexpr const char* kDefects =
    "date,tic,open,high,low,close,volume\n"  // 1
    "2024-01-02,A,10,11,9,10,100\n"          // 2 good
    "2024-01-03,A,,11,9,10,100\n"            // 3 empty open
    "2024-01-04,A,10,x1,9,10,100\n"          // 4 non-numeric high
    "2024-01-05,A,10,11,nan,10,100\n"        // 5 NaN low
    "2024-01-08,A,0,11,9,10,100\n"           // 6 non-positive open
    "2024-01-09,A,10,10.5,9,10.8,100\n"      // 7 high < close
    "2024-01-10,A,10,11,9.9,9.5,100\n"       // 8 low > close
    "2024-01-11,A,10,11,9,10,-5\n"           // 9 negative volume
    "2024-01-11,B,10,11,9,10,100\n"          // 10 good (other symbol, same time is fine)
    "2024-01-01,A,10,11,9,10,100\n"          // 11 before the previous A bar
    "2024-01-02,B,10,11,9,10,100\n"          // 12 before the previous B bar
    "2024-01-12,A,10,11,9,10,100\n"          // 13 good
    "2024-01-12,A,10,11,9,10,100\n"          // 14 duplicate
    "2024-13-01,A,10,11,9,10,100\n"          // 15 bad timestamp
    "2024-01-16,A,10,11\n";                  // 16 missing fields

struct Expected {
  int64_t line;
  const char* column;
  const char* rule;
};

TEST_F(CsvTest, ReportsEveryRuleWithItsLineAndColumn) {
  const std::string path = Write("defects.csv", kDefects);
  DataReport report;
  Result<MarketData> data = ReadDrop(path, &report);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Expected expected[] = {
      {3, "open", "empty field"},
      {4, "high", "non-numeric"},
      {5, "low", "NaN"},
      {6, "open", "non-positive price"},
      {7, "high", "high<max(open,close)"},
      {8, "low", "low>min(open,close)"},
      {9, "volume", "negative volume"},
      {11, "date", "non-monotonic time"},
      {12, "date", "non-monotonic time"},
      {14, "date", "duplicate time"},
      {15, "date", "bad timestamp"},
      {16, "", "missing fields"},
  };
  ASSERT_EQ(report.problems.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    const DataProblem& p = report.problems[i];
    EXPECT_EQ(p.line, expected[i].line) << i;
    EXPECT_EQ(p.column, expected[i].column) << i;
    EXPECT_EQ(p.rule, expected[i].rule) << i;
    EXPECT_EQ(p.file, path);
    EXPECT_FALSE(p.detail.empty());
    EXPECT_FALSE(p.fix.empty());
  }
  EXPECT_EQ(report.rows_read, 15);
  EXPECT_EQ(report.rows_dropped, 12);
  // Kept: A on lines 2 and 13, B on line 10.
  EXPECT_EQ(data->Find("A")->time, (std::vector<int64_t>{Utc(2024, 1, 2), Utc(2024, 1, 12)}));
  EXPECT_EQ(data->Find("B")->size(), 1u);
  EXPECT_NE(report.problems[6].ToString().find(":9: column 'volume': negative volume"),
            std::string::npos);
}

// An unquoted 76,467 in the last column was read as volume 76; a bar with
// high = 1e308 passed and made features write empty columns.
TEST_F(CsvTest, ExtraFieldsAndAbsurdValuesAreRowProblems) {
  const std::string path = Write("extra.csv",
                                 "date,open,high,low,close,volume\n"        // 1
                                 "2024-01-02,10,11,9,10,100\n"              // 2 good
                                 "2024-01-03,10,11,9,10,76,467\n"           // 3 extra field
                                 "2024-01-04,10,1e308,9,10,100\n"           // 4 absurd high
                                 "2024-01-05,10,11,9,10,1e19\n"             // 5 absurd volume
                                 "2024-01-08,1e12,1e12,1e12,1e12,1e18\n");  // 6 at the bounds
  DataReport report;
  Result<MarketData> data = ReadDrop(path, &report);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Expected expected[] = {
      {3, "", "extra fields"}, {4, "high", "absurd value"}, {5, "volume", "absurd value"}};
  ASSERT_EQ(report.problems.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(report.problems[i].line, expected[i].line) << i;
    EXPECT_EQ(report.problems[i].column, expected[i].column) << i;
    EXPECT_EQ(report.problems[i].rule, expected[i].rule) << i;
  }
  EXPECT_EQ(data->symbols.at(0).size(), 2u);
}

TEST_F(CsvTest, ADuplicatedColumnNameIsAnError) {
  const std::string path = Write("dup.csv", "date,close,Close,volume\n2024-01-02,10,11,100\n");
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(IsError(data, Status::Code::kDataError, ":1: the header names column 'Close' twice"));
}

TEST_F(CsvTest, NonRegularFilesAndOverlongLinesAreRefusedBeforeParsing) {
  Result<MarketData> zero = ReadBarsCsv("/dev/zero", CsvReadOptions());
  ASSERT_TRUE(IsError(zero, Status::Code::kInvalidArgument, "is a character device"));
  const std::string path =
      Write("long.csv", "date,close\n2024-01-02," + std::string(kMaxBarLineBytes, '1') + "\n");
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(IsError(data, Status::Code::kDataError, ":2: the line is"));
}

TEST_F(CsvTest, DefaultPolicyFailsWithASummaryAndTheFullListInTheReport) {
  const std::string path = Write("defects.csv", kDefects);
  DataReport report;
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions(), &report);
  ASSERT_TRUE(IsError(data, Status::Code::kDataError, "12 problem(s) in 12 of 15 data rows"));
  const std::string& m = data.status().message();
  EXPECT_NE(m.find("12 problem(s) in 12 of 15 data rows"), std::string::npos) << m;
  EXPECT_NE(m.find("2 x non-monotonic time"), std::string::npos) << m;
  EXPECT_NE(m.find(":3: column 'open': empty field"), std::string::npos) << m;
  EXPECT_NE(m.find("rltrade data check " + path), std::string::npos) << m;
  EXPECT_EQ(report.problems.size(), 12u);
}

TEST_F(CsvTest, NaiveTimeInADstGapIsAProblem) {
  const std::string path = Write("gap.csv",
                                 "datetime,open,high,low,close,volume\n"
                                 "2025-03-09 01:30:00,1,1,1,1,1\n"
                                 "2025-03-09 02:30:00,1,1,1,1,1\n"
                                 "2025-03-09 03:30:00,1,1,1,1,1\n");
  DataReport report;
  Result<MarketData> data = ReadDrop(path, &report, "America/New_York");
  ASSERT_TRUE(data.ok());
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_EQ(report.problems[0].line, 3);
  EXPECT_EQ(report.problems[0].rule, "nonexistent local time");
  // 01:30 EST = 06:30Z and 03:30 EDT = 07:30Z: one hour apart in real time.
  EXPECT_EQ(data->symbols[0].time,
            (std::vector<int64_t>{Utc(2025, 3, 9, 6, 30), Utc(2025, 3, 9, 7, 30)}));
}

TEST_F(CsvTest, TinyFloatNoiseInAdjustedPricesIsNotAnInconsistency) {
  // high equals close up to the last bit (as in yfinance adjusted data).
  const std::string path = Write("adj.csv",
                                 "date,open,high,low,close,volume\n"
                                 "2024-01-02,10,10.000000000000002,9,10.000000000000004,1\n");
  EXPECT_TRUE(ReadBarsCsv(path, CsvReadOptions()).ok());
}

// Prices have a floor as well as a ceiling (market/limits.h): 1e-300 was accepted.
TEST_F(CsvTest, PricesBelowTheFloorAreAbsurdValuesAndTheFloorItselfPasses) {
  const std::string path = Write("tiny.csv",
                                 "date,open,high,low,close,volume\n"           // 1
                                 "2024-01-02,1e-300,1e-300,1e-300,1e-300,1\n"  // 2 below
                                 "2024-01-03,10,11,9e-9,10,100\n"              // 3 low below
                                 "2024-01-04,1e-8,1e-8,1e-8,1e-8,0\n"          // 4 at the floor
                                 "2024-01-05,5e-324,1,5e-324,1,1\n");          // 5 denormal
  DataReport report;
  Result<MarketData> data = ReadDrop(path, &report);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Expected expected[] = {
      {2, "open", "absurd value"}, {3, "low", "absurd value"}, {5, "open", "absurd value"}};
  ASSERT_EQ(report.problems.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(report.problems[i].line, expected[i].line) << i;
    EXPECT_EQ(report.problems[i].column, expected[i].column) << i;
    EXPECT_EQ(report.problems[i].rule, expected[i].rule) << i;
  }
  EXPECT_NE(report.problems[0].detail.find("open=1e-300 is below the floor of 1e-08"),
            std::string::npos)
      << report.problems[0].detail;
  ASSERT_EQ(data->symbols.at(0).size(), 1u);
  EXPECT_EQ(data->symbols.at(0).close[0], 1e-8);
}

// The first line of a file that is not a bar file is described, never echoed: an
// environment dump, /etc/shadow, a key file.
TEST_F(CsvTest, TheFirstLineOfAFileThatIsNoBarFileIsNeverEchoed) {
  const std::string secret = "tok-9f8e7d6c5b4a";
  const std::string files[] = {
      std::string("HOME=/root\0RLTRADE_BROKER_TOKEN=", 32) + secret +
          std::string("\0PATH=/bin", 10),
      "root:" + secret + ":20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n",
      secret + "\n",
      "user," + secret + "=x,date\n2024-01-02,1,1\n",
  };
  int k = 0;
  for (const std::string& text : files) {
    const std::string path = Write("f" + std::to_string(k++), text);
    Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
    ASSERT_TRUE(
        IsError(data, Status::Code::kDataError, "does not look like a CSV header and is not shown"))
        << path;
    EXPECT_EQ(data.status().message().find(secret.substr(4)), std::string::npos)
        << data.status().message();
  }
  // A real header is still listed.
  const std::string path = Write("cols.csv", "ticker,industry (GICS)\nAAPL,Technology\n");
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(IsError(data, Status::Code::kDataError, "columns: ticker, industry (GICS)"));
}

TEST_F(CsvTest, ValuesQuotedInProblemsAreCutShort) {
  const std::string long_value(5000, '7');
  const std::string path = Write(
      "long_values.csv", "date,close\n2024-01-02," + long_value + "x\n" + long_value + ",10\n");
  DataReport report;
  Result<MarketData> data = ReadDrop(path, &report);
  ASSERT_EQ(report.problems.size(), 2u);
  for (const DataProblem& p : report.problems) EXPECT_LT(p.detail.size(), 200u) << p.detail;
}

// /proc/self/environ passes for a regular file; it holds the broker token.
TEST_F(CsvTest, KernelPseudoFilesAreRefusedUnread) {
  Result<MarketData> data = ReadBarsCsv("/proc/self/environ", CsvReadOptions());
  ASSERT_TRUE(IsError(data, Status::Code::kInvalidArgument, "kernel pseudo-file"));
  EXPECT_EQ(data.status().message().find("PATH="), std::string::npos);
}

TEST_F(CsvTest, AFileWithoutATimeColumnIsRejectedClearly) {
  const std::string path = Write("map.csv", "ticker,industry\nAAPL,Technology\n");
  Result<MarketData> data = ReadBarsCsv(path, CsvReadOptions());
  ASSERT_TRUE(IsError(data, Status::Code::kDataError, "no time column"));
  EXPECT_NE(data.status().message().find("ticker, industry"), std::string::npos);
}

TEST_F(CsvTest, MissingFileAndUnknownZoneAreErrors) {
  EXPECT_EQ(ReadBarsCsv(dir_ + "/absent.csv", CsvReadOptions()).status().code(),
            Status::Code::kIoError);
  const std::string path = Write("a.csv", "date,close\n2024-01-02,1\n");
  CsvReadOptions o;
  o.timezone = "Nowhere/City";
  EXPECT_EQ(ReadBarsCsv(path, o).status().code(), Status::Code::kNotFound);
}

TEST_F(CsvTest, WrittenFilesReadBackToTheSameBars) {
  const std::string in = Write("in.csv",
                               "date,tic,open,high,low,close,volume\n"
                               "2023-07-03 09:15:00+05:30,X,0.1,0.30000000000000004,0.05,0.2,7\n"
                               "2023-07-03 09:15:00+05:30,Y,100,101,99,100.5,8\n"
                               "2023-07-03 09:20:00+05:30,X,0.2,0.3,0.1,0.25,9\n");
  CsvReadOptions o;
  o.timezone = "Asia/Kolkata";
  Result<MarketData> a = ReadBarsCsv(in, o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::string out = dir_ + "/out.csv";
  ASSERT_TRUE(WriteBarsCsv(out, *a).ok());
  Result<MarketData> b = ReadBarsCsv(out, o);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(a->symbols.size(), b->symbols.size());
  for (size_t s = 0; s < a->symbols.size(); ++s) {
    const Bars &x = a->symbols[s], &y = b->symbols[s];
    EXPECT_EQ(x.symbol, y.symbol);
    EXPECT_EQ(x.time, y.time);
    EXPECT_EQ(x.utc_offset, y.utc_offset);
    EXPECT_EQ(x.open, y.open);
    EXPECT_EQ(x.high, y.high);
    EXPECT_EQ(x.low, y.low);
    EXPECT_EQ(x.close, y.close);
    EXPECT_EQ(x.volume, y.volume);
  }
  std::ifstream f(out);
  std::string header, first;
  std::getline(f, header);
  std::getline(f, first);
  EXPECT_EQ(header, "timestamp,symbol,open,high,low,close,volume");
  EXPECT_EQ(first, "2023-07-03T09:15:00+05:30,X,0.1,0.30000000000000004,0.05,0.2,7");
}

// The Fix text fits the bad-row policy in force (no "drop the row with
// --on-bad-rows drop" when that is already the policy).
TEST_F(CsvTest, FixTextFitsTheBadRowPolicy) {
  const std::string path = Write("defects.csv", kDefects);
  DataReport dropped;
  ASSERT_TRUE(ReadDrop(path, &dropped).ok());
  ASSERT_FALSE(dropped.problems.empty());
  int mentions_drop = 0;
  for (const DataProblem& p : dropped.problems) {
    EXPECT_EQ(p.fix.find("drop the row with --on-bad-rows drop"), std::string::npos) << p.fix;
    mentions_drop += p.fix.find("dropped under --on-bad-rows drop") != std::string::npos;
  }
  EXPECT_GT(mentions_drop, 0);
  DataReport failed;
  ASSERT_TRUE(IsError(ReadBarsCsv(path, CsvReadOptions(), &failed), Status::Code::kDataError,
                      "defects.csv: 12 problem(s) in 12 of 15 data rows"));
  ASSERT_FALSE(failed.problems.empty());
  EXPECT_NE(failed.problems[0].fix.find("drop the row with --on-bad-rows drop"), std::string::npos)
      << failed.problems[0].fix;
}

TEST_F(CsvTest, ReportTellsWhetherAnyTimestampWasNaive) {
  DataReport naive, offsets;
  ASSERT_TRUE(
      ReadBarsCsv(Write("naive.csv", "date,close\n2024-01-02 09:30,10\n"), CsvReadOptions(), &naive)
          .ok());
  EXPECT_TRUE(naive.naive_times);
  ASSERT_TRUE(ReadBarsCsv(Write("offsets.csv",
                                "date,close\n2024-01-02 09:30+05:30,10\n2024-01-02 09:35Z,10\n"),
                          CsvReadOptions(), &offsets)
                  .ok());
  EXPECT_FALSE(offsets.naive_times);
  EXPECT_EQ(offsets.utc_offsets, (std::vector<int32_t>{5 * 3600 + 30 * 60, 0}));
  EXPECT_TRUE(naive.utc_offsets.empty());
  EXPECT_EQ(NaiveTimesNote("x.csv", "UTC"),
            "note: x.csv has no UTC offsets; timestamps read as UTC (set [data] timezone or "
            "--timezone)");
}

TEST_F(CsvTest, SessionHoursParseAndNameTheKeyInErrors) {
  Result<SessionHours> h = ParseSessionHours("09:30-16:00", "[data] session");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->open_minute, 9 * 60 + 30);
  EXPECT_EQ(h->close_minute, 16 * 60);
  EXPECT_EQ(h->ToString(), "09:30-16:00");
  EXPECT_TRUE(ParseSessionHours("", "[data] session")->all_hours());
  EXPECT_TRUE(ParseSessionHours("00:00-24:00", "x").ok());
  for (const char* bad : {"9:30-16:00", "09:30-16", "16:00-09:30", "09:30-09:30", "09:61-10:00",
                          "25:00-26:00", "09:30_16:00"}) {
    Result<SessionHours> r = ParseSessionHours(bad, "[data] session");
    ASSERT_TRUE(
        IsError(r, Status::Code::kInvalidArgument, "[data] session = '" + std::string(bad) + "'"))
        << bad;
    EXPECT_EQ(r.status().message().find("24h"), std::string::npos) << bad;
  }
  // A near miss of the around-the-clock spelling is told the one spelling.
  for (const char* bad : {"24H", "24/7", "24"}) {
    EXPECT_TRUE(IsError(ParseSessionHours(bad, "[data] session"), Status::Code::kInvalidArgument,
                        "or \"24h\" (lowercase)"))
        << bad;
  }
}

// Bounds are bar start times, open inclusive and close exclusive, in the data's zone:
// a day of 1-minute bars from 04:00 to 20:00 keeps exactly 390 with 09:30-16:00.
TEST_F(CsvTest, SessionKeepsBarsStartingInsideTheLocalHours) {
  std::string text = "date,open,high,low,close,volume\n";
  for (int day : {1, 2}) {
    for (int m = 4 * 60; m <= 20 * 60; ++m) {
      text += fmt::format("2025-07-0{} {:02}:{:02}:00,10,10,10,10,1\n", day, m / 60, m % 60);
    }
  }
  CsvReadOptions o;
  o.timezone = "America/New_York";
  o.session = *ParseSessionHours("09:30-16:00", "--session");
  DataReport report;
  Result<MarketData> data = ReadBarsCsv(Write("spy.csv", text), o, &report);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Bars& b = data->symbols[0];
  ASSERT_EQ(b.sessions.size(), 2u);
  EXPECT_EQ(b.sessions[0].size(), 390);
  EXPECT_EQ(b.sessions[1].size(), 390);
  // 09:30 EDT = 13:30 UTC is the first bar, 15:59 EDT = 19:59 UTC the last.
  EXPECT_EQ(b.time.front(), Utc(2025, 7, 1, 13, 30));
  EXPECT_EQ(b.time[389], Utc(2025, 7, 1, 19, 59));
  EXPECT_EQ(report.rows_outside_session, 2 * (16 * 60 + 1 - 390));
  // The same instants written with UTC offsets are filtered by the zone's local time.
  CsvReadOptions utc_stamped = o;
  Result<MarketData> offsets =
      ReadBarsCsv(Write("offsets.csv",
                        "date,close\n2025-07-01T13:29:00Z,1\n2025-07-01T13:30:00Z,1\n"
                        "2025-07-01T19:59:00Z,1\n2025-07-01T20:00:00Z,1\n"),
                  utc_stamped);
  ASSERT_TRUE(offsets.ok()) << offsets.status().ToString();
  EXPECT_EQ(offsets->symbols[0].time,
            (std::vector<int64_t>{Utc(2025, 7, 1, 13, 30), Utc(2025, 7, 1, 19, 59)}));
}

}  // namespace
}  // namespace rlt::market
