// rltrade evalrun tests: seed ensembles (ensemble.h) — the combiner against hand-computed
// values, and evaluations of ensembles against oracles that do not use the combiner: N
// copies of one seed are that seed, and the mean of two seeds is the evaluation of a policy
// that averages their actions by hand (RunEvaluationWith).
#include "evalrun/ensemble.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/outputs.h"
#include "evalrun/evalrun.h"
#include "evalrun/test_util.h"
#include "learn/inference.h"
#include "runlog/run_dir.h"
#include "testing/testing.h"
#include "train/train.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using testing_util::Cells;
using testing_util::Lines;
using testing_util::Read;

EnsembleActions Target() {
  EnsembleActions a;
  a.action_mode = "target_position";
  a.dim = 1;
  a.low = {-1.0f};
  a.high = {1.0f};
  return a;
}

EnsembleActions Original() {
  EnsembleActions a;
  a.action_mode = "original";
  a.dim = 2;
  a.low = {-1.0f, 0.0f};
  a.high = {1.0f, 1.0f};
  a.buy_threshold = 0.3;
  a.sell_threshold = -0.3;
  return a;
}

std::vector<float> Combine(EnsembleMethod m, const EnsembleActions& a, std::vector<float> actions) {
  std::vector<float> out(a.dim);
  ActionCombiner(m, a).Combine(actions.data(), static_cast<int>(actions.size()) / a.dim,
                               out.data());
  return out;
}

TEST(Ensemble, MeanIsTheElementwiseMeanOfTheClippedActions) {
  // 1.5 is clipped to 1: (1 + 0.2 - 0.6) / 3 = 0.2.
  EXPECT_NEAR(Combine(EnsembleMethod::kMean, Target(), {1.5f, 0.2f, -0.6f})[0], 0.2, 1e-7);
  // original: a0 (0.5 + 0.1) / 2, a1 (1 + 0.4) / 2 with -2 clipped to -1 and 3 to 1.
  const std::vector<float> o =
      Combine(EnsembleMethod::kMean, Original(), {-2.0f, 3.0f, 0.5f, 0.4f});
  EXPECT_NEAR(o[0], (-1.0 + 0.5) / 2, 1e-7);
  EXPECT_NEAR(o[1], (1.0 + 0.4) / 2, 1e-7);
}

TEST(Ensemble, MedianTakesTheMiddleValueOrTheMeanOfTheTwoMiddleOnes) {
  EXPECT_FLOAT_EQ(Combine(EnsembleMethod::kMedian, Target(), {0.9f, -0.4f, 0.1f})[0], 0.1f);
  EXPECT_NEAR(Combine(EnsembleMethod::kMedian, Target(), {0.9f, -0.4f, 0.1f, 0.3f})[0], 0.2, 1e-7);
  // Element-wise: each column's own median.
  const std::vector<float> o =
      Combine(EnsembleMethod::kMedian, Original(), {0.9f, 0.2f, -0.5f, 0.8f, 0.1f, 0.5f});
  EXPECT_FLOAT_EQ(o[0], 0.1f);
  EXPECT_FLOAT_EQ(o[1], 0.5f);
}

TEST(Ensemble, VoteAveragesTheSeedsOfTheWinningSide) {
  // Two long, one short: the mean of the long ones.
  EXPECT_NEAR(Combine(EnsembleMethod::kVote, Target(), {0.8f, 0.4f, -1.0f})[0], 0.6, 1e-7);
  // Inside the dead band (|a| <= 0.05) counts as flat: two flat (0.03, -0.04), one long.
  EXPECT_NEAR(Combine(EnsembleMethod::kVote, Target(), {0.03f, -0.04f, 0.9f})[0], -0.005, 1e-7);
  // Just outside it is a side: 0.06 long, -0.06 short, 0.9 long.
  EXPECT_NEAR(Combine(EnsembleMethod::kVote, Target(), {0.06f, -0.06f, 0.9f})[0], 0.48, 1e-7);
  // A tie (one long, one short) is flat.
  EXPECT_EQ(Combine(EnsembleMethod::kVote, Target(), {0.8f, -0.4f})[0], 0.0f);
  // A three-way tie too.
  EXPECT_EQ(Combine(EnsembleMethod::kVote, Target(), {0.8f, -0.4f, 0.0f})[0], 0.0f);
}

TEST(Ensemble, VoteOnOriginalModeReadsTheRunsThresholds) {
  // a0 >= 0.3 buys, <= -0.3 sells: BUY (0.3, 0.7), SELL (-0.9), HOLD (0.29).
  const std::vector<float> o = Combine(EnsembleMethod::kVote, Original(),
                                       {0.3f, 0.2f, 0.7f, 0.6f, -0.9f, 1.0f, 0.29f, 0.5f});
  EXPECT_NEAR(o[0], 0.5, 1e-7);  // the BUY voters' mean a0
  EXPECT_NEAR(o[1], 0.4, 1e-7);  // and amount
  // Other thresholds, other decisions: with buy_threshold 0.8, 0.3 and 0.7 hold.
  EnsembleActions strict = Original();
  strict.buy_threshold = 0.8;
  const std::vector<float> h =
      Combine(EnsembleMethod::kVote, strict, {0.3f, 0.2f, 0.7f, 0.6f, 0.9f, 1.0f});
  EXPECT_NEAR(h[0], 0.5, 1e-7);
  EXPECT_NEAR(h[1], 0.4, 1e-7);
  // A tie (BUY, SELL): HOLD at the thresholds' midpoint, the tied seeds' mean amount.
  const std::vector<float> t =
      Combine(EnsembleMethod::kVote, Original(), {0.9f, 0.2f, -0.9f, 0.6f});
  EXPECT_EQ(t[0], 0.0f);
  EXPECT_NEAR(t[1], 0.4, 1e-7);
  EnsembleActions skew = Original();
  skew.buy_threshold = 0.5;
  skew.sell_threshold = 0.1;
  EXPECT_NEAR(Combine(EnsembleMethod::kVote, skew, {0.9f, 0.2f, -0.9f, 0.6f})[0], 0.3, 1e-7);
}

TEST(Ensemble, VoteOnDiscreteActionsIsThePluralityAndATieTheSmallestIndex) {
  EnsembleActions d;
  d.discrete = true;
  d.n = 3;
  d.dim = 1;
  EXPECT_EQ(Combine(EnsembleMethod::kVote, d, {2.0f, 1.0f, 2.0f})[0], 2.0f);
  EXPECT_EQ(Combine(EnsembleMethod::kVote, d, {2.0f, 1.0f})[0], 1.0f);
}

TEST(Ensemble, DefaultsAndRefusalsFollowTheActionMode) {
  EXPECT_EQ(DefaultEnsembleMethod(Target()), EnsembleMethod::kMean);
  EXPECT_EQ(DefaultEnsembleMethod(Original()), EnsembleMethod::kVote);
  EnsembleActions d;
  d.discrete = true;
  d.n = 2;
  EXPECT_EQ(DefaultEnsembleMethod(d), EnsembleMethod::kVote);
  const Status mean_discrete = CheckEnsembleMethod(EnsembleMethod::kMean, d);
  EXPECT_FALSE(mean_discrete.ok());
  EXPECT_NE(mean_discrete.message().find("--ensemble vote"), std::string::npos);
  EnsembleActions box;  // pendulum-like: continuous, no decisions
  box.low = {-2.0f};
  box.high = {2.0f};
  const Status vote_box = CheckEnsembleMethod(EnsembleMethod::kVote, box);
  EXPECT_FALSE(vote_box.ok());
  EXPECT_NE(vote_box.message().find("--ensemble mean"), std::string::npos);
  const Result<EnsembleMethod> bad = ParseEnsembleMethod("average");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--ensemble average: expected mean, median or vote"),
            std::string::npos);
  EXPECT_FALSE(CheckEnsembleFlags("mean", /*seed_given=*/true, true, "RUN").ok());
  EXPECT_FALSE(CheckEnsembleFlags("mean", false, /*multi_seed=*/false, "RUN").ok());
  EXPECT_TRUE(CheckEnsembleFlags("", true, true, "RUN").ok());
}

// Two seeds of one tiny target_position run (what `train --seeds 2` writes as seed_4 and
// seed_5), and seed 4 of the same run in original mode.
class EnsembleEval : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(rlt::testing::NewScratchDir("rlt_ensemble_test_"));
    for (const char* mode : {"target_position", "original"}) {
      const fs::path config = *root_ / (std::string(mode) + ".toml");
      std::ofstream(config) << "[run]\ntotal_steps = 2048\nthreads = 1\n"
                            << "[data]\nsource = \"synthetic\"\ndays = 40\n"
                            << "signal_to_noise = 0.08\n"
                            << "[split]\ntrain = \"2023-01-02:2023-02-10\"\n"
                            << "test = \"2023-02-13:2023-02-24\"\n"
                            << "[env]\nid = \"intraday\"\nnum_envs = 8\naction_mode = \"" << mode
                            << "\"\n[algo]\nn_steps = 64\nbatch_size = 256\nn_epochs = 2\n";
      for (int seed : {4, 5}) {
        if (std::string(mode) == "original" && seed == 5) continue;
        train::TrainRequest req;
        req.config_path = config.string();
        req.overrides = {"run.seed=" + std::to_string(seed)};
        req.run_dir = Run(mode, seed).string();
        req.quiet = true;
        auto out = train::RunTraining(req);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
      }
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
  }
  static fs::path Run(const std::string& mode, int seed) {
    return *root_ / mode / ("seed_" + std::to_string(seed));
  }
  static EvalRequest Ensemble(const std::string& mode, const std::vector<int>& seeds,
                              const std::string& method) {
    EvalRequest r;
    for (int s : seeds) {
      r.ensemble_runs.push_back(Run(mode, s).string());
      r.ensemble_seeds.push_back(static_cast<uint64_t>(s));
    }
    r.run_dir = r.ensemble_runs.front();
    r.ensemble = method;
    r.output_root = (*root_ / mode).string();
    return r;
  }
  static std::vector<double> Daily(const EvalOutcome& out) {
    std::vector<double> d;
    const std::vector<std::string> lines =
        Lines(Read(fs::path(out.out_dir) / eval::kDailyReturnsFile));
    for (size_t i = 1; i < lines.size(); ++i) d.push_back(std::stod(Cells(lines[i])[1]));
    return d;
  }
  static fs::path* root_;
};
fs::path* EnsembleEval::root_ = nullptr;

TEST_F(EnsembleEval, NCopiesOfOneSeedAreThatSeedExactly) {
  EvalRequest one;
  one.run_dir = Run("target_position", 4).string();
  auto single = RunEvaluation(one);
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  const std::vector<double> expected = Daily(*single);
  ASSERT_FALSE(expected.empty());
  for (const char* method : {"mean", "median", "vote"}) {
    auto ens = RunEvaluation(Ensemble("target_position", {4, 4, 4}, method));
    ASSERT_TRUE(ens.ok()) << method << ": " << ens.status().ToString();
    EXPECT_EQ(ens->ensemble_method, method);
    EXPECT_EQ(Daily(*ens), expected) << method;
  }
  // Original mode: the default is the vote, and three copies are the seed too.
  EvalRequest orig;
  orig.run_dir = Run("original", 4).string();
  auto single_orig = RunEvaluation(orig);
  ASSERT_TRUE(single_orig.ok()) << single_orig.status().ToString();
  auto ens = RunEvaluation(Ensemble("original", {4, 4, 4}, ""));
  ASSERT_TRUE(ens.ok()) << ens.status().ToString();
  EXPECT_EQ(ens->ensemble_method, "vote");
  EXPECT_EQ(Daily(*ens), Daily(*single_orig));
  EXPECT_EQ(fs::path(ens->out_dir).filename(), "test.ensemble-vote");
}

TEST_F(EnsembleEval, TheMeanOfTwoSeedsIsTheirActionsAveragedByHand) {
  auto ens = RunEvaluation(Ensemble("target_position", {4, 5}, "mean"));
  ASSERT_TRUE(ens.ok()) << ens.status().ToString();
  // The oracle: both seeds' checkpoints loaded here, their actions clipped and averaged.
  env::ActionSpace space;
  space.dim = 1;
  space.low = {-1.0f};
  space.high = {1.0f};
  std::vector<std::shared_ptr<learn::PolicyRunner>> runners;
  for (int s : {4, 5}) {
    const fs::path final_dir = runlog::FinalCheckpointPath(Run("target_position", s));
    // The observation size the checkpoint was trained on (its FORMAT file: "obs_dim N").
    const std::string format = Read(final_dir / "FORMAT");
    const size_t at = format.find("obs_dim ");
    ASSERT_NE(at, std::string::npos) << format;
    const int obs_dim = std::stoi(format.substr(at + 8));
    auto r = learn::PolicyRunner::Load(final_dir.string(), obs_dim, space);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    runners.emplace_back(std::move(*r));
  }
  ASSERT_EQ(runners.size(), 2u);
  ActionFn by_hand = [runners](const float* obs, const double*, float* a) {
    float a4 = 0, a5 = 0;
    runners[0]->Act(obs, 1, &a4, nullptr);
    runners[1]->Act(obs, 1, &a5, nullptr);
    a[0] = 0.5f * (std::clamp(a4, -1.0f, 1.0f) + std::clamp(a5, -1.0f, 1.0f));
  };
  EvalRequest hand;
  hand.run_dir = Run("target_position", 4).string();
  auto oracle = RunEvaluationWith(hand, "mean-by-hand", by_hand);
  ASSERT_TRUE(oracle.ok()) << oracle.status().ToString();
  const std::vector<double> got = Daily(*ens), want = Daily(*oracle);
  ASSERT_EQ(got.size(), want.size());
  for (size_t d = 0; d < got.size(); ++d) {
    EXPECT_NEAR(got[d], want[d], 1e-12 * std::max(1e-12, std::fabs(want[d]))) << d;
  }
  // And it is neither seed alone (the test can fail).
  EvalRequest one;
  one.run_dir = Run("target_position", 5).string();
  auto seed5 = RunEvaluation(one);
  ASSERT_TRUE(seed5.ok());
  EXPECT_NE(Daily(*seed5), got);
}

TEST_F(EnsembleEval, RefusesWhatAnEnsembleCannotBe) {
  EvalRequest r = Ensemble("target_position", {4, 5}, "mean");
  r.checkpoint = "/some/dir";
  auto out = RunEvaluation(r);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("--checkpoint"), std::string::npos);
  r = Ensemble("target_position", {4, 5}, "mean");
  r.policy = "flat";
  EXPECT_FALSE(RunEvaluation(r).ok());
  // Seeds that observe different features (another normaliser) are no ensemble.
  r = Ensemble("target_position", {4}, "mean");
  r.ensemble_runs.push_back(Run("original", 4).string());
  r.ensemble_seeds.push_back(4);
  out = RunEvaluation(r);
  if (Read(Run("original", 4) / "normalizer.json") !=
      Read(Run("target_position", 4) / "normalizer.json")) {
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("normalizer.json differs"), std::string::npos);
  }
}

// An episodic environment with discrete actions (cartpole): the vote of N copies of one
// seed plays that seed's episodes (learn::EvaluatePolicy's returns, the oracle).
TEST(EnsembleEpisodes, NCopiesOfACartPoleSeedPlayItsEpisodes) {
  const fs::path root = rlt::testing::NewScratchDir("rlt_ensemble_cartpole_");
  train::TrainRequest req;
  req.config_path = std::string(RLT_SOURCE_DIR) + "/configs/cartpole_ppo.toml";
  req.overrides = {"run.total_steps=4096", "run.threads=1"};
  req.run_dir = (root / "seed_0").string();
  req.quiet = true;
  ASSERT_TRUE(train::RunTraining(req).ok());
  EvalRequest one;
  one.run_dir = req.run_dir;
  auto single = RunEvaluation(one);
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  EvalRequest ens;
  ens.run_dir = req.run_dir;
  ens.ensemble_runs = {req.run_dir, req.run_dir, req.run_dir};
  ens.ensemble_seeds = {0, 0, 0};
  ens.output_root = root.string();
  auto out = RunEvaluation(ens);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->ensemble_method, "vote");
  const nlohmann::json a = nlohmann::json::parse(single->summary_json);
  const nlohmann::json b = nlohmann::json::parse(out->summary_json);
  EXPECT_EQ(a["returns"], b["returns"]);
  EXPECT_EQ(b["ensemble"]["method"], "vote");
  ens.ensemble = "mean";  // an average of action indices is refused
  auto refused = RunEvaluation(ens);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("use --ensemble vote"), std::string::npos);
  fs::remove_all(root);
}

}  // namespace
}  // namespace rlt::evalrun
