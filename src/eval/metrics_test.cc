// Tests for eval/metrics: every row of empyrical's published values
// (tests/fixtures/empyrical_mixed.csv), empyrical's published edge cases
// (empyrical/tests/test_stats.py, quoted with their series), the Probabilistic Sharpe
// Ratio against closed forms evaluated here from distribution facts, and drawdown
// durations on hand-made wealth paths.
#include "eval/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/rng.h"

namespace rlt::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Standard normal CDF from the C library's erfc, independent of metrics.cc.
double Phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

struct Oracle {
  std::vector<double> returns;              // from the "# returns:" comment
  std::map<std::string, double> values;     // metric -> published value
  std::map<std::string, std::string> text;  // metric -> value as published
};

Oracle ReadOracle() {
  const std::string path = std::string(RLT_SOURCE_DIR) + "/tests/fixtures/empyrical_mixed.csv";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  Oracle o;
  std::string line;
  bool header_seen = false;
  while (std::getline(in, line)) {
    if (line.rfind("# returns:", 0) == 0) {
      std::stringstream ss(line.substr(10));
      std::string cell;
      while (std::getline(ss, cell, ',')) {
        o.returns.push_back(cell.find("nan") != std::string::npos ? kNaN : std::stod(cell));
      }
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (!header_seen) {
      header_seen = true;  // metric,argument,value
      continue;
    }
    const size_t c1 = line.find(','), c2 = line.find(',', c1 + 1);
    const std::string metric = line.substr(0, c1), value = line.substr(c2 + 1);
    o.values[metric] = std::stod(value);
    o.text[metric] = value;
  }
  return o;
}

double MetricByName(const ReturnMetrics& m, const std::string& name) {
  if (name == "sharpe_ratio") return m.sharpe_ratio;
  if (name == "sortino_ratio") return m.sortino_ratio;
  if (name == "downside_risk") return m.downside_risk;
  if (name == "annual_return") return m.annual_return;
  if (name == "annual_volatility") return m.annual_volatility;
  if (name == "calmar_ratio") return m.calmar_ratio;
  if (name == "max_drawdown") return m.max_drawdown;
  if (name == "cum_returns_final") return m.cum_returns_final;
  ADD_FAILURE() << "unknown metric in the oracle file: " << name;
  return kNaN;
}

TEST(Metrics, MatchEveryRowOfEmpyricalsPublishedValues) {
  const Oracle o = ReadOracle();
  ASSERT_EQ(o.returns.size(), 9u);
  ASSERT_TRUE(std::isnan(o.returns[0]));
  ASSERT_EQ(o.values.size(), 8u) << "every row of the fixture is checked";
  const ReturnMetrics m = ComputeReturnMetrics(o.returns);  // 252 periods, rf 0
  for (const auto& [name, expected] : o.values) {
    // empyrical publishes cum_returns_final as 0.03893 and checks it to 4 decimals
    // (assert_almost_equal(..., 4)); half a unit in its last digit is 5e-6. Every other
    // row is published to full precision and checked to empyrical's 8 decimals.
    const double tolerance = name == "cum_returns_final" ? 5e-6 : 1e-8;
    EXPECT_NEAR(MetricByName(m, name), expected, tolerance) << name << " = " << o.text.at(name);
  }
  // The same numbers through the one-metric functions.
  EXPECT_NEAR(SharpeRatio(o.returns), o.values.at("sharpe_ratio"), 1e-8);
  EXPECT_NEAR(SortinoRatio(o.returns), o.values.at("sortino_ratio"), 1e-8);
  EXPECT_NEAR(CalmarRatio(o.returns), o.values.at("calmar_ratio"), 1e-8);
  EXPECT_EQ(m.observations, 8);
  EXPECT_DOUBLE_EQ(m.win_rate, 6.0 / 8.0);  // 6 of the 8 non-NaN returns are positive.
}

TEST(Metrics, CumulativeReturnIsTheProductOfGrowthFactorsToFullPrecision) {
  // (1.01)(1.10)(0.96)(1.02)(1.03)(1.02)(1.01)(0.90) − 1, multiplied out by hand in
  // exact decimal arithmetic: 1.038931091700480... (empyrical's aggregate_returns test
  // publishes the same total, 0.038931091700480147, for this series).
  const Oracle o = ReadOracle();
  EXPECT_NEAR(CumReturnsFinal(o.returns), 0.038931091700480147, 1e-15);
  // The deepest drawdown is the last period's −10 % from the peak just before it.
  EXPECT_NEAR(MaxDrawdown(o.returns), -0.10, 1e-15);
}

// Series and values from empyrical/tests/test_stats.py (DECIMAL_PLACES = 8).
TEST(Metrics, FollowEmpyricalsPublishedEdgeCases) {
  const std::vector<double> empty;
  const std::vector<double> one_return = {0.01};
  const std::vector<double> positive = {0.01, 0.02, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01};
  const std::vector<double> negative = {0.0,   -0.06, -0.07, -0.01, -0.09,
                                        -0.02, -0.06, -0.08, -0.05};
  const std::vector<double> simple_benchmark = {0, 0.01, 0, 0.01, 0, 0.01, 0, 0.01, 0};
  const std::vector<double> weekly = {0, 0.01, 0.10, -0.04, 0.02, 0.03, 0.02, 0.01, -0.10};
  const std::vector<double> up_down_up = {0.10, -0.10, 0.10};

  const ReturnMetrics e = ComputeReturnMetrics(empty);
  for (double v :
       {e.sharpe_ratio, e.sortino_ratio, e.downside_risk, e.annual_return, e.annual_volatility,
        e.max_drawdown, e.calmar_ratio, e.cum_returns_final, e.win_rate, e.psr}) {
    EXPECT_TRUE(std::isnan(v));
  }
  EXPECT_EQ(e.observations, 0);
  EXPECT_EQ(e.max_drawdown_duration, 0);

  const ReturnMetrics one = ComputeReturnMetrics(one_return);
  EXPECT_TRUE(std::isnan(one.sharpe_ratio));
  EXPECT_TRUE(std::isnan(one.sortino_ratio));
  EXPECT_TRUE(std::isnan(one.annual_volatility));
  EXPECT_TRUE(std::isnan(one.calmar_ratio));
  EXPECT_EQ(one.downside_risk, 0.0);
  EXPECT_EQ(one.max_drawdown, 0.0);
  EXPECT_NEAR(one.cum_returns_final, 0.01, 1e-15);

  EXPECT_NEAR(SharpeRatio(positive), 52.915026221291804, 1e-8);
  EXPECT_NEAR(SharpeRatio(negative), -24.406808633910085, 1e-8);
  EXPECT_EQ(SortinoRatio(positive), kInf);  // no downside at all
  EXPECT_EQ(SortinoRatio(simple_benchmark), kInf);
  EXPECT_NEAR(SortinoRatio(negative), -13.532743075043401, 1e-8);
  EXPECT_EQ(MaxDrawdown(positive), 0.0);
  EXPECT_TRUE(std::isnan(CalmarRatio(positive)));  // no drawdown: no Calmar ratio
  EXPECT_NEAR(MaxDrawdown(negative), CumReturnsFinal(negative), 1e-12);
  EXPECT_NEAR(MaxDrawdown(up_down_up), -0.10, 1e-8);

  const Oracle o = ReadOracle();
  EXPECT_NEAR(DownsideRisk(o.returns, {.periods_per_year = 252, .risk_free = 0.1}),
              1.7161730681956295, 1e-8);
  const MetricsOptions weekly_options{.periods_per_year = 52};
  EXPECT_NEAR(AnnualReturn(weekly, weekly_options), 0.24690830513998208, 1e-8);
  EXPECT_NEAR(AnnualVolatility(weekly, weekly_options), 0.38851569394870583, 1e-8);
  EXPECT_NEAR(CalmarRatio(weekly, weekly_options), 2.4690830513998208, 1e-8);
  EXPECT_NEAR(DownsideRisk(weekly, weekly_options), 0.25888650451930134, 1e-8);
  EXPECT_NEAR(SortinoRatio(weekly, weekly_options), 1.1158901056866439, 1e-8);
  const MetricsOptions monthly_options{.periods_per_year = 12};
  EXPECT_NEAR(AnnualVolatility(weekly, monthly_options), 0.18663690238892558, 1e-8);
  EXPECT_NEAR(SortinoRatio(weekly, monthly_options), 0.53605626741889756, 1e-8);
}

TEST(Metrics, AllMissingReturnsGiveNanRatiosButKeepTheirTime) {
  const std::vector<double> all_nan = {kNaN, kNaN, kNaN};
  const ReturnMetrics m = ComputeReturnMetrics(all_nan);
  EXPECT_TRUE(std::isnan(m.sharpe_ratio));
  EXPECT_TRUE(std::isnan(m.sortino_ratio));
  EXPECT_TRUE(std::isnan(m.downside_risk));
  EXPECT_TRUE(std::isnan(m.annual_volatility));
  EXPECT_TRUE(std::isnan(m.win_rate));
  EXPECT_TRUE(std::isnan(m.psr));
  // empyrical's nanprod of nothing is 1: no growth, no drawdown.
  EXPECT_EQ(m.cum_returns_final, 0.0);
  EXPECT_EQ(m.annual_return, 0.0);
  EXPECT_EQ(m.max_drawdown, 0.0);
  EXPECT_EQ(m.observations, 0);
}

// A two-point series ±d around its mean has skewness 0 and kurtosis 1 exactly, so the
// PSR denominator is 1 and PSR = Φ(SR̂·√(n−1)). For {0.03, −0.01, 0.03, −0.01}: mean 0.01,
// sample std 0.02·√(4/3), SR̂ = √3/4, z = √3/4·√3 = 3/4; Φ(0.75) = 0.77337264762313...
// (standard normal table).
TEST(ProbabilisticSharpeRatio, MatchesTheClosedFormOnASymmetricTwoPointSeries) {
  const std::vector<double> r = {0.03, -0.01, 0.03, -0.01};
  const PsrResult p = ProbabilisticSharpeRatio(r);
  EXPECT_EQ(p.observations, 4);
  EXPECT_NEAR(p.sharpe_per_period, std::sqrt(3.0) / 4.0, 1e-12);
  EXPECT_NEAR(p.skewness, 0.0, 1e-9);
  EXPECT_NEAR(p.kurtosis, 1.0, 1e-9);
  EXPECT_NEAR(p.psr, 0.77337264762313, 1e-12);
  // The per-period Sharpe is the annualised one without its √P.
  EXPECT_NEAR(p.sharpe_per_period * std::sqrt(252.0), SharpeRatio(r), 1e-12);
}

// {0.04, 0, 0, 0} is 0.04 × Bernoulli(p = 1/4): skewness (1 − 2p)/√(p(1−p)) = 2/√3,
// kurtosis (1 − 3p(1−p))/(p(1−p)) = 7/3; mean 0.01, sample std √(0.0012/3) = 0.02,
// SR̂ = 1/2. PSR = Φ(½·√3 / √(1 − (2/√3)·½ + (7/3 − 1)/4·¼)).
TEST(ProbabilisticSharpeRatio, MatchesTheClosedFormOnASkewedBernoulliSeries) {
  const std::vector<double> r = {0.04, 0.0, 0.0, 0.0};
  const PsrResult p = ProbabilisticSharpeRatio(r);
  EXPECT_NEAR(p.sharpe_per_period, 0.5, 1e-12);
  EXPECT_NEAR(p.skewness, 2.0 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(p.kurtosis, 7.0 / 3.0, 1e-9);
  const double variance_term = 1.0 - 1.0 / std::sqrt(3.0) + 1.0 / 12.0;
  EXPECT_NEAR(p.psr, Phi(0.5 * std::sqrt(3.0) / std::sqrt(variance_term)), 1e-12);
  // Positive skew makes a given Sharpe more credible than under symmetry (Bailey &
  // López de Prado 2012, §3): compare with the same SR̂ and n at γ3 = 0, γ4 = 3.
  EXPECT_GT(p.psr, Phi(0.5 * std::sqrt(3.0) / std::sqrt(1.0 + 0.5 * 0.25)));
  // Against a benchmark Sharpe equal to SR̂ itself the probability is one half.
  EXPECT_NEAR(ProbabilisticSharpeRatio(r, /*benchmark_sharpe_per_period=*/0.5).psr, 0.5, 1e-12);
}

TEST(ProbabilisticSharpeRatio, IsOneHalfAtZeroSharpeAndGrowsWithTheNumberOfObservations) {
  const std::vector<double> zero_mean = {0.02, -0.01, -0.01, 0.03, -0.03, 0.0};
  EXPECT_NEAR(ProbabilisticSharpeRatio(zero_mean).psr, 0.5, 1e-12);

  // Repeating a series keeps its mean and its biased moments (skewness, kurtosis) and
  // raises n; the sample std shrinks slightly, so SR̂ rises too. PSR must increase.
  const std::vector<double> base = {0.012, -0.004, 0.007, -0.009, 0.015, 0.001, -0.002};
  std::vector<double> series = base;
  double previous = ProbabilisticSharpeRatio(series).psr;
  for (int k = 0; k < 5; ++k) {
    series.insert(series.end(), base.begin(), base.end());
    const PsrResult p = ProbabilisticSharpeRatio(series);
    EXPECT_GT(p.psr, previous) << "n = " << p.observations;
    previous = p.psr;
  }
  // A losing strategy's PSR falls below one half and towards 0 with more data.
  std::vector<double> losing;
  for (double v : base) losing.push_back(-v);
  EXPECT_LT(ProbabilisticSharpeRatio(losing).psr, 0.5);
}

TEST(ProbabilisticSharpeRatio, IgnoresMissingPeriodsAndNeedsTwoObservations) {
  const std::vector<double> with_gaps = {kNaN, 0.03, -0.01, kNaN, 0.03, -0.01};
  const PsrResult p = ProbabilisticSharpeRatio(with_gaps);
  EXPECT_EQ(p.observations, 4);
  EXPECT_NEAR(p.psr, 0.77337264762313, 1e-12);
  EXPECT_TRUE(std::isnan(ProbabilisticSharpeRatio(std::vector<double>{0.01, kNaN}).psr));
  EXPECT_TRUE(std::isnan(ProbabilisticSharpeRatio(std::vector<double>{0.01, 0.01}).psr));
  const ReturnMetrics m = ComputeReturnMetrics(with_gaps);
  EXPECT_EQ(m.psr_observations, 4);
  EXPECT_NEAR(m.psr, p.psr, 1e-15);
}

// Wealth 1 → 2 → 1 → 1.5 → 3 → 1.5 → 0.75 → 0.75 → 0.9375 (returns are exact in
// binary): the peak at t = 1 is regained at t = 4 (3 periods); the peak at t = 4 is
// never regained and the series ends at t = 8 (4 periods, still open).
// Φ⁻¹ against published quantiles of the standard normal (the z-table values 1.959963985
// for 97.5%, 2.326347874 for 99%, 3.090232306 for 99.9%) and Φ(Φ⁻¹(p)) = p.
TEST(NormalQuantile, MatchesTabulatedQuantilesAndInvertsTheCdf) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963985, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.99), 2.326347874, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232306, 1e-9);
  EXPECT_EQ(NormalQuantile(0.5), 0.0);
  for (double p : {1e-12, 1e-6, 0.01, 0.2, 0.5, 0.7, 0.97, 0.999999}) {
    EXPECT_NEAR(0.5 * std::erfc(-NormalQuantile(p) / std::sqrt(2.0)), p, 1e-14 + 1e-12 * p) << p;
  }
  EXPECT_TRUE(std::isinf(NormalQuantile(0.0)) && NormalQuantile(0.0) < 0);
  EXPECT_TRUE(std::isnan(NormalQuantile(1.5)));
}

// The worked example of Bailey & López de Prado (2014), "The Deflated Sharpe Ratio",
// section 4: N = 100 trials, annualised V[SR_n] = 1/2, the selected strategy's annualised
// SR 2.5 over T = 1250 daily returns (250 a year), skewness −3, kurtosis 10. The paper
// reports SR0 ≈ 0.1132 (per day) and DSR ≈ 0.9004.
TEST(DeflatedSharpeRatio, ReproducesThePapersWorkedExample) {
  const double per_year = 250.0;
  const DeflatedSharpeResult r =
      DeflatedSharpeFromMoments(2.5 / std::sqrt(per_year), 1250, -3.0, 10.0, 100.0, 0.5 / per_year);
  EXPECT_NEAR(r.sr0, 0.1132, 5e-5);
  EXPECT_NEAR(r.dsr, 0.9004, 5e-5);
}

TEST(DeflatedSharpeRatio, OneTrialOrNoSpreadIsThePsrAgainstZero) {
  std::vector<double> returns;
  Rng rng(3);
  for (int i = 0; i < 300; ++i) returns.push_back(0.001 + 0.01 * rng.Normal());
  const PsrResult psr = ProbabilisticSharpeRatio(returns);
  EXPECT_DOUBLE_EQ(DeflatedSharpeRatio(returns, 1.0, 0.01).dsr, psr.psr);
  EXPECT_DOUBLE_EQ(DeflatedSharpeRatio(returns, 10.0, 0.0).dsr, psr.psr);
  // More trials with spread raise the bar: the DSR falls below the PSR, monotonically.
  const double d10 = DeflatedSharpeRatio(returns, 10.0, 0.002).dsr;
  const double d100 = DeflatedSharpeRatio(returns, 100.0, 0.002).dsr;
  EXPECT_LT(d10, psr.psr);
  EXPECT_LT(d100, d10);
}

TEST(MaxDrawdownDuration, CountsPeriodsFromPeakToRecoveryOrToTheEnd) {
  const std::vector<double> open_longest = {1.0, -0.5, 0.5, 1.0, -0.5, -0.5, 0.0, 0.25};
  EXPECT_EQ(MaxDrawdownDuration(open_longest), 4);
  EXPECT_DOUBLE_EQ(MaxDrawdown(open_longest), -0.75);  // 3 → 0.75

  // Recovered episode longer than the open one: 2 → 1 → 1 → 1 → 2 (t = 1..5), then
  // 4 → 3 at the end (t = 6, 7): durations 4 and 1.
  const std::vector<double> recovered_longest = {1.0, -0.5, 0.0, 0.0, 1.0, 1.0, -0.25};
  EXPECT_EQ(MaxDrawdownDuration(recovered_longest), 4);

  // A loss in the first period is measured from the starting wealth (t = 0), and a
  // missing period still takes up time.
  EXPECT_EQ(MaxDrawdownDuration(std::vector<double>{-0.5, kNaN, 1.0}), 3);
  EXPECT_EQ(MaxDrawdownDuration(std::vector<double>{-0.5, kNaN}), 2);
  EXPECT_EQ(MaxDrawdownDuration(std::vector<double>{0.01, 0.02, 0.0, 0.03}), 0);
  EXPECT_EQ(MaxDrawdownDuration(std::vector<double>{}), 0);
}

TEST(TradeMetrics, ProfitFactorIsGrossProfitOverGrossLoss) {
  const std::vector<double> pnls = {100.0, -50.0, 30.0, -20.0, kNaN, 0.0};
  const TradeMetrics t = ComputeTradeMetrics(pnls);
  EXPECT_EQ(t.num_trades, 5);
  EXPECT_DOUBLE_EQ(t.gross_profit, 130.0);
  EXPECT_DOUBLE_EQ(t.gross_loss, 70.0);
  EXPECT_DOUBLE_EQ(t.profit_factor, 130.0 / 70.0);
  EXPECT_DOUBLE_EQ(t.average_trade_pnl, 60.0 / 5.0);
  EXPECT_DOUBLE_EQ(t.win_rate, 2.0 / 5.0);

  EXPECT_EQ(ComputeTradeMetrics(std::vector<double>{5.0, 1.0}).profit_factor, kInf);
  const TradeMetrics none = ComputeTradeMetrics(std::vector<double>{});
  EXPECT_EQ(none.num_trades, 0);
  EXPECT_TRUE(std::isnan(none.profit_factor));
  EXPECT_TRUE(std::isnan(none.average_trade_pnl));
}

TEST(PositionMetrics, ExposureAndTurnoverCountHeldPeriodsAndTradedSize) {
  const std::vector<double> positions = {0.0, 1.0, 1.0, -1.0, 0.0, 0.5};
  EXPECT_DOUBLE_EQ(Exposure(positions), 4.0 / 6.0);
  // |0| + |1| + |0| + |−2| + |1| + |0.5| = 4.5 over 6 periods.
  EXPECT_DOUBLE_EQ(Turnover(positions), 4.5 / 6.0);
  EXPECT_TRUE(std::isnan(Exposure(std::vector<double>{})));
  EXPECT_TRUE(std::isnan(Turnover(std::vector<double>{})));
}

}  // namespace
}  // namespace rlt::eval
