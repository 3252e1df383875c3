// End-to-end tests of `rltrade chain check` and `rltrade chain synth`: run the binary as a
// user would, on CSVs the test writes itself and (when present) on ../shared/data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

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

TEST(ChainCli, RealSpyFile) {
  const std::string file =
      RLT_SHARED_DIR "/data/options/SPY_chain_yahoo_snapshot_2026-05-01_enriched.csv";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " absent";
  // Expected counts from an independent Python pass over the file (csv module).
  auto r =
      RunRltrade("chain check " + file + " --json --rate 0.0371 --div 0.0102", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 1);  // asks of 0 under the fail policy
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["rows_read"], 7722);
  EXPECT_EQ(j["problem_counts"]["ask<=0"], 113);
  EXPECT_EQ(j["expiries"], 24);
  EXPECT_EQ(j["quote_dates"], 1);
  EXPECT_EQ(j["ok"], false);
}

}  // namespace
