// Tests for presets.h and session_features.h.
#include "features/presets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/status_test_util.h"
#include "features/indicators.h"
#include "features/session_features.h"
#include "features/test_util.h"

namespace rlt::features {
namespace {

TEST(Presets, Fast22HasExactlyTheDocumentedColumnsInOrder) {
  const std::vector<std::string> expected = {"hl",
                                             "co",
                                             "volume",
                                             "sma5",
                                             "price_vs_sma5",
                                             "sma10",
                                             "price_vs_sma10",
                                             "sma20",
                                             "price_vs_sma20",
                                             "rsi14",
                                             "lret1",
                                             "lret2",
                                             "lret3",
                                             "lret5",
                                             "lret7",
                                             "volatility20",
                                             "volume_sma20",
                                             "volume_ratio",
                                             "bb_upper",
                                             "bb_lower",
                                             "bb_middle",
                                             "bb_position"};
  Result<std::vector<std::string>> cols = PresetColumns("fast22");
  ASSERT_TRUE(cols.ok());
  EXPECT_EQ(*cols, expected);
}

TEST(Presets, Fast22ValuesMatchTheIndicatorsAndTalib) {
  const market::Bars bars = testing::TalibBars();
  Result<FeatureMatrix> m = ComputeFeatures(bars, "fast22");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->rows, 252);
  EXPECT_EQ(m->cols, 22);
  EXPECT_EQ(m->first_valid, 19);
  EXPECT_TRUE(std::isnan(m->at(18, 0)));  // whole warm-up rows are blank
  // BBANDS(20,2,2) at bar 19 from TA-Lib's regression table (talib_expected.csv).
  EXPECT_NEAR(m->at(19, 18), 98.0734, 0.01);
  EXPECT_NEAR(m->at(19, 20), 92.8910, 0.01);
  EXPECT_NEAR(m->at(19, 19), 87.7086, 0.01);
  const std::vector<double> rsi = Rsi(bars.close, {14});
  const std::vector<double> sd = Stddev(bars.close, {20, 1});
  for (int64_t t = m->first_valid; t < m->rows; ++t) {
    EXPECT_FLOAT_EQ(m->at(t, 0), static_cast<float>(bars.high[t] - bars.low[t]));
    EXPECT_FLOAT_EQ(m->at(t, 9), static_cast<float>(rsi[t]));
    EXPECT_FLOAT_EQ(m->at(t, 10), static_cast<float>(std::log(bars.close[t] / bars.close[t - 1])));
    // upper = mid + 2 sd, each stored as float (half an ulp each) and prices near 100:
    // relative to the terms' magnitudes, not an absolute bound.
    const double upper = m->at(t, 18), mid = m->at(t, 20), two_sd = 2 * m->at(t, 15);
    EXPECT_NEAR(upper, mid + two_sd,
                2 * std::numeric_limits<float>::epsilon() *
                    (std::fabs(upper) + std::fabs(mid) + std::fabs(two_sd)));
    EXPECT_FLOAT_EQ(m->at(t, 15), static_cast<float>(sd[t]));
  }
}

TEST(Presets, ScaledIsFiniteAfterWarmupAndScaleFree) {
  market::Bars bars = testing::RandomBars(300, 60, 5);
  Result<FeatureMatrix> m = ComputeFeatures(bars, "scaled");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->cols, 24);
  EXPECT_EQ(m->first_valid, 49);
  for (int64_t t = m->first_valid; t < m->rows; ++t) {
    for (int64_t j = 0; j < m->cols; ++j) ASSERT_TRUE(std::isfinite(m->at(t, j)));
  }
  // Scaling every price by 7 (and volume by 3) leaves every feature unchanged.
  market::Bars scaled = bars;
  for (size_t i = 0; i < bars.size(); ++i) {
    scaled.open[i] *= 7, scaled.high[i] *= 7, scaled.low[i] *= 7, scaled.close[i] *= 7;
  }
  Result<FeatureMatrix> s = ComputeFeatures(scaled, "scaled");
  ASSERT_TRUE(s.ok());
  for (int64_t t = m->first_valid; t < m->rows; ++t) {
    for (int64_t j = 0; j < m->cols; ++j) {
      ASSERT_NEAR(s->at(t, j), m->at(t, j), 1e-4 * (1 + std::fabs(m->at(t, j))))
          << m->names[j] << " t=" << t;
    }
  }
}

TEST(Presets, UnknownPresetNamesTheValidOnes) {
  Result<FeatureMatrix> m = ComputeFeatures(testing::RandomBars(10, 10, 1), "fast2");
  ASSERT_TRUE(IsError(m, Status::Code::kNotFound, "did you mean 'fast22'"));
  EXPECT_NE(m.status().message().find("scaled"), std::string::npos);
}

TEST(Presets, BarsWithoutSessionsAreRejected) {
  market::Bars bars = testing::RandomBars(10, 10, 1);
  bars.bar_in_session.clear();
  EXPECT_TRUE(IsError(ComputeFeatures(bars, "fast22"), Status::Code::kInvalidArgument,
                      "bars of symbol 'RND' have no sessions assigned"));
}

TEST(SessionFeatures, FastAgreesWithReferenceAndRestartsEachSession) {
  market::Bars bars = testing::RandomBars(250, 50, 9);
  for (size_t t = 100; t < 104; ++t) bars.volume[t] = 0.0;  // session start without volume
  const SessionFeatures fast = ComputeSessionFeatures(bars);
  const SessionFeatures ref = reference::ComputeSessionFeatures(bars);
  for (size_t t = 0; t < bars.size(); ++t) {
    EXPECT_NEAR(fast.return_since_open[t], ref.return_since_open[t], 1e-12);
    EXPECT_EQ(fast.bars_since_open[t], ref.bars_since_open[t]);
    EXPECT_NEAR(fast.vwap_distance[t], ref.vwap_distance[t], 1e-12);
  }
  // First bar of a session: return since open = close/open - 1; VWAP = typical price.
  const size_t t = 100;
  EXPECT_DOUBLE_EQ(fast.return_since_open[t], bars.close[t] / bars.open[t] - 1.0);
  EXPECT_EQ(fast.bars_since_open[t], 0.0);
  const double tp = (bars.high[t] + bars.low[t] + bars.close[t]) / 3.0;
  EXPECT_DOUBLE_EQ(fast.vwap_distance[t], bars.close[t] / tp - 1.0);
  EXPECT_EQ(fast.bars_since_open[t + 3], 3.0);
}

}  // namespace
}  // namespace rlt::features
