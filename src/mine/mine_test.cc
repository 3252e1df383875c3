// Tests of the mining engine: the rule's P&L against a hand computation, the folds and the
// embargo, cross-validation against an independent re-computation written here, the
// correlation filter, the Deflated Sharpe Ratio against the paper's worked example and an
// independent formula, a null market over 24 seeds, a planted signal, bad options and the
// output files.
#include "mine/mine.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"
#include "eval/metrics.h"
#include "mine/dsr.h"
#include "mine/outputs.h"

namespace rlt::mine {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Bars of `sessions` sessions of `per` bars each, dates 20240101 + day (consecutive
// integers are fine: the engine only orders them). Prices from `open` (per bar) with the
// last bar's close `open * (1 + last_move)`.
market::Bars MakeBars(const std::vector<std::vector<double>>& opens,
                      const std::vector<double>& last_closes, int32_t first_date = 20240101) {
  market::Bars b;
  b.symbol = "TEST";
  int64_t t = 1700000000;
  for (size_t s = 0; s < opens.size(); ++s) {
    market::Session session;
    session.date = first_date + static_cast<int32_t>(s);
    session.begin = static_cast<int32_t>(b.size());
    for (size_t j = 0; j < opens[s].size(); ++j) {
      const double o = opens[s][j];
      const double c = j + 1 < opens[s].size() ? opens[s][j + 1] : last_closes[s];
      b.time.push_back(t += 300);
      b.utc_offset.push_back(0);
      b.open.push_back(o);
      b.close.push_back(c);
      b.high.push_back(std::max(o, c));
      b.low.push_back(std::min(o, c));
      b.volume.push_back(1000);
      b.session.push_back(static_cast<int32_t>(s));
      b.bar_in_session.push_back(static_cast<int32_t>(j));
      b.last_in_session.push_back(j + 1 == opens[s].size() ? 1 : 0);
    }
    session.end = static_cast<int32_t>(b.size());
    b.sessions.push_back(session);
  }
  return b;
}

// A random walk of `sessions` x `per` bars.
market::Bars RandomWalkBars(Rng& rng, int sessions, int per) {
  std::vector<std::vector<double>> opens(sessions);
  std::vector<double> closes(sessions);
  double p = 100;
  for (int s = 0; s < sessions; ++s) {
    for (int j = 0; j < per; ++j) {
      opens[s].push_back(p);
      p *= std::exp(0.002 * rng.Normal());
    }
    closes[s] = p;
    p *= std::exp(0.004 * rng.Normal());  // overnight gap
  }
  return MakeBars(opens, closes);
}

MineOptions Options(int32_t first, int32_t last) {
  MineOptions o;
  o.train.first = first;
  o.train.last = last;
  o.cost_rate = 0.0;
  return o;
}

// ------------------------------------------------------------------ the rule's P&L

// Session A (4 bars): opens 100, 101, 99, 102, last close 103; x = 0.1, 0.9, 0.5, 0.2 with
// q_lo = 0.3, q_hi = 0.7: raw = +1, −1, 0, (+1: the last bar's decision, never traded).
// Positions over bars 1..3: +1, −1, 0. Gross = (99/101 − 1) − (102/99 − 1); changes
// |1−0| + |−1−1| + |0+1| + flatten 0 = 4.
// Session B (3 bars): opens 50, 51, 52, last close 50.5; x = 0.8, 0.8, NaN: positions over
// bars 1, 2: −1, −1. Gross = −(52/51 − 1) − (50.5/52 − 1); changes 1 + 0 + flatten 1 = 2.
TEST(SessionPnl, MatchesAHandComputationWithCosts) {
  const market::Bars b = MakeBars({{100, 101, 99, 102}, {50, 51, 52}}, {103, 50.5});
  const std::vector<double> x = {0.1, 0.9, 0.5, 0.2, 0.8, 0.8, kNaN};
  const double cost = 0.001;
  const UnitPnl a = SessionPnl(b, x.data(), 0, 4, 0.3, 0.7, cost);
  EXPECT_NEAR(a.gross, (99.0 / 101 - 1) - (102.0 / 99 - 1), 1e-15);
  EXPECT_NEAR(a.cost, 4 * cost, 1e-15);
  const UnitPnl s = SessionPnl(b, x.data(), 4, 7, 0.3, 0.7, cost);
  EXPECT_NEAR(s.gross, -(52.0 / 51 - 1) - (50.5 / 52 - 1), 1e-15);
  EXPECT_NEAR(s.cost, 2 * cost, 1e-15);
  // Both thresholds equal and x at them: both hold, no position.
  const std::vector<double> tie(7, 0.5);
  const UnitPnl t = SessionPnl(b, tie.data(), 4, 7, 0.5, 0.5, cost);
  EXPECT_EQ(t.gross, 0.0);
  EXPECT_EQ(t.cost, 0.0);
}

TEST(Quantile, InterpolatesLinearlyBetweenOrderStatistics) {
  std::vector<double> v = {5, 1, 4, 2, 3};  // sorted 1..5; q = 0.3 -> position 1.2 -> 2.2
  EXPECT_DOUBLE_EQ(Quantile(v.data(), 5, 0.3), 2.2);
  EXPECT_DOUBLE_EQ(Quantile(v.data(), 5, 0.75), 4.0);
  EXPECT_TRUE(std::isnan(Quantile(v.data(), 0, 0.5)));
  // Both at once equal the sorted-array answer, with ties and for small n.
  Rng rng(2);
  for (int n : {1, 2, 3, 7, 50, 1001}) {
    std::vector<double> x(n);
    for (double& e : x) e = std::floor(4 * rng.Normal());
    std::vector<double> sorted = x;
    std::sort(sorted.begin(), sorted.end());
    auto ref = [&](double q) {
      const double pos = q * (n - 1);
      const size_t k = static_cast<size_t>(pos);
      return k + 1 < sorted.size() ? sorted[k] + (pos - k) * (sorted[k + 1] - sorted[k])
                                   : sorted[k];
    };
    double lo, hi;
    Quantiles(x.data(), n, 0.3, 0.7, &lo, &hi);
    EXPECT_NEAR(lo, ref(0.3), 1e-12 * (1 + std::fabs(lo))) << n;
    EXPECT_NEAR(hi, ref(0.7), 1e-12 * (1 + std::fabs(hi))) << n;
  }
}

// ------------------------------------------------------------------ folds and embargo

TEST(Folds, SplitDatesIntoContiguousBlocksAndEmbargoTheDatesAfter) {
  // 10 dates, 5 folds: blocks of two.
  for (int f = 0; f <= 5; ++f) EXPECT_EQ(FoldBegin(10, 5, f), 2 * f);
  auto fitted = [](int f, int embargo) {
    std::vector<int> out;
    for (int d = 0; d < 10; ++d) {
      if (FitsOn(d, 10, 5, f, embargo)) out.push_back(d);
    }
    return out;
  };
  EXPECT_EQ(fitted(0, 1), (std::vector<int>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(fitted(2, 1), (std::vector<int>{0, 1, 2, 3, 7, 8, 9}));
  EXPECT_EQ(fitted(4, 1), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(fitted(2, 0), (std::vector<int>{0, 1, 2, 3, 6, 7, 8, 9}));
  EXPECT_EQ(fitted(1, 3), (std::vector<int>{0, 1, 7, 8, 9}));
}

// Cross-validation scores against an independent computation: for each fold, the test
// collects the fitting values itself, sorts them for the quantiles and walks the P&L bar by
// bar from prices, with both symbols' sessions of a date in the same fold.
TEST(Mine, CvScoresEqualAnIndependentPurgedComputation) {
  Rng rng(11);
  const int sessions = 12, per = 6;
  const market::Bars b1 = RandomWalkBars(rng, sessions, per);
  const market::Bars b2 = RandomWalkBars(rng, sessions, per);
  MineInput in;
  in.names = {"noise"};
  in.regime = {0};
  for (const market::Bars* b : {&b1, &b2}) {
    SymbolColumns c;
    c.bars = b;
    c.values.emplace_back();
    for (size_t t = 0; t < b->size(); ++t) c.values[0].push_back(t % 7 == 3 ? kNaN : rng.Normal());
    in.symbols.push_back(c);
  }
  MineOptions o = Options(20240101, 20240112);
  o.folds = 4;
  o.embargo = 1;
  o.cost_rate = 0.0003;
  Result<MineResult> r = Mine(in, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const SignalResult& s = r->signals[0];
  ASSERT_EQ(s.fold_scores.size(), 4u);
  // Folds of 3 dates: [0,3), [3,6), [6,9), [9,12); embargo 1 date after each.
  for (int f = 0; f < 4; ++f) {
    std::vector<double> fit;
    for (const SymbolColumns& c : in.symbols) {
      for (int d = 0; d < sessions; ++d) {
        if (d >= 3 * f && d < 3 * f + 4) continue;
        for (int j = 0; j < per; ++j) {
          const double v = c.values[0][d * per + j];
          if (std::isfinite(v)) fit.push_back(v);
        }
      }
    }
    std::sort(fit.begin(), fit.end());
    auto q = [&](double p) {
      const double pos = p * (fit.size() - 1);
      const size_t k = static_cast<size_t>(pos);
      return k + 1 < fit.size() ? fit[k] + (pos - k) * (fit[k + 1] - fit[k]) : fit[k];
    };
    const double lo = q(0.3), hi = q(0.7);
    double sum = 0;
    int units = 0;
    for (int d = 3 * f; d < 3 * f + 3; ++d) {
      for (const SymbolColumns& c : in.symbols) {
        const market::Bars& b = *c.bars;
        double pnl = 0, pos = 0;
        for (int j = 0; j < per; ++j) {
          const int t = d * per + j;
          // Position `pos` held over bar t (decided at t − 1).
          const double exit = j + 1 < per ? b.open[t + 1] : b.close[t];
          pnl += s.sign * pos * (exit / b.open[t] - 1);
          const double x = c.values[0][t];
          double next = 0;
          if (j + 1 < per && std::isfinite(x)) next = x <= lo ? 1 : (x >= hi ? -1 : 0);
          pnl -= o.cost_rate * std::fabs(next - pos);
          pos = next;
        }
        sum += pnl;
        ++units;
      }
    }
    EXPECT_NEAR(s.fold_scores[f], sum / units, 1e-12 * (1 + std::fabs(sum / units))) << f;
    EXPECT_EQ(r->fold_first[f], 20240101 + 3 * f);
    EXPECT_EQ(r->fold_last[f], 20240101 + 3 * f + 2);
  }
  double mean = 0;
  for (double v : s.fold_scores) mean += v / 4;
  EXPECT_NEAR(s.cv_score, mean, 1e-15);
  EXPECT_GE(s.cv_score, s.cv_score_other);
  EXPECT_EQ(r->train_units, 24);
}

// ------------------------------------------------------------------ correlation filter

double TwoPassCorrelation(const std::vector<double>& x, const std::vector<double>& y) {
  double n = 0, mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isfinite(x[i]) && std::isfinite(y[i])) {
      n += 1;
      mx += x[i];
      my += y[i];
    }
  }
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

TEST(PairwiseCorrelation, UsesOnlyBarsWhereBothAreFinite) {
  const std::vector<double> x = {1, 2, kNaN, 4, 5, 7};
  const std::vector<double> y = {2, 1, 3, kNaN, 6, 5};
  EXPECT_NEAR(PairwiseCorrelation(x.data(), y.data(), 6), TwoPassCorrelation(x, y), 1e-14);
  const std::vector<double> flat = {3, 3, 3, 3, 3, 3};
  EXPECT_TRUE(std::isnan(PairwiseCorrelation(x.data(), flat.data(), 6)));
}

// `a` is planted (it knows the next bar's return); b = 2a + 1 is the same signal; d = −a plus
// a little noise; c is independent noise. One of a, b, d is kept and the other two join
// its cluster; c is kept. Every kept pair is below max_corr; every dropped signal's cluster
// is kept, ranked above it and correlated beyond max_corr.
TEST(Mine, CorrelationFilterKeepsOneOfEachClusterOfConstructedSeries) {
  Rng rng(5);
  const market::Bars b = RandomWalkBars(rng, 40, 10);
  const size_t n = b.size();
  std::vector<double> a(n), bb(n), c(n), d(n);
  for (size_t t = 0; t < n; ++t) {
    const bool last = b.last_in_session[t] || (t + 1 < n && b.last_in_session[t + 1]);
    const double future = last ? 0.0 : b.open[t + 2] / b.open[t + 1] - 1;  // ranking test only
    a[t] = future + 0.0005 * rng.Normal();
    bb[t] = 2 * a[t] + 1;
    c[t] = rng.Normal();
    d[t] = -a[t] + 0.00002 * rng.Normal();
  }
  a[3] = kNaN;  // one NaN: the pairwise path
  MineInput in;
  in.names = {"a", "b", "c", "d"};
  in.regime = {0, 0, 0, 0};
  in.symbols.push_back(SymbolColumns{&b, {a, bb, c, d}});
  Result<MineResult> r = Mine(in, Options(0, 0));
  ASSERT_TRUE(r.ok()) << r.status().message();
  int kept_abd = 0;
  for (int i : {0, 1, 3}) kept_abd += r->signals[i].kept ? 1 : 0;
  EXPECT_EQ(kept_abd, 1);
  EXPECT_TRUE(r->signals[2].kept);
  const std::vector<std::vector<double>> cols = {a, bb, c, d};
  for (size_t i = 0; i < r->kept.size(); ++i) {
    for (size_t j = 0; j < r->kept.size(); ++j) {
      const double ref = TwoPassCorrelation(cols[r->kept[i]], cols[r->kept[j]]);
      EXPECT_NEAR(r->kept_corr[i][j], ref, 1e-9);
      if (i != j) {
        EXPECT_LE(std::fabs(ref), 0.95);
      }
    }
  }
  for (int i : {0, 1, 3}) {
    const SignalResult& s = r->signals[i];
    if (s.kept) continue;
    const auto it = std::find(in.names.begin(), in.names.end(), s.cluster);
    ASSERT_NE(it, in.names.end()) << s.cluster;
    const int k = static_cast<int>(it - in.names.begin());
    EXPECT_TRUE(r->signals[k].kept);
    EXPECT_LT(r->signals[k].rank, s.rank);
    EXPECT_GT(std::fabs(TwoPassCorrelation(cols[i], cols[k])), 0.95);
  }
}

// ------------------------------------------------------------------ Deflated Sharpe Ratio

// Φ from std::erfc and Φ⁻¹ by bisection on it: independent of eval's rational approximation.
double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double PhiInverse(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (Phi(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

TEST(Dsr, NormalQuantileMatchesKnownValues) {
  // Standard normal quantiles (e.g. Abramowitz & Stegun, table 26.5).
  EXPECT_NEAR(PhiInverse(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(PhiInverse(0.99), 2.326347874040841, 1e-12);
  EXPECT_NEAR(PhiInverse(0.5), 0.0, 1e-12);
}

// Bailey & López de Prado (2014), "The Deflated Sharpe Ratio: Correcting for Selection
// Bias, Backtest Overfitting and Non-Normality", Journal of Portfolio Management 40(5),
// section 4 (numerical example): N = 100 trials, annualised V[SR] = 1/2, the selected
// strategy's annualised SR = 2.5 over T = 1,250 daily returns (250 per year), skewness −3,
// kurtosis 10; the paper reports SR0 ≈ 0.1132 (daily) and DSR ≈ 0.9004.
TEST(Dsr, ReproducesThePapersWorkedExample) {
  const double per_year = 250;
  const double sr0 = ExpectedMaxSharpe(100, 0.5 / per_year);
  EXPECT_NEAR(sr0, 0.1132, 5e-5);
  const double sr = 2.5 / std::sqrt(per_year);
  const double dsr =
      Phi((sr - sr0) * std::sqrt(1250 - 1.0) / std::sqrt(1 + 3 * sr + (10 - 1) / 4.0 * sr * sr));
  EXPECT_NEAR(dsr, 0.9004, 5e-5);
  // The independent formula for SR0.
  const double g = 0.5772156649015329;
  const double sr0_ref = std::sqrt(0.5 / per_year) * ((1 - g) * PhiInverse(1 - 1.0 / 100) +
                                                      g * PhiInverse(1 - 1.0 / (100 * M_E)));
  EXPECT_NEAR(sr0, sr0_ref, 1e-12 * sr0_ref);
}

// DeflatedSharpe on a P&L series equals the formula with moments computed here.
TEST(Dsr, MatchesAnIndependentComputationOnASeries) {
  Rng rng(9);
  std::vector<double> pnl;
  for (int i = 0; i < 400; ++i) {
    const double z = rng.Normal();
    pnl.push_back(0.0008 + 0.01 * z + 0.004 * (z * z - 1));  // skewed
  }
  const double n = static_cast<double>(pnl.size());
  double m = 0;
  for (double v : pnl) m += v / n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (double v : pnl) {
    m2 += std::pow(v - m, 2) / n;
    m3 += std::pow(v - m, 3) / n;
    m4 += std::pow(v - m, 4) / n;
  }
  const double sd1 = std::sqrt(m2 * n / (n - 1));
  const double sr = m / sd1, skew = m3 / std::pow(m2, 1.5), kurt = m4 / (m2 * m2);
  const double trials = 40, var = 0.0009;
  const double g = 0.5772156649015329;
  const double sr0 = std::sqrt(var) * ((1 - g) * PhiInverse(1 - 1 / trials) +
                                       g * PhiInverse(1 - 1 / (trials * M_E)));
  const double ref =
      Phi((sr - sr0) * std::sqrt(n - 1) / std::sqrt(1 - skew * sr + (kurt - 1) / 4 * sr * sr));
  const Dsr d = DeflatedSharpe(pnl, trials, var);
  EXPECT_NEAR(d.sr0, sr0, 1e-10 * sr0);
  EXPECT_NEAR(d.sharpe, sr, 1e-12 * std::fabs(sr));
  EXPECT_NEAR(d.dsr, ref, 1e-9);
  EXPECT_NEAR(UnitSharpe(pnl), sr, 1e-12 * std::fabs(sr));
}

// ------------------------------------------------------------------ null and planted

// Random-walk bars and random candidate columns (white noise and a persistent AR(1)),
// 24 seeds: the mean number of kept signals with DSR >= 0.95 stays within the expected
// false discoveries plus two standard errors.
TEST(Mine, NullMarketKeepsNoMoreThanTheExpectedFalseDiscoveries) {
  const int seeds = 24;
  std::vector<double> survivors;
  double expected = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    Rng rng(1000 + seed);
    const market::Bars b = RandomWalkBars(rng, 60, 20);
    MineInput in;
    SymbolColumns cols;
    cols.bars = &b;
    for (int k = 0; k < 12; ++k) {
      in.names.push_back(fmt::format("r{}", k));
      in.regime.push_back(0);
      std::vector<double> x(b.size());
      double ar = 0;
      for (double& v : x) {
        ar = (k % 2 ? 0.95 : 0.0) * ar + rng.Normal();
        v = ar;
      }
      cols.values.push_back(std::move(x));
    }
    in.symbols.push_back(std::move(cols));
    MineOptions o = Options(0, 0);
    o.cost_rate = 0.0001;
    Result<MineResult> r = Mine(in, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    survivors.push_back(r->survivors);
    expected += r->expected_false / seeds;
  }
  double mean = 0;
  for (double s : survivors) mean += s / seeds;
  double ss = 0;
  for (double s : survivors) ss += (s - mean) * (s - mean);
  const double se = std::sqrt(ss / (seeds - 1)) / std::sqrt(static_cast<double>(seeds));
  EXPECT_LE(mean, expected + 2 * se) << "mean survivors " << mean << ", expected " << expected;
}

// A column equal to the next bar's return plus noise. It reads the future, so it is
// legitimate only as a test of the ranking: it must rank first (with sign −1: the rule goes
// long when x is low) and survive the DSR.
TEST(Mine, PlantedSignalRanksFirst) {
  Rng rng(21);
  const market::Bars b = RandomWalkBars(rng, 50, 20);
  MineInput in;
  SymbolColumns cols;
  cols.bars = &b;
  for (int k = 0; k < 10; ++k) {
    std::vector<double> x(b.size());
    for (size_t t = 0; t < b.size(); ++t) {
      const bool edge = b.last_in_session[t] || (t + 1 < b.size() && b.last_in_session[t + 1]);
      const double future = edge ? 0.0 : b.open[t + 2] / b.open[t + 1] - 1;
      x[t] = k == 6 ? future + 0.002 * rng.Normal() : rng.Normal();
    }
    in.names.push_back(k == 6 ? std::string("planted") : fmt::format("noise{}", k));
    in.regime.push_back(0);
    cols.values.push_back(std::move(x));
  }
  in.symbols.push_back(std::move(cols));
  Result<MineResult> r = Mine(in, Options(0, 0));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ranked.front(), 6);
  EXPECT_EQ(r->signals[6].sign, -1);
  EXPECT_TRUE(r->signals[6].kept);
  EXPECT_GE(r->signals[6].dsr, 0.95);
}

// ------------------------------------------------------------------ tuning

// Strength 2 on session A of the hand computation above, x = 0.1, 0.05, 0.2, 0.9, 0.5 (five
// bars, opens 100, 101, 99, 102, 104, last close 103), q_lo 0.3, q_hi 0.7: raw = +1, +1, +1,
// −1, (0); runs below q_lo reach 2 at bar 1 and 3 at bar 2, so positions over bars 1..4 are
// 0 (one bar below), +1, +1, 0 (the −1 run has one bar). Gross = (102/99 − 1) + (104/102 −
// 1); changes 1 + 0 + 1 = 2. With strength 1 the rule is the plain one.
TEST(Tuning, StrengthNeedsThatManyBarsInARowAndSmoothingIsAnEma) {
  const market::Bars b = MakeBars({{100, 101, 99, 102, 104}}, {103});
  const std::vector<double> x = {0.1, 0.05, 0.2, 0.9, 0.5};
  const double cost = 0.001;
  const UnitPnl two = RuleSessionPnl(b, x.data(), 0, 5, 0.3, 0.7, 2, cost);
  EXPECT_NEAR(two.gross, (102.0 / 99 - 1) + (104.0 / 102 - 1), 1e-15);
  EXPECT_NEAR(two.cost, 2 * cost, 1e-15);
  const UnitPnl one = RuleSessionPnl(b, x.data(), 0, 5, 0.3, 0.7, 1, cost);
  const UnitPnl plain = SessionPnl(b, x.data(), 0, 5, 0.3, 0.7, cost);
  EXPECT_EQ(one.gross, plain.gross);
  EXPECT_EQ(one.cost, plain.cost);
  // EMA of span 3 (alpha 0.5) from the first finite value: 2, 3, NaN stays NaN, 3.5.
  const std::vector<double> sm = SmoothSignal({kNaN, 2.0, 4.0, kNaN, 4.0}, 3);
  EXPECT_TRUE(std::isnan(sm[0]));
  EXPECT_EQ(sm[1], 2.0);
  EXPECT_EQ(sm[2], 3.0);
  EXPECT_TRUE(std::isnan(sm[3]));
  EXPECT_EQ(sm[4], 3.5);
  EXPECT_EQ(SmoothSignal({1.0, 5.0}, 1), (std::vector<double>{1.0, 5.0}));
}

// Annealing the best kept signals: never worse than the untuned rule on the training
// folds (it starts there and keeps its best), every evaluation counted as a trial, only
// the top ones tuned, and the same result on one thread or two.
TEST(Tuning, AnnealingImprovesTheFoldScoreCountsItsTrialsAndIgnoresThreads) {
  Rng rng(33);
  const market::Bars b = RandomWalkBars(rng, 60, 20);
  MineInput in;
  SymbolColumns cols;
  cols.bars = &b;
  for (int k = 0; k < 6; ++k) {
    std::vector<double> x(b.size());
    double ar = 0;
    for (double& v : x) v = ar = 0.8 * ar + rng.Normal();
    in.names.push_back(fmt::format("s{}", k));
    in.regime.push_back(0);
    cols.values.push_back(std::move(x));
  }
  in.symbols.push_back(std::move(cols));
  MineOptions o = Options(0, 0);
  o.tune_top = 2;
  o.tune_iterations = 40;
  Result<MineResult> plain = Mine(in, Options(0, 0));
  Result<MineResult> one = Mine(in, o);
  o.threads = 2;
  Result<MineResult> two = Mine(in, o);
  ASSERT_TRUE(plain.ok() && one.ok() && two.ok());
  int64_t evaluations = 0;
  int tuned = 0;
  for (size_t i = 0; i < one->signals.size(); ++i) {
    const SignalResult& r = one->signals[i];
    EXPECT_EQ(r.cv_score, plain->signals[i].cv_score) << r.name;
    EXPECT_EQ(r.tuned, two->signals[i].tuned);
    if (!r.tuned) continue;
    ++tuned;
    EXPECT_GE(r.tuned_cv_score, r.cv_score) << r.name;
    EXPECT_EQ(r.tune_evaluations, o.tune_iterations + 1);
    EXPECT_TRUE(r.tuned_lower_q < r.tuned_upper_q);
    EXPECT_EQ(r.tuned_cv_score, two->signals[i].tuned_cv_score);
    EXPECT_EQ(r.tuned_smoothing, two->signals[i].tuned_smoothing);
    evaluations += r.tune_evaluations;
  }
  EXPECT_EQ(tuned, 2);
  EXPECT_TRUE(one->signals[one->kept[0]].tuned && one->signals[one->kept[1]].tuned);
  EXPECT_EQ(one->trials, plain->trials + evaluations);
  // More trials, a higher bar: SR0 grows with N.
  EXPECT_GT(one->sr0, plain->sr0);
}

// ------------------------------------------------------------------ bad input

TEST(Mine, BadOptionsAndTooFewSessionsAreErrorsNamingTheKey) {
  Rng rng(3);
  const market::Bars b = RandomWalkBars(rng, 6, 5);
  MineInput in;
  in.names = {"x", "flat"};
  in.regime = {0, 0};
  std::vector<double> x(b.size()), flat(b.size(), 2.0);
  for (double& v : x) v = rng.Normal();
  in.symbols.push_back(SymbolColumns{&b, {x, flat}});
  MineOptions o = Options(0, 0);
  o.lower_q = 0.7;
  o.upper_q = 0.3;
  o.key_names = {{"lower_q", "--lower-q"}, {"upper_q", "--upper-q"}};
  Result<MineResult> r = Mine(in, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--lower-q"), std::string::npos) << r.status().message();
  o.lower_q = 0.3;
  o.upper_q = 0.7;
  o.folds = 5;  // 6 dates < 2 per fold
  r = Mine(in, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("folds = 5"), std::string::npos) << r.status().message();
  o.folds = 2;
  o.embargo = 0;
  r = Mine(in, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->signals[1].constant);  // excluded and listed
  EXPECT_EQ(r->trials, 2);
  in.named = true;  // named explicitly: an error
  r = Mine(in, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'flat' is constant"), std::string::npos)
      << r.status().message();
}

// ------------------------------------------------------------------ outputs

TEST(Outputs, WriteFourFilesAtomicallyAndThePresetListsTheKeptSignals) {
  Rng rng(4);
  const market::Bars b = RandomWalkBars(rng, 20, 8);
  MineInput in;
  in.names = {"x", "y, quoted"};
  in.regime = {0, 1};
  std::vector<double> x(b.size()), y(b.size());
  for (size_t t = 0; t < b.size(); ++t) {
    x[t] = rng.Normal();
    y[t] = rng.Uniform() < 0.5 ? 1 : 0;
  }
  in.symbols.push_back(SymbolColumns{&b, {x, y}});
  MineOptions o = Options(0, 0);
  Result<MineResult> r = Mine(in, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("rlt_mine_out_" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  Provenance p{"rltrade mine test", "synthetic", "test columns", {"TEST"}};
  ASSERT_TRUE(WriteMineDir(dir, *r, o, p).ok());
  for (const char* f : {"signals.csv", "preset.toml", "report.html", "summary.json"}) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / f)) << f;
  }
  const std::string preset = PresetToml(*r, o, p);
  EXPECT_GT(preset.find("\n[mine]\n"), preset.find("\nsignals = ["));
  EXPECT_NE(preset.find("\n[mine]\n"), std::string::npos);
  EXPECT_NE(SignalsCsv(*r, o).find("\"y, quoted\""), std::string::npos);
  // A directory that is not a mining output is never replaced.
  const std::string other = dir + "_other";
  std::filesystem::create_directories(other);
  EXPECT_FALSE(WriteMineDir(other, *r, o, p).ok());
  EXPECT_TRUE(std::filesystem::is_empty(other));
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(other);
}

}  // namespace
}  // namespace rlt::mine
