// Tests for eval/significance: the bootstrap's p-value against the normal-theory test it
// must agree with on i.i.d. normal data (the t-test of the mean for a Sharpe ratio against
// the flat benchmark; the Jobson–Korkie variance 2/n for two independent series), its
// limits (identical series, a large difference), reproducibility, the Politis–White block
// length against the AR(1) closed form, and the weekday rule of periods per year.
#include "eval/significance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.h"

namespace rlt::eval {
namespace {

// Standard normal CDF from the C library, independent of the code under test.
double Phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

std::vector<double> Normals(uint64_t seed, int n, double mean, double sd) {
  Rng rng(seed);
  std::vector<double> x(n);
  for (double& v : x) v = mean + sd * rng.Normal();
  return x;
}

// x_t = φ x_{t−1} + e_t, started from the stationary distribution.
std::vector<double> Ar1(uint64_t seed, int n, double phi, double mean) {
  Rng rng(seed);
  std::vector<double> x(n);
  double prev = rng.Normal() / std::sqrt(1 - phi * phi);
  for (double& v : x) {
    prev = phi * prev + rng.Normal();
    v = prev;
  }
  for (double& v : x) v = mean + 0.01 * v;
  return x;
}

double Mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

double SampleSd(const std::vector<double>& x) {
  const double m = Mean(x);
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

TEST(SharpeDifference, AgainstFlatMatchesTheTTestOfTheMeanOnIidNormalReturns) {
  // For i.i.d. normal returns with a small Sharpe ratio, Var(SR̂) ≈ (1 + SR²/2)/n ≈ 1/n,
  // so the bootstrap's two-sided p-value approaches 2(1 − Φ(|t|)), t = mean / (sd/√n).
  const int n = 2000;
  const std::vector<double> flat(n, 0.0);
  for (uint64_t seed : {11u, 12u, 13u}) {
    const std::vector<double> p = Normals(seed, n, 0.00045, 0.01);
    const double t = Mean(p) / (SampleSd(p) / std::sqrt(n));
    const double p_t = 2 * (1 - Phi(std::fabs(t)));
    const SharpeDifferenceTest r = BootstrapSharpeDifference(p, flat);
    EXPECT_NEAR(r.p_value, p_t, 0.02 + 0.15 * p_t) << "seed " << seed << " t " << t;
    EXPECT_NEAR(r.sharpe_difference, Mean(p) / SampleSd(p) * std::sqrt(252.0), 1e-9);
    EXPECT_EQ(r.observations, n);
    EXPECT_FALSE(r.few_observations);
  }
}

TEST(SharpeDifference, IntervalHasTheNormalTheoryWidth) {
  // 95 % interval of an annualised Sharpe ratio: ±1.96 √((1 + SR²/2) / n) · √252.
  const int n = 3000;
  const std::vector<double> p = Normals(21, n, 0.0003, 0.01), flat(n, 0.0);
  const SharpeDifferenceTest r = BootstrapSharpeDifference(p, flat);
  const double sr = Mean(p) / SampleSd(p);
  const double half = 1.96 * std::sqrt((1 + sr * sr / 2) / n) * std::sqrt(252.0);
  EXPECT_NEAR((r.ci_high - r.ci_low) / 2, half, 0.12 * half);
  EXPECT_NEAR((r.ci_high + r.ci_low) / 2, r.sharpe_difference, 0.2 * half);
}

TEST(SharpeDifference, TwoIndependentSeriesFollowTheJobsonKorkieVariance) {
  // Independent i.i.d. normal series: Var(SR̂1 − SR̂2) ≈ 2/n for small Sharpe ratios.
  const int n = 2500;
  const std::vector<double> p = Normals(31, n, 0.0006, 0.01), b = Normals(32, n, 0.0, 0.02);
  const double diff = Mean(p) / SampleSd(p) - Mean(b) / SampleSd(b);
  const double p_normal = 2 * (1 - Phi(std::fabs(diff) / std::sqrt(2.0 / n)));
  const SharpeDifferenceTest r = BootstrapSharpeDifference(p, b);
  EXPECT_NEAR(r.sharpe_difference, diff * std::sqrt(252.0), 1e-9);
  EXPECT_NEAR(r.p_value, p_normal, 0.02 + 0.2 * p_normal);
}

TEST(SharpeDifference, AClearlyBetterPolicyHasAPValueNearZero) {
  const int n = 500;
  const std::vector<double> b = Normals(41, n, 0.0, 0.01);
  std::vector<double> p = Normals(42, n, 0.004, 0.01);  // per-period Sharpe 0.4
  const SharpeDifferenceTest r = BootstrapSharpeDifference(p, b);
  EXPECT_LE(r.p_value, 2.0 / 2001);
  EXPECT_GT(r.ci_low, 0.0);
  EXPECT_LT(r.ci_low, r.ci_high);
}

TEST(SharpeDifference, IdenticalSeriesGivePOneAndAnIntervalAtZero) {
  const std::vector<double> x = Normals(51, 300, 0.001, 0.01);
  const SharpeDifferenceTest r = BootstrapSharpeDifference(x, x);
  EXPECT_EQ(r.sharpe_difference, 0.0);
  EXPECT_EQ(r.p_value, 1.0);
  EXPECT_LE(r.ci_low, 0.0);
  EXPECT_GE(r.ci_high, 0.0);
}

TEST(SharpeDifference, TheSameSeedGivesTheSameResultAndTheSeedIsUsed) {
  const std::vector<double> p = Normals(61, 400, 0.0008, 0.01), b = Normals(62, 400, 0, 0.01);
  const SharpeDifferenceTest a = BootstrapSharpeDifference(p, b);
  const SharpeDifferenceTest again = BootstrapSharpeDifference(p, b);
  EXPECT_EQ(a.p_value, again.p_value);
  EXPECT_EQ(a.ci_low, again.ci_low);
  EXPECT_EQ(a.ci_high, again.ci_high);
  BootstrapOptions other;
  other.seed = 7;
  const SharpeDifferenceTest c = BootstrapSharpeDifference(p, b, other);
  EXPECT_NE(a.ci_low, c.ci_low);
  EXPECT_NEAR(a.p_value, c.p_value, 0.05);  // Monte Carlo noise only
}

TEST(SharpeDifference, PairsWithAMissingSideAreDroppedAndShortSeriesFlagged) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> p = Normals(71, 29, 0.001, 0.01), b(29, 0.0);
  p.push_back(nan), b.push_back(0.0);
  p.push_back(0.01), b.push_back(nan);
  const SharpeDifferenceTest r = BootstrapSharpeDifference(p, b);
  EXPECT_EQ(r.observations, 29);
  EXPECT_TRUE(r.few_observations);
  EXPECT_TRUE(std::isfinite(r.p_value));
  const std::vector<double> one = {0.01};
  EXPECT_TRUE(std::isnan(BootstrapSharpeDifference(one, std::vector<double>{0.0}).p_value));
}

TEST(SharpeDifference, BlocksWidenTheIntervalOfSeriallyDependentReturns) {
  // AR(1) with φ = 0.6: the long-run variance of the mean is (1 + φ)/(1 − φ) = 4 times the
  // i.i.d. one, so the interval with blocks is about twice as wide as with single draws.
  const int n = 3000;
  const std::vector<double> p = Ar1(81, n, 0.6, 0.0005), flat(n, 0.0);
  BootstrapOptions iid;
  iid.mean_block_length = 1;
  const SharpeDifferenceTest blocks = BootstrapSharpeDifference(p, flat);
  const SharpeDifferenceTest single = BootstrapSharpeDifference(p, flat, iid);
  EXPECT_GT(blocks.mean_block_length, 5.0);
  const double ratio = (blocks.ci_high - blocks.ci_low) / (single.ci_high - single.ci_low);
  EXPECT_NEAR(ratio, 2.0, 0.5);
}

TEST(PolitisWhite, MatchesTheAr1ClosedFormAndIsShortForIidData) {
  const int n = 20000;
  for (double phi : {0.5, 0.8}) {
    const double target = std::pow(2 * phi / (1 - phi * phi), 2.0 / 3) * std::cbrt(n);
    EXPECT_NEAR(PolitisWhiteBlockLength(Ar1(91, n, phi, 0)), target, 0.35 * target)
        << "phi " << phi;
  }
  EXPECT_LE(PolitisWhiteBlockLength(Normals(92, n, 0, 1)), 3.0);
  EXPECT_EQ(PolitisWhiteBlockLength(std::vector<double>(100, 0.5)), 1.0);
  EXPECT_EQ(PolitisWhiteBlockLength(std::vector<double>{1, 2}), 1.0);
}

TEST(PeriodsPerYear, WeekendSessionsMeanCalendarDays) {
  // 2024-01-01 was a Monday; 2024-01-06 a Saturday and 2024-01-07 a Sunday.
  const std::vector<int32_t> weekdays = {20240101, 20240102, 20240103, 20240104, 20240105};
  EXPECT_EQ(PeriodsPerYearOf(weekdays), 252);
  // Every day of two weeks: 4 of 14 sessions on a weekend.
  std::vector<int32_t> every_day;
  for (int32_t d = 20240101; d <= 20240114; ++d) every_day.push_back(d);
  EXPECT_EQ(PeriodsPerYearOf(every_day), 365);
  EXPECT_EQ(PeriodsPerYearOf(std::vector<int32_t>{20240107}), 365);
  // One Saturday session among 20 weekdays (an exchange's special session): still 252.
  std::vector<int32_t> special = weekdays;
  for (int32_t d = 20240108; d <= 20240112; ++d) special.push_back(d);
  for (int32_t d = 20240115; d <= 20240119; ++d) special.push_back(d);
  for (int32_t d = 20240122; d <= 20240126; ++d) special.push_back(d);
  special.push_back(20240120);
  EXPECT_EQ(PeriodsPerYearOf(special), 252);
  EXPECT_EQ(PeriodsPerYearOf(std::vector<int32_t>{}), 252);
}

TEST(FewObservations, FlagsFewerThanThirty) {
  EXPECT_TRUE(FewObservations(29));
  EXPECT_FALSE(FewObservations(30));
}

}  // namespace
}  // namespace rlt::eval
