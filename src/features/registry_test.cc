// Tests for registry.h.
#include "features/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "core/status_test_util.h"
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

// Every registered indicator carries its plain-loop reference; the fast kernel agrees
// with it on random bars at the default parameters and at shortened periods. A new
// indicator is covered by being registered, not by being added to a list here.
void ExpectFastMatchesReference(const market::Bars& bars, const std::string& name,
                                const std::map<std::string, std::string>& params) {
  Result<IndicatorResult> fast = ComputeIndicator(bars, name, params, Implementation::kFast);
  Result<IndicatorResult> ref = ComputeIndicator(bars, name, params, Implementation::kReference);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ASSERT_EQ(fast->outputs.size(), ref->outputs.size()) << name;
  int defined = 0;
  for (size_t k = 0; k < fast->outputs.size(); ++k) {
    ASSERT_EQ(fast->outputs[k].size(), bars.size()) << name;
    for (size_t t = 0; t < bars.size(); ++t) {
      const double f = fast->outputs[k][t], r = ref->outputs[k][t];
      ASSERT_EQ(std::isnan(f), std::isnan(r)) << name << "[" << k << "] t=" << t;
      ASSERT_EQ(std::isnan(f), static_cast<int>(t) < fast->lookback) << name << " t=" << t;
      if (std::isnan(f)) continue;
      ++defined;
      ASSERT_NEAR(f, r, 1e-9 * std::max(1.0, std::fabs(r))) << name << "[" << k << "] t=" << t;
    }
  }
  EXPECT_GT(defined, 0) << name << " never produced a value";
}

TEST(Registry, EveryIndicatorsFastKernelMatchesItsReference) {
  const market::Bars bars = testing::RandomBars(300, 75, /*seed=*/11);
  for (const IndicatorSpec& spec : IndicatorSpecs()) {
    SCOPED_TRACE(spec.name);
    ExpectFastMatchesReference(bars, spec.name, {});
    std::map<std::string, std::string> shorter;  // every integer parameter at its minimum + 1
    for (const ParamSpec& p : spec.params) {
      if (p.integer) shorter[p.name] = std::to_string(static_cast<int>(p.min_value) + 1);
    }
    ExpectFastMatchesReference(bars, spec.name, shorter);
  }
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
  ASSERT_TRUE(IsError(r, Status::Code::kNotFound, "unknown indicator 'rsl'"));
  EXPECT_NE(r.status().message().find("did you mean 'rsi'"), std::string::npos);
  EXPECT_NE(r.status().message().find("willr"), std::string::npos);
  r = ComputeIndicator(bars, "bbands", {{"nbdevup_", "2"}});
  ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "has no parameter 'nbdevup_'"));
  EXPECT_NE(r.status().message().find("did you mean 'nbdevup'"), std::string::npos);
  EXPECT_TRUE(IsError(ComputeIndicator(bars, "sma", {{"period", "1"}}),
                      Status::Code::kInvalidArgument,
                      "parameter 'period' = 1.000000 is outside [2.000000"));  // TA-Lib: >= 2
  EXPECT_TRUE(IsError(ComputeIndicator(bars, "sma", {{"period", "2.5"}}),
                      Status::Code::kInvalidArgument,
                      "parameter 'period' must be an integer, got 2.5"));  // integer
  EXPECT_TRUE(IsError(ComputeIndicator(bars, "sma", {{"period", "abc"}}),
                      Status::Code::kInvalidArgument,
                      "parameter 'period' needs a finite decimal number, got 'abc'"));
  // Decimal only (strtod would read 0x10 as 16).
  for (const char* text : {"0x10", "0X10", " 16", "16 ", "1e400", "nan"}) {
    const Result<IndicatorResult> bad = ComputeIndicator(bars, "sma", {{"period", text}});
    ASSERT_TRUE(IsError(
        bad, Status::Code::kInvalidArgument,
        "sma: parameter 'period' needs a finite decimal number, got '" + std::string(text) + "'"))
        << text;
  }
  EXPECT_TRUE(ComputeIndicator(bars, "sma", {{"period", "16"}}).ok());
}

TEST(Registry, ParsesKeyValueItems) {
  Result<std::map<std::string, std::string>> p = ParseParams({"period=20", "nbdev=1.5"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->at("nbdev"), "1.5");
  EXPECT_TRUE(IsError(ParseParams({"period"}), Status::Code::kInvalidArgument,
                      "parameter 'period' is not KEY=VALUE"));
  EXPECT_TRUE(IsError(ParseParams({"period=1", "period=2"}), Status::Code::kInvalidArgument,
                      "parameter 'period' given twice"));
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
