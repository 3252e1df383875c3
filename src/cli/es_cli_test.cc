// End-to-end tests of `[algo] name = "es"` (learn/es.h) through the binary:
// evolution strategies on the intraday environment earn more over the training range than
// a random policy (`rltrade eval --policy random`) and than their own first generation;
// the run is a normal run directory that `eval` reads; --resume continues bit for bit;
// bad [algo] values are refused with their file:line before anything is written.
// (CartPole >= 475 and determinism are learn/es_test.cc; the K-rank population is
// MpiTrain.Es* in mpi_cli_test.cc.)
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::testing::ReadFile;
using rlt::testing::RunRltrade;

class EsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rlt::testing::NewScratchDir("rlt_es_cli_");
    config_ = (dir_ / "es.toml").string();
    rlt::testing::WriteFile(config_, rlt::cli::testing_util::kSmallIntradayEsConfig);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The final cumulative return of `policy` over the training range of `run`.
  double TrainRangeReturn(const std::string& run, const std::string& policy) {
    const auto r =
        RunRltrade("eval " + run + " --range train --allow-in-sample --json --policy " + policy, "",
                   "/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out)["metrics"]["cum_returns_final"].get<double>();
  }
  fs::path dir_;
  std::string config_;
};

TEST_F(EsCli, EsOnIntradayImprovesOnARandomPolicy) {
  const std::string run = (dir_ / "run").string();
  const auto r = RunRltrade("train " + config_ + " --run-dir " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> rows =
      rlt::testing::Lines(ReadFile(fs::path(run) / "metrics.csv"));
  ASSERT_GT(rows.size(), 10u);
  EXPECT_EQ(rows[0].rfind("step,rollout/ep_rew_mean,rollout/ep_len_mean,es/fitness_max", 0), 0u)
      << rows[0];
  // One generation: 256 members of one 74-step session (the first and last bars of a
  // 78-bar session have no decision).
  EXPECT_EQ(rows[1].rfind("18944,", 0), 0u) << rows[1];
  const double first = std::stod(rlt::testing::Cells(rows[1], ',')[1]);
  const double last = std::stod(rlt::testing::Cells(rows.back(), ',')[1]);
  EXPECT_GT(last, first) << "the population's mean return did not improve";

  const double trained = TrainRangeReturn(run, "trained");
  const double random = TrainRangeReturn(run, "random");
  EXPECT_GT(trained, random + 0.1) << "trained " << trained << ", random " << random;
  EXPECT_GT(trained, 0.0);
  // The checkpoint is an ES checkpoint that every loader reads.
  EXPECT_EQ(ReadFile(fs::path(run) / "final" / "FORMAT").rfind("rltrade-es-checkpoint 2\n", 0), 0u);
  EXPECT_NE(ReadFile(fs::path(run) / "config.toml").find("name = \"es\""), std::string::npos);
}

TEST_F(EsCli, ResumeContinuesBitForBit) {
  const std::string straight = (dir_ / "straight").string(), half = (dir_ / "half").string();
  ASSERT_EQ(RunRltrade("train " + config_ + " --set run.total_steps=120000 --run-dir " + straight +
                       " --quiet")
                .exit_code,
            0);
  ASSERT_EQ(
      RunRltrade("train " + config_ + " --set run.total_steps=60000 --run-dir " + half + " --quiet")
          .exit_code,
      0);
  const auto resumed =
      RunRltrade("train --resume " + half + " --set run.total_steps=120000 --quiet");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  for (const char* f : {"es_state.bin", "policy.rlt", "normalizer.rlt"}) {
    EXPECT_TRUE(ReadFile(fs::path(straight) / "final" / f) ==
                ReadFile(fs::path(half) / "final" / f))
        << f;  // binary files: compared without dumping them
  }
}

TEST_F(EsCli, BadAlgoValuesAreRefusedWithTheirPlaceBeforeAnythingIsWritten) {
  const std::string run = (dir_ / "never").string();
  struct Case {
    std::string set, expect;
  };
  const std::vector<Case> cases = {
      {"algo.name=sac", "[algo] name = \"sac\": expected one of \"ppo\" (PPO (the default"},
      {"algo.population=255", "[algo] population: expected an even number of members"},
      {"algo.sigma=0", "[algo] sigma: expected a positive perturbation standard deviation"},
      {"algo.variant=cma", "variant"},
      {"algo.top_directions=1000", "[algo] top_directions: expected 0 (all) to population / 2"},
      {"algo.n_steps=64", "n_steps"},  // a PPO key in an ES section
      {"algo.noise_table_size=100", "noise_table_size = 100 floats is smaller than the actor's"},
  };
  for (const Case& c : cases) {
    const auto r = RunRltrade("train " + config_ + " --set " + c.set + " --run-dir " + run);
    EXPECT_NE(r.exit_code, 0) << c.set;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.set << "\n" << r.out;
    EXPECT_FALSE(fs::exists(run)) << c.set;
  }
  // Set in the file: the message names its line.
  rlt::testing::WriteFile(
      config_, std::string(rlt::cli::testing_util::kSmallIntradayEsConfig) + "sigma = -1\n");
  const auto r = RunRltrade("train " + config_ + " --run-dir " + run);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("es.toml:20: [algo] sigma"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(run));
}

// The shipped configs: cartpole_es.toml reaches CartPole's 500 within its budget,
// intraday_es.toml builds and runs a generation.
TEST_F(EsCli, ShippedConfigsTrain) {
  const fs::path configs = fs::path(RLT_SOURCE_DIR) / "configs";
  const std::string cartpole = (dir_ / "cartpole").string();
  auto r = RunRltrade("train " + (configs / "cartpole_es.toml").string() + " --run-dir " +
                      cartpole + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> rows =
      rlt::testing::Lines(ReadFile(fs::path(cartpole) / "metrics.csv"));
  EXPECT_GE(std::stod(rlt::testing::Cells(rows.back(), ',')[1]), 475.0) << rows.back();
  const std::string intraday = (dir_ / "intraday").string();
  r = RunRltrade("train " + (configs / "intraday_es.toml").string() +
                 " --set run.total_steps=1 --run-dir " + intraday + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(fs::path(intraday) / "final" / "es_state.bin"));
}

}  // namespace
