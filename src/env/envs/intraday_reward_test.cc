// Tests of the original composite ("shaped") intraday reward (intraday_reward.h).
//
// The oracle is a second, deliberately plain implementation written here from the
// definitions in the header comment: whole std::vector histories and explicit "last n"
// slices instead of ring buffers. ShapedReward::Step must agree with it to 1e-12 on every
// component over long random input sequences; a few hand-computed cases pin the edges.
#include "env/envs/intraday_reward.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.h"

namespace rlt::env {
namespace {

// The spec of intraday_reward.h, written out step by step.
class ReferenceShapedReward {
 public:
  ShapedComponents Step(const ShapedStepInput& in) {
    const double c0 = in.initial_capital, p = in.fill_price;
    ShapedComponents c;
    // price_change and trend against the previous and 10-steps-ago fill prices.
    double price_change = 0.0, trend = 0.0;
    if (!prices_.empty()) price_change = (p - prices_.back()) / prices_.back();
    if (prices_.size() >= 10) {
      const double p10 = prices_[prices_.size() - 10];
      trend = (p - p10) / p10;
    }
    prices_.push_back(p);

    c.profit = (in.net_worth - c0) / c0 * 100.0;
    c.step = in.step_pnl / c0 * 1000.0;
    if (in.kind == ActionKind::kBuy) {
      if (price_change > 0)
        c.action = 5;
      else if (trend > 0.002)
        c.action = 3;
      else
        c.action = -1;
    } else if (in.kind == ActionKind::kSell) {
      if (price_change < 0)
        c.action = 5;
      else if (trend < -0.002)
        c.action = 3;
      else
        c.action = -1;
    } else {
      c.action = std::fabs(price_change) < 0.002 ? 2 : 0;
    }

    const bool long_aligned = in.shares > 0 && trend > 0.002;
    const bool short_aligned = in.shares < 0 && trend < -0.002;
    if (long_aligned || short_aligned) {
      held_aligned_ += 1;
      c.position = std::abs(static_cast<double>(in.shares)) * p * std::fabs(trend) * 15.0;
      if (held_aligned_ > 5) c.position += 1.0;
    } else {
      held_aligned_ = 0;
      c.position = 0;
    }

    const double exposure = std::fabs(static_cast<double>(in.shares) * p) / c0;
    c.risk = -std::max(0.0, (exposure - 2.0) * 10.0);

    abs_a0_.push_back(std::fabs(static_cast<double>(in.a0)));
    const std::vector<double> last10 = Last(abs_a0_, 10);
    double m = 0;
    for (double x : last10) m += x;
    m /= static_cast<double>(last10.size());
    c.activity = 0;
    if (m > 0.25) c.activity += -(m - 0.25) * 60.0;
    const std::vector<double> last5 = Last(abs_a0_, 5);
    int k = 0;  // length of the newest run of |a0| > 0.3 within the last 5
    for (auto it = last5.rbegin(); it != last5.rend() && *it > 0.3; ++it) ++k;
    if (k >= 2) c.activity -= 10.0 * k;

    step_returns_.push_back(in.step_pnl / c0);
    const std::vector<double> last20 = Last(step_returns_, 20);
    if (last20.size() >= 10) {
      double mean = 0, ss = 0;
      for (double x : last20) mean += x;
      mean /= static_cast<double>(last20.size());
      for (double x : last20) ss += (x - mean) * (x - mean);
      const double stddev = std::sqrt(ss / static_cast<double>(last20.size()));
      c.sharpe = mean / (stddev + 1e-8) * 10.0;
    }

    kinds_.push_back(static_cast<int>(in.kind));
    std::vector<int> last_kinds(kinds_.end() - std::min<size_t>(20, kinds_.size()), kinds_.end());
    std::sort(last_kinds.begin(), last_kinds.end());
    const auto distinct = std::unique(last_kinds.begin(), last_kinds.end()) - last_kinds.begin();
    c.balance = (static_cast<double>(distinct) - 1.0) * 1.5;

    if (in.session_end) {
      const double r = in.session_pnl / c0;
      session_returns_.push_back(r);
      c.daily = r * (r > 0 ? 500.0 : 200.0) + in.flatten_pnl / c0 * 100.0;
      if (session_returns_.size() >= 3) {
        const std::vector<double> last_sessions = Last(session_returns_, 5);
        double mean = 0;
        for (double x : last_sessions) mean += x;
        c.daily += mean / static_cast<double>(last_sessions.size()) * 25.0;
      }
    }

    c.total = 0.3 * S(c.profit, 0.2) + 0.1 * S(c.step, 0.1) + 0.1 * S(c.action, 0.1) +
              0.05 * S(c.position, 0.15) + 0.05 * N(c.risk, 0.05) + 0.05 * N(c.activity, 0.15) +
              0.25 * S(c.sharpe, 0.15) + 0.05 * S(c.balance, 0.05) + 0.05 * S(c.daily, 0.05);
    return c;
  }

  static double Clipped(double total) { return std::min(0.1, std::max(-0.1, 0.1 * total)); }

 private:
  static double S(double x, double k) { return std::fabs(x) <= 1e-8 ? 0.0 : std::tanh(k * x); }
  static double N(double x, double k) { return x >= 0 ? 0.0 : std::tanh(k * x); }
  static std::vector<double> Last(const std::vector<double>& v, size_t n) {
    return std::vector<double>(v.end() - std::min(n, v.size()), v.end());
  }

  std::vector<double> prices_, abs_a0_, step_returns_, session_returns_;
  std::vector<int> kinds_;
  int held_aligned_ = 0;
};

void ExpectComponentsNear(const ShapedComponents& got, const ShapedComponents& want, int step) {
  auto near = [&](double g, double w, const char* name) {
    EXPECT_NEAR(g, w, 1e-12 * std::max(1.0, std::fabs(w))) << name << " at step " << step;
  };
  near(got.profit, want.profit, "profit");
  near(got.step, want.step, "step");
  near(got.action, want.action, "action");
  near(got.position, want.position, "position");
  near(got.risk, want.risk, "risk");
  near(got.activity, want.activity, "activity");
  near(got.sharpe, want.sharpe, "sharpe");
  near(got.balance, want.balance, "balance");
  near(got.daily, want.daily, "daily");
  near(got.total, want.total, "total");
}

ActionKind KindOf(float a0) {
  if (a0 >= 0.3f) return ActionKind::kBuy;
  if (a0 <= -0.3f) return ActionKind::kSell;
  return ActionKind::kHold;
}

// A random but plausible input stream: trending and flat price stretches, actions whose
// kind follows the a0 thresholds, positions large enough to trigger the risk term,
// sessions ending every ~12 steps.
ShapedStepInput RandomInput(Rng& rng, double c0, double* price, double* net_worth,
                            double* session_start) {
  ShapedStepInput in;
  in.initial_capital = c0;
  const double u = rng.Uniform();
  if (u < 0.15) {
    // unchanged price: price_change exactly 0
  } else if (u < 0.6) {
    *price *= 1.0 + rng.Normal(0.0, 0.004);
  } else {
    *price *= 1.0 + (rng.Bernoulli(0.5) ? 1 : -1) * rng.Uniform(0.0005, 0.006);
  }
  in.fill_price = *price;
  const double v = rng.Uniform();
  in.a0 = v < 0.1 ? 0.0f : static_cast<float>(rng.Uniform(-1.0, 1.0));
  in.kind = KindOf(in.a0);
  const double w = rng.Uniform();
  in.shares = w < 0.2 ? 0 : static_cast<int64_t>(rng.UniformInt(801)) - 400;
  in.step_pnl = rng.Bernoulli(0.1) ? 0.0 : rng.Normal(0.0, 0.002 * c0);
  *net_worth += in.step_pnl;
  in.net_worth = *net_worth;
  in.session_end = rng.Bernoulli(1.0 / 12.0);
  if (in.session_end) {
    in.session_pnl = *net_worth - *session_start;
    in.flatten_pnl = rng.Normal(0.0, 0.001 * c0);
    *session_start = *net_worth;
  }
  return in;
}

TEST(ShapedReward, MatchesThePlainReferenceOverLongRandomSequences) {
  for (uint64_t seed : {1u, 2u, 3u, 17u, 99u}) {
    Rng rng(seed);
    const double c0 = 10000.0;
    double price = 100.0, net_worth = c0, session_start = c0;
    ShapedReward reward;
    ReferenceShapedReward reference;
    int risk_seen = 0, position_seen = 0, sessions_seen = 0;
    for (int i = 0; i < 3000; ++i) {
      const ShapedStepInput in = RandomInput(rng, c0, &price, &net_worth, &session_start);
      const float got = reward.Step(in);
      const ShapedComponents want = reference.Step(in);
      ExpectComponentsNear(reward.last(), want, i);
      EXPECT_FLOAT_EQ(got, static_cast<float>(ReferenceShapedReward::Clipped(want.total)))
          << "seed " << seed << " step " << i;
      risk_seen += want.risk < 0;
      position_seen += want.position > 0;
      sessions_seen += in.session_end;
      if (HasFailure()) return;  // one divergence is enough to read
    }
    // The stream must exercise the branches the comparison is about.
    EXPECT_GT(risk_seen, 10) << "seed " << seed;
    EXPECT_GT(position_seen, 10) << "seed " << seed;
    EXPECT_GT(sessions_seen, 50) << "seed " << seed;
  }
}

TEST(ShapedReward, ResetForgetsEveryHistory) {
  Rng rng(5);
  const double c0 = 10000.0;
  double price = 100.0, net_worth = c0, session_start = c0;
  std::vector<ShapedStepInput> inputs;
  for (int i = 0; i < 60; ++i) {
    inputs.push_back(RandomInput(rng, c0, &price, &net_worth, &session_start));
  }
  ShapedReward reward;
  for (const auto& in : inputs) reward.Step(in);
  reward.Reset();
  ReferenceShapedReward fresh;
  for (int i = 0; i < 30; ++i) {
    reward.Step(inputs[i]);
    ExpectComponentsNear(reward.last(), fresh.Step(inputs[i]), i);
  }
}

// One step's input with every component zero except those a test sets.
ShapedStepInput Quiet(double c0, double price) {
  ShapedStepInput in;
  in.initial_capital = c0;
  in.net_worth = c0;
  in.fill_price = price;
  in.kind = ActionKind::kHold;
  return in;
}

TEST(ShapedReward, SquashIgnoresValuesWithinOneEMinus8OfZero) {
  // First step, hold at an unchanged (first) price: action = 2, all else 0 except profit.
  ShapedReward tiny;
  ShapedStepInput in = Quiet(1.0, 100.0);
  in.net_worth = 1.0 + 5e-11;  // profit = 5e-9 <= 1e-8: squashed to exactly 0
  tiny.Step(in);
  EXPECT_NEAR(tiny.last().profit, 5e-9, 1e-15);
  EXPECT_DOUBLE_EQ(tiny.last().total, 0.1 * std::tanh(0.1 * 2.0));

  ShapedReward small;
  in.net_worth = 1.0 + 2e-10;  // profit = 2e-8 > 1e-8: tanh(0.2 * 2e-8) counts
  small.Step(in);
  EXPECT_NEAR(small.last().total - 0.1 * std::tanh(0.2), 0.3 * std::tanh(0.2 * 2e-8), 1e-15);
  EXPECT_GT(small.last().total, tiny.last().total);
}

TEST(ShapedReward, NegativeOnlyTermsIgnoreNonNegativeRiskAndActivity) {
  // Exposure exactly 2 x capital: risk = -max(0, 0) = 0, contributing nothing.
  ShapedReward reward;
  ShapedStepInput in = Quiet(10000.0, 100.0);
  in.shares = 200;
  reward.Step(in);
  EXPECT_EQ(reward.last().risk, 0.0);
  EXPECT_DOUBLE_EQ(reward.last().total, 0.1 * std::tanh(0.2));
  // Exposure 3 x capital: risk = -(3 - 2) * 10 = -10, weighted 0.05 tanh(0.05 * -10).
  ShapedReward risky;
  in.shares = -300;
  risky.Step(in);
  EXPECT_EQ(risky.last().risk, -10.0);
  EXPECT_DOUBLE_EQ(risky.last().total, 0.1 * std::tanh(0.2) + 0.05 * std::tanh(-0.5));
}

// The action score after ten earlier fill prices `history` and this step's price `p`.
double ActionScoreAfter(ActionKind kind, const std::vector<double>& history, double p) {
  ShapedReward reward;
  for (double h : history) reward.Step(Quiet(10000.0, h));
  ShapedStepInput in = Quiet(10000.0, p);
  in.kind = kind;
  reward.Step(in);
  return reward.last().action;
}

TEST(ShapedReward, ActionScoreFollowsTheTable) {
  // P_-10 = 100, P_-1 = 101.
  const std::vector<double> up(9, 100.0);
  std::vector<double> h = up;
  h.push_back(101.0);
  // Buy: price rose -> 5; fell but 10-step trend 0.5% > 0.2% -> 3; fell, trend 0.1% -> -1.
  EXPECT_EQ(ActionScoreAfter(ActionKind::kBuy, h, 101.5), 5.0);
  EXPECT_EQ(ActionScoreAfter(ActionKind::kBuy, h, 100.5), 3.0);
  EXPECT_EQ(ActionScoreAfter(ActionKind::kBuy, h, 100.1), -1.0);
  // Sell mirrors: P_-10 = 100, P_-1 = 99.
  std::vector<double> d = up;
  d.push_back(99.0);
  EXPECT_EQ(ActionScoreAfter(ActionKind::kSell, d, 98.5), 5.0);
  EXPECT_EQ(ActionScoreAfter(ActionKind::kSell, d, 99.5), 3.0);
  EXPECT_EQ(ActionScoreAfter(ActionKind::kSell, d, 99.9), -1.0);
  // A rising price is no reason to sell, even in a down trend it is not part of.
  EXPECT_EQ(ActionScoreAfter(ActionKind::kSell, h, 101.5), -1.0);
  // Hold: |change| < 0.2% -> 2, else 0.
  EXPECT_EQ(ActionScoreAfter(ActionKind::kHold, h, 101.1), 2.0);
  EXPECT_EQ(ActionScoreAfter(ActionKind::kHold, h, 102.0), 0.0);
  // Trend needs ten earlier prices: with nine, a falling buy scores -1, not 3.
  std::vector<double> nine(h.begin() + 1, h.end());
  EXPECT_EQ(ActionScoreAfter(ActionKind::kBuy, nine, 100.5), -1.0);
}

TEST(ShapedReward, PositionPaysForAlignedHoldingAndAddsOneAfterFiveSteps) {
  // Prices rise 1% a step: from the 11th step trend = (1.01^10 - 1) > 0.002.
  ShapedReward reward;
  double p = 100.0;
  std::vector<double> prices;
  for (int i = 0; i < 10; ++i, p *= 1.01) {
    prices.push_back(p);
    reward.Step(Quiet(10000.0, p));
  }
  for (int held = 1; held <= 7; ++held, p *= 1.01) {
    prices.push_back(p);
    ShapedStepInput in = Quiet(10000.0, p);
    in.shares = 10;
    reward.Step(in);
    const double p10 = prices[prices.size() - 11];
    const double want = 10 * p * (p - p10) / p10 * 15.0 + (held > 5 ? 1.0 : 0.0);
    EXPECT_NEAR(reward.last().position, want, 1e-9) << "held " << held;
  }
  // A short position against the up trend earns nothing and restarts the counter.
  ShapedStepInput in = Quiet(10000.0, p);
  in.shares = -10;
  reward.Step(in);
  EXPECT_EQ(reward.last().position, 0.0);
  p *= 1.01;
  in = Quiet(10000.0, p);
  in.shares = 10;
  reward.Step(in);
  const double trend = (p - prices[prices.size() - 9]) / prices[prices.size() - 9];
  EXPECT_NEAR(reward.last().position, 10 * p * trend * 15.0, 1e-9);  // no +1: counter restarted
}

TEST(ShapedReward, ActivityPenalisesBusyAverageAndStreaks) {
  ShapedReward reward;
  ShapedStepInput in = Quiet(10000.0, 100.0);
  in.a0 = 0.5f;
  in.kind = ActionKind::kBuy;
  // One busy action: m = 0.5 -> -(0.25) * 60 = -15; a streak of 1 is not penalised.
  reward.Step(in);
  EXPECT_DOUBLE_EQ(reward.last().activity, -15.0);
  // Second: streak 2 -> -20 more.
  reward.Step(in);
  EXPECT_DOUBLE_EQ(reward.last().activity, -15.0 - 20.0);
  // The streak counts only the last five actions: after seven busy ones it stays 5.
  for (int i = 0; i < 5; ++i) reward.Step(in);
  EXPECT_DOUBLE_EQ(reward.last().activity, -15.0 - 50.0);
  // A quiet action ends the streak; m = 3.5 / 8.
  in.a0 = -0.2f;
  in.kind = ActionKind::kHold;
  reward.Step(in);
  const double m = (7 * 0.5 + static_cast<double>(0.2f)) / 8.0;
  EXPECT_DOUBLE_EQ(reward.last().activity, -(m - 0.25) * 60.0);
  // |a0| = 0.25 twice: m = 0.25 is not > 0.25 and 0.25 is not > 0.3: no penalty at all.
  ShapedReward edge;
  in.a0 = 0.25f;
  edge.Step(in);
  edge.Step(in);
  EXPECT_EQ(edge.last().activity, 0.0);
}

TEST(ShapedReward, SharpeStartsAtTenStepsWithPopulationStd) {
  // step returns alternate 1 and 3 (C0 = 1): mean 2, population std 1 -> 20 / (1 + 1e-8).
  ShapedReward reward;
  for (int i = 0; i < 12; ++i) {
    ShapedStepInput in = Quiet(1.0, 100.0);
    in.step_pnl = i % 2 == 0 ? 1.0 : 3.0;
    reward.Step(in);
    if (i < 9) {
      EXPECT_EQ(reward.last().sharpe, 0.0) << "only " << i + 1 << " returns";
    } else if (i == 9) {
      EXPECT_NEAR(reward.last().sharpe, 2.0 / (1.0 + 1e-8) * 10.0, 1e-12);
    }
  }
  // Twelve returns, six of each: mean 2, population std 1 again.
  EXPECT_NEAR(reward.last().sharpe, 20.0 / (1.0 + 1e-8), 1e-12);
}

TEST(ShapedReward, BalanceCountsDistinctKindsOfTheLastTwentyActions) {
  ShapedReward reward;
  ShapedStepInput in = Quiet(10000.0, 100.0);
  in.kind = ActionKind::kBuy;
  reward.Step(in);
  EXPECT_EQ(reward.last().balance, 0.0);
  in.kind = ActionKind::kSell;
  reward.Step(in);
  EXPECT_EQ(reward.last().balance, 1.5);
  in.kind = ActionKind::kHold;
  reward.Step(in);
  EXPECT_EQ(reward.last().balance, 3.0);
  // 18 more holds: the buy is still the 20th newest -> 3 kinds; one more pushes it out.
  for (int i = 0; i < 17; ++i) reward.Step(in);
  EXPECT_EQ(reward.last().balance, 3.0);
  reward.Step(in);
  EXPECT_EQ(reward.last().balance, 1.5);
  reward.Step(in);
  EXPECT_EQ(reward.last().balance, 0.0);
}

TEST(ShapedReward, DailyTermScoresSessionsAndAveragesFromTheThird) {
  ShapedReward reward;
  ShapedStepInput in = Quiet(10000.0, 100.0);
  in.session_end = true;
  in.session_pnl = 100.0;  // r = 0.01 -> 5
  in.flatten_pnl = 20.0;   // + 0.002 * 100 = 0.2
  reward.Step(in);
  EXPECT_NEAR(reward.last().daily, 5.2, 1e-12);
  in.session_pnl = -100.0;  // r = -0.01 -> -2
  in.flatten_pnl = 0.0;
  reward.Step(in);
  EXPECT_NEAR(reward.last().daily, -2.0, 1e-12);
  in.session_end = false;
  reward.Step(in);
  EXPECT_EQ(reward.last().daily, 0.0);
  in.session_end = true;
  in.session_pnl = 300.0;  // r = 0.03 -> 15, mean(0.01, -0.01, 0.03) * 25 = 0.25
  reward.Step(in);
  EXPECT_NEAR(reward.last().daily, 15.0 + 0.25, 1e-12);
}

}  // namespace
}  // namespace rlt::env
