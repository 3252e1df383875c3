// Tests of OptionsPortfolioEnv: bucket selection, self-financing accounting (and the
// replaced system's rule rejected by the same check), settlement at expiry, margin,
// ruin, the shaped reward and bad settings.
#include "env/envs/options_portfolio.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/civil_time.h"
#include "core/options.h"
#include "core/rng.h"
#include "core/status_test_util.h"
#include "testing/testing.h"

namespace rlt::env {
namespace {

constexpr int kCall = 0, kPut = 1;

std::unique_ptr<OptionsPortfolioEnv> MakeEnv(const std::map<std::string, std::string>& settings) {
  OptionsPortfolioOptions options;
  Status s = SetOptions(options, settings, "[env]");
  EXPECT_TRUE(s.ok()) << s.ToString();
  auto env = OptionsPortfolioEnv::Create(options, nullptr);
  EXPECT_TRUE(env.ok()) << env.status().ToString();
  return std::move(env).value();
}

// Bucket index of (tenor index, moneyness index, call/put) with the default 5 moneyness levels.
int Bucket(int tenor, int moneyness, int right) { return (tenor * 5 + moneyness) * 2 + right; }

struct Runner {
  std::unique_ptr<OptionsPortfolioEnv> env;
  std::vector<float> obs;
  std::vector<double> info;
  explicit Runner(std::unique_ptr<OptionsPortfolioEnv> e) : env(std::move(e)) {
    obs.resize(env->spec().obs_dim);
    info.resize(env->spec().info_names.size());
  }
  void Reset(uint64_t seed = 1) {
    env->Seed(seed);
    env->Reset(obs.data(), info.data());
  }
  StepResult Step(const std::vector<float>& action) {
    return env->Step(action.data(), obs.data(), info.data());
  }
  double NetWorth() const { return info[0]; }
};

TEST(OptionsPortfolio, SpecHasTwentyBucketsAndTheDocumentedObservation) {
  Runner r(MakeEnv({{"synthetic_days", "300"}}));
  EXPECT_EQ(r.env->data().num_buckets, 20);
  EXPECT_EQ(r.env->spec().action.dim, 21);
  EXPECT_EQ(r.env->spec().obs_dim, 7 + 9 * 20 + 21 + 6);
  EXPECT_EQ(r.env->spec().id, "options");
}

// Every day's selection: the expiry nearest to the tenor among those listed, the strike
// nearest to m S; calls and puts of one bucket pair share strike and expiry.
TEST(OptionsPortfolio, BucketsSelectTheNearestTenorAndStrike) {
  Runner r(MakeEnv({{"synthetic_days", "400"}}));
  const OptionsData& d = r.env->data();
  const double tenors[] = {30, 60};
  const double moneyness[] = {0.95, 0.975, 1.0, 1.025, 1.05};
  for (int day = d.first_day; day < d.num_days(); ++day) {
    for (int t = 0; t < 2; ++t) {
      for (int m = 0; m < 5; ++m) {
        const int32_t call = d.roll[day * 20 + Bucket(t, m, kCall)];
        const int32_t put = d.roll[day * 20 + Bucket(t, m, kPut)];
        ASSERT_GE(call, 0);
        ASSERT_GE(put, 0);
        EXPECT_EQ(d.phi[call], 1.0);
        EXPECT_EQ(d.phi[put], -1.0);
        EXPECT_EQ(d.strike[call], d.strike[put]);
        EXPECT_EQ(d.expiry_day[call], d.expiry_day[put]);
        // Strikes are listed every 2.5% of spot at most apart near the money.
        EXPECT_LT(std::fabs(d.strike[call] / d.close[day] - moneyness[m]), 0.02) << day;
        // Near 30 days weeklies (every other Friday) are 14 days apart; beyond the 35-day
        // weekly horizon only monthlies (28 or 35 days apart) are listed.
        const double days_left = d.rows[d.RowOf(call, day)].features[8] / 4 * 365;
        EXPECT_LE(std::fabs(days_left - tenors[t]), t == 0 ? 7.01 : 17.51) << day;
        EXPECT_GT(d.expiry_day[call], day);
      }
    }
  }
}

// An outside check of the cash accounting: buy one bucket's contracts, hold them to expiry
// with no other trade, zero rates: the final net worth is the initial cash minus the ask
// paid and the fee, plus the intrinsic value at expiry, computed here from the data.
TEST(OptionsPortfolio, HeldToExpiryTheBooksAreCashMinusPremiumPlusPayoff) {
  Runner r(MakeEnv({{"synthetic_days", "400"},
                    {"random_start", "false"},
                    {"episode_days", "200"},
                    {"rate", "0"},
                    {"dividend", "0"},
                    {"fee_per_contract", "1.25"}}));
  r.Reset();
  const OptionsData& d = r.env->data();
  const int b = Bucket(0, 2, kCall);
  const int32_t c = r.env->contract(b);
  const int day0 = r.env->day();
  const double s0 = d.close[day0];
  const double ask = d.rows[d.RowOf(c, day0)].ask;
  std::vector<float> buy(21, 0.0f), hold(21, 0.0f);
  buy[1 + b] = 1.0f;
  r.Step(buy);
  const double n = r.env->units(1 + b);
  EXPECT_EQ(n, std::trunc(0.2 * 1e6 / (d.rows[d.RowOf(c, day0)].mid * 100)));
  ASSERT_GT(n, 0);
  // Hold: the target stays at the held contracts, so no trade happens.
  while (r.env->day() < d.expiry_day[c]) {
    ASSERT_EQ(r.env->contract(b), c);
    // The weight of n + 0.5 contracts: truncation (toward zero) keeps exactly n.
    hold[1 + b] = static_cast<float>((n + 0.5) * d.rows[d.RowOf(c, r.env->day())].mid * 100 /
                                     r.NetWorth() / 0.2);
    const double before = r.env->units(1 + b);
    r.Step(hold);
    if (r.env->day() < d.expiry_day[c]) {
      // A rounding of the weight may trade a contract; then stop holding exactly.
      ASSERT_EQ(r.env->units(1 + b), before) << "day " << r.env->day();
    }
  }
  const double payoff = std::max(0.0, d.close[r.env->day()] - d.strike[c]) * 100;
  EXPECT_NEAR(r.NetWorth(), 1e6 - n * (ask * 100 + 1.25) + n * payoff, 1e-6);
  EXPECT_EQ(r.env->units(1 + b), 0);  // settled
  EXPECT_NE(r.env->contract(b), c);   // rolled
  EXPECT_GT(d.expiry_day[r.env->contract(b)], r.env->day());
  (void)s0;
}

// Random actions (beyond the box, with NaNs): every step's books satisfy the
// self-financing identity, and net worth equals cash plus holdings at marks.
TEST(OptionsPortfolio, EveryStepIsSelfFinancing) {
  Runner r(MakeEnv({{"synthetic_days", "500"}, {"episode_days", "120"}}));
  Rng rng(3);
  std::vector<float> action(21);
  int steps = 0, liquidations = 0;
  for (int episode = 0; episode < 6; ++episode) {
    r.Reset(episode + 1);
    for (;;) {
      for (float& a : action) a = static_cast<float>(rng.Uniform(-1.3, 1.3));
      if (steps % 17 == 0) action[5] = std::nanf("");
      const StepResult res = r.Step(action);
      ++steps;
      const Status s = CheckSelfFinancing(r.env->books(), 1e-9);
      ASSERT_TRUE(s.ok()) << s.ToString() << " at step " << steps;
      EXPECT_TRUE(std::isfinite(res.reward));
      for (float o : r.obs) ASSERT_TRUE(std::isfinite(o));
      liquidations = static_cast<int>(r.info[6]);
      if (res.terminated || res.truncated) break;
    }
  }
  EXPECT_GT(steps, 600);
  (void)liquidations;
}

// The replaced system debited only costs from cash when it bought options, so the premium
// it paid stayed in net worth as cash *and* as the option's value. The same step booked
// that way fails the self-financing check; ours passes.
TEST(OptionsPortfolio, TheOriginalsCostsOnlyAccountingIsRejected) {
  Runner r(MakeEnv({{"synthetic_days", "300"}, {"random_start", "false"}}));
  r.Reset();
  const double cash_before = r.env->cash();
  std::vector<float> buy(21, 0.0f);
  buy[1 + Bucket(0, 2, kCall)] = 1.0f;
  buy[1 + Bucket(1, 0, kPut)] = 0.5f;
  r.Step(buy);
  const StepBooks ours = r.env->books();
  ASSERT_TRUE(CheckSelfFinancing(ours).ok());
  // The original: cash_after = cash_before - costs (+ carry); positions at the new marks.
  const double holdings = r.env->NetWorth() - r.env->cash();
  StepBooks original = ours;
  original.value_after = cash_before + ours.carry - ours.costs + holdings;
  const Status s = CheckSelfFinancing(original);
  EXPECT_TRUE(IsError(s, Status::Code::kDataError, "not self-financing"));
  // The money it created is the premium paid.
  EXPECT_GT(original.value_after - ours.value_after, 0.1 * 1e6 * 0.2);
}

// A large short put position: the requirement fits the equity after trading, and equals
// max(20% S - OTM, 10% S) x 100 per contract computed here.
TEST(OptionsPortfolio, ShortOptionsAreLimitedByTheMarginFormula) {
  Runner r(MakeEnv({{"synthetic_days", "300"},
                    {"random_start", "false"},
                    {"max_position", "10"},
                    {"min_option_price", "0"}}));
  r.Reset();
  const OptionsData& d = r.env->data();
  const int b = Bucket(0, 0, kPut);
  std::vector<float> sell(21, 0.0f);
  sell[1 + b] = -1.0f;
  const double v0 = r.NetWorth();
  const int day0 = r.env->day();
  const int32_t c = r.env->contract(b);
  r.Step(sell);
  const double n = r.env->units(1 + b);
  ASSERT_LT(n, 0);
  // Unconstrained, -10 V of premium: far more than the margin allows.
  EXPECT_GT(-std::trunc(-10 * v0 / (d.rows[d.RowOf(c, day0)].mid * 100)), -n * 1.5);
  const double s0 = d.close[day0];
  const double per_contract = std::max(0.2 * s0 - std::max(0.0, s0 - d.strike[c]), 0.1 * s0) * 100;
  // At the trade: requirement <= equity after costs, and one more contract would not fit.
  const double equity_after_trade = v0 - r.env->books().costs;
  EXPECT_LE(-n * per_contract, equity_after_trade * (1 + 1e-12));
  EXPECT_GT((-n + 0.02 * -n + 1) * per_contract, equity_after_trade);
  // Today's requirement, as reported, is the formula at today's spot.
  if (r.info[6] == 0) {
    const double s1 = d.close[r.env->day()];
    const double m1 = -n * std::max(0.2 * s1 - std::max(0.0, s1 - d.strike[c]), 0.1 * s1) * 100;
    EXPECT_NEAR(r.info[5] * r.NetWorth(), m1, 1e-6 * m1);
  }
}

// A 10x short of a volatile rising underlying without margin: ruin terminates the episode with the
// floored log return.
TEST(OptionsPortfolio, RuinTerminates) {
  Runner r(MakeEnv({{"synthetic_days", "400"},
                    {"random_start", "false"},
                    {"synthetic_drift", "2"},
                    {"synthetic_vol", "1"},
                    {"max_position", "10"},
                    {"stock_margin", "0"},
                    {"episode_days", "300"}}));
  r.Reset();
  std::vector<float> action(21, 0.0f);
  action[0] = -1.0f;
  StepResult res;
  int steps = 0;
  do {
    res = r.Step(action);
    ++steps;
  } while (!res.terminated && !res.truncated);
  EXPECT_TRUE(res.terminated) << "after " << steps << " steps, V = " << r.NetWorth();
  EXPECT_LE(r.NetWorth(), 0);
  EXPECT_GE(res.reward, std::log(1e-4) - 1e-6);
}

// The shaped reward: 100 r + 0.3 (10 Sharpe) + 0.2 (-50 dd) - 100 cost/V + 0.1 (5 active/21)
// - max(0, largest weight - 0.3) 20, recomputed here from the info and observation.
TEST(OptionsPortfolio, ShapedRewardFollowsTheOriginalsFormula) {
  Runner r(MakeEnv({{"synthetic_days", "300"},
                    {"random_start", "false"},
                    {"reward", "shaped"},
                    {"max_position", "0.5"}}));
  r.Reset();
  const int weights = 7 + 9 * 20;
  std::vector<double> returns;
  double peak = r.NetWorth();
  Rng rng(5);
  std::vector<float> action(21);
  for (int step = 0; step < 30; ++step) {
    for (float& a : action) a = rng.Uniform() < 0.7 ? 0.0f : static_cast<float>(rng.Uniform(-1, 1));
    const double v0 = r.NetWorth(), costs0 = r.info[3];
    const StepResult res = r.Step(action);
    const double v1 = r.NetWorth();
    returns.push_back(v1 / v0 - 1);
    if (returns.size() > 20) returns.erase(returns.begin());
    double sharpe = 0;
    if (returns.size() >= 2) {
      double m = 0, ss = 0;
      for (double x : returns) m += x;
      m /= returns.size();
      for (double x : returns) ss += (x - m) * (x - m);
      sharpe = m / std::sqrt(ss / (returns.size() - 1));
    }
    peak = std::max(peak, v1);
    int active = 0;
    double largest = 0;
    for (int a = 0; a < 21; ++a) {
      const double w = r.obs[weights + a];
      if (w != 0) ++active;
      largest = std::max(largest, std::fabs(w));
    }
    double expected = 100 * (v1 / v0 - 1) + 0.3 * 10 * sharpe + 0.2 * (-50 * (1 - v1 / peak)) -
                      100 * (r.info[3] - costs0) / v0 + 0.1 * 5.0 * active / 21 -
                      std::max(0.0, largest - 0.3) * 20;
    expected = std::clamp(expected, -100.0, 100.0);
    ASSERT_NEAR(res.reward, expected, 1e-3 + 1e-5 * std::fabs(expected)) << "step " << step;
  }
}

TEST(OptionsPortfolio, BadSettingsNameTheKey) {
  struct Case {
    std::map<std::string, std::string> settings;
    std::string key;
    Status::Code code = Status::Code::kInvalidArgument;
  };
  const std::vector<Case> cases = {
      {{{"tenors", "[]"}}, "tenors"},
      {{{"moneyness", "0.95,nan"}}, "moneyness"},
      {{{"max_position", "0"}}, "max_position"},
      {{{"synthetic_alpha", "0.5"}, {"synthetic_beta", "0.6"}}, "synthetic_alpha"},
      {{{"synthetic_days", "10"}}, "synthetic_days"},
      {{{"initial_cash", "-1"}}, "initial_cash"},
      {{{"range", "2030-01-01:2031-01-01"}}, "range"},
      // ReadBarsCsv reports a missing bar file as an I/O error.
      {{{"underlying", "/nonexistent/gspc.csv"}}, "/nonexistent/gspc.csv", Status::Code::kIoError},
      {{{"chain_moneyness_step", "0.0004"}, {"chain_monthly_expiries", "60"}},
       "chain_moneyness_step"},
      // The chain's own checks (market::ValidateChainSynthOptions) under the chain_ keys.
      {{{"chain_moneyness_min", "1.5"}},
       "[env] chain_moneyness_min = 1.5: expected a value in (0, 1]"},
      {{{"chain_rv_window", "1"}}, "[env] chain_rv_window = 1"},
      {{{"chain_tick", "0"}}, "[env] chain_tick = 0"},
  };
  for (const Case& c : cases) {
    OptionsPortfolioOptions options;
    Status s = SetOptions(options, c.settings, "[env]");
    if (s.ok()) s = OptionsPortfolioEnv::Create(options, nullptr).status();
    EXPECT_TRUE(IsError(s, c.code, c.key)) << c.key;
  }
}

// The chain_ keys are market::ChainSynthOptions' fields with the environment's listing
// defaults, except rate, dividend and seed, which are the environment's own keys.
TEST(OptionsPortfolio, ChainKeysAreTheChainOptionsUnderAPrefix) {
  OptionsPortfolioOptions options;
  std::map<std::string, std::string> rows;
  for (const auto& row : DescribeOptions(options)) rows[row.key] = row.value;
  const market::ChainSynthOptions chain_defaults;
  for (const auto& row : DescribeOptions(chain_defaults)) {
    const bool own = row.key == "rate" || row.key == "dividend" || row.key == "seed";
    EXPECT_EQ(rows.count("chain_" + row.key), own ? 0u : 1u) << row.key;
  }
  EXPECT_EQ(rows.at("chain_moneyness_min"), "0.85");
  EXPECT_EQ(rows.at("chain_monthly_expiries"), "3");
  EXPECT_EQ(rows.at("chain_rv_window"), std::to_string(chain_defaults.rv_window));
  ASSERT_TRUE(SetOptions(options, {{"chain_skew", "-0.25"}, {"chain_rv_window", "30"}}).ok());
  EXPECT_EQ(options.chain.skew, -0.25);
  EXPECT_EQ(options.chain.rv_window, 30);
  EXPECT_TRUE(IsError(SetOptions(options, {{"chain_seed", "3"}}), Status::Code::kInvalidArgument,
                      "unknown key 'chain_seed'"));
}

// A daily close file as the underlying, restricted to a range.
TEST(OptionsPortfolio, ReadsADailyCloseFileWithinARange) {
  const testing::ScratchDir dir;
  std::string csv = "Date,Close\n";
  double s = 100;
  Rng rng(9);
  int64_t day = 19723;  // 2024-01-01
  int rows = 0;
  while (rows < 200) {
    const int wd = static_cast<int>(((day + 4) % 7 + 7) % 7);
    if (wd != 0 && wd != 6) {
      const CivilDate c = CivilFromDays(day);
      char line[64];
      std::snprintf(line, sizeof(line), "%04d-%02d-%02d,%.4f\n", c.year, c.month, c.day, s);
      csv += line;
      s *= std::exp(0.01 * rng.Normal());
      ++rows;
    }
    ++day;
  }
  const std::string path = dir.path() + "/daily.csv";
  testing::WriteFile(path, csv);
  Runner r(MakeEnv({{"underlying", path}, {"range", "2024-05-01:2024-09-30"}}));
  const OptionsData& d = r.env->data();
  EXPECT_EQ(d.dates[d.first_day], 20240501);
  EXPECT_EQ(d.dates.back(), 20240930 - 0);
  r.Reset();
  EXPECT_GE(r.info[7], 20240501);
}

}  // namespace
}  // namespace rlt::env
