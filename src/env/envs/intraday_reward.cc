// rltrade env: the original composite reward (see intraday_reward.h for definitions).
#include "env/envs/intraday_reward.h"

#include <algorithm>
#include <cmath>

namespace rlt::env {
namespace {

double Squash(double x, double k) { return std::fabs(x) <= 1e-8 ? 0.0 : std::tanh(k * x); }
double NegativeOnly(double x, double k) { return x >= 0 ? 0.0 : std::tanh(k * x); }

double ActionScore(ActionKind kind, double price_change, double trend) {
  switch (kind) {
    case ActionKind::kBuy:
      return price_change > 0 ? 5.0 : (trend > 0.002 ? 3.0 : -1.0);
    case ActionKind::kSell:
      return price_change < 0 ? 5.0 : (trend < -0.002 ? 3.0 : -1.0);
    case ActionKind::kHold:
      return std::fabs(price_change) < 0.002 ? 2.0 : 0.0;
  }
  return 0.0;
}

}  // namespace

void ShapedReward::Reset() { *this = ShapedReward(); }

void ShapedReward::SaveState(StateWriter& out) const {
  prices_.Save(out);
  step_returns_.Save(out);
  kinds_.Save(out);
  abs_a0_.Save(out);
  session_returns_.Save(out);
  out.Put<int32_t>(aligned_steps_);
  const ShapedComponents& c = last_;
  for (double v : {c.profit, c.step, c.action, c.position, c.risk, c.activity, c.sharpe, c.balance,
                   c.daily, c.total}) {
    out.Put(v);
  }
}

Status ShapedReward::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(prices_.Load(in, "shaped reward prices"));
  RLT_RETURN_IF_ERROR(step_returns_.Load(in, "shaped reward step returns"));
  RLT_RETURN_IF_ERROR(kinds_.Load(in, "shaped reward action kinds"));
  RLT_RETURN_IF_ERROR(abs_a0_.Load(in, "shaped reward |a0|"));
  RLT_RETURN_IF_ERROR(session_returns_.Load(in, "shaped reward session returns"));
  for (int k = 0; k < kinds_.count; ++k) {
    const double kind = kinds_.Back(k);
    if (!(kind == 0.0 || kind == 1.0 || kind == 2.0)) {
      return in.Error("shaped reward action kinds must be 0, 1 or 2");
    }
  }
  int32_t aligned = 0;
  RLT_RETURN_IF_ERROR(in.Get(&aligned, "shaped reward aligned steps"));
  aligned_steps_ = aligned;
  ShapedComponents& c = last_;
  for (double* v : {&c.profit, &c.step, &c.action, &c.position, &c.risk, &c.activity, &c.sharpe,
                    &c.balance, &c.daily, &c.total}) {
    RLT_RETURN_IF_ERROR(in.Get(v, "shaped reward components"));
  }
  return Status::Ok();
}

float ShapedReward::Step(const ShapedStepInput& in) {
  const double c0 = in.initial_capital, p = in.fill_price;
  ShapedComponents c;
  // Price history: previous and 10-steps-ago fill prices, before pushing this one.
  const double price_change = prices_.count >= 1 ? (p - prices_.Back(0)) / prices_.Back(0) : 0.0;
  const double trend = prices_.count >= 10 ? (p - prices_.Back(9)) / prices_.Back(9) : 0.0;
  prices_.Push(p);

  c.profit = (in.net_worth - c0) / c0 * 100.0;
  c.step = in.step_pnl / c0 * 1000.0;
  c.action = ActionScore(in.kind, price_change, trend);

  const bool aligned = (in.shares > 0 && trend > 0.002) || (in.shares < 0 && trend < -0.002);
  if (aligned) {
    ++aligned_steps_;
    c.position = std::fabs(static_cast<double>(in.shares)) * p * std::fabs(trend) * 15.0 +
                 (aligned_steps_ > 5 ? 1.0 : 0.0);
  } else {
    aligned_steps_ = 0;
  }
  c.risk = -std::max(0.0, (std::fabs(static_cast<double>(in.shares) * p) / c0 - 2.0) * 10.0);

  abs_a0_.Push(std::fabs(in.a0));
  double mean_abs = 0;
  for (int k = 0; k < abs_a0_.count; ++k) mean_abs += abs_a0_.Back(k);
  mean_abs /= abs_a0_.count;
  if (mean_abs > 0.25) c.activity -= (mean_abs - 0.25) * 60.0;
  int streak = 0;
  while (streak < std::min(5, abs_a0_.count) && abs_a0_.Back(streak) > 0.3) ++streak;
  if (streak >= 2) c.activity -= 10.0 * streak;

  step_returns_.Push(in.step_pnl / c0);
  if (step_returns_.count >= 10) {
    double mean = 0, var = 0;
    for (int k = 0; k < step_returns_.count; ++k) mean += step_returns_.Back(k);
    mean /= step_returns_.count;
    for (int k = 0; k < step_returns_.count; ++k) {
      var += (step_returns_.Back(k) - mean) * (step_returns_.Back(k) - mean);
    }
    c.sharpe = mean / (std::sqrt(var / step_returns_.count) + 1e-8) * 10.0;
  }

  kinds_.Push(static_cast<double>(in.kind));
  bool seen[3] = {false, false, false};
  for (int k = 0; k < kinds_.count; ++k) seen[static_cast<int>(kinds_.Back(k))] = true;
  c.balance = (seen[0] + seen[1] + seen[2] - 1) * 1.5;

  if (in.session_end) {
    const double r = in.session_pnl / c0;
    session_returns_.Push(r);
    c.daily = r * (r > 0 ? 500.0 : 200.0) + in.flatten_pnl / c0 * 100.0;
    if (session_returns_.count >= 3) {
      double mean = 0;
      for (int k = 0; k < session_returns_.count; ++k) mean += session_returns_.Back(k);
      c.daily += mean / session_returns_.count * 25.0;
    }
  }

  c.total = 0.3 * Squash(c.profit, 0.2) + 0.1 * Squash(c.step, 0.1) + 0.1 * Squash(c.action, 0.1) +
            0.05 * Squash(c.position, 0.15) + 0.05 * NegativeOnly(c.risk, 0.05) +
            0.05 * NegativeOnly(c.activity, 0.15) + 0.25 * Squash(c.sharpe, 0.15) +
            0.05 * Squash(c.balance, 0.05) + 0.05 * Squash(c.daily, 0.05);
  last_ = c;
  return static_cast<float>(std::clamp(0.1 * c.total, -0.1, 0.1));
}

}  // namespace rlt::env
