// End-to-end tests of `rltrade hedge`: run the binary as a user would. The numbers are
// checked against Black-Scholes (Hull's 20-week example, price 2.40) and the discrete
// delta-hedging theory (SD of the hedging cost's PV ~ sqrt(pi/4) vega sigma sqrt(dt/T)),
// the flags against their documented ranges, and a trained run of the hedging
// environment against the command's RUN_DIR path.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_util.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;

using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::RunCli;

const std::string kHull =
    "hedge --spot 49 --strike 50 --rate 0.05 --drift 0.13 --vol 0.2 --maturity-weeks 20";

nlohmann::json Json(const CmdResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

TEST(HedgeCli, BsDeltaJsonHasTheContractKeysAndFollowsTheTheory) {
  const nlohmann::json j =
      Json(RunCli(kHull + " --rebalance-weeks 1 --paths 20000 --policy bs-delta --json"));
  for (const char* key : {"bs_price", "mean_cost", "sd_cost", "sd_over_price"}) {
    ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump();
  }
  EXPECT_EQ(j.size(), 4u) << j.dump();
  EXPECT_NEAR(j["bs_price"].get<double>(), 2.40, 0.005);  // Hull: $240,000 for 100,000
  // sqrt(pi/4) vega sigma sqrt(dt/T), vega = S sqrt(T) n(d1) (computed here, not by us).
  const double t = 20 / 52.0, sd = 0.2 * std::sqrt(t);
  const double d1 = (std::log(49 / 50.0) + (0.05 + 0.02) * t) / sd;
  const double vega = 49 * std::sqrt(t) * std::exp(-0.5 * d1 * d1) / std::sqrt(2 * M_PI);
  const double theory = std::sqrt(M_PI / 4) * vega * 0.2 * std::sqrt(1 / 20.0);
  EXPECT_NEAR(j["sd_cost"].get<double>() / theory, 1.0, 0.10);
  EXPECT_NEAR(j["sd_over_price"].get<double>(),
              j["sd_cost"].get<double>() / j["bs_price"].get<double>(), 1e-12);
  // Costs make hedging dearer on the same paths (same seed).
  const nlohmann::json costly = Json(
      RunCli(kHull + " --rebalance-weeks 1 --paths 20000 --policy bs-delta --cost 0.01 --json"));
  EXPECT_GT(costly["mean_cost"].get<double>(), j["mean_cost"].get<double>() + 0.1);
}

TEST(HedgeCli, BadFlagsAreClearErrors) {
  struct Case {
    std::string flags, fragment;
  };
  const Case cases[] = {
      {"--spot 0 --strike 50 --vol 0.2 --maturity-weeks 20 --rebalance-weeks 1", "--spot"},
      {"--spot 49 --strike nan --vol 0.2 --maturity-weeks 20 --rebalance-weeks 1", "--strike"},
      {"--spot 49 --strike 50 --vol -0.2 --maturity-weeks 20 --rebalance-weeks 1", "--vol"},
      {"--spot 49 --strike 50 --vol 0.2 --maturity-weeks 0 --rebalance-weeks 1",
       "--maturity-weeks"},
      {"--spot 49 --strike 50 --vol 0.2 --maturity-weeks 20 --rebalance-weeks 21",
       "--rebalance-weeks"},
      {"--spot 49 --strike 50 --vol 0.2 --maturity-weeks 20 --rebalance-weeks 0",
       "--rebalance-weeks"},
      {"--spot 49 --strike 50 --vol inf --maturity-weeks 20 --rebalance-weeks 1", "--vol"},
  };
  for (const Case& c : cases) {
    const CmdResult r =
        RunCli("hedge " + c.flags + " --rate 0.05 --drift 0.1 --paths 10 --policy bs-delta");
    // nan and inf are not plain decimal numbers: refused while parsing (usage error, 2).
    const bool not_a_number =
        c.flags.find("nan") != std::string::npos || c.flags.find("inf") != std::string::npos;
    EXPECT_EQ(r.exit_code, not_a_number ? 2 : 1) << c.flags << "\n" << r.out;
    EXPECT_NE(r.out.find(c.fragment), std::string::npos) << r.out;
  }
  const std::string ok = kHull + " --rebalance-weeks 1 ";
  CmdResult paths = RunCli(ok + "--paths 0 --policy bs-delta");
  EXPECT_EQ(paths.exit_code, 1);
  EXPECT_NE(paths.out.find("--paths"), std::string::npos) << paths.out;
  CmdResult many = RunCli(ok + "--paths 100000000000 --policy bs-delta");
  EXPECT_NE(many.exit_code, 0) << many.out;
  CmdResult cost = RunCli(ok + "--paths 10 --policy bs-delta --cost -0.01");
  EXPECT_EQ(cost.exit_code, 1);
  EXPECT_NE(cost.out.find("--cost"), std::string::npos) << cost.out;
  CmdResult nan_rate = RunCli(
      "hedge --spot 49 --strike 50 --rate nan --drift 0.1 --vol 0.2 --maturity-weeks 20 "
      "--rebalance-weeks 1 --paths 10 --policy bs-delta");
  EXPECT_EQ(nan_rate.exit_code, 2);
  EXPECT_NE(nan_rate.out.find("--rate"), std::string::npos) << nan_rate.out;
  CmdResult no_run = RunCli(ok + "--paths 10 --policy /nonexistent/run");
  EXPECT_EQ(no_run.exit_code, 1);
  EXPECT_NE(no_run.out.find("config.toml"), std::string::npos) << no_run.out;
}

class HedgeRun : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rlt::testing::NewScratchDir("rlt_hedgecli_"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Train(const std::string& env_section) {
    const std::string config = (dir_ / "tiny.toml").string();
    std::ofstream(config) << "[run]\ntotal_steps = 256\nseed = 1\nthreads = 1\n[env]\n"
                          << env_section << "num_envs = 2\n[algo]\nn_steps = 64\n"
                          << "batch_size = 64\nn_epochs = 1\n";
    const std::string run = (dir_ / "run").string();
    const CmdResult r = RunCli("train " + config + " --run-dir " + run + " --quiet");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return run;
  }
  fs::path dir_;
};

TEST_F(HedgeRun, ATrainedHedgingPolicyRunsOnTheCommandsParameters) {
  const std::string run = Train("id = \"hedging\"\nstep_weeks = 2\n");
  const nlohmann::json j =
      Json(RunCli(kHull + " --rebalance-weeks 1 --paths 300 --policy " + run + " --json"));
  for (const char* key : {"bs_price", "mean_cost", "sd_cost", "sd_over_price"}) {
    ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump();
  }
  EXPECT_NEAR(j["bs_price"].get<double>(), 2.40, 0.005);
  EXPECT_TRUE(std::isfinite(j["sd_cost"].get<double>()));
  EXPECT_GT(j["sd_cost"].get<double>(), 0.0);
}

TEST_F(HedgeRun, ARunOfAnotherEnvironmentIsRefusedClearly) {
  const std::string run = Train("id = \"cartpole\"\n");
  const CmdResult r = RunCli(kHull + " --rebalance-weeks 1 --paths 10 --policy " + run);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("hedging"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cartpole"), std::string::npos) << r.out;
}

}  // namespace
