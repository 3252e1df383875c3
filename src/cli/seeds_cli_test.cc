// End-to-end tests of multi-seed runs (train/seeds.h, evalrun/seeds_eval.h):
// `train --seeds N` writes N complete seed runs, each the same as a single run with that
// seed; `status`, `eval`, `signal`, `paper` and `--resume` understand RUN; the result across
// seeds is computed from the seeds' own files, checked here by an independent computation;
// the seeds' ensemble (evalrun/ensemble.h) acts as one policy in eval, signal and paper.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunCli;

constexpr const char* kConfig = rlt::cli::testing_util::kSmallIntradayConfig;

class SeedsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rlt::testing::NewScratchDir("rlt_seeds_");
    config_ = (dir_ / "cfg.toml").string();
    rlt::testing::WriteFile(config_, kConfig);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Run(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
  std::string config_;
};

std::vector<double> DailyReturns(const fs::path& csv) {
  std::vector<double> out;
  const std::vector<std::string> lines = rlt::testing::Lines(ReadFile(csv));
  for (size_t i = 1; i < lines.size(); ++i) {
    out.push_back(std::stod(rlt::testing::Cells(lines[i])[1]));
  }
  return out;
}

TEST_F(SeedsCli, TrainsEverySeedAsItsOwnCompleteRunIdenticalToASingleRun) {
  const std::string run = Run("run");
  auto r = RunCli("train " + config_ + " --seeds 3 --run-dir " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json index = nlohmann::json::parse(ReadFile(fs::path(run) / "seeds.json"));
  EXPECT_EQ(index["seeds"], nlohmann::json({4, 5, 6}));  // run.seed .. run.seed + 2
  EXPECT_EQ(index["runs"], nlohmann::json({"seed_4", "seed_5", "seed_6"}));
  for (int s : {4, 5, 6}) {
    const fs::path d = fs::path(run) / ("seed_" + std::to_string(s));
    EXPECT_TRUE(fs::exists(d / "final" / "MANIFEST")) << d;
    EXPECT_NE(ReadFile(d / "config.toml").find("seed = " + std::to_string(s) + "\n"),
              std::string::npos);
  }
  // A seed's run is the single run of that seed: the same policy bytes.
  const std::string single = Run("single");
  r = RunCli("train " + config_ + " --set run.seed=5 --run-dir " + single + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  bool compared = false;
  for (const auto& entry : fs::directory_iterator(fs::path(single) / "final")) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(ReadFile(entry.path()) == ReadFile(fs::path(run) / "seed_5" / "final" / name))
        << name;
    compared = true;
  }
  EXPECT_TRUE(compared);
  EXPECT_NE(ReadFile(fs::path(run) / "seed_4" / "metrics.csv"),
            ReadFile(fs::path(run) / "seed_5" / "metrics.csv"));

  // status RUN: every seed.
  r = RunCli("status " + run + " --json", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json st = nlohmann::json::parse(r.out);
  ASSERT_EQ(st["seeds"], 3);
  for (const auto& row : st["runs"]) EXPECT_EQ(row["state"], "finished") << row.dump();

  // eval RUN: every seed, then across seeds, from the seeds' own outputs.
  r = RunCli("eval " + run + " --json", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["seeds"], 3);
  std::vector<double> sharpe;
  std::vector<std::vector<double>> daily;
  for (int s : {4, 5, 6}) {
    const fs::path e = fs::path(run) / ("seed_" + std::to_string(s)) / "eval" / "test";
    const nlohmann::json one = nlohmann::json::parse(ReadFile(e / "summary.json"));
    sharpe.push_back(one["metrics"]["sharpe_ratio"].get<double>());
    daily.push_back(DailyReturns(e / "daily_returns.csv"));
  }
  const double mean = (sharpe[0] + sharpe[1] + sharpe[2]) / 3;
  double ss = 0;
  for (double v : sharpe) ss += (v - mean) * (v - mean);
  const nlohmann::json& s = summary["across_seeds"]["sharpe_ratio"];
  EXPECT_NEAR(s["mean"].get<double>(), mean, 1e-12);
  EXPECT_NEAR(s["std"].get<double>(), std::sqrt(ss / 2), 1e-12);  // sample std (n - 1)
  EXPECT_EQ(s["min"].get<double>(), std::min({sharpe[0], sharpe[1], sharpe[2]}));
  EXPECT_EQ(s["max"].get<double>(), std::max({sharpe[0], sharpe[1], sharpe[2]}));
  for (const char* key : {"annual_return", "max_drawdown", "num_trades", "psr", "costs_paid"}) {
    EXPECT_TRUE(summary["across_seeds"].contains(key)) << key;
  }
  ASSERT_TRUE(summary["deflated_sharpe"].is_number()) << summary.dump(2);
  EXPECT_GE(summary["deflated_sharpe"].get<double>(), 0.0);
  EXPECT_LE(summary["deflated_sharpe"].get<double>(), 1.0);
  EXPECT_EQ(summary["deflated_sharpe_detail"]["trials"], 3);
  const fs::path across = fs::path(run) / "eval" / "test";
  const std::vector<double> average = DailyReturns(across / "daily_returns.csv");
  ASSERT_EQ(average.size(), daily[0].size());
  for (size_t d = 0; d < average.size(); ++d) {
    EXPECT_NEAR(average[d], (daily[0][d] + daily[1][d] + daily[2][d]) / 3, 1e-9) << d;
  }
  // The seed average against the benchmarks: against flat (Sharpe 0) the tested difference
  // is the average's own Sharpe ratio, annualised with the weekday data's 252 periods.
  EXPECT_EQ(summary["periods_per_year"], 252);
  const double avg_sr = summary["metrics"]["sharpe_ratio"].get<double>();
  EXPECT_NEAR(summary["significance"]["flat"]["sharpe_difference"].get<double>(), avg_sr,
              1e-9 * std::fabs(avg_sr));
  EXPECT_TRUE(summary["significance"]["buy_and_hold"]["p_value"].is_number());
  // The table shows them, and --periods overrides the annualisation.
  r = RunCli("eval " + run + " --periods 365", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* text : {"seed-averaged returns", "buy-and-hold", "p-value (bootstrap",
                           "365 periods per year (--periods)"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  const std::string report = ReadFile(across / "report.html");
  for (const char* name : {"seed_4", "seed_5", "seed_6", "deflated Sharpe ratio"}) {
    EXPECT_NE(report.find(name), std::string::npos) << name;
  }
  // More trials tried lower the deflated Sharpe ratio of the same best seed.
  r = RunCli("eval " + run + " --json --trials 50", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_LE(nlohmann::json::parse(r.out)["deflated_sharpe"].get<double>(),
            summary["deflated_sharpe"].get<double>());
  // eval --seed S: that seed only.
  r = RunCli("eval " + run + " --seed 6 --json", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["run_dir"], run + "/seed_6");

  // A seed the run does not hold is named.
  r = RunCli("signal " + run + " --seed 9 --bars " + config_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("holds seeds 4, 5, 6"), std::string::npos) << r.out;

  // Every seed finished: --resume has nothing to do and says how to extend.
  r = RunCli("train --resume " + run + " --quiet");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("run.total_steps"), std::string::npos) << r.out;
}

TEST_F(SeedsCli, ResumeTrainsTheSeedsThatNeverStartedAsTheyWouldHaveBeen) {
  const std::string run = Run("run");
  auto r = RunCli("train " + config_ + " --seeds 2 --run-dir " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string policy = ReadFile(fs::path(run) / "seed_5" / "final" / "policy.rlt");
  ASSERT_FALSE(policy.empty());
  fs::remove_all(fs::path(run) / "seed_5");  // as if interrupted before it started
  r = RunCli("status " + run);
  EXPECT_NE(r.out.find("not started"), std::string::npos) << r.out;
  r = RunCli("train --resume " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(ReadFile(fs::path(run) / "seed_5" / "final" / "policy.rlt") == policy);
}

TEST_F(SeedsCli, ParallelCapsTheSeedsTrainingAtOnce) {
  const std::string run = Run("run");
  auto r = RunCli("train " + config_ + " --seeds 2 --parallel 1 --run-dir " + run);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("training seeds 4, 5 into " + run + ": 1 at a time"), std::string::npos)
      << r.out;
  for (int s : {4, 5}) {
    EXPECT_TRUE(fs::exists(fs::path(run) / ("seed_" + std::to_string(s)) / "final" / "MANIFEST"));
  }
  r = RunCli("train " + config_ + " --seeds 2 --parallel 0 --run-dir " + Run("other"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--parallel"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Run("other")));
}

TEST_F(SeedsCli, ABadConfigLeavesNothingBehindAndSeedsAreBounded) {
  rlt::testing::WriteFile(config_, std::string(kConfig) + "\n[policy]\nwidth = 3\n");
  const std::string run = Run("run");
  auto r = RunCli("train " + config_ + " --seeds 3 --run-dir " + run + " --quiet");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("width"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(run));
  r = RunCli("train " + config_ + " --seeds 0 --run-dir " + run);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(run));
}

// The ensemble of a multi-seed run, end to end from another directory than the run's: eval
// evaluates it beside every seed (its row, summary.json "ensemble", its daily returns),
// signal prints every seed's decision and the ensemble's, and paper trades it over a
// replay of the test range (its daily returns those of eval's ensemble, as for one run) and
// refuses a restart with another ensemble.
TEST_F(SeedsCli, TheEnsembleOfTheSeedsIsEvaluatedSignalledAndTraded) {
  const std::string bars = Run("bars.csv");
  ASSERT_EQ(RunCli("data synth --days 40 --out " + bars).exit_code, 0);
  const std::string run = Run("run");
  auto r = RunCli("train " + config_ + " --seeds 2 --set data.source=file --set data.file=" + bars +
                  " --run-dir " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string in_other = "cd / && ";  // run from another directory than the run's

  r = RunCli("eval " + run, in_other, "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* row : {"seed 4 ", "seed 5 ", "seed average", "ensemble (mean)"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  }
  const fs::path across = fs::path(run) / "eval" / "test";
  const nlohmann::json summary = nlohmann::json::parse(ReadFile(across / "summary.json"));
  ASSERT_TRUE(summary.contains("ensemble")) << summary.dump(2);
  const nlohmann::json& e = summary["ensemble"];
  EXPECT_EQ(e["method"], "mean");
  EXPECT_EQ(e["seeds"], nlohmann::json({4, 5}));
  EXPECT_EQ(e["eval_dir"], "eval/test.ensemble-mean");
  const fs::path ens_dir = fs::path(run) / "eval" / "test.ensemble-mean";
  const nlohmann::json own = nlohmann::json::parse(ReadFile(ens_dir / "summary.json"));
  EXPECT_EQ(e["metrics"], own["metrics"]);
  EXPECT_EQ(own["ensemble"]["method"], "mean");
  EXPECT_EQ(own["run_dir"], run);  // the multi-seed run, not its first seed
  const std::vector<double> ens_daily = DailyReturns(across / "ensemble_daily_returns.csv");
  EXPECT_EQ(ens_daily, DailyReturns(ens_dir / "daily_returns.csv"));
  EXPECT_EQ(ens_daily.size(), DailyReturns(across / "daily_returns.csv").size());
  EXPECT_TRUE(fs::exists(ens_dir / "report.html"));
  EXPECT_NE(ReadFile(across / "report.html").find("The seeds' ensemble (mean)"), std::string::npos);
  // --costs without --seed sweeps the ensemble; --ensemble names its directory.
  r = RunCli("eval " + run + " --ensemble median --costs 0,5", in_other, "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(fs::path(run) / "eval" / "test.ensemble-median" / "costs.csv"));
  EXPECT_NE(r.out.find("ensemble (median)"), std::string::npos) << r.out;
  // Errors name the flag and the fix, and write nothing.
  for (const auto& [args, text] : std::vector<std::pair<std::string, std::string>>{
           {"--ensemble average", "expected mean, median or vote"},
           {"--ensemble mean --seed 4", "give one of the two"},
       }) {
    r = RunCli("eval " + run + " " + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find(text), std::string::npos) << args << "\n" << r.out;
  }
  r = RunCli("eval " + run + "/seed_4 --ensemble mean");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("single-seed run"), std::string::npos) << r.out;

  // signal RUN: every seed's decision and the ensemble's (the top-level one).
  r = RunCli("signal " + run + " --bars " + bars + " --json", in_other, "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json sig = nlohmann::json::parse(r.out);
  EXPECT_EQ(sig["checkpoint"], "ensemble");
  EXPECT_EQ(sig["ensemble"]["method"], "mean");
  ASSERT_EQ(sig["seeds"].size(), 2u);
  EXPECT_EQ(sig["seeds"][0]["seed"], 4);
  EXPECT_TRUE(sig.contains("action") && sig.contains("target_exposure"));
  const double mean_value =
      (sig["seeds"][0]["value"].get<double>() + sig["seeds"][1]["value"].get<double>()) / 2;
  EXPECT_NEAR(sig["value"].get<double>(), mean_value, 1e-6 * std::fabs(mean_value) + 1e-12);
  r = RunCli("signal " + run + " --bars " + bars, in_other, "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* text : {"ensemble (mean) of 2 seeds", "seed 4: ", "seed 5: "}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  // One checkpoint directory is one seed's, not the ensemble's.
  r = RunCli("signal " + run + " --bars " + bars + " --checkpoint " + run + "/seed_4/final");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("give --seed S"), std::string::npos) << r.out;

  // paper RUN: the ensemble trades; the same decisions as eval's ensemble.
  const std::string journal = Run("journal");
  const std::string paper = "paper " + run + " --feed replay:" + bars +
                            " --broker sim --start 2023-02-13 --quiet --journal " + journal;
  r = RunCli(paper, in_other);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<double> traded = DailyReturns(fs::path(journal) / "daily_returns.csv");
  ASSERT_EQ(traded.size(), ens_daily.size());
  for (size_t d = 0; d < traded.size(); ++d) {
    EXPECT_NEAR(traded[d], ens_daily[d], 1e-9 * std::fabs(ens_daily[d]) + 1e-15) << d;
  }
  const std::string start = rlt::testing::Lines(ReadFile(fs::path(journal) / "journal.jsonl"))[0];
  const nlohmann::json start_line = nlohmann::json::parse(start);
  EXPECT_EQ(start_line["ensemble"]["method"], "mean");
  EXPECT_EQ(start_line["ensemble"]["seeds"], nlohmann::json({4, 5}));
  r = RunCli(paper + " --ensemble median", in_other);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("another session: its ensemble is method \"mean\""), std::string::npos)
      << r.out;
  r = RunCli(paper + " --seed 5", in_other);
  EXPECT_NE(r.exit_code, 0);
  r = RunCli(paper, in_other);  // the same session restarts
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

// In original mode (a[0] type, a[1] amount) the seeds vote by default: averaging a[0]
// would fabricate decisions no seed took. The ensemble's decision is one the seeds took.
TEST_F(SeedsCli, AnOriginalModeEnsembleVotesByDefault) {
  const std::string bars = Run("bars.csv");
  ASSERT_EQ(RunCli("data synth --days 40 --out " + bars).exit_code, 0);
  const std::string run = Run("run");
  auto r =
      RunCli("train " + config_ + " --seeds 3 --set env.action_mode=original" +
             " --set data.source=file --set data.file=" + bars + " --run-dir " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RunCli("eval " + run + " --json", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ensemble"]["method"], "vote");
  EXPECT_TRUE(fs::exists(fs::path(run) / "eval" / "test.ensemble-vote" / "summary.json"));
  // A bar inside the first test session (75 bars a session, 30 in training; the file's
  // last bar closes a session): its first 2,270 bars.
  const std::vector<std::string> lines = rlt::testing::Lines(ReadFile(bars));
  std::string cut;
  for (size_t i = 0; i < 2271 && i < lines.size(); ++i) cut += lines[i] + "\n";
  rlt::testing::WriteFile(Run("cut.csv"), cut);
  r = RunCli("signal " + run + " --bars " + Run("cut.csv") + " --json", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json sig = nlohmann::json::parse(r.out);
  EXPECT_EQ(sig["ensemble"]["method"], "vote");
  ASSERT_EQ(sig["seeds"].size(), 3u);
  int agreeing = 0;
  for (const auto& seed : sig["seeds"]) agreeing += seed["action"] == sig["action"];
  std::map<std::string, int> votes;
  for (const auto& seed : sig["seeds"]) ++votes[seed["action"].get<std::string>()];
  int most = 0;
  for (const auto& [action, n] : votes) most = std::max(most, n);
  if (most >= 2) {
    EXPECT_EQ(agreeing, most) << r.out;  // the plurality's decision
  } else {
    EXPECT_EQ(sig["action"], "HOLD") << r.out;  // a three-way tie holds
  }
}

// walkforward --seeds N: every fold is a multi-seed run, and the concatenated series is
// the folds' seed averages (fold k's rows of OUT/walkforward/daily_returns.csv equal
// OUT/fold_k/eval/test/daily_returns.csv, the mean of its seeds).
TEST_F(SeedsCli, WalkforwardTrainsEveryFoldWithEverySeed) {
  const std::string out = Run("wf");
  auto r = RunCli("walkforward " + config_ + " --folds 2 --seeds 2 --out " + out +
                      " --quiet --json --set run.total_steps=1024",
                  "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["seeds"], 2);
  ASSERT_EQ(summary["folds"].size(), 2u);
  std::vector<std::string> concatenated =
      rlt::testing::Lines(ReadFile(fs::path(out) / "walkforward" / "daily_returns.csv"));
  size_t row = 1;
  for (int k = 1; k <= 2; ++k) {
    const fs::path fold = fs::path(out) / ("fold_" + std::to_string(k));
    const nlohmann::json index = nlohmann::json::parse(ReadFile(fold / "seeds.json"));
    EXPECT_EQ(index["seeds"], nlohmann::json({4, 5}));
    EXPECT_TRUE(fs::exists(fold / "seed_5" / "final" / "MANIFEST"));
    const nlohmann::json& f = summary["folds"][k - 1];
    EXPECT_EQ(f["fold"], k);
    EXPECT_TRUE(f["across_seeds"].contains("sharpe_ratio")) << f.dump();
    const std::vector<double> average = DailyReturns(fold / "eval" / "test" / "daily_returns.csv");
    const std::vector<double> s4 =
        DailyReturns(fold / "seed_4" / "eval" / "test" / "daily_returns.csv");
    const std::vector<double> s5 =
        DailyReturns(fold / "seed_5" / "eval" / "test" / "daily_returns.csv");
    ASSERT_EQ(average.size(), s4.size());
    for (size_t d = 0; d < average.size(); ++d, ++row) {
      EXPECT_NEAR(average[d], (s4[d] + s5[d]) / 2, 1e-9);
      ASSERT_LT(row, concatenated.size());
      EXPECT_NEAR(std::stod(rlt::testing::Cells(concatenated[row])[1]), average[d], 1e-9);
      EXPECT_EQ(rlt::testing::Cells(concatenated[row]).back(), std::to_string(k));
    }
  }
  EXPECT_EQ(row, concatenated.size());
  // Each fold's ensemble beside its seed average, concatenated likewise.
  ASSERT_TRUE(summary.contains("ensemble")) << summary.dump(2);
  EXPECT_EQ(summary["ensemble"]["method"], "mean");
  const std::vector<std::string> ensemble_rows =
      rlt::testing::Lines(ReadFile(fs::path(out) / "walkforward" / "ensemble_daily_returns.csv"));
  row = 1;
  for (int k = 1; k <= 2; ++k) {
    const nlohmann::json& f = summary["folds"][k - 1];
    ASSERT_TRUE(f.contains("ensemble")) << f.dump();
    const fs::path fold = fs::path(out) / ("fold_" + std::to_string(k));
    EXPECT_EQ(f["ensemble"]["eval_dir"], "eval/test.ensemble-mean");
    const std::vector<double> ens =
        DailyReturns(fold / "eval" / "test.ensemble-mean" / "daily_returns.csv");
    for (size_t d = 0; d < ens.size(); ++d, ++row) {
      ASSERT_LT(row, ensemble_rows.size());
      EXPECT_NEAR(std::stod(rlt::testing::Cells(ensemble_rows[row])[1]), ens[d],
                  1e-12 * std::fabs(ens[d]));
    }
  }
  EXPECT_EQ(row, ensemble_rows.size());
  // --ensemble without several seeds is refused before anything is written.
  r = RunCli("walkforward " + config_ + " --folds 2 --ensemble vote --out " + Run("wf1"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--seeds N"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Run("wf1")));
}

}  // namespace
}  // namespace rlt::cli
