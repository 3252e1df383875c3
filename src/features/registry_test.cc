// Tests for registry.h.
#include "features/registry.h"

#include <gtest/gtest.h>

#include <cmath>

#include "features/indicators.h"
#include "features/test_util.h"

namespace rlt::features {
namespace {

TEST(Registry, ListsEveryTalibStyleName) {
  const std::vector<std::string> expected = {
      "adx",      "adxr", "atr",     "bbands", "cci", "dx",     "ema",   "macd",
      "minus_di", "natr", "plus_di", "rsi",    "sma", "stddev", "stoch", "willr"};
  EXPECT_EQ(IndicatorNames(), expected);
}

TEST(Registry, DefaultsAreTalibs) {
  const market::Bars bars = testing::TalibBars();
  Result<IndicatorResult> macd = ComputeIndicator(bars, "macd", {});
  ASSERT_TRUE(macd.ok());
  EXPECT_EQ(macd->output_names, (std::vector<std::string>{"macd", "macdsignal", "macdhist"}));
  EXPECT_EQ(macd->lookback, 33);
  EXPECT_NEAR(macd->outputs[0][33], -1.9738, 0.01);  // talib_expected.csv
  Result<IndicatorResult> stoch = ComputeIndicator(bars, "stoch", {});
  ASSERT_TRUE(stoch.ok());
  EXPECT_EQ(stoch->lookback, 8);
  EXPECT_EQ(stoch->output_names, (std::vector<std::string>{"slowk", "slowd"}));
  Result<IndicatorResult> sma = ComputeIndicator(bars, "sma", {});
  ASSERT_TRUE(sma.ok());
  EXPECT_EQ(sma->params[0], (std::pair<std::string, double>{"period", 30}));
  EXPECT_NEAR(sma->outputs[0][29], 90.42, 0.01);
}

TEST(Registry, NbdevSetsBothBandsAndExplicitOnesWin) {
  const market::Bars bars = testing::TalibBars();
  Result<IndicatorResult> bb =
      ComputeIndicator(bars, "bbands", {{"period", "20"}, {"nbdev", "2"}, {"nbdevdn", "1"}});
  ASSERT_TRUE(bb.ok()) << bb.status().ToString();
  EXPECT_EQ(bb->output_names, (std::vector<std::string>{"upperband", "middleband", "lowerband"}));
  EXPECT_NEAR(bb->outputs[0][19], 98.0734, 0.01);
  const double sd = (bb->outputs[0][19] - bb->outputs[1][19]) / 2;
  EXPECT_NEAR(bb->outputs[2][19], bb->outputs[1][19] - sd, 1e-9);
}

TEST(Registry, ErrorsNameTheValidChoicesAndTheNearest) {
  const market::Bars bars = testing::TalibBars();
  Result<IndicatorResult> r = ComputeIndicator(bars, "rsl", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("did you mean 'rsi'"), std::string::npos);
  EXPECT_NE(r.status().message().find("willr"), std::string::npos);
  r = ComputeIndicator(bars, "bbands", {{"nbdevup_", "2"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("did you mean 'nbdevup'"), std::string::npos);
  EXPECT_FALSE(ComputeIndicator(bars, "sma", {{"period", "1"}}).ok());    // TA-Lib: >= 2
  EXPECT_FALSE(ComputeIndicator(bars, "sma", {{"period", "2.5"}}).ok());  // integer
  EXPECT_FALSE(ComputeIndicator(bars, "sma", {{"period", "abc"}}).ok());
}

TEST(Registry, ParsesKeyValueItems) {
  Result<std::map<std::string, std::string>> p = ParseParams({"period=20", "nbdev=1.5"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->at("nbdev"), "1.5");
  EXPECT_FALSE(ParseParams({"period"}).ok());
  EXPECT_FALSE(ParseParams({"period=1", "period=2"}).ok());
}

TEST(Registry, EveryIndicatorStartsAtItsLookback) {
  const market::Bars bars = testing::RandomBars(200, 200, 3);
  for (const std::string& name : IndicatorNames()) {
    Result<IndicatorResult> r = ComputeIndicator(bars, name, {});
    ASSERT_TRUE(r.ok()) << name;
    for (const auto& out : r->outputs) {
      ASSERT_EQ(out.size(), bars.size());
      EXPECT_TRUE(std::isnan(out[r->lookback - 1])) << name;
      EXPECT_TRUE(std::isfinite(out[r->lookback])) << name;
    }
  }
}

}  // namespace
}  // namespace rlt::features
