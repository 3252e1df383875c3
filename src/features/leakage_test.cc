// No look-ahead (docs/ARCHITECTURE.md, "The invariants"): for several t, replacing every bar after
// t by a different valid bar (open, high, low, close and volume all change) leaves every output at
// rows <= t bit-identical, for every registered indicator, the extra series kernels, the
// per-session features, both presets and the 184 library signals.
#include <gtest/gtest.h>

#include <vector>

#include "features/indicators.h"
#include "features/library.h"
#include "features/presets.h"
#include "features/registry.h"
#include "features/session_features.h"
#include "features/test_util.h"

namespace rlt::features {
namespace {

constexpr size_t kBars = 400;
const size_t kCuts[] = {0, 5, 30, 59, 60, 133, 250, 398};

// Every series a bar set produces, by label.
using Named = std::vector<std::pair<std::string, std::vector<double>>>;

Named AllSeries(const market::Bars& b) {
  Named out;
  for (const std::string& name : IndicatorNames()) {
    Result<IndicatorResult> r = ComputeIndicator(b, name, {});
    RLT_CHECK(r.ok());
    for (size_t k = 0; k < r->outputs.size(); ++k) {
      out.emplace_back(name + "." + r->output_names[k], r->outputs[k]);
    }
  }
  const BbandsOutput bb = Bbands(b.close, {20, 2, 2});
  out.emplace_back("bbands.width", bb.width);
  out.emplace_back("bbands.percent_b", bb.percent_b);
  out.emplace_back("lret5", LogReturn(b.close, {5}));
  out.emplace_back("price_vs_sma20", PriceVsSma(b.close, {20}));
  out.emplace_back("volume_sma20", Sma(b.volume, {20}));
  out.emplace_back("volume_ratio20", VolumeRatio(b.volume, {20}));
  out.emplace_back("trange", TrueRange(b.high, b.low, b.close));
  const SessionFeatures s = ComputeSessionFeatures(b);
  out.emplace_back("session.return_since_open", s.return_since_open);
  out.emplace_back("session.bars_since_open", s.bars_since_open);
  out.emplace_back("session.vwap_distance", s.vwap_distance);
  return out;
}

TEST(Leakage, NoIndicatorOrSessionFeatureReadsTheFuture) {
  const market::Bars bars = testing::RandomBars(kBars, 60, 11);
  const Named base = AllSeries(bars);
  ASSERT_GE(base.size(), 30u);
  for (size_t cut : kCuts) {
    const market::Bars perturbed = testing::PerturbAfter(bars, cut, 100 + cut);
    ASSERT_NE(perturbed.close[cut + 1], bars.close[cut + 1]);
    const Named after = AllSeries(perturbed);
    for (size_t i = 0; i < base.size(); ++i) {
      EXPECT_TRUE(testing::BitIdenticalPrefix(base[i].second, after[i].second, cut + 1))
          << base[i].first << " changed at a row <= " << cut;
      // The perturbation must be visible after the cut, or the test could not fail.
      if (cut + 60 < kBars && base[i].first != "session.bars_since_open") {
        EXPECT_FALSE(testing::BitIdenticalPrefix(base[i].second, after[i].second, kBars))
            << base[i].first << " did not react to the perturbation";
      }
    }
  }
}

TEST(Leakage, NoPresetFeatureReadsTheFuture) {
  for (const std::string& preset : PresetNames()) {
    // The library (full184) warms up for 1,875 bars: a longer series, cut after it too.
    const bool library = preset == "full184";
    const market::Bars bars = testing::RandomBars(library ? 2100 : kBars, 60, 12);
    Result<FeatureMatrix> base = ComputeFeatures(bars, preset);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    ASSERT_LT(base->first_valid, base->rows) << preset;
    std::vector<size_t> cuts(std::begin(kCuts), std::end(kCuts));
    if (library) cuts.push_back(2000);
    for (size_t cut : cuts) {
      Result<FeatureMatrix> after =
          ComputeFeatures(testing::PerturbAfter(bars, cut, 200 + cut), preset);
      ASSERT_TRUE(after.ok());
      EXPECT_EQ(after->first_valid, base->first_valid);
      const size_t prefix = (cut + 1) * base->cols;
      EXPECT_TRUE(testing::BitIdenticalPrefix(base->values, after->values, prefix))
          << preset << ": a feature changed at a row <= " << cut;
      EXPECT_FALSE(testing::BitIdenticalPrefix(base->values, after->values, base->values.size()))
          << preset << ": perturbation after " << cut << " had no effect";
    }
  }
}

// The 184 library signals (library.h). 2,100 bars in sessions of 75, so that the 1,875-bar
// ranks are defined before the later cuts. Every signal must react to some perturbation
// (the union over the cuts: rare candle patterns need not fire after every cut).
TEST(Leakage, NoLibrarySignalReadsTheFuture) {
  constexpr size_t kLibraryBars = 2100;
  const market::Bars bars = testing::RandomBars(kLibraryBars, 75, 13);
  Result<LibraryColumns> base = ComputeLibrary(bars);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  std::vector<bool> reacted(base->values.size(), false);
  for (size_t cut : {size_t{0}, size_t{5}, size_t{30}, size_t{133}, size_t{400}, size_t{1000},
                     size_t{1880}, size_t{2000}}) {
    Result<LibraryColumns> after = ComputeLibrary(testing::PerturbAfter(bars, cut, 300 + cut));
    ASSERT_TRUE(after.ok());
    for (size_t i = 0; i < base->values.size(); ++i) {
      EXPECT_TRUE(testing::BitIdenticalPrefix(base->values[i], after->values[i], cut + 1))
          << base->names[i] << " changed at a row <= " << cut;
      if (!testing::BitIdenticalPrefix(base->values[i], after->values[i], kLibraryBars)) {
        reacted[i] = true;
      }
    }
  }
  for (size_t i = 0; i < reacted.size(); ++i) {
    EXPECT_TRUE(reacted[i]) << base->names[i] << " did not react to any perturbation";
  }
}

}  // namespace
}  // namespace rlt::features
