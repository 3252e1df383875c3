// Tests for normalizer.h.
#include "features/normalizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/status_test_util.h"
#include "features/presets.h"
#include "features/test_util.h"

namespace rlt::features {
namespace {

// Two features: column 0 = t (rows 0..n-1), column 1 = random normal; row 0 is warm-up.
FeatureMatrix Toy(int64_t n) {
  FeatureMatrix m;
  m.names = {"ramp", "noise"};
  m.rows = n;
  m.cols = 2;
  m.first_valid = 1;
  m.values.resize(n * 2);
  std::mt19937_64 rng(3);
  std::normal_distribution<float> normal(10.0f, 2.0f);
  for (int64_t t = 0; t < n; ++t) {
    m.values[t * 2] = static_cast<float>(t);
    m.values[t * 2 + 1] = normal(rng);
  }
  m.values[0] = m.values[1] = std::numeric_limits<float>::quiet_NaN();
  return m;
}

TEST(Normalizer, ZScoreUsesOnlyTheTrainingRowsAndSkipsNaNRows) {
  FeatureMatrix m = Toy(200);
  Result<Normalizer> n = Normalizer::Fit(m, 0, 101, {});
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_DOUBLE_EQ(n->mean()[0], 50.5);  // rows 1..100
  double ss = 0;
  for (int t = 1; t <= 100; ++t) ss += (t - 50.5) * (t - 50.5);
  EXPECT_NEAR(n->std()[0], std::sqrt(ss / 100), 1e-12);
  n->Apply(m);
  EXPECT_TRUE(std::isnan(m.at(0, 0)));
  EXPECT_NEAR(m.at(100, 0), (100 - 50.5) / n->std()[0], 1e-5);
  EXPECT_FLOAT_EQ(m.at(199, 0), 5.0f);  // (199-50.5)/28.9 = 5.1: clipped at the default 5
}

TEST(Normalizer, QuantileMapsTrainingValuesUniformlyOntoMinusOneOne) {
  EXPECT_DOUBLE_EQ(QuantileMap({0, 1, 2, 3, 4}, 1.5), -0.25);
  EXPECT_DOUBLE_EQ(QuantileMap({0, 1, 2, 3, 4}, -7), -1.0);
  EXPECT_DOUBLE_EQ(QuantileMap({0, 1, 2, 3, 4}, 9), 1.0);
  EXPECT_DOUBLE_EQ(QuantileMap({0, 1, 1, 1, 4}, 1.0), 0.0);  // middle of the tied edges
  FeatureMatrix m = Toy(1001);
  NormalizerOptions o;
  o.kind = NormalizerKind::kQuantile;
  o.quantiles = 11;
  Result<Normalizer> n = Normalizer::Fit(m, 1, 1001, o);
  ASSERT_TRUE(n.ok());
  EXPECT_DOUBLE_EQ(n->edges()[0][5], 500.5);  // median of 1..1000
  n->Apply(m);
  EXPECT_FLOAT_EQ(m.at(1, 0), -1.0f);
  EXPECT_FLOAT_EQ(m.at(1000, 0), 1.0f);
  int below_zero = 0;
  for (int64_t t = 1; t < 1001; ++t) below_zero += m.at(t, 1) < 0;
  EXPECT_EQ(below_zero, 500);
}

TEST(Normalizer, JsonRoundTripReproducesApplyBitForBit) {
  for (NormalizerKind kind : {NormalizerKind::kZScore, NormalizerKind::kQuantile,
                              NormalizerKind::kRollingZScore, NormalizerKind::kNone}) {
    FeatureMatrix a = Toy(300), b = Toy(300);
    NormalizerOptions o;
    o.kind = kind;
    o.window = 50;
    Result<Normalizer> n = Normalizer::Fit(a, 0, 150, o);
    ASSERT_TRUE(n.ok());
    Result<Normalizer> loaded =
        Normalizer::FromJson(nlohmann::json::parse(n->ToJson().dump()), a.names);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    n->Apply(a);
    loaded->Apply(b);
    EXPECT_TRUE(testing::BitIdenticalPrefix(a.values, b.values, a.values.size()))
        << NormalizerKindName(kind);
  }
}

TEST(Normalizer, LoadingWithOtherFeatureNamesNamesTheFirstMismatch) {
  FeatureMatrix m = Toy(50);
  Result<Normalizer> n = Normalizer::Fit(m, 0, 50, {});
  ASSERT_TRUE(n.ok());
  Result<Normalizer> bad = Normalizer::FromJson(n->ToJson(), {"ramp", "signal"});
  ASSERT_TRUE(
      IsError(bad, Status::Code::kInvalidArgument, "is 'noise' but the data's is 'signal'"));
  EXPECT_TRUE(IsError(Normalizer::FromJson(n->ToJson(), {"ramp"}), Status::Code::kInvalidArgument,
                      "normalizer has 2 features, the data 1"));
  EXPECT_TRUE(IsError(Normalizer::FromJson(nlohmann::json{{"format", "x"}}),
                      Status::Code::kDataError,
                      "not an rltrade normalizer (version 1) JSON document"));
}

TEST(Normalizer, FitRejectsEmptyOrWarmupOnlyRanges) {
  FeatureMatrix m = Toy(50);
  EXPECT_TRUE(IsError(Normalizer::Fit(m, 10, 10, {}), Status::Code::kOutOfRange,
                      "fit range [10, 10) is empty"));
  EXPECT_TRUE(IsError(Normalizer::Fit(m, 0, 51, {}), Status::Code::kOutOfRange,
                      "fit range [0, 51) is empty or outside the 50 feature rows"));
  EXPECT_TRUE(IsError(Normalizer::Fit(m, 0, 1, {}), Status::Code::kInvalidArgument,
                      "fit range [0, 1) has no row without NaN"));  // only the NaN row
}

TEST(Normalizer, RollingZScoreIsCausalAndMatchesItsDefinition) {
  const market::Bars bars = testing::RandomBars(400, 60, 21);
  Result<FeatureMatrix> raw = ComputeFeatures(bars, "scaled");
  ASSERT_TRUE(raw.ok());
  NormalizerOptions o;
  o.kind = NormalizerKind::kRollingZScore;
  o.window = 30;
  o.clip = 0;
  Result<Normalizer> n = Normalizer::Fit(*raw, 0, raw->rows, o);
  ASSERT_TRUE(n.ok());
  FeatureMatrix z = *raw;
  n->Apply(z);
  // Definition, recomputed per row in double.
  const int64_t fv = raw->first_valid;
  for (int64_t t : {fv, fv + 1, fv + 10, fv + 29, fv + 30, fv + 200, raw->rows - 1}) {
    for (int64_t j = 0; j < raw->cols; ++j) {
      const int64_t begin = std::max(fv, t - 29);
      double mean = 0, ss = 0;
      for (int64_t r = begin; r <= t; ++r) mean += raw->at(r, j);
      mean /= (t - begin + 1);
      for (int64_t r = begin; r <= t; ++r) ss += std::pow(raw->at(r, j) - mean, 2);
      const double sd = std::sqrt(ss / (t - begin + 1));
      const double expected = t == begin || sd == 0 ? 0.0 : (raw->at(t, j) - mean) / sd;
      EXPECT_NEAR(z.at(t, j), expected, 1e-3 * (1 + std::fabs(expected)))
          << raw->names[j] << " t=" << t;
    }
  }
  // Causality: perturbing bars after `cut` leaves rows <= cut bit-identical.
  const size_t cut = 150;
  Result<FeatureMatrix> other = ComputeFeatures(testing::PerturbAfter(bars, cut, 5), "scaled");
  ASSERT_TRUE(other.ok());
  n->Apply(*other);
  EXPECT_TRUE(testing::BitIdenticalPrefix(z.values, other->values, (cut + 1) * z.cols));
}

// Found by fuzz/normalizer_json_fuzz: "quantiles": 1e30 (or "window": 1e300) was
// converted to an int by nlohmann with undefined behaviour (UBSan: outside the range of
// representable values). A non-integer or out-of-range count is now a DataError.
TEST(Normalizer, FromJsonRejectsCountsThatAreNotIntegersInRange) {
  const nlohmann::json base = nlohmann::json::parse(R"({"format": "rltrade.normalizer",
      "version": 1, "kind": "none", "clip": 5, "quantiles": 101, "window": 390,
      "names": ["a"], "mean": [], "std": [], "edges": []})");
  ASSERT_TRUE(Normalizer::FromJson(base).ok());
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"quantiles", 1e30},
                                                           {"quantiles", 2.5},
                                                           {"quantiles", int64_t{1} << 40},
                                                           {"window", 1e300},
                                                           {"window", "390"},
                                                           {"window", nullptr}}) {
    nlohmann::json j = base;
    j[key] = value;
    Result<Normalizer> n = Normalizer::FromJson(j);
    ASSERT_TRUE(IsError(n, Status::Code::kDataError, "\"" + key + "\""))
        << key << " = " << value.dump();
  }
}

}  // namespace
}  // namespace rlt::features
