// Tests of the selection record: what counts as an improvement, when patience runs out,
// the record's JSON, the Sharpe variance the deflated Sharpe ratio uses, and the checks
// of [run] select_metric and patience.
#include "train/selection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/status_test_util.h"

namespace rlt::train {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Selection, OnlyAStrictlyHigherFiniteScoreImproves) {
  Selection s;
  s.metric = "sharpe_ratio";
  EXPECT_FALSE(s.Observe(100, kNaN, kNaN));  // a policy that never traded: undefined
  EXPECT_FALSE(s.has_best());
  EXPECT_EQ(s.since_best, 0);               // patience starts with the first finite score
  EXPECT_TRUE(s.Observe(200, -0.5, -0.5));  // the first finite score, however low
  EXPECT_EQ(s.best_step, 200);
  EXPECT_FALSE(s.Observe(300, -0.5, -0.5));  // a tie keeps the earlier checkpoint
  EXPECT_FALSE(s.Observe(400, std::numeric_limits<double>::infinity(), kNaN));
  EXPECT_EQ(s.best_step, 200);
  EXPECT_EQ(s.since_best, 2);
  EXPECT_TRUE(s.Observe(500, 0.25, 0.25));
  EXPECT_EQ(s.best_step, 500);
  EXPECT_EQ(s.best_score, 0.25);
  EXPECT_EQ(s.since_best, 0);
  EXPECT_EQ(s.evaluations(), 5);
}

TEST(Selection, PatienceCountsEvaluationsSinceTheBestAndZeroNeverStops) {
  Selection s;
  s.metric = "episode_return";
  s.Observe(1, 10, kNaN);
  for (int k = 1; k <= 3; ++k) {
    s.Observe(1 + k, 5, kNaN);
    EXPECT_EQ(s.Exhausted(3), k >= 3) << k;
    EXPECT_FALSE(s.Exhausted(0));
  }
  EXPECT_NE(s.StopReason(3).find("did not improve in 3 evaluations"), std::string::npos)
      << s.StopReason(3);
}

TEST(Selection, RecordRoundTripsThroughJsonWithUndefinedScoresAsNull) {
  Selection s;
  s.metric = "sortino_ratio";
  s.Observe(256, kNaN, kNaN);
  s.Observe(512, 1.5, 0.75);
  s.Observe(768, 1.25, 0.5);
  const std::string text = s.ToJson();
  EXPECT_NE(text.find("null"), std::string::npos) << text;
  Result<Selection> back = Selection::FromJson(text, "selection.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->metric, "sortino_ratio");
  EXPECT_EQ(back->best_step, 512);
  EXPECT_EQ(back->best_score, 1.5);
  EXPECT_EQ(back->since_best, 1);
  ASSERT_EQ(back->curve.size(), 3u);
  EXPECT_TRUE(std::isnan(back->curve[0].score));
  EXPECT_EQ(back->curve[2].sharpe_ratio, 0.5);
}

TEST(Selection, ARecordWhoseBestDisagreesWithItsScoreIsADataErrorNamingTheFile) {
  EXPECT_TRUE(IsError(Selection::FromJson(R"({"metric": "sharpe_ratio", "best_step": 5,
      "best_score": null, "evaluations_since_best": 0, "curve": []})",
                                          "RUN/selection.json"),
                      Status::Code::kDataError, "RUN/selection.json"));
  EXPECT_TRUE(IsError(Selection::FromJson("[1, 2]", "x.json"), Status::Code::kDataError, "x.json"));
}

// The sample variance (n - 1) of the per-session Sharpe ratios, computed here from the
// annualised values by hand: SR / sqrt(252) for 1, 2 and 4 (NaN skipped).
TEST(Selection, SharpeVarianceIsTheSampleVarianceOfThePerSessionRatios) {
  Selection s;
  s.metric = "sharpe_ratio";
  for (double sr : {1.0, kNaN, 2.0, 4.0}) s.Observe(0, sr, sr);
  const double a = 1 / std::sqrt(252.0), b = 2 / std::sqrt(252.0), c = 4 / std::sqrt(252.0);
  const double mean = (a + b + c) / 3;
  const double expected =
      ((a - mean) * (a - mean) + (b - mean) * (b - mean) + (c - mean) * (c - mean)) / 2;
  EXPECT_NEAR(s.SharpeVariancePerPeriod(), expected, 1e-12 * expected);
  Selection one;
  one.Observe(0, 1.0, 1.0);
  EXPECT_TRUE(std::isnan(one.SharpeVariancePerPeriod()));
}

Result<std::string> Resolve(const std::string& toml, bool market) {
  Result<config::Config> c = config::Config::FromString(toml, "cfg.toml");
  if (!c.ok()) return c.status();
  RunOptions run;
  RLT_RETURN_IF_ERROR(c->Bind("run", run));
  return ResolveSelectMetric(*c, run, market);
}

TEST(SelectMetric, EpisodicEnvsSelectOnEpisodeReturnUnlessAMarketMetricIsSetExplicitly) {
  Result<std::string> market = Resolve("[run]\neval_every = 100\n", true);
  ASSERT_TRUE(market.ok());
  EXPECT_EQ(*market, "sharpe_ratio");
  Result<std::string> episodic = Resolve("[run]\neval_every = 100\n", false);
  ASSERT_TRUE(episodic.ok());
  EXPECT_EQ(*episodic, "episode_return");
  EXPECT_TRUE(
      IsError(Resolve("[run]\neval_every = 100\nselect_metric = \"sortino_ratio\"\n", false),
              Status::Code::kInvalidArgument, "cfg.toml:3"));
}

TEST(SelectMetric, AnUnknownMetricNamesTheLineAndTheAllowedValues) {
  Result<std::string> r = Resolve("[run]\neval_every = 100\nselect_metric = \"sharpe\"\n", true);
  ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "cfg.toml:3"));
  EXPECT_NE(r.status().message().find("sortino_ratio"), std::string::npos) << r.status().message();
}

TEST(SelectMetric, PatienceMustBeNonNegativeAndNeedsEvaluations) {
  EXPECT_TRUE(IsError(Resolve("[run]\neval_every = 100\npatience = -1\n", true),
                      Status::Code::kInvalidArgument, "cfg.toml:3"));
  EXPECT_TRUE(IsError(Resolve("[run]\npatience = 3\n", true), Status::Code::kInvalidArgument,
                      "eval_every = 0"));
}

}  // namespace
}  // namespace rlt::train
