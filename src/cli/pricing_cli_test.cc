// End-to-end tests of `rltrade price`, `rltrade iv` and `rltrade bench pricing`: run the
// binary as a user would and compare its JSON with the published oracle values
// (../shared/oracles) and with the library's documented limits.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_util.h"
#include "pricing/test_util.h"

namespace {

using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::RunCli;
using rlt::pricing::testing_util::Num;
using rlt::pricing::testing_util::ReadOracle;
using rlt::pricing::testing_util::Row;

// "--type call --spot 60 ..." for an oracle row (no --vol when `with_vol` is false).
std::string OptionFlags(const Row& row, bool with_vol = true) {
  std::string flags = " --type " + row.at("type") + " --spot " + row.at("spot") + " --strike " +
                      row.at("strike") + " --rate " + row.at("r") + " --div " + row.at("q") +
                      " --time " + row.at("t");
  if (with_vol) flags += " --vol " + row.at("vol");
  return flags;
}

nlohmann::json Json(const CmdResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

TEST(PriceCli, BsmJsonMatchesEveryEuropeanOracleRow) {
  const auto rows = ReadOracle("bsm_european.csv");
  if (rows.empty()) GTEST_SKIP() << "no ../shared/oracles";
  for (const Row& row : rows) {
    const nlohmann::json j = Json(RunCli("price --model bsm --json" + OptionFlags(row)));
    ASSERT_TRUE(j.contains("price")) << j.dump();
    EXPECT_NEAR(j["price"].get<double>(), Num(row, "value"), 1e-4) << OptionFlags(row);
  }
}

TEST(PriceCli, GreeksJsonMatchesEveryGreekOracleRow) {
  const auto rows = ReadOracle("bsm_greeks.csv");
  if (rows.empty()) GTEST_SKIP() << "no ../shared/oracles";
  for (const Row& row : rows) {
    const nlohmann::json j = Json(RunCli("price --greeks --json" + OptionFlags(row)));
    for (const char* key :
         {"price", "delta", "gamma", "vega", "theta", "theta_per_day", "rho", "dividend_rho"}) {
      ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump();
    }
    const std::string greek = row.at("greek");
    ASSERT_TRUE(j.contains(greek)) << greek;
    EXPECT_NEAR(j[greek].get<double>(), Num(row, "value"), 1e-4) << greek;
  }
}

TEST(PriceCli, AmericanModelsMatchTheirOracleRows) {
  const auto rows = ReadOracle("american.csv");
  if (rows.empty()) GTEST_SKIP() << "no ../shared/oracles";
  for (const Row& row : rows) {
    if (row.at("method") != "bjerksund_stensland") continue;
    const nlohmann::json j = Json(RunCli("price --model bjerksund --json" + OptionFlags(row)));
    EXPECT_NEAR(j["price"].get<double>(), Num(row, "value"), Num(row, "tolerance"));
    // The tree and BAW price the same option near the closed form's lower bound.
    for (const char* model : {"binomial --steps 2000", "baw"}) {
      const nlohmann::json m =
          Json(RunCli(std::string("price --model ") + model + " --json" + OptionFlags(row)));
      EXPECT_NEAR(m["price"].get<double>(), Num(row, "value"), 0.05) << model;
      EXPECT_GE(m["price"].get<double>(), Num(row, "value") - 1e-3) << model;
    }
  }
}

TEST(IvCli, RecoversTheVolatilityOfAnOraclePrice) {
  const auto rows = ReadOracle("bsm_european.csv");
  if (rows.empty()) GTEST_SKIP() << "no ../shared/oracles";
  for (const Row& row : rows) {
    // The oracle price is rounded to 1e-4, so the vol is recovered to 1e-4 / vega.
    const nlohmann::json j =
        Json(RunCli("iv --json --price " + row.at("value") + OptionFlags(row, false)));
    ASSERT_TRUE(j.contains("implied_vol")) << j.dump();
    EXPECT_NEAR(j["implied_vol"].get<double>(), Num(row, "vol"), 2e-3) << OptionFlags(row);
  }
}

TEST(IvCli, PriceOutsideTheNoArbitrageBoundsIsAClearError) {
  // A call can never be worth more than the stock.
  CmdResult r = RunCli("iv --price 150 --type call --spot 100 --strike 100 --time 1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("no-arbitrage bounds"), std::string::npos) << r.out;
}

TEST(PriceCli, BadInputIsAClearErrorOrTheDocumentedLimit) {
  CmdResult neg_vol = RunCli("price --spot 100 --strike 100 --vol -0.2 --time 1");
  EXPECT_EQ(neg_vol.exit_code, 1);
  EXPECT_NE(neg_vol.out.find("vol = -0.2"), std::string::npos) << neg_vol.out;
  CmdResult zero_spot = RunCli("price --spot 0 --strike 100 --vol 0.2 --time 1");
  EXPECT_EQ(zero_spot.exit_code, 1);
  EXPECT_NE(zero_spot.out.find("spot"), std::string::npos) << zero_spot.out;
  CmdResult nan_strike = RunCli("price --spot 100 --strike nan --vol 0.2 --time 1");
  EXPECT_NE(nan_strike.exit_code, 0) << nan_strike.out;
  EXPECT_EQ(nan_strike.out.find("\"price\""), std::string::npos) << nan_strike.out;
  CmdResult bad_model = RunCli("price --model black --spot 100 --strike 100 --vol 0.2 --time 1");
  EXPECT_EQ(bad_model.exit_code, 2) << bad_model.out;
  // Expired (T = 0): intrinsic value for every model; delta is the payoff's slope.
  for (const char* model : {"bsm", "binomial", "baw", "bjerksund"}) {
    const nlohmann::json j = Json(RunCli(std::string("price --greeks --json --model ") + model +
                                         " --type put --spot 90 --strike 100 --vol 0.2 --time 0"));
    EXPECT_EQ(j["price"].get<double>(), 10.0) << model;
    EXPECT_EQ(j["delta"].get<double>(), -1.0) << model;
    EXPECT_EQ(j["gamma"].get<double>(), 0.0) << model;
  }
}

TEST(BenchPricingCli, ReportsAPositiveRate) {
  const nlohmann::json j =
      Json(RunCli("bench pricing --n 4096 --threads 1 --precision double --seconds 0.2 --json"));
  ASSERT_TRUE(j.contains("options_per_sec")) << j.dump();
  EXPECT_GT(j["options_per_sec"].get<double>(), 0.0);
  EXPECT_EQ(j["threads"].get<int>(), 1);
  EXPECT_TRUE(j["accurate"].get<bool>()) << j.dump();
}

TEST(BenchPricingCli, MeasuresOneAndTwoThreadsInBothPrecisionsAndChecksAccuracy) {
  const nlohmann::json j = Json(RunCli("bench pricing --n 3000 --seconds 0.05 --json"));
  ASSERT_EQ(j["results"].size(), 4u) << j.dump();
  for (const auto& r : j["results"]) {
    EXPECT_GT(r["options_per_sec"].get<double>(), 0.0);
    EXPECT_TRUE(r["accurate"].get<bool>()) << r.dump();
    EXPECT_LE(r["max_scaled_error"].get<double>(), r["precision"] == "float" ? 1e-6 : 1e-12);
  }
  EXPECT_EQ(j["results"][1]["threads"].get<int>(), 2);
  EXPECT_EQ(j["results"][2]["precision"], "float");
  EXPECT_NE(RunCli("bench pricing --threads 1,,2").exit_code, 0);
  EXPECT_NE(RunCli("bench pricing --precision half").exit_code, 0);
}

}  // namespace
