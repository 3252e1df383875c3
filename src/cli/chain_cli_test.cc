// End-to-end tests of `rltrade chain check` and `rltrade chain synth`: run the binary as a
// user would, on CSVs the test writes itself and (when present) on ../shared/data.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testing/testing.h"

namespace {

using rlt::testing::RunRltrade;
using rlt::testing::ScratchDir;

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

const char kChain[] =
    "quote_date,expiration,strike,type,bid,ask,underlying_price\n"
    "2024-01-02,2024-01-19,100,C,2.0,2.2,100\n"
    "2024-01-02,2024-01-19,95,C,6.0,5.5,100\n"  // line 3: crossed
    "2024-01-02,2023-12-29,95,P,1.0,1.5,100\n"  // line 4: expired
    "2024-01-03,2024-01-19,100,P,1.8,2.0,101\n";

TEST(ChainCli, CheckReportsProblemsWithFileAndLine) {
  ScratchDir dir("rlt_chain_cli_");
  const std::string file = dir / "t.csv";
  Write(file, kChain);
  auto r = RunRltrade("chain check " + file);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(file + ":3: column 'bid': bid>ask: crossed quote"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(file + ":4: column 'expiration': expiry<quote-date"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("would be dropped with --on-bad-rows drop"), std::string::npos) << r.out;

  r = RunRltrade("chain check " + file + " --on-bad-rows drop --json", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["rows_read"], 4);
  EXPECT_EQ(j["rows_dropped"], 2);
  EXPECT_EQ(j["contracts"], 2);
  EXPECT_EQ(j["quote_dates"], 2);
  EXPECT_EQ(j["problem_counts"]["bid>ask"], 1);
  EXPECT_EQ(j["problem_counts"]["expiry<quote-date"], 1);
  EXPECT_EQ(j["ok"], true);

  r = RunRltrade("chain check " + file + " --on-bad-rows maybe");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("valid values: fail, drop"), std::string::npos) << r.out;
  Write(file, "quote_date,expiration,strike,bid,ask\n2024-01-02,2024-01-19,100,2,2.2\n");
  r = RunRltrade("chain check " + file);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("no 'call/put' column"), std::string::npos) << r.out;
}

TEST(ChainCli, SynthWritesAChainThatChecksClean) {
  ScratchDir dir("rlt_chain_cli_");
  const std::string out = dir / "chain.csv";
  auto r = RunRltrade("chain synth --synthetic 30 --set seed=7 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RunRltrade("chain check " + out + " --rate 0.02 --div 0.015 --json", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["quote_dates"], 30);
  EXPECT_EQ(j["problems"].size(), 0u);
  EXPECT_GT(j["contracts"].get<int64_t>(), 30 * 2 * 17);  // >= 17 strikes x C/P x 1 expiry
  EXPECT_FALSE(j.contains("pricing_error")) << r.out;
  // Same seed, same file.
  const std::string again = dir / "again.csv";
  ASSERT_EQ(RunRltrade("chain synth --synthetic 30 --set seed=7 --out " + again).exit_code, 0);
  std::ifstream a(out), b(again);
  const std::string sa((std::istreambuf_iterator<char>(a)), {});
  const std::string sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(sa, sb);
  r = RunRltrade("chain synth --synthetic 30 --set skew_typo=1 --out " + again);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("did you mean 'skew'"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------------------
// --out: implied vols and Greeks per row.

// The rows of a CSV written by `chain check --out`, as maps column -> field.
std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    if (!l.empty() && l.back() == ',') f.emplace_back();
    return f;
  };
  if (std::getline(in, line)) header = split(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size(); ++i) row[header[i]] = i < f.size() ? f[i] : "";
    rows.push_back(row);
  }
  return rows;
}

double Num(const std::map<std::string, std::string>& row, const std::string& key) {
  return std::stod(row.at(key));
}

// Black-Scholes-Merton written out in the test (Haug 2007, 1.1.6), independent of the
// project's pricing code.
double Bsm(bool call, double s, double k, double r, double q, double vol, double t) {
  const double sd = vol * std::sqrt(t);
  const double d1 = (std::log(s / k) + (r - q + 0.5 * vol * vol) * t) / sd, d2 = d1 - sd;
  auto n = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const double phi = call ? 1.0 : -1.0;
  return phi * (s * std::exp(-q * t) * n(phi * d1) - k * std::exp(-r * t) * n(phi * d2));
}

// Cox-Ross-Rubinstein American put written out in the test, independent of the
// project's pricing code.
double CrrAmericanPut(double s, double k, double r, double q, double vol, double t, int steps) {
  const double dt = t / steps, u = std::exp(vol * std::sqrt(dt)), d = 1 / u;
  const double p = (std::exp((r - q) * dt) - d) / (u - d), disc = std::exp(-r * dt);
  std::vector<double> v(steps + 1);
  for (int j = 0; j <= steps; ++j) v[j] = std::max(k - s * std::pow(u, 2 * j - steps), 0.0);
  for (int i = steps - 1; i >= 0; --i) {
    for (int j = 0; j <= i; ++j) {
      v[j] = std::max(disc * (p * v[j + 1] + (1 - p) * v[j]), k - s * std::pow(u, 2 * j - i));
    }
  }
  return v[0];
}

// A real-shaped chain (the SPY file's column names): a rate and dividend column, no style
// column, zero bids and asks as vendors write them, a stale deep in-the-money quote.
const char kRealShaped[] =
    "ticker,expiry,option_type,strike,bid,ask,S,spot_date,r,q\n"
    "SPY,2024-03-15,call,100,4.9,5.1,100,2024-01-02,0.0371,0.0102\n"  // 2: quoted
    "SPY,2024-03-15,put,95,0,0.5,100,2024-01-02,0.0371,0.0102\n"      // 3: no bid
    "SPY,2024-03-15,call,130,0.05,0,100,2024-01-02,0.0371,0.0102\n"   // 4: no ask
    "SPY,2024-03-15,put,100,3.9,4.1,100,2024-01-02,0.0371,0.0102\n"   // 5: quoted
    "SPY,2024-03-15,call,50,40,41,100,2024-01-02,0.0371,0.0102\n"     // 6: below intrinsic
    "SPY,2024-01-02,call,99,1,1.2,100,2024-01-02,0.0371,0.0102\n";    // 7: expires today

TEST(ChainCli, OutWritesEveryRowWithIvGreeksAndReasons) {
  ScratchDir dir("rlt_chain_cli_");
  const std::string file = dir / "spy.csv", out = dir / "iv.csv";
  Write(file, kRealShaped);
  auto r = RunRltrade("chain check " + file + " --out " + out + " --json", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j.at("rows_read"), 6);
  EXPECT_EQ(j.at("no_quote_rows"), 2);
  EXPECT_EQ(j.at("no_bid_rows"), 1);
  EXPECT_EQ(j.at("no_ask_rows"), 1);
  EXPECT_EQ(j.at("iv_computed"), 2);
  EXPECT_EQ(j.at("iv_failure_counts").at("mid<=lower-bound"), 1);
  EXPECT_EQ(j.at("iv_failure_counts").at("expires-today"), 1);
  EXPECT_EQ(j.at("rate_source"), "file");
  EXPECT_EQ(j.at("dividend_source"), "file");
  EXPECT_EQ(j.at("style_source"), "default");
  EXPECT_EQ(j.at("ok"), true);

  const auto rows = ReadCsv(out);
  ASSERT_EQ(rows.size(), 6u);  // every input row, in file order
  const char* reasons[] = {"", "no-quote", "no-quote", "", "mid<=lower-bound", "expires-today"};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    EXPECT_EQ(row.at("line"), std::to_string(i + 2));
    EXPECT_EQ(row.at("reason"), reasons[i]) << i;
    EXPECT_EQ(row.at("style"), "E");
    EXPECT_EQ(Num(row, "rate"), 0.0371);
    EXPECT_EQ(Num(row, "dividend_yield"), 0.0102);
    EXPECT_EQ(row.at("implied_vol").empty(), reasons[i][0] != 0) << i;
    if (reasons[i][0] != 0) continue;
    // The written vol, fed to an independent BSM with the file's r and q, gives the mid.
    const double mid = 0.5 * (Num(row, "bid") + Num(row, "ask"));
    EXPECT_EQ(Num(row, "mid"), mid);
    EXPECT_NEAR(Num(row, "time"), 73 / 365.0, 1e-15);
    const double back = Bsm(row.at("type") == "C", 100, Num(row, "strike"), 0.0371, 0.0102,
                            Num(row, "implied_vol"), 73 / 365.0);
    EXPECT_NEAR(back, mid, 1e-9 * mid) << i;
    for (const char* g : {"delta", "gamma", "vega", "theta"}) EXPECT_FALSE(row.at(g).empty());
  }

  // Flags override the columns.
  r = RunRltrade("chain check " + file + " --out " + out + " --rate 0.05 --div 0 --json", "",
                 "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j2 = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(j2.at("rate_source"), "flag");
  EXPECT_EQ(j2.at("dividend_source"), "flag");
  const auto rows2 = ReadCsv(out);
  ASSERT_EQ(rows2.size(), 6u);
  const auto& call = rows2[0];
  EXPECT_EQ(Num(call, "rate"), 0.05);
  EXPECT_EQ(Num(call, "dividend_yield"), 0.0);
  const double mid = 5.0;
  EXPECT_NEAR(Bsm(true, 100, 100, 0.05, 0, Num(call, "implied_vol"), 73 / 365.0), mid, 1e-9 * mid);
  EXPECT_NE(call.at("implied_vol"), rows[0].at("implied_vol"));

  // Without rate columns or flags: r = q = 0, with a note in the text output.
  Write(file,
        "quote_date,expiration,strike,type,bid,ask,underlying_price\n"
        "2024-01-02,2024-03-15,100,C,4.9,5.1,100\n");
  r = RunRltrade("chain check " + file);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("r = 0 (note: no r column and no --rate; 0 assumed)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("pass --style american"), std::string::npos) << r.out;
}

// An American put on a dividend-free underlying where early exercise matters: the mid is
// an independent CRR tree's value at sigma = 0.25. --style american reads it back near
// 0.25 (Barone-Adesi-Whaley, an approximation of the tree's value); the European reading
// of the same mid is a clearly higher vol.
TEST(ChainCli, AmericanStyleDiffersFromEuropeanWhereEarlyExerciseMatters) {
  ScratchDir dir("rlt_chain_cli_");
  const std::string file = dir / "am.csv", out = dir / "iv.csv";
  const double t = 181 / 365.0;  // 2024-01-02 .. 2024-07-01
  const double mid = CrrAmericanPut(100, 115, 0.05, 0, 0.25, t, 4000);
  ASSERT_GT(mid - Bsm(false, 100, 115, 0.05, 0, 0.25, t), 0.01 * mid);
  Write(file, fmt::format("quote_date,expiration,strike,type,bid,ask,underlying_price,rate\n"
                          "2024-01-02,2024-07-01,115,P,{:.17g},{:.17g},100,0.05\n",
                          mid - 0.05, mid + 0.05));
  auto am = RunRltrade("chain check " + file + " --style american --out " + out);
  ASSERT_EQ(am.exit_code, 0) << am.out;
  auto rows = ReadCsv(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("style"), "A");
  EXPECT_EQ(rows[0].at("model"), "baw");
  const double iv_am = Num(rows[0], "implied_vol");
  EXPECT_NEAR(iv_am, 0.25, 0.02);
  // The tree at the American vol is within BAW's approximation error (~1%) of the mid.
  EXPECT_NEAR(CrrAmericanPut(100, 115, 0.05, 0, iv_am, t, 4000), mid, 1e-2 * mid);
  EXPECT_GT(Num(rows[0], "delta"), -1);
  EXPECT_LT(Num(rows[0], "delta"), 0);

  ASSERT_EQ(RunRltrade("chain check " + file + " --out " + out).exit_code, 0);
  rows = ReadCsv(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("style"), "E");
  const double iv_eu = Num(rows[0], "implied_vol");
  EXPECT_GT(iv_eu, iv_am + 0.02);
  EXPECT_NEAR(Bsm(false, 100, 115, 0.05, 0, iv_eu, t), mid, 1e-9 * mid);

  // A style column is used; --style overrides it.
  Write(file, fmt::format("quote_date,expiration,strike,type,bid,ask,underlying_price,rate,style\n"
                          "2024-01-02,2024-07-01,115,P,{:.17g},{:.17g},100,0.05,A\n",
                          mid - 0.05, mid + 0.05));
  ASSERT_EQ(RunRltrade("chain check " + file + " --out " + out).exit_code, 0);
  EXPECT_EQ(ReadCsv(out)[0].at("implied_vol"), fmt::format("{}", iv_am));
  ASSERT_EQ(RunRltrade("chain check " + file + " --style european --out " + out).exit_code, 0);
  EXPECT_EQ(ReadCsv(out)[0].at("style"), "E");
  EXPECT_NE(RunRltrade("chain check " + file + " --style bermudan").exit_code, 0);
}

TEST(ChainCli, BadInputWritesNoOutFile) {
  ScratchDir dir("rlt_chain_cli_");
  const std::string file = dir / "bad.csv", out = dir / "iv.csv";
  // Zero quotes pass; the crossed quote on line 4 fails with file:line.
  Write(file,
        "ticker,expiry,option_type,strike,bid,ask,S,spot_date\n"
        "SPY,2024-03-15,call,100,4.9,5.1,100,2024-01-02\n"
        "SPY,2024-03-15,put,95,0,0.5,100,2024-01-02\n"
        "SPY,2024-03-15,call,105,3.0,2.5,100,2024-01-02\n");
  auto r = RunRltrade("chain check " + file + " --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(file + ":4: column 'bid': bid>ask: crossed quote"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(":3:"), std::string::npos) << r.out;  // the zero bid is no problem
  EXPECT_NE(r.out.find("not written"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  // A missing column: no file either.
  Write(file, "quote_date,expiration,strike,bid,ask\n2024-01-02,2024-01-19,100,2,2.2\n");
  EXPECT_EQ(RunRltrade("chain check " + file + " --out " + out).exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// The three real files pass by default; their no-quote counts are those of an
// independent Python pass (csv module): rows with bid <= 0 or ask <= 0.
TEST(ChainCli, RealFilesPassByDefault) {
  const std::string dir = RLT_SHARED_DIR "/data/options";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " absent";
  struct Expect {
    const char* file;
    int64_t rows, no_bid, no_ask, no_quote;
    const char* rate_source;
    const char* style_source;
  };
  for (const Expect& e : {
           Expect{"SPXW_chain_EOD_2018-01-02_2018-02-28_optopsy.csv", 14438, 1902, 15, 1902,
                  "default", "default"},
           Expect{"SPX_chain_iVolatility_2011-01-03_2011-01-07.csv", 8184, 872, 1, 872, "default",
                  "file"},
           Expect{"SPY_chain_yahoo_snapshot_2026-05-01_enriched.csv", 7722, 263, 113, 263, "file",
                  "default"},
       }) {
    const std::string file = dir + "/" + e.file;
    if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " absent";
    ScratchDir scratch("rlt_chain_cli_");
    const std::string out = scratch / "iv.csv";
    auto r = RunRltrade("chain check " + file + " --json --out " + out, "", "/dev/null");
    EXPECT_EQ(r.exit_code, 0) << e.file << r.out.substr(0, 2000);
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j.at("rows_read"), e.rows) << e.file;
    EXPECT_EQ(j.at("no_quote_rows"), e.no_quote) << e.file;
    EXPECT_EQ(j.at("no_bid_rows"), e.no_bid) << e.file;
    EXPECT_EQ(j.at("no_ask_rows"), e.no_ask) << e.file;
    EXPECT_EQ(j.at("problems").size(), 0u) << e.file;
    EXPECT_EQ(j.at("rate_source"), e.rate_source) << e.file;
    EXPECT_EQ(j.at("style_source"), e.style_source) << e.file;
    EXPECT_EQ(j.at("ok"), true) << e.file;
    const auto rows = ReadCsv(out);
    EXPECT_EQ(static_cast<int64_t>(rows.size()), e.rows) << e.file;
    int64_t no_quote = 0;
    for (const auto& row : rows) no_quote += row.at("reason") == "no-quote" ? 1 : 0;
    EXPECT_EQ(no_quote, e.no_quote) << e.file;
  }
}

}  // namespace
