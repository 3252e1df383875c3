// Option chains: the CSV reader's header detection and validation rules (small inline
// CSVs), the real files in ../shared/data/options (skipped when absent; expected counts
// from an independent Python count of the files), the synthetic generator (calendar rules
// checked with std::chrono, put-call parity, causality, determinism) and batch pricing
// (against the scalar pricing functions).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "core/civil_time.h"
#include "core/status_test_util.h"
#include "market/option_chain_csv.h"
#include "market/option_chain_pricing.h"
#include "market/option_chain_synth.h"

namespace rlt::market {
namespace {

namespace fs = std::filesystem;
using pricing::OptionType;

int32_t Day(int y, int m, int d) {
  return static_cast<int32_t>(
      std::chrono::sys_days(std::chrono::year(y) / m / d).time_since_epoch().count());
}

const char kHeader[] = "quote_date,expiration,strike,type,bid,ask,volume,iv,underlying_last\n";

struct Parsed {
  Result<OptionChain> chain = Status::DataError("not read");
  DataReport report;
};

Parsed Parse(const std::string& text, BadRowPolicy policy) {
  ChainReadOptions o;
  o.on_bad_rows = policy;
  Parsed p;
  p.chain = ParseOptionChainCsv(text, "t.csv", o, &p.report);
  return p;
}

// ---------------------------------------------------------------------------------------
// Reader.

TEST(ChainDate, Formats) {
  EXPECT_EQ(*ParseChainDate("2018-01-31"), Day(2018, 1, 31));
  EXPECT_EQ(*ParseChainDate("20180131"), Day(2018, 1, 31));
  EXPECT_EQ(*ParseChainDate("01/31/2018"), Day(2018, 1, 31));
  EXPECT_EQ(*ParseChainDate("1/3/11"), Day(2011, 1, 3));
  EXPECT_EQ(*ParseChainDate("2/29/2024"), Day(2024, 2, 29));
  for (const char* bad : {"2023-02-29", "13/01/2020", "2020-1-1", "", "yesterday", "1/2/345"}) {
    EXPECT_TRUE(IsError(ParseChainDate(bad), Status::Code::kInvalidArgument,
                        std::string("'") + bad + "' is not a date"))
        << bad;
  }
}

TEST(ChainCsv, ReadsAndSortsContracts) {
  const std::string text = std::string(kHeader) +
                           "2024-01-02,2024-02-16,110,P,11.0,11.5,5,0.21,100\n"
                           "2024-01-02,2024-01-19,100,C,2.0,2.2,,,100\n"
                           "2024-01-03,2024-01-19,100,call,2.5,2.7,7,0.2,101\n"
                           "2024-01-02,2024-01-19,90,C,10.1,10.4,1,0.25,100\n";
  Parsed p = Parse(text, BadRowPolicy::kFail);
  ASSERT_TRUE(p.chain.ok()) << p.chain.status().ToString();
  const OptionChain& c = *p.chain;
  ASSERT_EQ(c.num_days(), 2u);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c.dates[0], Day(2024, 1, 2));
  EXPECT_EQ(c.dates[1], Day(2024, 1, 3));
  EXPECT_EQ(c.day_begin, (std::vector<int64_t>{0, 3, 4}));
  EXPECT_EQ(c.underlying_price[1], 101);
  // Day 1 sorted by expiry, calls first, strike.
  EXPECT_EQ(c.strike[0], 90);
  EXPECT_EQ(c.line[0], 5);
  EXPECT_EQ(c.strike[1], 100);
  EXPECT_TRUE(std::isnan(c.volume[1]));
  EXPECT_TRUE(std::isnan(c.implied_vol[1]));
  EXPECT_EQ(c.right[2], OptionType::kPut);
  EXPECT_EQ(c.expiry[2], Day(2024, 2, 16));
  EXPECT_EQ(c.right[3], OptionType::kCall);
  EXPECT_EQ(c.DayOf(2), 0u);
  EXPECT_EQ(c.DayOf(3), 1u);
  EXPECT_TRUE(std::isnan(c.mark[0]));
  EXPECT_EQ(p.report.rows_read, 4);
  EXPECT_TRUE(p.report.problems.empty());
}

// The three vendor layouts of ../shared/data/options (headers as there, values made up).
TEST(ChainCsv, DetectsVendorHeaders) {
  const std::string optopsy =
      "underlying,underlying_last,exchange,optionroot,optionext,type,expiration,quotedate,"
      "strike,last,bid,ask,volume,openinterest,impliedvol,delta,gamma,theta,vega,optionalias\n"
      "SPXW,2695.79,W,X,,put,01/31/2018,01/02/2018,2600,1,20.1,20.9,3,40,0.12,-0.3,0.001,"
      "-1,2,X\n";
  const std::string ivol =
      "symbol,exchange,company_name,date,stock_price_close,option_symbol,option_expiration,"
      "strike,call/put,style,ask,bid,mean_price,settlement,iv,volume,open_interest,"
      "stock_price_for_iv,forward_price,isinterpolated,delta,vega,gamma,theta,rho\n"
      "SPX,CBOE,S&P 500 Index (SPX),1/3/11,1271.87,X,1/21/11,1200,C,E,80.5,79.5,80,0,0.2,1,"
      "250,1271.87,1270.7,*,0.8,1,0.001,-0.5,0.1\n";
  const std::string yahoo =
      "ticker,expiry,option_type,strike,lastPrice,bid,ask,volume,openInterest,"
      "impliedVolatility,days_to_expiry,T,S,spot_date,downloaded_at_utc\n"
      "SPY,2026-05-08,call,700.0,21.5,22.1,22.4,1.0,3.0,0.25,7,0.019,720.65,2026-05-01,x\n";
  struct Case {
    std::string text, symbol;
    int32_t date, expiry;
    double strike, bid, ask, spot, iv, oi;
    OptionType right;
  };
  for (const Case& k : {
           Case{optopsy, "SPXW", Day(2018, 1, 2), Day(2018, 1, 31), 2600, 20.1, 20.9, 2695.79, 0.12,
                40, OptionType::kPut},
           Case{ivol, "SPX", Day(2011, 1, 3), Day(2011, 1, 21), 1200, 79.5, 80.5, 1271.87, 0.2, 250,
                OptionType::kCall},
           Case{yahoo, "SPY", Day(2026, 5, 1), Day(2026, 5, 8), 700, 22.1, 22.4, 720.65, 0.25, 3,
                OptionType::kCall},
       }) {
    Parsed p = Parse(k.text, BadRowPolicy::kFail);
    ASSERT_TRUE(p.chain.ok()) << p.chain.status().ToString();
    const OptionChain& c = *p.chain;
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c.underlying, k.symbol);
    EXPECT_EQ(c.dates[0], k.date);
    EXPECT_EQ(c.expiry[0], k.expiry);
    EXPECT_EQ(c.strike[0], k.strike);
    EXPECT_EQ(c.bid[0], k.bid);
    EXPECT_EQ(c.ask[0], k.ask);
    EXPECT_EQ(c.underlying_price[0], k.spot);
    EXPECT_EQ(c.implied_vol[0], k.iv);
    EXPECT_EQ(c.open_interest[0], k.oi);
    EXPECT_EQ(c.right[0], k.right);
  }
}

// A file holds one underlying: a row of another symbol is a problem naming both symbols
// and the line the first came from (it would be priced against the first's price).
TEST(ChainCsv, ASecondUnderlyingInOneFileIsAProblemWithItsLine) {
  const std::string text =
      "symbol,date,expiration,strike,type,bid,ask,spot\n"
      "SPY,2024-01-02,2024-01-19,470,C,5.0,5.2,472\n"   // line 2
      "QQQ,2024-01-02,2024-01-19,400,C,4.0,4.2,405\n"   // line 3
      "SPY,2024-01-02,2024-01-19,475,C,3.0,3.2,472\n";  // line 4
  Parsed fail = Parse(text, BadRowPolicy::kFail);
  ASSERT_TRUE(
      IsError(fail.chain, Status::Code::kDataError,
              "t.csv:3: column 'symbol': second-underlying: symbol 'QQQ' after 'SPY' on line 2"));
  Parsed drop = Parse(text, BadRowPolicy::kDrop);
  ASSERT_TRUE(drop.chain.ok()) << drop.chain.status().ToString();
  EXPECT_EQ(drop.chain->underlying, "SPY");
  EXPECT_EQ(drop.chain->size(), 2u);
  EXPECT_EQ(drop.report.rows_dropped, 1);
}

// One bad row among good ones: with kFail the read fails naming file:line, column and
// rule; with kDrop only that row goes.
struct RuleCase {
  std::string row;     // the bad row
  std::string column;  // expected column ("" for whole-row rules)
  std::string rule;
};

class ChainRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(ChainRule, ReportedWithLineAndDropped) {
  const RuleCase& rc = GetParam();
  const std::string text = std::string(kHeader) +
                           "2024-01-02,2024-01-19,100,C,2.0,2.2,1,0.2,100\n"   // line 2
                           "2024-01-02,2024-01-19,100,P,1.5,1.7,1,0.2,100\n"   // line 3
                           + rc.row + "\n" +                                   // line 4
                           "2024-01-02,2024-01-19,105,P,5.0,5.3,1,0.2,100\n";  // line 5
  Parsed fail = Parse(text, BadRowPolicy::kFail);
  const std::string expected_prefix =
      "t.csv:4: " + (rc.column.empty() ? "" : "column '" + rc.column + "': ") + rc.rule + ": ";
  ASSERT_TRUE(IsError(fail.chain, Status::Code::kDataError, expected_prefix));
  ASSERT_EQ(fail.report.problems.size(), 1u);
  const DataProblem& pr = fail.report.problems[0];
  EXPECT_EQ(pr.line, 4);
  EXPECT_EQ(pr.column, rc.column);
  EXPECT_EQ(pr.rule, rc.rule);
  EXPECT_EQ(pr.ToString().rfind(expected_prefix, 0), 0u) << pr.ToString();
  EXPECT_NE(pr.ToString().find(". Fix: "), std::string::npos);

  Parsed drop = Parse(text, BadRowPolicy::kDrop);
  ASSERT_TRUE(drop.chain.ok()) << drop.chain.status().ToString();
  EXPECT_EQ(drop.report.rows_read, 4);
  EXPECT_EQ(drop.report.rows_dropped, 1);
  ASSERT_EQ(drop.report.problems.size(), 1u);
  const OptionChain& c = *drop.chain;
  ASSERT_EQ(c.size(), 3u);
  for (int64_t l : c.line) EXPECT_NE(l, 4);
}

INSTANTIATE_TEST_SUITE_P(
    ChainRules, ChainRule,
    ::testing::Values(
        RuleCase{"2024-01-02,2024-01-19,95,C,6.0,5.5,1,0.2,100", "bid", "bid>ask"},
        RuleCase{"2024-01-02,2024-01-19,95,C,-0.1,5.5,1,0.2,100", "bid", "bid<0"},
        RuleCase{"2024-01-02,2024-01-19,95,C,0,-1,1,0.2,100", "ask", "ask<0"},
        RuleCase{"2024-01-02,2024-01-19,95,C,0.5,-0.1,1,0.2,100", "ask", "ask<0"},
        RuleCase{"2024-01-02,2023-12-29,95,C,5.0,5.5,1,0.2,100", "expiration", "expiry<quote-date"},
        RuleCase{"2024-01-02,2024-01-19,0,C,5.0,5.5,1,0.2,100", "strike", "strike<=0"},
        RuleCase{"2024-01-02,2024-01-19,-5,C,5.0,5.5,1,0.2,100", "strike", "strike<=0"},
        RuleCase{"2024-01-02,2024-01-19,100,C,2.1,2.3,1,0.2,100", "", "duplicate-contract"},
        RuleCase{"2024-01-02,2024-01-19,95,X,5.0,5.5,1,0.2,100", "type", "not-call/put"},
        RuleCase{"2024-01-02,2024-01-19,95,,5.0,5.5,1,0.2,100", "type", "missing-field"},
        RuleCase{"2024-01-02,2024-01-19,95,C,abc,5.5,1,0.2,100", "bid", "not-a-number"},
        RuleCase{"2024-01-02,2024-01-19,95,C,5.0,nan,1,0.2,100", "ask", "not-a-number"},
        RuleCase{"2024-01-02,2024-01-19,95,C,5.0,5.5,1,inf,100", "iv", "not-a-number"},
        RuleCase{"2024-01-02,2024-01-19,95,C,5.0,,1,0.2,100", "ask", "missing-field"},
        RuleCase{"2024-13-02,2024-01-19,95,C,5.0,5.5,1,0.2,100", "quote_date", "not-a-date"},
        RuleCase{"2024-01-02,2024-01-19,95,C,5.0", "", "wrong-field-count"},
        // The pricing domain: T <= 100 years, S and K in [1e-8, 1e12].
        RuleCase{"2024-01-02,2124-01-19,95,C,5.0,5.5,1,0.2,100", "expiration", "expiry>100y"},
        RuleCase{"2024-01-02,2024-01-19,95,C,5.0,5.5,1,0.2,-3", "underlying_last", "underlying<=0"},
        RuleCase{"2024-01-02,2024-01-19,95,C,5.0,5.5,1,0.2,0", "underlying_last", "underlying<=0"},
        RuleCase{"2024-01-02,2024-01-19,95,C,5.0,5.5,1,0.2,2e12", "underlying_last",
                 "out-of-range"},
        RuleCase{"2024-01-02,2024-01-19,1e13,C,5.0,5.5,1,0.2,100", "strike", "out-of-range"},
        RuleCase{"2024-01-02,2024-01-19,1e-9,C,5.0,5.5,1,0.2,100", "strike", "out-of-range"}));

TEST(ChainCsv, ExpiryExactlyAHundredYearsOutIsPriced) {
  // 36,500 days is T = 100 years, the pricing domain's edge: accepted and priced.
  const int32_t quote = Day(2024, 1, 2);
  const CivilDate far = CivilFromDays(quote + 36500);
  const std::string expiry = FormatDate(DateKey(far));
  Parsed p = Parse(std::string(kHeader) + "2024-01-02," + expiry + ",100,C,90,95,1,0.2,100\n",
                   BadRowPolicy::kFail);
  ASSERT_TRUE(p.chain.ok()) << p.chain.status().ToString();
  EXPECT_TRUE(PriceChain(*p.chain, {}).ok());
}

TEST(ChainCsv, DuplicateNamesTheFirstLine) {
  const std::string text = std::string(kHeader) +
                           "2024-01-02,2024-01-19,100,C,2.0,2.2,1,0.2,100\n"
                           "2024-01-02,2024-01-19,100,C,2.0,2.2,1,0.2,100\n";
  Parsed p = Parse(text, BadRowPolicy::kDrop);
  ASSERT_TRUE(p.chain.ok());
  ASSERT_EQ(p.report.problems.size(), 1u);
  EXPECT_EQ(p.report.problems[0].line, 3);
  EXPECT_NE(p.report.problems[0].detail.find("already on line 2"), std::string::npos);
  EXPECT_EQ(p.chain->size(), 1u);
}

TEST(ChainCsv, MissingRequiredColumnIsAnError) {
  // No call/put column: nothing can be read, under either policy.
  for (BadRowPolicy policy : {BadRowPolicy::kFail, BadRowPolicy::kDrop}) {
    Parsed p =
        Parse("quote_date,expiration,strike,bid,ask\n2024-01-02,2024-01-19,100,2,2.2\n", policy);
    ASSERT_TRUE(IsError(p.chain, Status::Code::kDataError, "t.csv:1: no 'call/put' column"));
  }
  Parsed p = Parse("strike,type,bid\n100,C,2\n", BadRowPolicy::kFail);
  ASSERT_TRUE(IsError(p.chain, Status::Code::kDataError, "'quote date', 'expiration', 'ask'"));
  EXPECT_TRUE(IsError(Parse("", BadRowPolicy::kDrop).chain, Status::Code::kDataError,
                      "t.csv:1: empty file or empty header"));
}

TEST(ChainCsv, QuotedFieldsCrlfAndBom) {
  const std::string text =
      "\xEF\xBB\xBF\"Quote Date\",Expiration,Strike,\"Call/Put\",Bid,Ask,name\r\n"
      "2024-01-02,2024-01-19,100,c,2,2.2,\"a, b\"\r\n";
  Parsed p = Parse(text, BadRowPolicy::kFail);
  ASSERT_TRUE(p.chain.ok()) << p.chain.status().ToString();
  EXPECT_EQ(p.chain->size(), 1u);
  EXPECT_TRUE(std::isnan(p.chain->underlying_price[0]));
}

TEST(ChainCsv, ReadFileRefusesDirectoriesAndMissingFiles) {
  EXPECT_TRUE(IsError(ReadOptionChainCsv("/nonexistent/chain.csv", {}), Status::Code::kNotFound,
                      "file '/nonexistent/chain.csv' does not exist"));
  EXPECT_TRUE(IsError(ReadOptionChainCsv(fs::temp_directory_path().string(), {}),
                      Status::Code::kInvalidArgument, "is a directory, expected a regular file"));
}

// A zero bid or zero ask is "no quote": kept, not a problem (OptionChain::HasQuote); a
// crossed quote of two positive prices stays an error with its line.
TEST(ChainCsv, ZeroBidOrAskIsNoQuoteCrossedIsAnError) {
  const std::string text = std::string(kHeader) +
                           "2024-01-02,2024-01-19,100,C,2.0,2.2,1,0.2,100\n"  // line 2
                           "2024-01-02,2024-01-19,150,C,0,0.05,1,,100\n"      // 3: no bid
                           "2024-01-02,2024-01-19,40,P,0.01,0,1,,100\n"       // 4: no ask
                           "2024-01-02,2024-01-19,160,C,0,0,1,,100\n"         // 5: neither
                           "2024-01-02,2024-01-19,95,C,6.0,5.5,1,0.2,100\n";  // 6: crossed
  Parsed fail = Parse(text, BadRowPolicy::kFail);
  ASSERT_TRUE(IsError(fail.chain, Status::Code::kDataError, "t.csv:6: column 'bid': bid>ask"));
  ASSERT_EQ(fail.report.problems.size(), 1u);
  Parsed ok = Parse(text.substr(0, text.rfind("2024-01-02,2024-01-19,95")), BadRowPolicy::kFail);
  ASSERT_TRUE(ok.chain.ok()) << ok.chain.status().ToString();
  const OptionChain& c = *ok.chain;
  ASSERT_EQ(c.size(), 4u);
  std::map<int64_t, size_t> at;  // line -> index
  for (size_t i = 0; i < c.size(); ++i) at[c.line[i]] = i;
  EXPECT_TRUE(c.HasQuote(at[2]));
  EXPECT_FALSE(c.HasBid(at[3]));
  EXPECT_TRUE(c.HasAsk(at[3]));
  EXPECT_FALSE(c.HasQuote(at[3]));
  EXPECT_TRUE(c.HasBid(at[4]));
  EXPECT_FALSE(c.HasAsk(at[4]));
  EXPECT_FALSE(c.HasQuote(at[5]));
  // Batch pricing marks them and fills their vol; the per-quote solution gives a reason.
  Result<ChainPricing> priced = PriceChain(c, {});
  ASSERT_TRUE(priced.ok()) << priced.status().ToString();
  EXPECT_EQ(priced->iv_gap[at[3]], IvGap::kNoQuote);
  EXPECT_EQ(priced->iv_gap[at[4]], IvGap::kNoQuote);
  EXPECT_EQ(priced->iv_gap[at[2]], IvGap::kNone);
  Result<QuoteSolution> q = SolveQuotes(c, {});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->no_quote, 3);
  EXPECT_EQ(q->no_bid, 2);
  EXPECT_EQ(q->no_ask, 2);
  EXPECT_EQ(q->solved, 1);
  for (int64_t line : {3, 4, 5}) {
    EXPECT_EQ(q->reason[at[line]], QuoteReason::kNoQuote) << line;
    EXPECT_TRUE(std::isnan(q->iv[at[line]]) && std::isnan(q->mid[at[line]])) << line;
  }
  EXPECT_STREQ(QuoteReasonName(QuoteReason::kNoQuote), "no-quote");
}

// The file's own rate, dividend yield and style columns, by their vendor names.
TEST(ChainCsv, ReadsRateDividendAndStyleColumns) {
  for (const char* names : {"r,q,style", "rate,dividend_yield,exercise_style",
                            "risk_free_rate,div,Style", "interest_rate,dividend,style"}) {
    const std::string text = std::string("quote_date,expiration,strike,type,bid,ask,S,") + names +
                             "\n"
                             "2024-01-02,2024-03-15,100,C,4.9,5.1,100,0.0371,0.0102,A\n"
                             "2024-01-02,2024-03-15,100,P,3.9,4.1,100,0.04,,european\n"
                             "2024-01-02,2024-03-15,90,P,1.0,1.1,100,,0.01,\n";
    Parsed p = Parse(text, BadRowPolicy::kFail);
    ASSERT_TRUE(p.chain.ok()) << names << ": " << p.chain.status().ToString();
    const OptionChain& c = *p.chain;  // sorted: call 100, put 90, put 100
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(c.rate[0], 0.0371) << names;
    EXPECT_EQ(c.dividend[0], 0.0102) << names;
    EXPECT_EQ(c.style[0], ExerciseStyle::kAmerican) << names;
    EXPECT_TRUE(std::isnan(c.rate[1])) << names;
    EXPECT_EQ(c.dividend[1], 0.01) << names;
    EXPECT_EQ(c.style[1], ExerciseStyle::kUnknown) << names;
    EXPECT_EQ(c.rate[2], 0.04) << names;
    EXPECT_TRUE(std::isnan(c.dividend[2])) << names;
    EXPECT_EQ(c.style[2], ExerciseStyle::kEuropean) << names;
  }
  // Absent columns: NaN and unknown.
  Parsed none = Parse(std::string(kHeader) + "2024-01-02,2024-01-19,100,C,2.0,2.2,1,0.2,100\n",
                      BadRowPolicy::kFail);
  ASSERT_TRUE(none.chain.ok());
  EXPECT_TRUE(std::isnan(none.chain->rate[0]) && std::isnan(none.chain->dividend[0]));
  EXPECT_EQ(none.chain->style[0], ExerciseStyle::kUnknown);
  // A percentage instead of a decimal, and an unknown style: problems with their line.
  const std::string head = "quote_date,expiration,strike,type,bid,ask,S,r,q,style\n";
  const std::string good = "2024-01-02,2024-03-15,100,C,4.9,5.1,100,0.0371,0.0102,A\n";
  Parsed pct = Parse(head + good + "2024-01-02,2024-03-15,100,P,3.9,4.1,100,3.71,0.0102,A\n",
                     BadRowPolicy::kFail);
  EXPECT_TRUE(
      IsError(pct.chain, Status::Code::kDataError, "t.csv:3: column 'r': rate-not-decimal"));
  Parsed sty = Parse(head + good + "2024-01-02,2024-03-15,100,P,3.9,4.1,100,0.0371,0.01,B\n",
                     BadRowPolicy::kFail);
  EXPECT_TRUE(IsError(sty.chain, Status::Code::kDataError, "t.csv:3: column 'style': not-a-style"));
}

// ---------------------------------------------------------------------------------------
// The real files. Counts from an independent Python (csv module) pass over each file:
// data rows, quote dates, expiries, rows with ask <= 0 and rows with bid <= 0 or ask <= 0
// (no quote; they have no crossed quotes, negative bids, duplicates or expired contracts).

TEST(ChainSharedData, ReadsTheThreeVendorFiles) {
  const std::string dir = RLT_SHARED_DIR "/data/options";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " absent";
  struct Expect {
    const char* file;
    int64_t rows, dates, expiries, ask_le_0, no_quote;
    bool has_rates, has_style;
  };
  for (const Expect& e : {
           Expect{"SPXW_chain_EOD_2018-01-02_2018-02-28_optopsy.csv", 14438, 40, 2, 15, 1902, false,
                  false},
           Expect{"SPX_chain_iVolatility_2011-01-03_2011-01-07.csv", 8184, 5, 10, 1, 872, false,
                  true},
           Expect{"SPY_chain_yahoo_snapshot_2026-05-01_enriched.csv", 7722, 1, 24, 113, 263, true,
                  false},
       }) {
    const std::string path = dir + "/" + e.file;
    ChainReadOptions o;  // the default: fail on any problem
    DataReport report;
    Result<OptionChain> c = ReadOptionChainCsv(path, o, &report);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(report.rows_read, e.rows) << e.file;
    EXPECT_EQ(report.rows_dropped, 0) << e.file;
    EXPECT_TRUE(report.problems.empty()) << e.file;
    EXPECT_EQ(static_cast<int64_t>(c->size()), e.rows) << e.file;
    int64_t no_ask = 0, no_quote = 0, rates = 0, styled = 0;
    for (size_t i = 0; i < c->size(); ++i) {
      no_ask += c->HasAsk(i) ? 0 : 1;
      no_quote += c->HasQuote(i) ? 0 : 1;
      rates += std::isfinite(c->rate[i]) && std::isfinite(c->dividend[i]) ? 1 : 0;
      styled += c->style[i] == ExerciseStyle::kEuropean ? 1 : 0;
    }
    EXPECT_EQ(no_ask, e.ask_le_0) << e.file;
    EXPECT_EQ(no_quote, e.no_quote) << e.file;
    EXPECT_EQ(rates, e.has_rates ? e.rows : 0) << e.file;
    EXPECT_EQ(styled, e.has_style ? e.rows : 0) << e.file;  // the SPX file: all E
    EXPECT_EQ(static_cast<int64_t>(c->num_days()), e.dates) << e.file;
    EXPECT_EQ(static_cast<int64_t>(std::set<int32_t>(c->expiry.begin(), c->expiry.end()).size()),
              e.expiries)
        << e.file;
    for (double s : c->underlying_price) EXPECT_GT(s, 0) << e.file;

    // The whole chain priced in one batch from its quotes: finite everywhere.
    Result<ChainPricing> priced = PriceChain(*c, {});
    ASSERT_TRUE(priced.ok()) << priced.status().ToString();
    for (size_t i = 0; i < c->size(); ++i) {
      ASSERT_TRUE(std::isfinite(priced->iv[i]) && std::isfinite(priced->delta[i]) &&
                  std::isfinite(priced->gamma[i]) && std::isfinite(priced->vega[i]) &&
                  std::isfinite(priced->theta[i]))
          << e.file << " contract " << i;
    }
    EXPECT_GT(priced->solved, static_cast<int64_t>(c->size()) / 2) << e.file;
  }
}

// ---------------------------------------------------------------------------------------
// Synthetic chains.

std::vector<double> Closes(size_t n, double start, double step) {
  std::vector<double> c(n);
  double s = start;
  for (size_t i = 0; i < n; ++i) {
    c[i] = s;
    s *= std::exp(i % 3 == 0 ? step : -0.6 * step);
  }
  return c;
}

std::vector<int32_t> Weekdays(int32_t from, size_t n) {
  std::vector<int32_t> d;
  for (int32_t day = from; d.size() < n; ++day) {
    const int w = Weekday(day);
    if (w != 0 && w != 6) d.push_back(day);
  }
  return d;
}

TEST(ChainSynth, ThirdFridayMatchesChrono) {
  using namespace std::chrono;
  for (int y = 1999; y <= 2031; ++y) {
    for (unsigned m = 1; m <= 12; ++m) {
      const sys_days want{year(y) / month(m) / Friday[3]};
      EXPECT_EQ(ThirdFriday(y, static_cast<int>(m)), want.time_since_epoch().count())
          << y << "-" << m;
    }
  }
}

TEST(ChainSynth, CalendarStrikesParityAndQuotes) {
  ChainSynthOptions o;
  o.strike_increment = 2.5;
  const std::vector<int32_t> dates = Weekdays(Day(2024, 1, 2), 90);
  const std::vector<double> closes = Closes(90, 100, 0.01);
  Result<OptionChain> r = GenerateOptionChain(dates, closes, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const OptionChain& c = *r;
  ASSERT_EQ(c.num_days(), 90u);
  std::set<int32_t> third_fridays;
  for (int y = 2024; y <= 2025; ++y) {
    for (unsigned m = 1; m <= 12; ++m) {
      third_fridays.insert(
          static_cast<int32_t>(std::chrono::sys_days(std::chrono::year(y) / std::chrono::month(m) /
                                                     std::chrono::Friday[3])
                                   .time_since_epoch()
                                   .count()));
    }
  }
  for (size_t d = 0; d < c.num_days(); ++d) {
    const double s = c.underlying_price[d];
    EXPECT_EQ(s, closes[d]);
    std::set<int32_t> monthly;
    std::map<std::tuple<int32_t, double>, std::map<OptionType, size_t>> pairs;
    for (int64_t i = c.day_begin[d]; i < c.day_begin[d + 1]; ++i) {
      const int32_t e = c.expiry[i];
      EXPECT_GE(e, c.dates[d]);
      EXPECT_EQ(Weekday(e), 5);  // Fridays only
      const bool is_monthly = third_fridays.count(e) > 0;
      if (is_monthly) monthly.insert(e);
      if (!is_monthly) {
        EXPECT_LE(e, c.dates[d] + o.weekly_horizon_days);
      }
      EXPECT_NEAR(c.strike[i] / 2.5, std::round(c.strike[i] / 2.5), 1e-9);
      EXPECT_GE(c.bid[i], 0);
      EXPECT_GT(c.ask[i], c.bid[i]);
      EXPECT_LE(c.bid[i], c.mark[i] + 1e-12);
      EXPECT_GE(c.ask[i], c.mark[i] - 1e-12);
      EXPECT_GE(c.ask[i] - c.bid[i], o.min_spread - 1e-9);
      EXPECT_GE(c.open_interest[i], 0);
      pairs[{e, c.strike[i]}][c.right[i]] = static_cast<size_t>(i);
    }
    // The first monthly_expiries third Fridays on or after the day, independently listed.
    std::set<int32_t> want;
    for (int32_t f : third_fridays) {
      if (f >= c.dates[d] && static_cast<int>(want.size()) < o.monthly_expiries) want.insert(f);
    }
    EXPECT_EQ(monthly, want) << "day " << d;
    // Every grid moneyness level has a strike within half an increment of S * m.
    for (double m = 0.8; m <= 1.2 + 1e-9; m += 0.025) {
      bool found = false;
      for (const auto& [key, sides] : pairs) {
        if (std::get<0>(key) == *want.begin() && std::abs(std::get<1>(key) - s * m) <= 1.25 + 1e-9)
          found = true;
      }
      EXPECT_TRUE(found) << "day " << d << " m " << m;
    }
    // Put-call parity of the marks: C - P = S e^{-qT} - K e^{-rT}.
    for (const auto& [key, sides] : pairs) {
      ASSERT_EQ(sides.size(), 2u);
      const size_t ci = sides.at(OptionType::kCall), pi = sides.at(OptionType::kPut);
      const double t = (std::get<0>(key) - c.dates[d]) / 365.0, k = std::get<1>(key);
      EXPECT_EQ(c.implied_vol[ci], c.implied_vol[pi]);
      EXPECT_NEAR(c.mark[ci] - c.mark[pi],
                  s * std::exp(-o.dividend * t) - k * std::exp(-o.rate * t),
                  1e-9 * std::max(1.0, s));
    }
  }
  // A contract listed on day d and not expired on day d+1 is still listed on day d+1.
  for (size_t d = 0; d + 1 < c.num_days(); ++d) {
    std::set<std::tuple<int32_t, double, int>> next;
    for (int64_t i = c.day_begin[d + 1]; i < c.day_begin[d + 2]; ++i) {
      next.insert({c.expiry[i], c.strike[i], static_cast<int>(c.right[i])});
    }
    for (int64_t i = c.day_begin[d]; i < c.day_begin[d + 1]; ++i) {
      if (c.expiry[i] < c.dates[d + 1]) continue;
      EXPECT_TRUE(next.count({c.expiry[i], c.strike[i], static_cast<int>(c.right[i])}))
          << "day " << d << " contract " << i;
    }
  }
}

TEST(ChainSynth, VolLevelIsCausalRealisedVol) {
  ChainSynthOptions o;
  o.term_slope = 0;
  o.skew = 0;
  o.smile = 0;
  o.rv_window = 10;
  const std::vector<int32_t> dates = Weekdays(Day(2023, 3, 1), 40);
  std::vector<double> closes = Closes(40, 50, 0.02);
  Result<OptionChain> r = GenerateOptionChain(dates, closes, o);
  ASSERT_TRUE(r.ok());
  for (size_t d = 0; d < dates.size(); ++d) {
    double want = o.initial_vol;
    if (d >= 2) {
      const size_t m = std::min<size_t>(d, 10);
      std::vector<double> ret;
      for (size_t j = d + 1 - m; j <= d; ++j) ret.push_back(std::log(closes[j] / closes[j - 1]));
      double mean = 0;
      for (double x : ret) mean += x / m;
      double var = 0;
      for (double x : ret) var += (x - mean) * (x - mean) / (m - 1);
      want = std::clamp(1.1 * std::sqrt(252 * var), o.min_vol, o.max_vol);
    }
    for (int64_t i = r->day_begin[d]; i < r->day_begin[d + 1]; ++i) {
      ASSERT_NEAR(r->implied_vol[i], want, 1e-12) << "day " << d;
    }
  }
  // Changing closes after day 20 leaves days 0..20 unchanged.
  std::vector<double> changed = closes;
  for (size_t d = 21; d < changed.size(); ++d) changed[d] *= 1.3;
  Result<OptionChain> r2 = GenerateOptionChain(dates, changed, o);
  ASSERT_TRUE(r2.ok());
  const int64_t end = r->day_begin[21];
  ASSERT_GE(r2->size(), static_cast<size_t>(end));
  for (int64_t i = 0; i < end; ++i) {
    ASSERT_EQ(r->implied_vol[i], r2->implied_vol[i]);
    ASSERT_EQ(r->strike[i], r2->strike[i]);
  }
}

template <typename T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TEST(ChainSynth, SameSeedSameChain) {
  ChainSynthOptions o;
  o.iv_noise = 0.05;
  const std::vector<int32_t> dates = Weekdays(Day(2020, 6, 1), 30);
  const std::vector<double> closes = Closes(30, 3000, 0.01);
  Result<OptionChain> a = GenerateOptionChain(dates, closes, o);
  Result<OptionChain> b = GenerateOptionChain(dates, closes, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(SameBits(a->expiry, b->expiry));
  EXPECT_TRUE(SameBits(a->strike, b->strike));
  EXPECT_TRUE(SameBits(a->bid, b->bid));
  EXPECT_TRUE(SameBits(a->ask, b->ask));
  EXPECT_TRUE(SameBits(a->implied_vol, b->implied_vol));
  EXPECT_TRUE(SameBits(a->open_interest, b->open_interest));
  EXPECT_TRUE(SameBits(a->volume, b->volume));
  EXPECT_TRUE(SameBits(a->mark, b->mark));
  o.seed = 2;
  Result<OptionChain> c = GenerateOptionChain(dates, closes, o);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(SameBits(a->strike, c->strike));  // the listing does not depend on the seed
  EXPECT_FALSE(SameBits(a->open_interest, c->open_interest));
  EXPECT_FALSE(SameBits(a->implied_vol, c->implied_vol));  // the configured vol noise does
}

TEST(ChainSynth, WrittenCsvReadsBackValueIdentical) {
  ChainSynthOptions o;
  const std::vector<int32_t> dates = Weekdays(Day(2022, 12, 20), 15);
  Result<OptionChain> a = GenerateOptionChain(dates, Closes(15, 420.5, 0.012), o, "XYZ");
  ASSERT_TRUE(a.ok());
  // The file's own rates and styles (NaN / unknown elsewhere) survive the round trip too.
  for (size_t i = 0; i < a->size(); i += 3) {
    a->rate[i] = 0.0371 + 1e-17 * static_cast<double>(i);
    a->dividend[i] = 0.010191420401981793;
    a->style[i] = i % 2 ? ExerciseStyle::kAmerican : ExerciseStyle::kEuropean;
  }
  const std::string path =
      (fs::temp_directory_path() / ("rlt_chain_rt_" + std::to_string(::getpid()) + ".csv"))
          .string();
  ASSERT_TRUE(WriteOptionChainCsv(path, *a).ok());
  DataReport report;
  Result<OptionChain> b = ReadOptionChainCsv(path, {}, &report);
  fs::remove(path);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(b->underlying, "XYZ");
  EXPECT_TRUE(SameBits(a->dates, b->dates));
  EXPECT_TRUE(SameBits(a->day_begin, b->day_begin));
  EXPECT_TRUE(SameBits(a->underlying_price, b->underlying_price));
  EXPECT_TRUE(SameBits(a->expiry, b->expiry));
  EXPECT_TRUE(SameBits(a->strike, b->strike));
  EXPECT_TRUE(SameBits(a->right, b->right));
  EXPECT_TRUE(SameBits(a->bid, b->bid));
  EXPECT_TRUE(SameBits(a->ask, b->ask));
  EXPECT_TRUE(SameBits(a->implied_vol, b->implied_vol));
  EXPECT_TRUE(SameBits(a->open_interest, b->open_interest));
  EXPECT_TRUE(SameBits(a->mark, b->mark));
  EXPECT_TRUE(SameBits(a->delta, b->delta));  // NaN written empty, read back as the same NaN
  EXPECT_TRUE(SameBits(a->rate, b->rate));
  EXPECT_TRUE(SameBits(a->dividend, b->dividend));
  EXPECT_TRUE(SameBits(a->style, b->style));
  OptionChain bad = *a;
  bad.underlying = "X,Y";
  EXPECT_TRUE(IsError(WriteOptionChainCsv(path, bad), Status::Code::kInvalidArgument,
                      "symbol 'X,Y' has a comma"));
  EXPECT_FALSE(fs::exists(path));
}

TEST(ChainSynth, RejectsBadInputs) {
  ChainSynthOptions o;
  const std::vector<int32_t> dates = {Day(2024, 1, 2), Day(2024, 1, 3)};
  EXPECT_TRUE(IsError(GenerateOptionChain(dates, {100}, o), Status::Code::kInvalidArgument,
                      "2 dates but 1 closes"));
  EXPECT_TRUE(IsError(GenerateOptionChain(dates, {100, -1}, o), Status::Code::kInvalidArgument,
                      "close[1] = -1"));
  EXPECT_TRUE(IsError(GenerateOptionChain(dates, {100, std::nan("")}, o),
                      Status::Code::kInvalidArgument, "close[1] = nan"));
  EXPECT_TRUE(IsError(GenerateOptionChain({dates[1], dates[0]}, {100, 100}, o),
                      Status::Code::kInvalidArgument,
                      "dates[1] = 2024-01-02 is not after dates[0]"));
  ChainSynthOptions bad = o;
  bad.moneyness_step = 0;
  EXPECT_TRUE(IsError(GenerateOptionChain(dates, {100, 101}, bad), Status::Code::kInvalidArgument,
                      "moneyness_step = 0"));
  bad = o;
  bad.tick = -1;
  EXPECT_TRUE(IsError(GenerateOptionChain(dates, {100, 101}, bad), Status::Code::kInvalidArgument,
                      "tick = -1"));
}

// ---------------------------------------------------------------------------------------
// Batch pricing against the scalar functions.

TEST(ChainPricing, QuotesModeMatchesScalarIvAndGreeks) {
  // Quotes made from BSM at known vols, two puts quoted below their lower bound (one with
  // a file IV, one without) and a contract expiring today.
  const double s = 100, r = 0.03, q = 0.01;
  const int32_t today = Day(2024, 1, 2), exp1 = Day(2024, 3, 15);
  const double t = (exp1 - today) / 365.0;
  OptionChain c;
  c.underlying = "X";
  c.dates = {today};
  c.underlying_price = {s};
  c.day_begin = {0};
  const double vols[] = {0.3, 0.22, 0.18, 0.25};
  const double strikes[] = {80, 95, 105, 120};
  for (int j = 0; j < 4; ++j) {
    pricing::OptionInputs in{OptionType::kCall, s, strikes[j], r, q, vols[j], t};
    const double p = *pricing::BsmPrice(in);
    c.AddContract(exp1, strikes[j], OptionType::kCall, p - 0.05, p + 0.05);
  }
  // Deep in-the-money puts quoted below their European lower bound K e^{-rT} - S e^{-qT}
  // (~29.8 and ~39.7): no implied vol.
  size_t i = c.AddContract(exp1, 130, OptionType::kPut, 20, 21);
  c.implied_vol[i] = 0.5;
  c.AddContract(exp1, 140, OptionType::kPut, 30, 31);      // and no file IV: filled
  c.AddContract(today, 90, OptionType::kCall, 9.9, 10.1);  // expires today: intrinsic
  c.day_begin.push_back(static_cast<int64_t>(c.size()));
  ChainPricingOptions po;
  po.rate = r;
  po.dividend = q;
  Result<ChainPricing> got = PriceChain(c, po);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->solved, 4);
  EXPECT_EQ(got->from_file, 1);
  EXPECT_EQ(got->filled, 2);
  for (size_t k = 0; k < c.size(); ++k) {
    const double tk = (c.expiry[k] - today) / 365.0;
    pricing::OptionInputs in{c.right[k], s, c.strike[k], r, q, 0.2, tk};
    if (k < 4) {
      const double mid = 0.5 * (c.bid[k] + c.ask[k]);
      EXPECT_EQ(got->mid[k], mid);
      EXPECT_NEAR(got->iv[k], *pricing::ImpliedVol(pricing::Model::kBsm, in, mid), 1e-12);
      EXPECT_NEAR(got->iv[k], vols[k], 1e-3);  // quotes are +-0.05 around the vol's value
    }
    in.vol = got->iv[k];
    const pricing::Greeks g = *pricing::BsmGreeks(in);
    EXPECT_NEAR(got->price[k], g.price, 1e-10 * std::max(1.0, g.price)) << k;
    EXPECT_NEAR(got->delta[k], g.delta, 1e-10) << k;
    EXPECT_NEAR(got->gamma[k], g.gamma, 1e-10) << k;
    EXPECT_NEAR(got->vega[k], g.vega, 1e-10 * std::max(1.0, g.vega)) << k;
    EXPECT_NEAR(got->theta[k], g.theta, 1e-10 * std::max(1.0, std::abs(g.theta))) << k;
  }
  EXPECT_EQ(got->iv_source[4], IvSource::kFile);
  EXPECT_EQ(got->iv[4], 0.5);
  EXPECT_EQ(got->iv_source[5], IvSource::kFilled);
  std::vector<double> solved(got->iv.begin(), got->iv.begin() + 4);
  std::sort(solved.begin(), solved.end());
  EXPECT_DOUBLE_EQ(got->iv[5], 0.5 * (solved[1] + solved[2]));  // median of the expiry
  EXPECT_EQ(got->price[6], 10.0);                               // intrinsic at expiry
  EXPECT_EQ(got->delta[6], 1.0);
  EXPECT_EQ(got->gamma[6], 0.0);
}

TEST(ChainPricing, ModelModeOnSyntheticChain) {
  ChainSynthOptions o;
  const std::vector<int32_t> dates = Weekdays(Day(2024, 1, 2), 10);
  Result<OptionChain> c = GenerateOptionChain(dates, Closes(10, 100, 0.01), o);
  ASSERT_TRUE(c.ok());
  ChainPricingOptions po;
  po.mid_source = MidSource::kModel;
  po.rate = o.rate;
  po.dividend = o.dividend;
  Result<ChainPricing> got = PriceChain(*c, po);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  for (size_t i = 0; i < c->size(); i += 7) {
    const size_t d = c->DayOf(i);
    pricing::OptionInputs in{c->right[i],
                             c->underlying_price[d],
                             c->strike[i],
                             o.rate,
                             o.dividend,
                             c->implied_vol[i],
                             (c->expiry[i] - c->dates[d]) / 365.0};
    const pricing::Greeks g = *pricing::BsmGreeks(in);
    EXPECT_NEAR(got->mid[i], g.price, 1e-10 * std::max(1.0, g.price));
    EXPECT_NEAR(got->delta[i], g.delta, 1e-10);
    EXPECT_NEAR(got->gamma[i], g.gamma, 1e-10);
    EXPECT_NEAR(got->vega[i], g.vega, 1e-10 * std::max(1.0, g.vega));
    EXPECT_NEAR(got->theta[i], g.theta, 1e-10 * std::max(1.0, std::abs(g.theta)));
    EXPECT_NEAR(got->mid[i], c->mark[i], 1e-10 * std::max(1.0, g.price));
  }
  // Quotes mode recovers the model vol from the synthetic mids only approximately (the
  // quotes are rounded to the tick), but every output is finite.
  Result<ChainPricing> quoted = PriceChain(*c, {MidSource::kQuotes, o.rate, o.dividend, ""});
  ASSERT_TRUE(quoted.ok());
  for (size_t i = 0; i < c->size(); ++i) ASSERT_TRUE(std::isfinite(quoted->iv[i]));
}

TEST(ChainPricing, OutOfDomainInputsAreErrorsNotNaN) {
  // Chains built by hand (not through the reader): a strike <= 0 or a NaN model vol is an
  // error naming the problem; nothing is returned, so no NaN reaches an output.
  OptionChain c;
  c.dates = {Day(2024, 1, 2)};
  c.underlying_price = {100};
  c.day_begin = {0};
  c.AddContract(Day(2024, 2, 16), 100, OptionType::kCall, 2, 2.2);
  c.implied_vol[0] = 0.2;
  c.day_begin.push_back(1);
  ASSERT_TRUE(PriceChain(c, {MidSource::kModel, 0, 0, ""}).ok());
  OptionChain bad = c;
  bad.strike[0] = 0;
  Result<ChainPricing> r = PriceChain(bad, {MidSource::kModel, 0, 0, ""});
  ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "strike"));
  bad = c;
  bad.implied_vol[0] = std::nan("");
  EXPECT_TRUE(IsError(PriceChain(bad, {MidSource::kModel, 0, 0, ""}),
                      Status::Code::kInvalidArgument,
                      "contract 0 (strike 100): no model implied vol"));
  bad = c;
  bad.underlying_price[0] = -1;
  EXPECT_TRUE(IsError(PriceChain(bad, {}), Status::Code::kInvalidArgument,
                      "quote date 2024-01-02: no underlying price (found -1)"));
  ChainPricingOptions po;
  po.rate = std::nan("");
  EXPECT_TRUE(IsError(PriceChain(c, po), Status::Code::kInvalidArgument, "rate = nan"));
}

TEST(ChainPricing, MissingUnderlyingPriceIsAnError) {
  Parsed p = Parse("quote_date,expiration,strike,type,bid,ask\n2024-01-02,2024-01-19,100,C,2,2.2\n",
                   BadRowPolicy::kFail);
  ASSERT_TRUE(p.chain.ok());
  Result<ChainPricing> got = PriceChain(*p.chain, {});
  ASSERT_TRUE(IsError(got, Status::Code::kInvalidArgument, "2024-01-02: no underlying price"));
}

TEST(ChainPricing, AContractOutsideTheDomainIsNamedByFileAndLine) {
  OptionChain c;
  c.dates = {Day(2024, 1, 2)};
  c.underlying_price = {100};
  c.day_begin = {0};
  for (int k = 0; k < 4; ++k) {
    c.AddContract(Day(2024, 2, 16), 90 + 5 * k, OptionType::kCall, 2, 2.2);
    c.line[k] = 10 + k;
  }
  c.expiry[2] = Day(2150, 1, 16);  // T = 126 years
  c.day_begin.push_back(4);
  ChainPricingOptions po;
  po.source = "quotes.csv";
  Result<ChainPricing> r = PriceChain(c, po);
  ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "quotes.csv:12: time = "));
  EXPECT_EQ(r.status().message().find("option 2 of"), std::string::npos) << r.status().message();
}

TEST(ChainPricing, QuotesOutsideTheBoundsAreMarkedAndFilled) {
  // Spot 101, no rates: a call at 1.0 with strike 50 is 50 below its intrinsic value (the
  // lower bound max(S - K, 0) = 51), a put at 60.5 with strike 50 above its upper bound K.
  OptionChain c;
  c.dates = {Day(2024, 1, 2)};
  c.underlying_price = {101};
  c.day_begin = {0};
  c.AddContract(Day(2024, 3, 15), 100, OptionType::kCall, 4.9, 5.1);
  c.AddContract(Day(2024, 3, 15), 50, OptionType::kCall, 0.9, 1.1);
  c.AddContract(Day(2024, 3, 15), 50, OptionType::kPut, 60, 61);
  c.AddContract(Day(2024, 1, 2), 100, OptionType::kCall, 1, 1.2);  // expires today
  c.day_begin.push_back(4);
  Result<ChainPricing> r = PriceChain(c, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->iv_gap[0], IvGap::kNone);
  EXPECT_EQ(r->iv_gap[1], IvGap::kBelowLowerBound);
  EXPECT_EQ(r->iv_gap[2], IvGap::kAboveUpperBound);
  EXPECT_EQ(r->iv_gap[3], IvGap::kExpired);
  EXPECT_DOUBLE_EQ(r->lower_bound[1], 51.0);
  EXPECT_DOUBLE_EQ(r->upper_bound[2], 50.0);
  EXPECT_EQ(r->iv_source[1], IvSource::kFilled);
  EXPECT_EQ(r->iv[1], r->iv[0]);  // the only solved vol of the expiry
  EXPECT_EQ(r->solved, 1);
  EXPECT_EQ(r->filled, 3);
  EXPECT_STREQ(IvGapName(IvGap::kBelowLowerBound), "mid<=lower-bound");
}

// Black-Scholes-Merton written out here (Haug 2007, 1.1.6 with b = r - q), independent
// of pricing/.
double ClosedFormBsm(OptionType type, double s, double k, double r, double q, double vol,
                     double t) {
  const double sd = vol * std::sqrt(t);
  const double d1 = (std::log(s / k) + (r - q + 0.5 * vol * vol) * t) / sd, d2 = d1 - sd;
  auto n = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const double phi = type == OptionType::kCall ? 1.0 : -1.0;
  return phi * (s * std::exp(-q * t) * n(phi * d1) - k * std::exp(-r * t) * n(phi * d2));
}

// SolveQuotes: European rows by BSM with each row's own r and q (the file's columns, or
// the options' values where they override or the row has none); the implied vol of each
// mid reproduces it through the closed form above.
TEST(ChainQuotes, EuropeanIvReproducesTheMidWithTheRowsRates) {
  const int32_t today = Day(2024, 1, 2), exp1 = Day(2024, 3, 15);
  const double s = 100, t = (exp1 - today) / 365.0;
  OptionChain c;
  c.underlying = "X";
  c.dates = {today};
  c.underlying_price = {s};
  c.day_begin = {0};
  c.AddContract(exp1, 95, OptionType::kCall, 7.9, 8.1);
  c.AddContract(exp1, 105, OptionType::kCall, 2.4, 2.6);
  c.AddContract(exp1, 100, OptionType::kPut, 3.9, 4.1);
  c.day_begin.push_back(3);
  c.rate = {0.0371, 0.05, std::nan("")};  // the third row has none: the fallback
  c.dividend = {0.0102, 0.0, std::nan("")};
  c.style = {ExerciseStyle::kEuropean, ExerciseStyle::kUnknown, ExerciseStyle::kEuropean};
  QuoteSolveOptions o;
  o.rate = 0.02;
  o.dividend = 0.015;
  Result<QuoteSolution> q = SolveQuotes(c, o);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  const double want_r[] = {0.0371, 0.05, 0.02}, want_q[] = {0.0102, 0.0, 0.015};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(q->reason[i], QuoteReason::kOk) << i;
    EXPECT_EQ(q->rate[i], want_r[i]);
    EXPECT_EQ(q->dividend[i], want_q[i]);
    EXPECT_EQ(q->style[i], ExerciseStyle::kEuropean);
    EXPECT_EQ(q->model[i], pricing::Model::kBsm);
    const double mid = 0.5 * (c.bid[i] + c.ask[i]);
    const double back =
        ClosedFormBsm(c.right[i], s, c.strike[i], want_r[i], want_q[i], q->iv[i], t);
    EXPECT_NEAR(back, mid, 1e-9 * mid) << i;
  }
  EXPECT_EQ(q->rate_fallback, 1);
  EXPECT_EQ(q->dividend_fallback, 1);
  EXPECT_EQ(q->style_fallback, 1);
  // Overrides replace the columns.
  o.override_rate = o.override_dividend = true;
  Result<QuoteSolution> over = SolveQuotes(c, o);
  ASSERT_TRUE(over.ok());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(over->rate[i], 0.02);
    EXPECT_EQ(over->dividend[i], 0.015);
    const double mid = 0.5 * (c.bid[i] + c.ask[i]);
    EXPECT_NEAR(ClosedFormBsm(c.right[i], s, c.strike[i], 0.02, 0.015, over->iv[i], t), mid,
                1e-9 * mid);
  }
  EXPECT_NE(over->iv[0], q->iv[0]);
  EXPECT_EQ(over->rate_fallback, 0);
}

// An American put on a dividend-free underlying, deep in the money with r = 5%: its mid is
// the CRR tree's value at sigma = 0.25 (an independent, convergent American price). The
// implied vol is Barone-Adesi-Whaley's (pricing/american.cc): BAW at that vol gives the mid
// back, the tree at that vol is within BAW's approximation error of it, and the vol lies
// near 0.25; the European reading of the same mid is a different, higher vol, because the
// mid includes the early-exercise premium.
TEST(ChainQuotes, AmericanPutUsesBaroneAdesiWhaley) {
  const int32_t today = Day(2024, 1, 2), exp1 = Day(2024, 7, 1);
  const double s = 100, k = 115, r = 0.05, t = (exp1 - today) / 365.0;
  pricing::OptionInputs in{OptionType::kPut, s, k, r, 0.0, 0.25, t};
  const double mid = *pricing::BinomialPrice(in, 4000, /*american=*/true);
  const double european = ClosedFormBsm(OptionType::kPut, s, k, r, 0, 0.25, t);
  ASSERT_GT(mid - european, 0.01 * mid);  // early exercise is worth more than 1% here
  OptionChain c;
  c.underlying = "X";
  c.dates = {today};
  c.underlying_price = {s};
  c.day_begin = {0};
  c.AddContract(exp1, k, OptionType::kPut, mid - 0.05, mid + 0.05);
  c.day_begin.push_back(1);
  QuoteSolveOptions o;
  o.rate = r;
  o.style = ExerciseStyle::kAmerican;
  Result<QuoteSolution> am = SolveQuotes(c, o);
  ASSERT_TRUE(am.ok()) << am.status().ToString();
  ASSERT_EQ(am->reason[0], QuoteReason::kOk) << am->detail[0];
  EXPECT_EQ(am->model[0], pricing::Model::kBaroneAdesiWhaley);
  in.vol = am->iv[0];
  EXPECT_NEAR(*pricing::BaroneAdesiWhaleyPrice(in), mid, 1e-8 * mid);
  EXPECT_NEAR(am->price[0], mid, 1e-8 * mid);
  // BAW is an approximation: ~0.5% of the value here (pricing/pricing.h: up to ~1%).
  EXPECT_NEAR(*pricing::BinomialPrice(in, 4000, true), mid, 1e-2 * mid);
  EXPECT_NEAR(am->iv[0], 0.25, 0.02);
  // Greeks of the American model: a deep in-the-money put's delta is between -1 and the
  // European one's.
  EXPECT_LT(am->delta[0], 0);
  EXPECT_GT(am->delta[0], -1);
  EXPECT_GT(am->gamma[0], 0);
  EXPECT_GT(am->vega[0], 0);

  o.style = ExerciseStyle::kEuropean;
  Result<QuoteSolution> eu = SolveQuotes(c, o);
  ASSERT_TRUE(eu.ok());
  ASSERT_EQ(eu->reason[0], QuoteReason::kOk);
  EXPECT_GT(eu->iv[0], am->iv[0] + 0.02);
  EXPECT_NEAR(ClosedFormBsm(OptionType::kPut, s, k, r, 0, eu->iv[0], t), mid, 1e-9 * mid);
  // A row's own style wins over the fallback unless overridden.
  c.style[0] = ExerciseStyle::kAmerican;
  Result<QuoteSolution> col = SolveQuotes(c, o);
  EXPECT_EQ(col->style[0], ExerciseStyle::kAmerican);
  EXPECT_EQ(col->iv[0], am->iv[0]);
  o.override_style = true;
  Result<QuoteSolution> forced = SolveQuotes(c, o);
  EXPECT_EQ(forced->style[0], ExerciseStyle::kEuropean);
  EXPECT_EQ(forced->iv[0], eu->iv[0]);
}

TEST(ChainSynth, CountMatchesTheGeneratedChainAndStopsEarly) {
  const std::vector<int32_t> dates = Weekdays(Day(2023, 1, 2), 120);
  const std::vector<double> closes = Closes(120, 100, 0.4);
  ChainSynthOptions o;
  Result<OptionChain> chain = GenerateOptionChain(dates, closes, o);
  ASSERT_TRUE(chain.ok());
  Result<ChainSize> size = CountOptionChainContracts(dates, closes, o);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->contracts, static_cast<int64_t>(chain->size()));
  EXPECT_EQ(size->days, 120);
  // Stopping early: the first day past the limit ends the count.
  const int64_t first_day = chain->day_begin[1];
  size = CountOptionChainContracts(dates, closes, o, first_day);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->days, 2);
  EXPECT_EQ(size->contracts, chain->day_begin[2]);
}

}  // namespace
}  // namespace rlt::market
