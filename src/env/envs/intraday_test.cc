// Tests of IntradayStockEnv (intraday.h): observation, execution, flattening, the
// self-financing ledger, no look-ahead, the pnl reward, determinism and errors.
//
// Small markets are built by hand (a few sessions of a few bars, prices chosen so every
// expected number can be worked out on paper) with a feature matrix whose value at
// (row t, column c) is 10 t + c, so the observation window can be read back exactly.
// Property tests run on GenerateSynthetic data and check every step against a ledger the
// test keeps itself from the bars and the reported trades.
#include "env/envs/intraday.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "market/sessions.h"
#include "market/synth.h"

namespace rlt::env {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kJan2 = 1704153600;  // 2024-01-02 00:00:00 UTC
constexpr double kC0 = 10000.0;

// `sessions` sessions of `per_session` one-minute bars on consecutive days from
// 2024-01-02, 10:00 UTC (offset 0). Bar i: open = 100 + i, close = open + 0.5,
// high = close + 1, low = open - 1.
market::Bars HandBars(int sessions, int per_session) {
  market::Bars b;
  b.symbol = "HAND";
  for (int s = 0; s < sessions; ++s) {
    for (int k = 0; k < per_session; ++k) {
      const double i = static_cast<double>(b.time.size());
      b.time.push_back(kJan2 + s * 86400 + 36000 + k * 60);
      b.utc_offset.push_back(0);
      b.open.push_back(100 + i);
      b.close.push_back(100.5 + i);
      b.high.push_back(101.5 + i);
      b.low.push_back(99 + i);
      b.volume.push_back(1000);
    }
  }
  market::AssignSessions(b);
  return b;
}

// Feature (t, c) = 10 t + c; NaN on warm-up rows before first_valid.
std::shared_ptr<MarketDataset> HandDataset(market::Bars bars, int cols = 2,
                                           int64_t first_valid = 0) {
  auto ds = std::make_shared<MarketDataset>();
  ds->features.rows = static_cast<int64_t>(bars.size());
  ds->features.cols = cols;
  ds->features.first_valid = first_valid;
  for (int c = 0; c < cols; ++c) ds->features.names.push_back(std::string(1, char('a' + c)));
  for (int64_t t = 0; t < ds->features.rows; ++t) {
    for (int c = 0; c < cols; ++c) {
      ds->features.values.push_back(t < first_valid ? std::numeric_limits<float>::quiet_NaN()
                                                    : static_cast<float>(10 * t + c));
    }
  }
  ds->bars = std::move(bars);
  return ds;
}

// Hand-test options: 3-bar window, C0 = 10000, 0.1% costs, sequential, no stop-out.
IntradayOptions HandOptions() {
  IntradayOptions o;
  o.nlags = 2;
  o.initial_capital = kC0;
  o.cost_rate = 0.001;
  o.sequential = true;
  o.stop_fraction = 0.0;
  return o;
}

// One env with its output rows.
struct Runner {
  Runner(std::shared_ptr<const MarketDataset> data, const IntradayOptions& o, uint64_t seed = 1) {
    auto created = IntradayStockEnv::Create(std::move(data), o);
    RLT_CHECK_MSG(created.ok(), created.status().ToString());
    env = std::move(created.value());
    env->Seed(seed);
    obs.assign(env->spec().obs_dim, 0.0f);
    info.assign(kInfoCount, 0.0);
  }
  void Reset() { env->Reset(obs.data(), info.data()); }
  StepResult Step(float a0, float a1 = 1.0f) {
    const float a[2] = {a0, a1};
    return env->Step(a, obs.data(), info.data());
  }
  int bar() const { return static_cast<int>(info[kInfoBar]); }
  double operator[](int k) const { return info[k]; }

  std::unique_ptr<IntradayStockEnv> env;
  std::vector<float> obs;
  std::vector<double> info;
};

void ExpectWindowIsRowsUpTo(const Runner& r, int nlags, int cols) {
  const int t = r.bar();
  for (int k = 0; k <= nlags; ++k) {
    for (int c = 0; c < cols; ++c) {
      EXPECT_EQ(r.obs[k * cols + c], static_cast<float>(10 * (t - nlags + k) + c))
          << "window slot " << k << " col " << c << " at bar " << t;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Observation

TEST(IntradayEnv, ObservationIsTheFeatureWindowEndingAtTheCurrentBarPlusPortfolioState) {
  market::Bars bars = HandBars(3, 5);  // sessions: bars 0-4, 5-9, 10-14
  bars.open[6] = 50, bars.close[6] = 52;
  Runner r(HandDataset(bars), HandOptions());
  ASSERT_EQ(r.env->spec().obs_dim, (2 + 1) * 2 + 3);
  r.Reset();
  ASSERT_EQ(r.bar(), 5);  // session 0 has no 2-row history before it
  ExpectWindowIsRowsUpTo(r, 2, 2);
  EXPECT_EQ(r.obs[6], 0.0f);
  EXPECT_EQ(r.obs[7], 0.0f);
  EXPECT_EQ(r.obs[8], 1.0f);  // the whole session is left

  // Buy half the cash at open[6] = 50: floor(5000 / 50.05) = 99 shares, cost 4.95.
  r.Step(1.0f, 0.5f);
  ASSERT_EQ(r.bar(), 6);
  ExpectWindowIsRowsUpTo(r, 2, 2);
  const double cash = 10000.0 - 99 * 50.0 - 4.95;
  const double worth = cash + 99 * 52.0;
  EXPECT_FLOAT_EQ(r.obs[6], static_cast<float>(99 * 52.0 / worth));
  EXPECT_FLOAT_EQ(r.obs[7], static_cast<float>(99 * (52.0 - 50.0) / kC0));
  EXPECT_FLOAT_EQ(r.obs[8], 0.75f);  // bars 7, 8, 9 of 5 left: 3 / 4

  for (int bar = 7; bar <= 8; ++bar) {
    r.Step(0.0f);
    ASSERT_EQ(r.bar(), bar);
    ExpectWindowIsRowsUpTo(r, 2, 2);
    EXPECT_FLOAT_EQ(r.obs[8], static_cast<float>((9 - bar) / 4.0));
  }
  r.Step(0.0f);  // fills at bar 9, the session's last: flattened, next session
  ASSERT_EQ(r.bar(), 10);
  ExpectWindowIsRowsUpTo(r, 2, 2);
  EXPECT_EQ(r.obs[6], 0.0f);
  EXPECT_EQ(r.obs[7], 0.0f);
  EXPECT_EQ(r.obs[8], 1.0f);
}

TEST(IntradayEnv, EpisodesStartOnlyInSessionsWhoseWholeWindowIsWarmedUp) {
  // Features defined from row 7; with nlags = 2 a bar needs rows >= 7 back to t - 2, so
  // session 1 (bars 5-9) is out and sessions 2 and 3 (from bar 10) are eligible.
  auto ds = HandDataset(HandBars(4, 5), 3, /*first_valid=*/7);
  IntradayOptions o = HandOptions();
  Runner r(ds, o);
  EXPECT_EQ(r.env->eligible_sessions(), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(r.env->spec().obs_dim, 3 * 3 + 3);
  r.Reset();
  bool done = false;
  while (!done) {
    for (float x : r.obs) ASSERT_TRUE(std::isfinite(x)) << "bar " << r.bar();
    ExpectWindowIsRowsUpTo(r, 2, 3);
    const StepResult s = r.Step(0.9f, 0.3f);
    done = s.terminated || s.truncated;
  }
}

// ---------------------------------------------------------------------------------------
// Execution

TEST(IntradayEnv, BuyDecidedAtBarTFillsAtTheNextOpenSizedByCashAmountAndCosts) {
  market::Bars bars = HandBars(3, 5);
  bars.open[6] = 50, bars.close[6] = 52;
  {
    Runner r(HandDataset(bars), HandOptions());
    r.Reset();
    r.Step(1.0f, 0.5f);
    EXPECT_EQ(r[kInfoFillPrice], 50.0);
    EXPECT_EQ(r[kInfoTradedShares], 99.0);  // floor(0.5 * 10000 / (50 * 1.001)) = 99
    EXPECT_EQ(r[kInfoShares], 99.0);
    EXPECT_NEAR(r[kInfoCostsPaid], 4.95, 1e-12);  // 99 * 50 * 0.001
    EXPECT_NEAR(r[kInfoCash], 10000.0 - 4950.0 - 4.95, 1e-9);
    EXPECT_NEAR(r[kInfoNetWorth], 10000.0 - 4950.0 - 4.95 + 99 * 52.0, 1e-9);
    EXPECT_EQ(r[kInfoTrades], 1.0);
  }
  {  // A fixed cost of 50 comes out of the budget: floor((5000 - 50) / 50.05) = 98.
    IntradayOptions o = HandOptions();
    o.fixed_cost = 50.0;
    Runner r(HandDataset(bars), o);
    r.Reset();
    r.Step(1.0f, 0.5f);
    EXPECT_EQ(r[kInfoTradedShares], 98.0);
    EXPECT_NEAR(r[kInfoCostsPaid], 98 * 50 * 0.001 + 50.0, 1e-12);
    EXPECT_NEAR(r[kInfoCash], 10000.0 - 98 * 50.0 - 54.9, 1e-9);
  }
}

TEST(IntradayEnv, NextTypicalFillIsTheMeanOfTheNextBarsHighLowAndClose) {
  market::Bars bars = HandBars(3, 5);
  bars.open[6] = 50, bars.high[6] = 54, bars.low[6] = 47, bars.close[6] = 52;
  IntradayOptions o = HandOptions();
  o.fill = "next_typical";
  Runner r(HandDataset(bars), o);
  r.Reset();
  r.Step(1.0f, 0.5f);
  EXPECT_DOUBLE_EQ(r[kInfoFillPrice], 51.0);
  EXPECT_EQ(r[kInfoTradedShares], 97.0);  // floor(5000 / 51.051) = 97
  EXPECT_NEAR(r[kInfoCash], 10000.0 - 97 * 51.0 - 97 * 51 * 0.001, 1e-9);
}

TEST(IntradayEnv, SellSellsAmountTimesSharesPlusShortCapacity) {
  market::Bars bars = HandBars(3, 5);
  bars.open[6] = 50, bars.open[7] = 40;  // open[8] = 108
  IntradayOptions o = HandOptions();
  o.max_short_value = 3000.0;
  {  // From flat: cap floor(3000 / 50) = 60 shares, half of it -> -30.
    Runner r(HandDataset(bars), o);
    r.Reset();
    r.Step(-1.0f, 0.5f);
    EXPECT_EQ(r[kInfoTradedShares], -30.0);
    EXPECT_NEAR(r[kInfoCash], 10000.0 + 1500.0 - 1.5, 1e-9);
    // At 40 the cap is 75: capacity -30 + 75 = 45, all of it -> -75 (exposure 3000).
    r.Step(-1.0f, 1.0f);
    EXPECT_EQ(r[kInfoTradedShares], -45.0);
    EXPECT_EQ(r[kInfoShares], -75.0);
    EXPECT_NEAR(r[kInfoCash], 10000.0 + 1500.0 - 1.5 + 1800.0 - 1.8, 1e-9);
    // At 108 the cap is 27 < 75 already short: nothing more is sold.
    r.Step(-1.0f, 1.0f);
    EXPECT_EQ(r[kInfoTradedShares], 0.0);
    EXPECT_EQ(r[kInfoShares], -75.0);
  }
  {  // Long 99, then sell half of 99 + 75 = 174 at 40: 87 -> 12 left.
    Runner r(HandDataset(bars), o);
    r.Reset();
    r.Step(1.0f, 0.5f);
    ASSERT_EQ(r[kInfoShares], 99.0);
    r.Step(-0.5f, 0.5f);
    EXPECT_EQ(r[kInfoTradedShares], -87.0);
    EXPECT_EQ(r[kInfoShares], 12.0);
  }
}

// Shares traded by one decision (a0, amount) from the first bar of the hand market.
double TradedShares(const IntradayOptions& o, float a0, float amount) {
  market::Bars bars = HandBars(3, 5);
  bars.open[6] = 50;
  Runner r(HandDataset(bars), o);
  r.Reset();
  r.Step(a0, amount);
  return r[kInfoTradedShares];
}

TEST(IntradayEnv, ActionTypeThresholdsChooseBuySellOrHold) {
  const IntradayOptions o = HandOptions();  // buy >= 0.3, sell <= -0.3
  EXPECT_EQ(TradedShares(o, 0.29f, 1.0f), 0.0);
  EXPECT_EQ(TradedShares(o, -0.29f, 1.0f), 0.0);
  EXPECT_GT(TradedShares(o, 0.3f, 1.0f), 0.0);
  EXPECT_LT(TradedShares(o, -0.3f, 1.0f), 0.0);
  EXPECT_EQ(TradedShares(o, std::numeric_limits<float>::quiet_NaN(), 1.0f), 0.0);
  EXPECT_EQ(TradedShares(o, 7.0f, 1.0f), 199.0);  // a0 clipped; floor(10000 / 50.05)
  IntradayOptions wide = o;
  wide.buy_threshold = 0.5, wide.sell_threshold = -0.5;  // exact in float
  EXPECT_EQ(TradedShares(wide, 0.49f, 1.0f), 0.0);
  EXPECT_EQ(TradedShares(wide, 0.5f, 1.0f), 199.0);
  EXPECT_EQ(TradedShares(wide, -0.49f, 1.0f), 0.0);
  EXPECT_EQ(TradedShares(wide, -0.5f, 1.0f), -200.0);  // floor(10000 / 50)
}

TEST(IntradayEnv, AmountIsClampedToMinAmountAndOne) {
  const IntradayOptions o = HandOptions();
  EXPECT_EQ(TradedShares(o, 1.0f, 0.0f), 19.0);    // 0.1: floor(1000 / 50.05)
  EXPECT_EQ(TradedShares(o, 1.0f, 0.05f), 19.0);   // 0.1
  EXPECT_EQ(TradedShares(o, 1.0f, 0.3f), 59.0);    // floor(3000 / 50.05)
  EXPECT_EQ(TradedShares(o, 1.0f, 2.0f), 199.0);   // 1.0
  EXPECT_EQ(TradedShares(o, -1.0f, 0.0f), -20.0);  // floor(0.1 * floor(10000 / 50))
  IntradayOptions o2 = o;
  o2.min_amount = 0.2;
  EXPECT_EQ(TradedShares(o2, 1.0f, 0.0f), 39.0);  // floor(2000 / 50.05)
}

TEST(IntradayEnv, TargetPositionModeTradesToTruncatedFractionOfNetWorthWithinTheShortCap) {
  market::Bars bars = HandBars(3, 5);
  bars.open[6] = 50, bars.close[6] = 45, bars.open[7] = 40, bars.close[7] = 42;
  bars.open[8] = 44;
  IntradayOptions o = HandOptions();
  o.action_mode = "target_position";
  {
    Runner r(HandDataset(bars), o);
    EXPECT_EQ(r.env->spec().action.dim, 1);
    r.Reset();
    r.Step(0.5f);  // trunc(0.5 * 10000 / 50) = 100
    EXPECT_EQ(r[kInfoShares], 100.0);
    // Worth at 40: 10000 - 5000 - 5 + 4000 = 8995; trunc(-0.8 * 8995 / 40) = -179.
    r.Step(-0.8f);
    EXPECT_EQ(r[kInfoShares], -179.0);
    EXPECT_EQ(r[kInfoTradedShares], -279.0);
    EXPECT_NEAR(r[kInfoCash], 4995.0 + 279 * 40.0 - 279 * 40 * 0.001, 1e-9);
    r.Step(0.0f);  // target 0: close the short at 44
    EXPECT_EQ(r[kInfoShares], 0.0);
    EXPECT_EQ(r[kInfoTradedShares], 179.0);
  }
  {  // With a 3000 short cap the -179 target stops at -floor(3000 / 40) = -75.
    o.max_short_value = 3000.0;
    Runner r(HandDataset(bars), o);
    r.Reset();
    r.Step(0.5f);
    r.Step(-0.8f);
    EXPECT_EQ(r[kInfoShares], -75.0);
  }
}

TEST(IntradayEnv, TargetPositionZeroGoesFlatEvenWhenNetWorthIsNegative) {
  // A short of 179 at 40 that the next open marks at 108: worth = 16143.84 - 179 * 108 =
  // -3188.16 < 0 (stop_fraction = 0 lets the episode go on). Target a0 = 0 must still
  // mean trunc(0 * worth / P) = 0 shares, i.e. buy back all 179, never a new short.
  market::Bars bars = HandBars(3, 5);
  bars.open[6] = 50, bars.open[7] = 40;  // open[8] = 108
  IntradayOptions o = HandOptions();
  o.action_mode = "target_position";
  Runner r(HandDataset(bars), o);
  r.Reset();
  r.Step(0.5f);
  r.Step(-0.8f);
  ASSERT_EQ(r[kInfoShares], -179.0);
  r.Step(0.0f);
  EXPECT_EQ(r[kInfoShares], 0.0) << "target 0 with negative net worth";
  EXPECT_EQ(r[kInfoTradedShares], 179.0);
}

// ---------------------------------------------------------------------------------------
// Sessions and episodes

TEST(IntradayEnv, PositionIsFlattenedAtTheSessionCloseWithCosts) {
  Runner r(HandDataset(HandBars(3, 5)), HandOptions());
  r.Reset();
  r.Step(0.0f);
  r.Step(0.0f);
  ASSERT_EQ(r.bar(), 7);
  r.Step(1.0f, 0.5f);  // fills at open[8] = 108: floor(5000 / 108.108) = 46
  ASSERT_EQ(r[kInfoShares], 46.0);
  const StepResult s = r.Step(0.0f);  // bar 9 is the last: sold at close[9] = 109.5
  EXPECT_FALSE(s.terminated || s.truncated);
  EXPECT_EQ(r[kInfoShares], 0.0);
  EXPECT_EQ(r[kInfoTradedShares], 0.0);  // the decision itself was a hold
  EXPECT_NEAR(r[kInfoCostsPaid], 46 * 108 * 0.001 + 46 * 109.5 * 0.001, 1e-12);
  EXPECT_NEAR(r[kInfoCash], 10000.0 + 46 * 1.5 - 46 * 108 * 0.001 - 46 * 109.5 * 0.001, 1e-9);
  EXPECT_NEAR(r[kInfoRealizedPnl], 46 * 1.5, 1e-9);
  EXPECT_EQ(r[kInfoTrades], 2.0);
  EXPECT_EQ(r.bar(), 10);  // the next session's first bar
  EXPECT_EQ(r[kInfoSessionDate], 20240104.0);
  EXPECT_EQ(r[kInfoNetWorth], r[kInfoCash]);
}

TEST(IntradayEnv, TrainingEpisodeSpansEpisodeSessionsFromARandomStartThenTruncates) {
  // 6 sessions of 4 bars; with nlags = 2 sessions 1..5 are eligible.
  auto ds = HandDataset(HandBars(6, 4));
  IntradayOptions o = HandOptions();
  o.sequential = false;
  o.episode_sessions = 2;
  int truncations = 0, data_ends = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Runner r(ds, o, seed);
    r.Reset();
    const int start = r.bar() / 4;
    ASSERT_EQ(r.bar(), start * 4) << "episodes start at a session's first bar";
    std::vector<int> bars_seen = {r.bar()};
    StepResult s;
    Rng actions(seed);
    while (!(s.terminated || s.truncated)) {
      s = r.Step(static_cast<float>(actions.Uniform(-1, 1)), 1.0f);
      bars_seen.push_back(r.bar());
      if (r.bar() % 4 == 0 || s.terminated || s.truncated) {
        EXPECT_EQ(r[kInfoShares], 0.0) << "flat after every session close";
      }
    }
    // Expected walk: bars start*4 .. +2 of each session, then the next session's first.
    std::vector<int> want;
    const int last_session = std::min(start + 1, 5);
    for (int sess = start; sess <= last_session; ++sess) {
      for (int k = 0; k < 3; ++k) want.push_back(sess * 4 + k);
    }
    want.push_back(last_session * 4 + 3);  // the episode ends on its last session's close
    EXPECT_EQ(bars_seen, want) << "seed " << seed;
    if (last_session < 5) {
      EXPECT_TRUE(s.truncated && !s.terminated) << "seed " << seed;
      ++truncations;
    } else {
      EXPECT_TRUE(s.terminated != s.truncated) << "seed " << seed;
      data_ends += start == 5;
    }
  }
  EXPECT_GT(truncations, 5);
  EXPECT_GT(data_ends, 0);
}

TEST(IntradayEnv, SequentialWalksEverySessionOfTheRangeInOrderThenTerminates) {
  auto ds = HandDataset(HandBars(5, 4));  // sessions 2024-01-02 .. 2024-01-06
  IntradayOptions o = HandOptions();
  o.range = "2024-01-04:2024-01-05";
  o.episode_sessions = 1;  // ignored when sequential
  Runner r(ds, o);
  EXPECT_EQ(r.env->eligible_sessions(), (std::vector<int32_t>{2, 3}));
  for (int episode = 0; episode < 2; ++episode) {
    r.Reset();
    std::vector<int> bars_seen = {r.bar()};
    std::vector<double> dates = {r[kInfoSessionDate]};
    StepResult s;
    int steps = 0;
    while (!(s.terminated || s.truncated)) {
      s = r.Step(episode == 0 ? 1.0f : -1.0f, 0.5f);
      bars_seen.push_back(r.bar());
      dates.push_back(r[kInfoSessionDate]);
      ++steps;
      ASSERT_LT(steps, 20);
    }
    EXPECT_EQ(bars_seen, (std::vector<int>{8, 9, 10, 12, 13, 14, 15}));
    EXPECT_EQ(dates, (std::vector<double>{20240104, 20240104, 20240104, 20240105, 20240105,
                                          20240105, 20240105}));
    EXPECT_TRUE(s.terminated);
    EXPECT_FALSE(s.truncated);
    EXPECT_EQ(r[kInfoShares], 0.0);
  }
}

TEST(IntradayEnv, StopFractionTerminatesWhenNetWorthFallsToIt) {
  market::Bars bars = HandBars(3, 5);
  bars.open[6] = 100, bars.close[6] = 40;  // all-in at 100 marks at 40: worth ~0.406 C0
  for (double stop : {0.5, 0.3}) {
    IntradayOptions o = HandOptions();
    o.stop_fraction = stop;
    Runner r(HandDataset(bars), o);
    r.Reset();
    const StepResult s = r.Step(1.0f, 1.0f);
    ASSERT_EQ(r[kInfoShares], 99.0);  // floor(10000 / 100.1)
    EXPECT_NEAR(r[kInfoNetWorth], 10000.0 - 9900.0 - 9.9 + 99 * 40.0, 1e-9);
    EXPECT_EQ(s.terminated, stop == 0.5) << "stop_fraction " << stop;
    EXPECT_FALSE(s.truncated);
  }
}

// ---------------------------------------------------------------------------------------
// Self-financing accounting on synthetic data

std::shared_ptr<const MarketDataset> SyntheticDataset(uint64_t seed, int days) {
  market::SynthOptions so;
  so.num_days = days;
  so.seed = seed;
  auto md = market::GenerateSynthetic(so);
  RLT_CHECK_MSG(md.ok(), md.status().ToString());
  auto ds = PrepareMarketDataset(md->symbols[0], DatasetOptions{}, DateRange{});
  RLT_CHECK_MSG(ds.ok(), ds.status().ToString());
  return ds.value();
}

TEST(IntradayEnv, AccountingIsSelfFinancingEveryStepOverRandomActions) {
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    auto ds = SyntheticDataset(seed, 8);
    const market::Bars& b = ds->bars;
    for (const char* mode : {"original", "target_position"}) {
      IntradayOptions o;
      o.action_mode = mode;
      o.cost_rate = 0.0005;
      o.fixed_cost = 1.0;
      o.max_short_value = 50000.0;
      o.episode_sessions = 3;
      o.fill = seed % 2 ? "next_open" : "next_typical";
      o.stop_fraction = 0.2;
      Runner r(ds, o, seed);
      Rng rng(seed * 100 + (mode[0] == 'o'));
      int steps = 0, flattens = 0, shorts = 0;
      for (int episode = 0; episode < 3; ++episode) {
        r.Reset();
        // The test's own ledger.
        double cash = o.initial_capital, costs = 0, mtm = 0;
        int64_t shares = 0;
        double prev_worth = r[kInfoNetWorth];
        int bar = r.bar();
        ASSERT_EQ(prev_worth, o.initial_capital);
        StepResult s;
        while (!(s.terminated || s.truncated)) {
          const float a0 = static_cast<float>(rng.Uniform(-1, 1));
          const float a1 = static_cast<float>(rng.Uniform());
          s = r.Step(a0, a1);
          ++steps;
          const int n = bar + 1;  // the bar the decision fills on
          const double fill =
              o.fill == "next_open" ? b.open[n] : (b.high[n] + b.low[n] + b.close[n]) / 3.0;
          ASSERT_EQ(r[kInfoFillPrice], fill) << "step " << steps;
          const double q = r[kInfoTradedShares];
          ASSERT_EQ(q, std::trunc(q));
          const double cost_q = q != 0 ? std::fabs(q) * fill * o.cost_rate + o.fixed_cost : 0.0;
          mtm += static_cast<double>(shares) * (fill - b.close[bar]);  // held to the fill
          shares += static_cast<int64_t>(q);
          cash -= q * fill + cost_q;
          costs += cost_q;
          mtm += static_cast<double>(shares) * (b.close[n] - fill);  // held to the close
          shorts += shares < 0;
          if (q < 0 && shares < 0) {  // a sale never shorts beyond the cap at its price
            EXPECT_LE(-static_cast<double>(shares) * fill, o.max_short_value);
          }
          if (b.last_in_session[n] && shares != 0) {  // flattened at close[n]
            const double cost_f = std::fabs(shares) * b.close[n] * o.cost_rate + o.fixed_cost;
            cash += static_cast<double>(shares) * b.close[n] - cost_f;
            costs += cost_f;
            shares = 0;
            ++flattens;
          }
          if (b.last_in_session[n]) {
            ASSERT_EQ(r[kInfoShares], 0.0);
          }
          bar = r.bar();
          const double worth = r[kInfoNetWorth];
          ASSERT_EQ(r[kInfoShares], static_cast<double>(shares)) << "step " << steps;
          ASSERT_NEAR(r[kInfoCash], cash, 1e-9 * o.initial_capital) << "step " << steps;
          ASSERT_NEAR(r[kInfoCostsPaid], costs, 1e-9 * o.initial_capital);
          ASSERT_NEAR(worth, r[kInfoCash] + r[kInfoShares] * b.close[bar],
                      1e-9 * o.initial_capital);
          ASSERT_NEAR(worth, o.initial_capital + mtm - costs, 1e-6 * o.initial_capital)
              << "step " << steps;
          ASSERT_FLOAT_EQ(s.reward, static_cast<float>((worth - prev_worth) / o.initial_capital));
          prev_worth = worth;
        }
      }
      EXPECT_GT(steps, 300);
      EXPECT_GT(flattens, 3) << mode;
      EXPECT_GT(shorts, 20) << mode;
    }
  }
}

// ---------------------------------------------------------------------------------------
// No look-ahead

struct Trajectory {
  std::vector<std::vector<float>> obs;
  std::vector<std::vector<double>> info;
  std::vector<float> reward;
  std::vector<int> done;
};

Trajectory RunActions(std::shared_ptr<const MarketDataset> ds, const IntradayOptions& o,
                      const std::vector<float>& actions, uint64_t seed) {
  Runner r(std::move(ds), o, seed);
  Trajectory tr;
  r.Reset();
  tr.obs.push_back(r.obs);
  tr.info.push_back(r.info);
  tr.reward.push_back(0.0f);
  tr.done.push_back(0);
  for (size_t i = 0; i + 1 < actions.size(); i += 2) {
    const StepResult s = r.Step(actions[i], actions[i + 1]);
    tr.obs.push_back(r.obs);
    tr.info.push_back(r.info);
    tr.reward.push_back(s.reward);
    tr.done.push_back(s.terminated * 2 + s.truncated);
    if (s.terminated || s.truncated) r.Reset();
  }
  return tr;
}

TEST(IntradayEnv, ChangingBarsAndFeaturesAfterBarTLeavesEverythingUpToBarTUnchanged) {
  auto base = SyntheticDataset(11, 6);
  IntradayOptions o;
  o.sequential = true;
  std::vector<float> actions;
  Rng rng(3);
  for (int i = 0; i < 2 * 300; ++i) actions.push_back(static_cast<float>(rng.Uniform(-1, 1)));
  for (const char* fill : {"next_open", "next_typical"}) {
    o.fill = fill;
    const Trajectory want = RunActions(base, o, actions, 5);
    // Cut at a mid-session bar, at a session's first bar and at its second-to-last bar.
    const auto& sessions = base->bars.sessions;
    for (int cut : {sessions[2].begin + 30, sessions[3].begin, sessions[3].end - 2}) {
      auto changed = std::make_shared<MarketDataset>(*base);
      market::Bars& b = changed->bars;
      for (size_t t = cut + 1; t < b.size(); ++t) {
        const double f = 1.0 + 0.05 * std::sin(static_cast<double>(t));
        b.open[t] *= f * 1.01, b.high[t] *= f * 1.02, b.low[t] *= f * 0.98, b.close[t] *= f;
      }
      auto& fm = changed->features;
      for (size_t k = (cut + 1) * fm.cols; k < fm.values.size(); ++k) fm.values[k] += 7.0f;
      const Trajectory got = RunActions(changed, o, actions, 5);
      size_t i = 0;
      for (; i < want.obs.size(); ++i) {
        ASSERT_EQ(got.obs[i], want.obs[i]) << fill << " cut " << cut << " step " << i;
        ASSERT_EQ(got.info[i], want.info[i]) << fill << " cut " << cut << " step " << i;
        ASSERT_EQ(got.reward[i], want.reward[i]) << fill << " cut " << cut << " step " << i;
        ASSERT_EQ(got.done[i], want.done[i]);
        if (static_cast<int>(want.info[i][kInfoBar]) == cut) break;
      }
      ASSERT_LT(i + 1, want.obs.size()) << "the trajectory must pass bar " << cut;
      // The very next step fills on a changed bar: the perturbation is visible there.
      EXPECT_NE(got.info[i + 1][kInfoFillPrice], want.info[i + 1][kInfoFillPrice]);
    }
  }
}

// ---------------------------------------------------------------------------------------
// pnl reward

TEST(IntradayEnv, PnlRewardIsNetWorthChangeMinusTurnoverAndDrawdownPenalties) {
  market::Bars bars = HandBars(3, 5);
  // Session 1 (bars 5-9): open/close chosen so a short loses, gains, then loses again.
  bars.open[6] = 100, bars.close[6] = 101;
  bars.open[7] = 101, bars.close[7] = 99;
  bars.open[8] = 99, bars.close[8] = 102;
  bars.open[9] = 102, bars.close[9] = 103;
  auto ds = HandDataset(bars);
  IntradayOptions plain = HandOptions();
  IntradayOptions penalised = plain;
  penalised.turnover_penalty = 0.1;
  penalised.drawdown_penalty = 2.0;
  Runner a(ds, plain), p(ds, penalised);
  a.Reset();
  p.Reset();
  const std::vector<std::pair<float, float>> actions = {{-1.0f, 0.5f}, {0.0f, 0.0f}, {-1.0f, 0.2f},
                                                        {0.0f, 0.0f},  {1.0f, 0.3f}, {0.0f, 0.0f}};
  double prev_worth = kC0, peak = kC0, prev_shares = 0;
  int bar = a.bar();
  int turnover_hits = 0, drawdown_hits = 0, drawdown_free = 0;
  for (auto [a0, a1] : actions) {
    const StepResult sa = a.Step(a0, a1);
    const StepResult sp = p.Step(a0, a1);
    ASSERT_EQ(a.info, p.info) << "penalties change the reward only";
    const double worth = a[kInfoNetWorth];
    const double pnl = (worth - prev_worth) / kC0;
    EXPECT_FLOAT_EQ(sa.reward, static_cast<float>(pnl));
    // Traded value: the decision's fill plus any flattening at the session close.
    const int n = bar + 1;
    const double q = a[kInfoTradedShares];
    double traded = std::fabs(q) * a[kInfoFillPrice];
    if (bars.last_in_session[n]) traded += std::fabs(prev_shares + q) * bars.close[n];
    const double dd_before = (peak - prev_worth) / kC0;
    peak = std::max(peak, worth);
    const double dd_now = (peak - worth) / kC0;
    const double dd_increase = std::max(0.0, dd_now - dd_before);
    EXPECT_FLOAT_EQ(sp.reward, static_cast<float>(pnl - 0.1 * traded / kC0 - 2.0 * dd_increase))
        << "bar " << n;
    turnover_hits += traded > 0;
    drawdown_hits += dd_increase > 0;
    drawdown_free += dd_increase == 0 && dd_now > 0;
    prev_worth = worth;
    prev_shares = a[kInfoShares];
    bar = a.bar();
    if (sa.terminated || sa.truncated) break;
  }
  EXPECT_GE(turnover_hits, 3);
  EXPECT_GE(drawdown_hits, 2);
  EXPECT_GE(drawdown_free, 1);  // recovering part of a drawdown is not penalised
}

TEST(IntradayEnv, ShapedRewardIsFedThisStepsFillSharesAndSessionResult) {
  // The composite formula itself is tested in intraday_reward_test.cc; here the env must
  // hand it the right quantities: worked out by hand for one session.
  market::Bars bars = HandBars(3, 5);
  IntradayOptions o = HandOptions();
  o.reward = "shaped";
  o.max_short_value = 30000.0;
  Runner r(HandDataset(bars), o);
  r.Reset();
  ShapedReward oracle;
  auto input = [&](double worth, double prev, double fill, int64_t shares, float a0,
                   ActionKind kind) {
    ShapedStepInput in;
    in.initial_capital = kC0, in.net_worth = worth, in.step_pnl = worth - prev;
    in.fill_price = fill, in.shares = shares, in.a0 = a0, in.kind = kind;
    return in;
  };
  // Bar 5 -> 6: buy at open[6] = 106: floor(5000 / 106.106) = 47 shares.
  float got = r.Step(1.0f, 0.5f).reward;
  const double cash1 = kC0 - 47 * 106.0 - 47 * 106 * 0.001;
  const double w1 = cash1 + 47 * 106.5;
  EXPECT_FLOAT_EQ(got, oracle.Step(input(w1, kC0, 106, 47, 1.0f, ActionKind::kBuy)));
  // 6 -> 7: hold (a0 = 0.1) at open[7] = 107.
  got = r.Step(0.1f).reward;
  const double w2 = cash1 + 47 * 107.5;
  EXPECT_FLOAT_EQ(got, oracle.Step(input(w2, w1, 107, 47, 0.1f, ActionKind::kHold)));
  // 7 -> 8: sell all of 47 + floor(30000 / 108) = 324 at 108: short 277 (exposure ~3 C0,
  // so the risk term is live), entered at 108.
  got = r.Step(-0.4f, 1.0f).reward;
  const double cash3 = cash1 + 324 * 108.0 - 324 * 108 * 0.001;
  const double w3 = cash3 - 277 * 108.5;
  EXPECT_FLOAT_EQ(got, oracle.Step(input(w3, w2, 108, -277, -0.4f, ActionKind::kSell)));
  // 8 -> 9 (last bar): hold at 109; the short is bought back at close 109.5. The shaped
  // input sees the position before flattening (-277) and the flattening's own pnl.
  got = r.Step(0.0f).reward;
  const double flatten_cost = 277 * 109.5 * 0.001;
  const double w4 = cash3 - 277 * 109.5 - flatten_cost;
  ShapedStepInput last = input(w4, w3, 109, -277, 0.0f, ActionKind::kHold);
  last.session_end = true;
  last.session_pnl = w4 - kC0;
  last.flatten_pnl = 277 * (108.0 - 109.5) - flatten_cost;
  EXPECT_FLOAT_EQ(got, oracle.Step(last));
  EXPECT_NEAR(r[kInfoNetWorth], w4, 1e-9);
}

// ---------------------------------------------------------------------------------------
// Determinism

TEST(IntradayEnv, SameSeedGivesTheSameTrajectory) {
  auto ds = SyntheticDataset(21, 10);
  IntradayOptions o;
  o.episode_sessions = 2;
  std::vector<float> actions;
  Rng rng(8);
  for (int i = 0; i < 2 * 600; ++i) actions.push_back(static_cast<float>(rng.Uniform(-1, 1)));
  const Trajectory a = RunActions(ds, o, actions, 7), b = RunActions(ds, o, actions, 7);
  EXPECT_EQ(a.obs, b.obs);
  EXPECT_EQ(a.info, b.info);
  EXPECT_EQ(a.reward, b.reward);
  EXPECT_EQ(a.done, b.done);
  EXPECT_GE(std::count(a.done.begin(), a.done.end(), 1), 2) << "several truncated episodes";
}

TEST(IntradayEnv, ResetDrawsTheStartSessionFromTheEnvsOwnSeededStream) {
  auto ds = HandDataset(HandBars(12, 4));  // 11 eligible sessions
  IntradayOptions o = HandOptions();
  o.sequential = false;
  auto starts = [&](Runner& r) {
    std::vector<int> s;
    for (int i = 0; i < 12; ++i) {
      r.Reset();
      s.push_back(r.bar() / 4);
    }
    return s;
  };
  Runner a(ds, o, 1), b(ds, o, 1), c(ds, o, 2);
  std::vector<int> sa, sb;
  for (int i = 0; i < 12; ++i) {  // interleaved: no shared generator
    a.Reset();
    b.Reset();
    sa.push_back(a.bar() / 4);
    sb.push_back(b.bar() / 4);
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, starts(c));
  std::sort(sa.begin(), sa.end());
  EXPECT_GE(std::unique(sa.begin(), sa.end()) - sa.begin(), 4) << "starts vary across resets";
  for (int s : sa) EXPECT_GE(s, 1);  // session 0 is not eligible
  // Reseeding replays the same starts as a fresh env with that seed.
  a.env->Seed(1);
  Runner fresh(ds, o, 1);
  EXPECT_EQ(starts(a), starts(fresh));
}

// ---------------------------------------------------------------------------------------
// Errors

TEST(IntradayEnv, CreateRejectsARangeWithoutEligibleSessionsNamingRange) {
  auto ds = HandDataset(HandBars(3, 5));
  IntradayOptions o = HandOptions();
  o.range = "2030-01-01:2030-12-31";  // no data at all
  auto empty = IntradayStockEnv::Create(ds, o);
  ASSERT_TRUE(IsError(empty, Status::Code::kInvalidArgument, "[env] range '2030-01-01"));
  o.range = "2024-01-02:2024-01-02";  // only session 0, inside the warm-up
  auto warmup = IntradayStockEnv::Create(ds, o);
  ASSERT_TRUE(IsError(warmup, Status::Code::kInvalidArgument,
                      "[env] no session in range '2024-01-02:2024-01-02'"));
  o.range = "2024-01-02:2024-01-03";  // session 1 is fine
  EXPECT_TRUE(IntradayStockEnv::Create(ds, o).ok());
}

// lot_size: orders are whole lots of lot_size shares. Worked on paper: at a
// fill of 50,000 per share (a crypto-like price) with C0 = 10,000, 0.1% costs and lots of
// 0.001, half the cash buys floor(5000 / (50 * 1.001)) = 99 lots = 0.099 shares; with
// whole shares (lot_size 1) nothing can be bought.
TEST(IntradayEnv, LotSizeTradesWholeLotsOfFractionalShares) {
  market::Bars bars = HandBars(3, 5);
  for (auto* column : {&bars.open, &bars.high, &bars.low, &bars.close}) {
    for (double& v : *column) v *= 500.0;  // ~50,000 per share
  }
  bars.open[6] = 50000, bars.close[6] = 52000;
  IntradayOptions o = HandOptions();
  {
    Runner whole(HandDataset(bars), o);
    whole.Reset();
    whole.Step(1.0f, 0.5f);
    EXPECT_EQ(whole[kInfoTradedShares], 0.0);  // one share costs more than the budget
  }
  o.lot_size = 0.001;
  Runner r(HandDataset(bars), o);
  r.Reset();
  r.Step(1.0f, 0.5f);
  EXPECT_EQ(r[kInfoFillPrice], 50000.0);  // per share
  EXPECT_DOUBLE_EQ(r[kInfoTradedShares], 0.099);
  EXPECT_DOUBLE_EQ(r[kInfoShares], 0.099);
  EXPECT_NEAR(r[kInfoCostsPaid], 0.099 * 50000 * 0.001, 1e-9);
  EXPECT_NEAR(r[kInfoCash], 10000.0 - 0.099 * 50000 * 1.001, 1e-9);
  EXPECT_NEAR(r[kInfoNetWorth], 10000.0 - 0.099 * 50000 * 1.001 + 0.099 * 52000, 1e-9);
  EXPECT_NEAR(r[kInfoUnrealizedPnl], 0.099 * (52000 - 50000), 1e-9);
  // Position fraction in the observation: 0.099 x 52000 / net worth.
  const double worth = r[kInfoNetWorth];
  EXPECT_NEAR(r.obs[3 * 2], 0.099 * 52000 / worth, 1e-6);
}

// Scaling property: a lot of L shares at price P is one share at price L x P, so an env
// with lot_size L over prices P keeps exactly the books (cash, net worth, costs, rewards)
// of an env with whole shares over prices L x P, step by step, in both action modes.
TEST(IntradayEnv, LotSizeIsEquivalentToWholeSharesAtScaledPrices) {
  const double lot = 0.25;  // a power of two: prices scale exactly
  auto ds = SyntheticDataset(5, 6);
  market::Bars scaled = ds->bars;
  for (auto* column : {&scaled.open, &scaled.high, &scaled.low, &scaled.close}) {
    for (double& v : *column) v *= lot;
  }
  auto ds_scaled = std::make_shared<MarketDataset>(*ds);
  ds_scaled->bars = std::move(scaled);
  for (const char* mode : {"original", "target_position"}) {
    IntradayOptions o;
    o.action_mode = mode;
    o.cost_rate = 0.0005;
    o.fixed_cost = 1.0;
    o.initial_capital = 5000.0;
    o.sequential = true;
    o.stop_fraction = 0.0;
    IntradayOptions lots = o;
    lots.lot_size = lot;
    Runner a(ds, lots), b(ds_scaled, o);
    a.Reset();
    b.Reset();
    Rng rng(11);
    for (int step = 0; step < 300; ++step) {
      const float a0 = static_cast<float>(rng.Uniform() * 2.0 - 1.0);
      const float a1 = static_cast<float>(rng.Uniform());
      const StepResult ra = a.Step(a0, a1), rb = b.Step(a0, a1);
      ASSERT_EQ(ra.reward, rb.reward) << mode << " step " << step;
      ASSERT_EQ(a[kInfoCash], b[kInfoCash]) << mode << " step " << step;
      ASSERT_EQ(a[kInfoNetWorth], b[kInfoNetWorth]) << mode << " step " << step;
      ASSERT_EQ(a[kInfoCostsPaid], b[kInfoCostsPaid]);
      ASSERT_EQ(a[kInfoShares], b[kInfoShares] * lot);
      ASSERT_EQ(a[kInfoFillPrice] * lot, b[kInfoFillPrice]);
      ASSERT_EQ(a.obs, b.obs) << mode << " step " << step;
      if (ra.terminated || ra.truncated) break;
    }
  }
}

TEST(IntradayEnv, LotSizeMustBePositiveAndBounded) {
  for (double bad : {0.0, -1.0, 2e9, std::numeric_limits<double>::quiet_NaN()}) {
    IntradayOptions o = HandOptions();
    o.lot_size = bad;
    auto created = IntradayStockEnv::Create(HandDataset(HandBars(3, 5)), o);
    ASSERT_TRUE(IsError(created, Status::Code::kInvalidArgument, "[env] lot_size must be > 0"))
        << bad;
  }
}

// Found by fuzz/config_fuzz: initial_capital = 1e300 in target_position mode made
// OrderQuantity convert 9.8e297 shares to int64_t (undefined behaviour). Create now bounds
// initial_capital, and share counts are clamped to 2^53 whatever the prices.
TEST(IntradayEnv, AbsurdCapitalIsRefusedAndShareCountsStayInRange) {
  IntradayOptions o = HandOptions();
  o.action_mode = "target_position";
  o.initial_capital = 1e300;
  auto bad = IntradayStockEnv::Create(HandDataset(HandBars(3, 5)), o);
  ASSERT_TRUE(IsError(bad, Status::Code::kInvalidArgument, "[env] initial_capital"));
  market::Bars tiny = HandBars(3, 5);  // prices of ~1e-298: 1e15 buys "infinitely" many
  for (auto* column : {&tiny.open, &tiny.high, &tiny.low, &tiny.close}) {
    for (double& v : *column) v *= 1e-300;
  }
  o.initial_capital = 1e15;
  Runner r(HandDataset(std::move(tiny)), o);
  r.Reset();
  r.Step(1.0f);
  EXPECT_GT(r[kInfoShares], 0);
  EXPECT_LE(r[kInfoShares], 9007199254740992.0);  // 2^53
}

TEST(IntradayEnv, MakeIntradayEnvNamesTheNearestKeyForAnUnknownSetting) {
  auto ds = HandDataset(HandBars(3, 5));
  auto bad = MakeIntradayEnv({{"nlag", "3"}}, ds);
  ASSERT_TRUE(
      IsError(bad, Status::Code::kInvalidArgument, "unknown key 'nlag'; did you mean 'nlags'"));
  bad = MakeIntradayEnv({{"cost_rat", "0.001"}}, ds);
  ASSERT_TRUE(IsError(bad, Status::Code::kInvalidArgument,
                      "unknown key 'cost_rat'; did you mean 'cost_rate'"));
  bad = MakeIntradayEnv({{"fill", "next_close"}}, ds);
  ASSERT_TRUE(IsError(bad, Status::Code::kInvalidArgument, "'fill' = 'next_close'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("next_typical"));
  auto good = MakeIntradayEnv({{"nlags", "2"}, {"action_mode", "target_position"}}, ds);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good.value()->spec().obs_dim, 3 * 2 + 3);
  EXPECT_EQ(good.value()->spec().action.dim, 1);
}

}  // namespace
}  // namespace rlt::env
