// Tests of DeltaHedgingEnv and SimulateHedging against outside results: Black-Scholes
// (the pricing library's scalar reference and Hull's textbook price), the discrete
// delta-hedging error of Derman & Kamal / Hull (SD of the hedging cost's PV ~
// sqrt(pi/4) vega sigma sqrt(dt/T)), exact accounting identities, and option checks.
#include "env/envs/delta_hedging.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/status_test_util.h"
#include "pricing/pricing.h"

namespace rlt::env {
namespace {

// Hull, Options, Futures and Other Derivatives, "delta hedging" example: a 20-week call,
// S = 49, K = 50, r = 5%, mu = 13%, sigma = 20%.
HedgingOptions Hull(double step_weeks) {
  HedgingOptions o;
  o.spot = 49;
  o.strike = 50;
  o.rate = 0.05;
  o.drift = 0.13;
  o.vol = 0.2;
  o.maturity_weeks = 20;
  o.step_weeks = step_weeks;
  o.cost = 0;
  return o;
}

pricing::Greeks ReferenceGreeks(const HedgingOptions& o, double spot, double years) {
  pricing::OptionInputs in;
  in.type = o.option_type == "put" ? pricing::OptionType::kPut : pricing::OptionType::kCall;
  in.spot = spot;
  in.strike = o.strike;
  in.rate = o.rate;
  in.vol = o.vol;
  in.time = years;
  Result<pricing::Greeks> g = pricing::BsmGreeks(in);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return *g;
}

// Derman & Kamal (1999) / Hull: the SD of the PV of the cost of a discretely delta-hedged
// option is about sqrt(pi/4) vega sigma sqrt(dt / T).
double TheorySd(const HedgingOptions& o) {
  const double vega = ReferenceGreeks(o, o.spot, o.maturity_weeks / 52).vega;
  return std::sqrt(M_PI / 4) * vega * o.vol * std::sqrt(o.step_weeks / o.maturity_weeks);
}

TEST(DeltaHedging, PremiumIsHullsBlackScholesPrice) {
  auto env = DeltaHedgingEnv::Create(Hull(1));
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_NEAR((*env)->premium(), 2.40, 0.005);  // Hull: $240,000 for 100,000 calls
  EXPECT_EQ((*env)->num_steps(), 20);
}

TEST(DeltaHedging, ZeroCostSdFollowsDiscreteHedgingTheoryWithin10Percent) {
  constexpr int kPaths = 20000;
  for (double weeks : {2.0, 1.0, 0.5, 0.25}) {
    const HedgingOptions o = Hull(weeks);
    Result<HedgeSimulation> sim = SimulateHedging(o, kPaths, 5, BsDeltaPolicy);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    const double theory = TheorySd(o);
    EXPECT_NEAR(sim->sd_cost / theory, 1.0, 0.10)
        << weeks << " weeks: sd " << sim->sd_cost << " theory " << theory;
    // The hedge replicates the option on average: the mean cost is the premium within
    // the Monte Carlo error and an O(dt) discretisation bias under the real-world drift
    // (~0.5% of the price at 2-week steps, less below).
    EXPECT_NEAR(sim->mean_cost, sim->bs_price,
                4 * sim->sd_cost / std::sqrt(kPaths) + 0.0025 * weeks * sim->bs_price)
        << weeks;
  }
}

TEST(DeltaHedging, ShortPutHedgeFollowsTheTheoryToo) {
  HedgingOptions o = Hull(0.5);
  o.option_type = "put";
  Result<HedgeSimulation> sim = SimulateHedging(o, 20000, 9, BsDeltaPolicy);
  ASSERT_TRUE(sim.ok());
  EXPECT_NEAR(sim->bs_price, ReferenceGreeks(o, 49, 20 / 52.0).price, 1e-12);
  EXPECT_NEAR(sim->sd_cost / TheorySd(o), 1.0, 0.10);
}

TEST(DeltaHedging, HalfTheDeltaIsAWorseHedge) {
  // The SD check can fail: a policy that hedges half the delta is far off the theory.
  const HedgingOptions o = Hull(0.5);
  auto half = [](const float* obs, int n, float* a, bool) {
    for (int i = 0; i < n; ++i) a[i] = 0.5f * obs[i * DeltaHedgingEnv::kObsDim + 3];
  };
  Result<HedgeSimulation> sim = SimulateHedging(o, 4000, 5, half);
  ASSERT_TRUE(sim.ok());
  EXPECT_GT(sim->sd_cost, 3 * TheorySd(o));
}

TEST(DeltaHedging, MarksAndObservationsAgreeWithThePricingLibrary) {
  HedgingOptions o = Hull(1);
  for (const char* type : {"call", "put"}) {
    o.option_type = type;
    o.quantity = 3;
    auto env = std::move(DeltaHedgingEnv::Create(o)).value();
    env->Seed(2);
    float obs[DeltaHedgingEnv::kObsDim];
    double info[7];
    env->Reset(obs, info);
    for (int s = 0; s < 19; ++s) {
      const double years = (20 - s) / 52.0;
      const pricing::Greeks g = ReferenceGreeks(o, info[0], years);
      EXPECT_NEAR(info[3], 3 * g.price, 1e-12 * std::max(1.0, 3 * g.price)) << type << s;
      EXPECT_NEAR(obs[3], g.delta, 1e-6) << type << s;
      EXPECT_NEAR(obs[1], std::log(info[0] / 50), 1e-6);
      EXPECT_NEAR(obs[0], 1.0 - s / 20.0, 1e-6);
      EXPECT_NEAR(obs[4], 0.2, 1e-6);
      const float a = 0.3f;
      env->Step(&a, obs, info);
    }
  }
}

TEST(DeltaHedging, RewardsSumToTerminalWealthAndApplyTheMeanVarianceTerm) {
  HedgingOptions o = Hull(1);
  o.cost = 0.002;
  o.risk_aversion = 0;
  HedgingOptions averse = o;
  averse.risk_aversion = 3;
  auto a = std::move(DeltaHedgingEnv::Create(o)).value();
  auto b = std::move(DeltaHedgingEnv::Create(averse)).value();
  a->Seed(4);
  b->Seed(4);
  float obs_a[6], obs_b[6];
  double info_a[7], info_b[7];
  a->Reset(obs_a, info_a);
  b->Reset(obs_b, info_b);
  EXPECT_EQ(info_a[4], 0.0);  // premium in, option marked at the same price
  double sum = 0, wealth = 0;
  for (int s = 0; s < 20; ++s) {
    const float act = obs_a[3];
    const StepResult ra = a->Step(&act, obs_a, info_a);
    const StepResult rb = b->Step(&act, obs_b, info_b);
    const double pnl = info_a[4] - wealth;
    wealth = info_a[4];
    EXPECT_NEAR(ra.reward, pnl, 1e-6 * std::max(1.0, std::fabs(pnl)));
    EXPECT_NEAR(rb.reward, pnl - 1.5 * pnl * pnl, 1e-6 * std::max(1.0, std::fabs(pnl)));
    sum += ra.reward;
    EXPECT_EQ(ra.terminated, s == 19);
  }
  // At maturity everything is cash: wealth = premium e^{rT} - cost of hedging at T.
  EXPECT_EQ(info_a[1], 0.0);
  EXPECT_EQ(info_a[3], 0.0);
  EXPECT_DOUBLE_EQ(info_a[4], info_a[2]);
  EXPECT_NEAR(sum, info_a[4], 1e-5);
  EXPECT_NEAR(info_a[6], a->premium() - std::exp(-0.05 * 20 / 52) * info_a[4], 1e-12);
}

TEST(DeltaHedging, CostsRaiseEachPathsCostByItsDiscountedFees) {
  // Same seeds, same paths, same BS hedges: the only difference is the fees.
  HedgingOptions o = Hull(1);
  o.quantity = 2;
  HedgingOptions costly = o;
  costly.cost = 0.01;
  auto a = std::move(DeltaHedgingEnv::Create(o)).value();
  auto b = std::move(DeltaHedgingEnv::Create(costly)).value();
  for (uint64_t seed : {1, 2, 3}) {
    a->Seed(seed);
    b->Seed(seed);
    float obs_a[6], obs_b[6];
    double info_a[7], info_b[7];
    a->Reset(obs_a, info_a);
    b->Reset(obs_b, info_b);
    double pv_fees = 0, t = 0, prev_costs = 0, prev_hedge = 0;
    for (int s = 0; s < 20; ++s) {
      const float act = obs_a[3];
      const double spot = info_b[0];
      a->Step(&act, obs_a, info_a);
      b->Step(&act, obs_b, info_b);
      // The fee of this step's trade, paid at t; the final sale's at T.
      pv_fees +=
          0.01 * 2 * std::fabs(static_cast<double>(act) - prev_hedge) * spot * std::exp(-0.05 * t);
      prev_hedge = act;
      t += 1 / 52.0;
      prev_costs = info_b[5];
    }
    pv_fees += 0.01 * 2 * std::fabs(prev_hedge) * info_b[0] * std::exp(-0.05 * 20 / 52.0);
    EXPECT_GT(prev_costs, 0);
    EXPECT_NEAR(info_b[6] - info_a[6], pv_fees, 1e-10) << seed;
  }
}

TEST(DeltaHedging, ActionAppliesOnlyEveryKStepsAndIsClipped) {
  HedgingOptions o = Hull(1);
  o.rebalance_every = 3;
  auto env = std::move(DeltaHedgingEnv::Create(o)).value();
  env->Seed(1);
  float obs[6];
  double info[7];
  env->Reset(obs, info);
  EXPECT_EQ(obs[5], 1.0f);
  const float big = 7.0f, small = 0.25f, nan = std::numeric_limits<float>::quiet_NaN();
  env->Step(&big, obs, info);  // step 0: rebalance, clipped to 1
  EXPECT_EQ(info[1], 1.0);
  EXPECT_EQ(obs[2], 1.0f);
  EXPECT_EQ(obs[5], 0.0f);
  env->Step(&small, obs, info);  // steps 1, 2: held
  env->Step(&small, obs, info);
  EXPECT_EQ(info[1], 1.0);
  EXPECT_EQ(obs[5], 1.0f);
  env->Step(&nan, obs, info);  // step 3: a NaN action keeps the hedge
  EXPECT_EQ(info[1], 1.0);
  for (int s = 0; s < 3; ++s) env->Step(&small, obs, info);  // step 6 rebalances
  EXPECT_EQ(info[1], 0.25);
  const float neg = -9.0f;
  for (int s = 0; s < 3; ++s) env->Step(&neg, obs, info);  // step 9 rebalances to -1
  EXPECT_EQ(info[1], -1.0);
}

TEST(DeltaHedging, LastStepIsShorterWhenTheStepDoesNotDivideTheMaturity) {
  HedgingOptions o = Hull(3);  // 20 weeks: six steps of 3 weeks and one of 2
  auto env = std::move(DeltaHedgingEnv::Create(o)).value();
  EXPECT_EQ(env->num_steps(), 7);
  float obs[6];
  double info[7];
  env->Reset(obs, info);
  const float a = 0.5f;
  for (int s = 0; s < 6; ++s) EXPECT_FALSE(env->Step(&a, obs, info).terminated);
  EXPECT_NEAR(obs[0], 2.0 / 20, 1e-6);
  EXPECT_TRUE(env->Step(&a, obs, info).terminated);
}

TEST(DeltaHedging, GarchPathsHaveTheLongRunVolatilityAndMovingConditionalVol) {
  HedgingOptions o = Hull(1);
  o.paths = "garch";
  o.maturity_weeks = 520;
  o.garch_alpha = 0.1;
  o.garch_beta = 0.8;
  auto env = std::move(DeltaHedgingEnv::Create(o)).value();
  double sum_sq = 0, sum = 0, vol_min = 1e9, vol_max = 0;
  int64_t n = 0;
  float obs[6];
  double info[7];
  const float a = 0.0f;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    env->Seed(seed);
    env->Reset(obs, info);
    double spot = info[0];
    for (bool done = false; !done;) {
      done = env->Step(&a, obs, info).terminated;
      const double r = std::log(info[0] / spot);
      spot = info[0];
      sum += r;
      sum_sq += r * r;
      ++n;
      vol_min = std::min<double>(vol_min, obs[4]);
      vol_max = std::max<double>(vol_max, obs[4]);
    }
  }
  const double mean = sum / n;
  const double annual_vol = std::sqrt((sum_sq / n - mean * mean) * 52);
  EXPECT_NEAR(annual_vol, 0.2, 0.01);
  EXPECT_LT(vol_min, 0.17);
  EXPECT_GT(vol_max, 0.25);
}

TEST(DeltaHedging, BadOptionsAreClearErrors) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"spot", "0"},       {"spot", "nan"},        {"strike", "-1"},
      {"vol", "0"},        {"vol", "nan"},         {"maturity_weeks", "0"},
      {"step_weeks", "0"}, {"step_weeks", "21"},   {"rebalance_every", "0"},
      {"quantity", "0"},   {"cost", "-0.1"},       {"risk_aversion", "-1"},
      {"rate", "inf"},     {"garch_alpha", "0.5"}, {"step_weeks", "1e-9"}};
  for (const auto& [key, value] : cases) {
    std::map<std::string, std::string> settings = {{key, value}};
    if (key == "garch_alpha") settings["paths"] = "garch";
    Result<std::unique_ptr<Env>> env = MakeHedgingEnv(settings);
    ASSERT_TRUE(IsError(env, Status::Code::kInvalidArgument, key)) << key << "=" << value;
  }
  EXPECT_TRUE(IsError(MakeHedgingEnv({{"option_type", "straddle"}}), Status::Code::kInvalidArgument,
                      "'option_type' = 'straddle'"));
  EXPECT_TRUE(IsError(MakeHedgingEnv({{"paths", "heston"}}), Status::Code::kInvalidArgument,
                      "'paths' = 'heston'"));
  HedgingOptions o;
  o.drift = nan;
  EXPECT_TRUE(IsError(DeltaHedgingEnv::Create(o), Status::Code::kInvalidArgument, "drift = nan"));
  EXPECT_TRUE(IsError(SimulateHedging(Hull(1), 0, 1, BsDeltaPolicy), Status::Code::kInvalidArgument,
                      "paths = 0"));
}

}  // namespace
}  // namespace rlt::env
