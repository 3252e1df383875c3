// End-to-end tests of rltrade under mpirun (dist/dist.h, issue 15): `mpirun -np 2 rltrade
// walkforward` runs fold k on rank k mod 2 and writes exactly what one process writes (the
// concatenated daily returns and equity byte for byte, the same summary but for the output
// path, the same table on stdout); `mpirun -np 2 rltrade train --seeds 3` trains every seed
// bit for bit as one process does; an error is reported once and ends every rank; the
// commands that do not spread their work are refused under mpirun.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "cli/cli_test_util.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::testing::ReadFile;
using rlt::testing::RunRltrade;

constexpr const char* kConfig = rlt::cli::testing_util::kSmallIntradayConfig;

// `mpirun -np N` before rltrade (CI runs as root: OpenMPI then needs both variables).
std::string Mpirun(int ranks) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + std::string(RLT_MPIEXEC) +
         " --oversubscribe -np " + std::to_string(ranks);
}

class MpiCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rlt::testing::NewScratchDir("rlt_mpi_");
    config_ = (dir_ / "cfg.toml").string();
    rlt::testing::WriteFile(config_, kConfig);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string config_;
};

TEST_F(MpiCli, WalkforwardOnTwoRanksWritesWhatOneProcessWrites) {
  const std::string one = (dir_ / "one").string(), two = (dir_ / "two").string();
  const auto a = RunRltrade("walkforward " + config_ + " --folds 3 --out " + one + " --quiet", "",
                            "/dev/null");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  const auto b = RunRltrade("walkforward " + config_ + " --folds 3 --out " + two + " --quiet",
                            Mpirun(2), "/dev/null");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_EQ(a.out, b.out);  // the table, printed once
  for (const char* f : {"daily_returns.csv", "equity.csv"}) {
    const std::string x = ReadFile(fs::path(one) / "walkforward" / f);
    EXPECT_GT(rlt::testing::Lines(x).size(), 10u) << f;
    EXPECT_EQ(x, ReadFile(fs::path(two) / "walkforward" / f)) << f;
  }
  const std::string s1 = ReadFile(fs::path(one) / "walkforward" / "summary.json");
  const std::string s2 = ReadFile(fs::path(two) / "walkforward" / "summary.json");
  EXPECT_NE(s1.find("\"fold\": 3"), std::string::npos);
  EXPECT_EQ(std::regex_replace(s1, std::regex(one), "OUT"),
            std::regex_replace(s2, std::regex(two), "OUT"));
  for (int k = 1; k <= 3; ++k) {  // each fold trained once, by its rank
    EXPECT_TRUE(fs::exists(fs::path(two) / ("fold_" + std::to_string(k)) / "final" / "MANIFEST"));
  }
}

TEST_F(MpiCli, AnErrorIsReportedOnceAndEndsEveryRank) {
  const std::string out = (dir_ / "taken").string();
  fs::create_directories(out);
  rlt::testing::WriteFile(fs::path(out) / "keep.txt", "x");
  const auto r =
      RunRltrade("walkforward " + config_ + " --folds 2 --out " + out + " --quiet", Mpirun(2));
  EXPECT_NE(r.exit_code, 0);
  const std::string message = "already exists and is not empty";
  const size_t first = r.out.find(message);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(message, first + 1), std::string::npos) << "reported twice:\n" << r.out;
  EXPECT_EQ(ReadFile(fs::path(out) / "keep.txt"), "x");
}

TEST_F(MpiCli, TrainSeedsOnTwoRanksTrainEachSeedAsOneProcessDoes) {
  const std::string one = (dir_ / "s1").string(), two = (dir_ / "s2").string();
  ASSERT_EQ(RunRltrade("train " + config_ + " --seeds 3 --run-dir " + one + " --quiet").exit_code,
            0);
  const auto r =
      RunRltrade("train " + config_ + " --seeds 3 --run-dir " + two + " --quiet", Mpirun(2));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(ReadFile(fs::path(one) / "seeds.json"), ReadFile(fs::path(two) / "seeds.json"));
  for (const char* seed : {"seed_4", "seed_5", "seed_6"}) {  // seeds 4, 6 on rank 0; 5 on 1
    for (const char* f : {"policy.rlt", "state.pt", "envs.bin", "normalizer.json"}) {
      const fs::path a = fs::path(one) / seed / "final" / f, b = fs::path(two) / seed / "final" / f;
      ASSERT_TRUE(fs::exists(b)) << b;
      EXPECT_EQ(ReadFile(a), ReadFile(b)) << seed << "/" << f;
    }
  }
}

TEST_F(MpiCli, CommandsThatDoNotSpreadTheirWorkAreRefusedUnderMpirun) {
  const std::string run = (dir_ / "run").string();
  auto r = RunRltrade("data synth --days 5 --out " + (dir_ / "bars.csv").string(), Mpirun(2));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("only `rltrade walkforward` (its folds) and `rltrade train --seeds N`"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "bars.csv"));
  // One seed on several ranks would be data-parallel training, not built yet.
  r = RunRltrade("train " + config_ + " --run-dir " + run + " --quiet", Mpirun(2));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("one seed on several ranks (data-parallel PPO) is not built yet"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(run));
}

}  // namespace
