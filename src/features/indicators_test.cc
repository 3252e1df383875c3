// Tests for indicators.h: the fast kernels agree with the plain-loop references
// (reference.h) on random data and on TA-Lib's bars, and both reproduce every published
// TA-Lib regression value in tests/fixtures/talib_expected.csv within 0.01.
#include "features/indicators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "features/reference.h"
#include "features/test_util.h"

namespace rlt::features {
namespace {

using Outputs = std::vector<std::vector<double>>;
// One indicator evaluated by either implementation on one bar series.
using Evaluator = std::function<Outputs(const market::Bars&, bool fast)>;

struct Case {
  std::string name;
  Evaluator eval;
  int lookback;  // expected first defined output
};

#define RLT_HLC b.high, b.low, b.close
std::vector<Case> Cases() {
  namespace ref = reference;
  std::vector<Case> c;
  c.push_back(
      {"sma30",
       [](auto& b, bool f) { return Outputs{f ? Sma(b.close, {30}) : ref::Sma(b.close, {30})}; },
       29});
  c.push_back(
      {"sma1",
       [](auto& b, bool f) { return Outputs{f ? Sma(b.close, {1}) : ref::Sma(b.close, {1})}; }, 0});
  c.push_back(
      {"ema10",
       [](auto& b, bool f) { return Outputs{f ? Ema(b.close, {10}) : ref::Ema(b.close, {10})}; },
       9});
  c.push_back({"macd",
               [](auto& b, bool f) {
                 MacdOutput m = f ? Macd(b.close, {}) : ref::Macd(b.close, {});
                 return Outputs{m.macd, m.signal, m.hist};
               },
               33});
  c.push_back({"macd_swapped",
               [](auto& b, bool f) {
                 MacdOutput m = f ? Macd(b.close, {20, 5, 4}) : ref::Macd(b.close, {20, 5, 4});
                 return Outputs{m.macd, m.signal, m.hist};
               },
               22});
  c.push_back(
      {"rsi14",
       [](auto& b, bool f) { return Outputs{f ? Rsi(b.close, {14}) : ref::Rsi(b.close, {14})}; },
       14});
  c.push_back({"stddev20",
               [](auto& b, bool f) {
                 return Outputs{f ? Stddev(b.close, {20, 1.5}) : ref::Stddev(b.close, {20, 1.5})};
               },
               19});
  c.push_back(
      {"bbands",
       [](auto& b, bool f) {
         BbandsOutput o = f ? Bbands(b.close, {20, 2, 1.5}) : ref::Bbands(b.close, {20, 2, 1.5});
         return Outputs{o.upper, o.middle, o.lower, o.width, o.percent_b};
       },
       19});
  c.push_back({"lret3",
               [](auto& b, bool f) {
                 return Outputs{f ? LogReturn(b.close, {3}) : ref::LogReturn(b.close, {3})};
               },
               3});
  c.push_back({"price_vs_sma10",
               [](auto& b, bool f) {
                 return Outputs{f ? PriceVsSma(b.close, {10}) : ref::PriceVsSma(b.close, {10})};
               },
               9});
  c.push_back({"volume_ratio20",
               [](auto& b, bool f) {
                 return Outputs{f ? VolumeRatio(b.volume, {20}) : ref::VolumeRatio(b.volume, {20})};
               },
               19});
  c.push_back(
      {"trange",
       [](auto& b, bool f) { return Outputs{f ? TrueRange(RLT_HLC) : ref::TrueRange(RLT_HLC)}; },
       1});
  c.push_back(
      {"atr14",
       [](auto& b, bool f) { return Outputs{f ? Atr(RLT_HLC, {14}) : ref::Atr(RLT_HLC, {14})}; },
       14});
  c.push_back(
      {"natr14",
       [](auto& b, bool f) { return Outputs{f ? Natr(RLT_HLC, {14}) : ref::Natr(RLT_HLC, {14})}; },
       14});
  c.push_back({"stoch",
               [](auto& b, bool f) {
                 StochOutput s = f ? Stoch(RLT_HLC, {}) : ref::Stoch(RLT_HLC, {});
                 return Outputs{s.slowk, s.slowd};
               },
               8});
  c.push_back({"willr14",
               [](auto& b, bool f) {
                 return Outputs{f ? Willr(RLT_HLC, {14}) : ref::Willr(RLT_HLC, {14})};
               },
               13});
  c.push_back(
      {"cci11",
       [](auto& b, bool f) { return Outputs{f ? Cci(RLT_HLC, {11}) : ref::Cci(RLT_HLC, {11})}; },
       10});
  c.push_back({"plus_di14",
               [](auto& b, bool f) {
                 return Outputs{f ? PlusDi(RLT_HLC, {14}) : ref::PlusDi(RLT_HLC, {14})};
               },
               14});
  c.push_back({"minus_di14",
               [](auto& b, bool f) {
                 return Outputs{f ? MinusDi(RLT_HLC, {14}) : ref::MinusDi(RLT_HLC, {14})};
               },
               14});
  c.push_back(
      {"dx14",
       [](auto& b, bool f) { return Outputs{f ? Dx(RLT_HLC, {14}) : ref::Dx(RLT_HLC, {14})}; },
       14});
  c.push_back(
      {"adx14",
       [](auto& b, bool f) { return Outputs{f ? Adx(RLT_HLC, {14}) : ref::Adx(RLT_HLC, {14})}; },
       27});
  c.push_back(
      {"adxr5",
       [](auto& b, bool f) { return Outputs{f ? Adxr(RLT_HLC, {5}) : ref::Adxr(RLT_HLC, {5})}; },
       13});
  return c;
}
#undef RLT_HLC

void ExpectAgreement(const market::Bars& bars, const std::string& data_name) {
  for (const Case& c : Cases()) {
    const Outputs fast = c.eval(bars, true);
    const Outputs ref = c.eval(bars, false);
    ASSERT_EQ(fast.size(), ref.size()) << c.name;
    for (size_t k = 0; k < fast.size(); ++k) {
      ASSERT_EQ(fast[k].size(), bars.size()) << c.name;
      for (size_t t = 0; t < bars.size(); ++t) {
        const bool defined = static_cast<int>(t) >= c.lookback;
        ASSERT_EQ(std::isnan(fast[k][t]), !defined) << c.name << "[" << k << "] t=" << t;
        ASSERT_EQ(std::isnan(ref[k][t]), !defined) << c.name << "[" << k << "] t=" << t;
        if (!defined) continue;
        const double tol = 1e-9 * std::max(1.0, std::fabs(ref[k][t]));
        ASSERT_NEAR(fast[k][t], ref[k][t], tol)
            << data_name << " " << c.name << "[" << k << "] t=" << t;
      }
    }
  }
}

TEST(Indicators, FastAgreesWithReferenceOnRandomBars) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    ExpectAgreement(testing::RandomBars(400, 60, seed), "random" + std::to_string(seed));
  }
}

TEST(Indicators, FastAgreesWithReferenceOnTalibBars) {
  ExpectAgreement(testing::TalibBars(), "talib");
}

TEST(Indicators, FastAgreesWithReferenceOnFlatStretches) {
  // Degenerate windows: constant prices make every range, deviation and DM sum zero.
  market::Bars bars = testing::RandomBars(300, 300, 7);
  for (size_t t = 100; t < 180; ++t) {
    bars.open[t] = bars.high[t] = bars.low[t] = bars.close[t] = 50.0;
    bars.volume[t] = 0.0;
  }
  ExpectAgreement(bars, "flat");
}

// Evaluates the series named by an oracle row (indicator, params, output).
std::vector<double> OracleSeries(const market::Bars& b, const std::string& indicator,
                                 const std::string& params, const std::string& output, bool fast) {
  namespace ref = reference;
  const int period = std::atoi(params.c_str());
  if (indicator == "SMA") return fast ? Sma(b.close, {period}) : ref::Sma(b.close, {period});
  if (indicator == "EMA") return fast ? Ema(b.close, {period}) : ref::Ema(b.close, {period});
  if (indicator == "RSI") return fast ? Rsi(b.close, {period}) : ref::Rsi(b.close, {period});
  if (indicator == "MACD") {
    int f = 0, s = 0, g = 0;
    EXPECT_EQ(std::sscanf(params.c_str(), "%d-%d-%d", &f, &s, &g), 3);
    MacdOutput m = fast ? Macd(b.close, {f, s, g}) : ref::Macd(b.close, {f, s, g});
    return output == "macd" ? m.macd : output == "signal" ? m.signal : m.hist;
  }
  if (indicator == "BBANDS") {
    int n = 0;
    double up = 0, dn = 0;
    EXPECT_EQ(std::sscanf(params.c_str(), "%d-%lf-%lf", &n, &up, &dn), 3);
    BbandsOutput o = fast ? Bbands(b.close, {n, up, dn}) : ref::Bbands(b.close, {n, up, dn});
    return output == "upper" ? o.upper : output == "middle" ? o.middle : o.lower;
  }
  const std::span<const double> h = b.high, l = b.low, c = b.close;
  if (indicator == "CCI") return fast ? Cci(h, l, c, {period}) : ref::Cci(h, l, c, {period});
  if (indicator == "ATR") return fast ? Atr(h, l, c, {period}) : ref::Atr(h, l, c, {period});
  if (indicator == "NATR") return fast ? Natr(h, l, c, {period}) : ref::Natr(h, l, c, {period});
  if (indicator == "WILLR") return fast ? Willr(h, l, c, {period}) : ref::Willr(h, l, c, {period});
  if (indicator == "PLUS_DI") {
    return fast ? PlusDi(h, l, c, {period}) : ref::PlusDi(h, l, c, {period});
  }
  if (indicator == "MINUS_DI") {
    return fast ? MinusDi(h, l, c, {period}) : ref::MinusDi(h, l, c, {period});
  }
  if (indicator == "DX") return fast ? Dx(h, l, c, {period}) : ref::Dx(h, l, c, {period});
  if (indicator == "ADX") return fast ? Adx(h, l, c, {period}) : ref::Adx(h, l, c, {period});
  if (indicator == "ADXR") return fast ? Adxr(h, l, c, {period}) : ref::Adxr(h, l, c, {period});
  if (indicator == "STOCH") {
    int k = 0, sk = 0, sd = 0;
    EXPECT_EQ(std::sscanf(params.c_str(), "%d-%d-%d", &k, &sk, &sd), 3);
    const StochOutput s = fast ? Stoch(h, l, c, {k, sk, sd}) : ref::Stoch(h, l, c, {k, sk, sd});
    return output == "slowk" ? s.slowk : s.slowd;
  }
  if (indicator == "STDDEV") {
    int n = 0;
    double dev = 0;
    EXPECT_EQ(std::sscanf(params.c_str(), "%d-%lf", &n, &dev), 2);
    return fast ? Stddev(b.close, {n, dev}) : ref::Stddev(b.close, {n, dev});
  }
  ADD_FAILURE() << "oracle row for an indicator this test does not know: " << indicator;
  return {};
}

TEST(Indicators, ReproduceEveryTalibRegressionValue) {
  const market::Bars bars = testing::TalibBars();
  ASSERT_EQ(bars.size(), 252u);
  auto rows = testing::ReadCsvRows(testing::FixturePath("talib_expected.csv"));
  ASSERT_GE(rows.size(), 46u);
  // STOCH and STDDEV rows from TA-Lib's test_stoch.c / test_stddev.c (provenance in the file).
  const auto more = testing::ReadCsvRows(testing::FixturePath("talib_expected_stoch_stddev.csv"));
  ASSERT_EQ(more.size(), 14u);
  rows.insert(rows.end(), more.begin(), more.end());
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 5u);
    const size_t bar = std::stoul(row[3]);
    const double expected = std::stod(row[4]);
    for (bool fast : {true, false}) {
      const std::vector<double> series = OracleSeries(bars, row[0], row[1], row[2], fast);
      ASSERT_LT(bar, series.size());
      EXPECT_NEAR(series[bar], expected, 0.01)
          << row[0] << "(" << row[1] << ")." << row[2] << " at bar " << bar
          << (fast ? " [fast]" : " [reference]");
    }
  }
}

TEST(Indicators, FirstOutputsSitAtTalibLookbacks) {
  EXPECT_EQ(MacdLookback({}), 33);
  EXPECT_EQ(StochLookback({}), 8);
  EXPECT_EQ(AdxLookback({14}), 27);
  EXPECT_EQ(AdxrLookback({14}), 40);
  EXPECT_EQ(RsiLookback({14}), 14);
  EXPECT_EQ(AtrLookback({14}), 14);
  const market::Bars bars = testing::TalibBars();
  const MacdOutput m = Macd(bars.close, {});
  EXPECT_TRUE(std::isnan(m.macd[32]));
  EXPECT_FALSE(std::isnan(m.macd[33]));
}

TEST(Indicators, SkipLeadingNaNsOfChainedInputs) {
  const market::Bars bars = testing::RandomBars(100, 100, 4);
  const std::vector<double> lret = LogReturn(bars.close, {1});
  const std::vector<double> sd = Stddev(lret, {10, 1});
  EXPECT_TRUE(std::isnan(sd[9]));
  EXPECT_FALSE(std::isnan(sd[10]));
  const std::vector<double> ref = reference::Stddev(lret, {10, 1});
  EXPECT_NEAR(sd[50], ref[50], 1e-15);
}

}  // namespace
}  // namespace rlt::features
