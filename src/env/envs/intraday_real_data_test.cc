// The intraday environment on the real intraday files of ../shared/data (skipped when
// that folder is absent): NSE 5-minute bars with +05:30 offsets and SPY 1-minute bars
// with naive New York times, extended hours. Checks that sessions, warm-up and
// accounting hold on real data, not only on the synthetic market.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/rng.h"
#include "env/envs/intraday.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "market/csv.h"

namespace rlt::env {
namespace {

struct RealFile {
  const char* path;
  const char* timezone;
  int min_sessions;
};

class IntradayOnRealData : public ::testing::TestWithParam<RealFile> {};

TEST_P(IntradayOnRealData, RunsWholeRangeWithExactAccounting) {
  const std::string path = std::string(RLT_SHARED_DIR) + "/data/intraday/" + GetParam().path;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  market::CsvReadOptions ro;
  ro.timezone = GetParam().timezone;
  auto md = market::ReadBarsCsv(path, ro);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  ASSERT_EQ(md->symbols.size(), 1u);
  market::Bars bars = md->symbols.front();
  ASSERT_GE(static_cast<int>(bars.sessions.size()), GetParam().min_sessions);
  DatasetOptions dopt;
  dopt.preset = "fast22";
  const DateRange train{bars.sessions.front().date, bars.sessions[bars.sessions.size() / 2].date};
  auto data = PrepareMarketDataset(bars, dopt, train);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EnvContext ctx;
  ctx.market = *data;
  // Target exposure that changes rarely (a policy that trades every bar at random would
  // lose its capital to costs long before the data ends).
  ctx.settings = {
      {"sequential", "true"}, {"stop_fraction", "0"}, {"action_mode", "target_position"}};
  auto envs = MakeEnvs("intraday", ctx, 1);
  ASSERT_TRUE(envs.ok()) << envs.status().ToString();
  VecEnv vec(std::move(envs).value(), 1);
  vec.Reset(1);
  Rng rng(9);
  int64_t steps = 0;
  double costs_seen = 0;
  float target = 0.0f;
  for (;;) {
    if (rng.Bernoulli(0.05)) target = static_cast<float>(rng.Uniform(-1, 1));
    vec.Step(&target);
    ++steps;
    const double* info = vec.done(0) ? vec.terminal_info() : vec.info();
    const int64_t bar = static_cast<int64_t>(info[kInfoBar]);
    const double close = (*data)->bars.close[bar];
    // Net worth = cash + shares x close, and = capital + realised + unrealised - costs.
    ASSERT_NEAR(info[kInfoNetWorth], info[kInfoCash] + info[kInfoShares] * close, 1e-6);
    ASSERT_NEAR(info[kInfoNetWorth],
                100000.0 + info[kInfoRealizedPnl] + info[kInfoUnrealizedPnl] - info[kInfoCostsPaid],
                1e-6);
    if ((*data)->bars.last_in_session[bar]) {
      ASSERT_EQ(info[kInfoShares], 0.0);  // flat at every close
    }
    costs_seen = info[kInfoCostsPaid];
    if (vec.done(0)) {
      EXPECT_TRUE(vec.terminated()[0]);
      EXPECT_GT(info[kInfoNetWorth], 0.0);
      EXPECT_EQ(info[kInfoSessionDate], (*data)->bars.sessions.back().date);
      break;
    }
  }
  // Every eligible session walked: one step per bar except each session's last bar.
  int64_t expected_steps = 0;
  const auto& ds = **data;
  for (const auto& s : ds.bars.sessions) {
    if (s.begin >= ds.features.first_valid + 5 && s.size() >= 2) expected_steps += s.size() - 1;
  }
  EXPECT_EQ(steps, expected_steps);
  EXPECT_GT(costs_seen, 0.0);
}

INSTANTIATE_TEST_SUITE_P(SharedData, IntradayOnRealData,
                         ::testing::Values(RealFile{"NSE_BPCL_5min_2023-07-03_2024-06-28_clean.csv",
                                                    "Asia/Kolkata", 247},
                                           RealFile{"SPY_1min_2025-07-01_2025-07-30_ext_hours.csv",
                                                    "America/New_York", 21}));

}  // namespace
}  // namespace rlt::env
