// rltrade env: DeltaHedgingEnv implementation and the Monte Carlo hedging simulation (see
// delta_hedging.h).
#include "env/envs/delta_hedging.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/options.h"
#include "env/envs/chain_hedging_env.h"
#include "pricing/pricing.h"

namespace rlt::env {
namespace {

constexpr double kWeeksPerYear = 52.0;

std::string Num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

Status Bad(const std::string& key, double value, const std::string& expected) {
  return Status::InvalidArgument("[env] " + key + " = " + Num(value) + ": expected " + expected);
}

bool Finite(double x) { return std::isfinite(x); }

}  // namespace

Result<std::unique_ptr<DeltaHedgingEnv>> DeltaHedgingEnv::Create(const HedgingOptions& o) {
  // Every check is written so that NaN fails it.
  if (!(o.option_type == "call" || o.option_type == "put")) {
    return Status::InvalidArgument("[env] option_type = '" + o.option_type +
                                   "': expected call or put");
  }
  if (!(o.spot >= 1e-6 && o.spot <= 1e9)) return Bad("spot", o.spot, "a price in [1e-6, 1e9]");
  if (!(o.strike >= 1e-6 && o.strike <= 1e9)) {
    return Bad("strike", o.strike, "a price in [1e-6, 1e9]");
  }
  if (!(std::fabs(o.rate) <= 1)) return Bad("rate", o.rate, "a rate in [-1, 1] (0.05 = 5%)");
  if (!(std::fabs(o.drift) <= 5)) return Bad("drift", o.drift, "a drift in [-5, 5] per year");
  if (!(o.vol >= 1e-4 && o.vol <= 5)) return Bad("vol", o.vol, "a volatility in [1e-4, 5]");
  if (!(o.maturity_weeks > 0 && o.maturity_weeks <= 52 * 30)) {
    return Bad("maturity_weeks", o.maturity_weeks, "weeks in (0, 1560]");
  }
  if (!(o.step_weeks > 0 && o.step_weeks <= o.maturity_weeks)) {
    return Bad("step_weeks", o.step_weeks,
               "weeks in (0, maturity_weeks = " + Num(o.maturity_weeks) + "]");
  }
  if (!(o.maturity_weeks / o.step_weeks <= kMaxSteps)) {
    return Bad("step_weeks", o.step_weeks,
               "at most " + std::to_string(kMaxSteps) + " steps to maturity; use longer steps");
  }
  if (o.rebalance_every < 1) {
    return Bad("rebalance_every", o.rebalance_every, "a number of steps >= 1");
  }
  if (!(o.quantity > 0 && o.quantity <= 1e9)) {
    return Bad("quantity", o.quantity, "a number of options in (0, 1e9]");
  }
  if (!(o.cost >= 0 && o.cost < 1)) return Bad("cost", o.cost, "a fraction in [0, 1)");
  if (!(o.risk_aversion >= 0 && Finite(o.risk_aversion))) {
    return Bad("risk_aversion", o.risk_aversion, "a finite number >= 0");
  }
  if (o.paths == "garch") {
    if (!(o.garch_alpha >= 0 && o.garch_beta >= 0 && o.garch_alpha + o.garch_beta < 1)) {
      return Status::InvalidArgument("[env] garch_alpha = " + Num(o.garch_alpha) +
                                     ", garch_beta = " + Num(o.garch_beta) +
                                     ": expected alpha, beta >= 0 with alpha + beta < 1 "
                                     "(a stationary GARCH(1,1))");
    }
  } else if (o.paths != "gbm") {
    return Status::InvalidArgument("[env] paths = '" + o.paths + "': expected gbm or garch");
  }
  auto env = std::unique_ptr<DeltaHedgingEnv>(new DeltaHedgingEnv(o));
  // The premium: the pricing library's validated scalar reference.
  pricing::OptionInputs in;
  in.type = o.option_type == "call" ? pricing::OptionType::kCall : pricing::OptionType::kPut;
  in.spot = o.spot;
  in.strike = o.strike;
  in.rate = o.rate;
  in.vol = o.vol;
  in.time = env->maturity_;
  Result<double> price = pricing::BsmPrice(in);
  if (!price.ok()) return Status::InvalidArgument("[env] " + price.status().message());
  env->premium_ = *price;
  return env;
}

DeltaHedgingEnv::DeltaHedgingEnv(const HedgingOptions& options) : options_(options) {
  spec_.id = "hedging";
  spec_.obs_dim = kObsDim;
  spec_.action.discrete = false;
  spec_.action.dim = 1;
  spec_.action.low = {-kMaxHedge};
  spec_.action.high = {kMaxHedge};
  spec_.info_names = {"spot", "hedge", "cash", "option_value", "wealth", "costs", "pv_cost"};
  phi_ = options.option_type == "put" ? -1.0 : 1.0;
  garch_ = options.paths == "garch";
  maturity_ = options.maturity_weeks / kWeeksPerYear;
  step_years_ = options.step_weeks / kWeeksPerYear;
  const double ratio = options.maturity_weeks / options.step_weeks;
  num_steps_ = std::max(1, static_cast<int>(std::ceil(ratio * (1 - 1e-9))));
  base_var_ = options.vol * options.vol * step_years_;
  garch_omega_ = base_var_ * (1 - options.garch_alpha - options.garch_beta);
}

double DeltaHedgingEnv::StepYears(int step) const {
  if (step + 1 < num_steps_) return step_years_;
  return maturity_ - step_years_ * (num_steps_ - 1);  // the last step: what is left
}

void DeltaHedgingEnv::Mark(double s, double remaining, double* value, double* delta) const {
  const double moneyness = phi_ * (s - options_.strike);
  if (remaining > pricing::kExpiredTime) {
    // Black-Scholes (Haug 2007, 1.1.1), q = 0: V = phi (S N(phi d1) - K e^{-rT} N(phi d2)),
    // delta = phi N(phi d1). The same closed form as pricing::BsmGreeks without its
    // Result (Step() must not build error strings); the tests check the two agree.
    const double sd = options_.vol * std::sqrt(remaining);
    const double d1 = (std::log(s / options_.strike) +
                       (options_.rate + 0.5 * options_.vol * options_.vol) * remaining) /
                      sd;
    const double d2 = d1 - sd;
    const double n1 = 0.5 * std::erfc(-phi_ * d1 * M_SQRT1_2);  // N(phi d1)
    const double n2 = 0.5 * std::erfc(-phi_ * d2 * M_SQRT1_2);  // N(phi d2)
    *value = std::max(phi_ * (s * n1 - options_.strike * std::exp(-options_.rate * remaining) * n2),
                      0.0);
    *delta = phi_ * n1;
    return;
  }
  *value = std::max(moneyness, 0.0);
  *delta = moneyness > 0 ? phi_ : 0.0;
}

void DeltaHedgingEnv::Reset(float* obs, double* info) {
  step_ = 0;
  time_ = 0;
  spot_ = options_.spot;
  shares_ = 0;
  cash_ = options_.quantity * premium_;  // the premium received
  costs_ = 0;
  var_ = base_var_;
  Mark(spot_, maturity_, &value_, &delta_);
  Write(obs, info);
}

StepResult DeltaHedgingEnv::Step(const float* action, float* obs, double* info) {
  const HedgingOptions& o = options_;
  const double wealth_before = cash_ + shares_ * spot_ - o.quantity * value_;
  if (step_ % o.rebalance_every == 0 && std::isfinite(action[0])) {
    const double ratio =
        std::clamp(static_cast<double>(action[0]), -1.0 * kMaxHedge, 1.0 * kMaxHedge);
    const double target = ratio * o.quantity;
    const double traded = target - shares_;
    const double fee = o.cost * std::fabs(traded) * spot_;
    cash_ -= traded * spot_ + fee;
    costs_ += fee;
    shares_ = target;
  }
  // The underlying moves over this step; cash earns the rate.
  const double dt = StepYears(step_);
  const double z = rng_.Normal();
  double log_return;
  if (garch_) {
    const double h = var_ * (dt / step_years_);  // a shorter last step: scaled variance
    const double shock = std::sqrt(h) * z;
    log_return = o.drift * dt - 0.5 * h + shock;
    var_ = garch_omega_ + o.garch_alpha * (shock * shock) + o.garch_beta * var_;
  } else {
    log_return = (o.drift - 0.5 * o.vol * o.vol) * dt + o.vol * std::sqrt(dt) * z;
  }
  spot_ *= std::exp(log_return);
  cash_ *= std::exp(o.rate * dt);
  time_ += dt;
  ++step_;
  StepResult r;
  if (step_ >= num_steps_) {  // maturity: settle the option, sell the hedge
    time_ = maturity_;
    Mark(spot_, 0.0, &value_, &delta_);
    const double fee = o.cost * std::fabs(shares_) * spot_;
    cash_ += shares_ * spot_ - fee - o.quantity * value_;
    costs_ += fee;
    shares_ = 0;
    value_ = 0;  // settled: nothing left to mark
    r.terminated = true;
  } else {
    Mark(spot_, maturity_ - time_, &value_, &delta_);
  }
  const double pnl = cash_ + shares_ * spot_ - o.quantity * value_ - wealth_before;
  r.reward = static_cast<float>(pnl - 0.5 * o.risk_aversion * pnl * pnl);
  Write(obs, info);
  return r;
}

void DeltaHedgingEnv::SaveState(StateWriter& out) const {
  Env::SaveState(out);  // rng_
  out.Put<int32_t>(step_);
  for (double x : {time_, spot_, shares_, cash_, value_, delta_, var_, costs_}) {
    out.Put<double>(x);
  }
}

Status DeltaHedgingEnv::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(Env::LoadState(in));
  int32_t step = 0;
  RLT_RETURN_IF_ERROR(in.Get(&step, "hedging step"));
  double v[8];
  const char* names[8] = {"time", "spot", "shares", "cash", "value", "delta", "var", "costs"};
  for (int i = 0; i < 8; ++i) {
    RLT_RETURN_IF_ERROR(in.Get(&v[i], names[i]));
    if (!std::isfinite(v[i]))
      return in.Error(std::string("hedging ") + names[i] + " is not finite");
  }
  if (step < 0 || step > num_steps_) {
    return in.Error("hedging step " + std::to_string(step) + " is not in [0, " +
                    std::to_string(num_steps_) + "]");
  }
  if (!(v[1] > 0) || v[6] < 0 || v[7] < 0 || v[0] < 0 || v[0] > maturity_ * (1 + 1e-9)) {
    return in.Error(
        "hedging state out of range (spot <= 0, negative variance or costs, or "
        "time outside the option's life)");
  }
  step_ = step;
  time_ = v[0];
  spot_ = v[1];
  shares_ = v[2];
  cash_ = v[3];
  value_ = v[4];
  delta_ = v[5];
  var_ = v[6];
  costs_ = v[7];
  return Status::Ok();
}

void DeltaHedgingEnv::Write(float* obs, double* info) const {
  const HedgingOptions& o = options_;
  const double remaining = std::max(maturity_ - time_, 0.0);
  obs[0] = static_cast<float>(remaining / maturity_);
  obs[1] = static_cast<float>(std::log(spot_ / o.strike));
  obs[2] = static_cast<float>(shares_ / o.quantity);
  obs[3] = static_cast<float>(delta_);
  const double next_var = garch_ ? var_ : base_var_;
  obs[4] = static_cast<float>(std::sqrt(next_var / step_years_));
  obs[5] = step_ % o.rebalance_every == 0 ? 1.0f : 0.0f;
  const double wealth = cash_ + shares_ * spot_ - o.quantity * value_;
  info[0] = spot_;
  info[1] = shares_ / o.quantity;
  info[2] = cash_;
  info[3] = o.quantity * value_;
  info[4] = wealth;
  info[5] = costs_;
  info[6] = o.quantity * premium_ - std::exp(-o.rate * time_) * wealth;
}

Result<std::shared_ptr<const void>> PrepareHedging(
    const std::map<std::string, std::string>& settings) {
  HedgingOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  if (options.chain_file.empty()) return std::shared_ptr<const void>();
  RLT_ASSIGN_OR_RETURN(std::shared_ptr<const HedgingChainData> data, PrepareHedgingChain(options));
  return std::shared_ptr<const void>(std::move(data));
}

Result<std::unique_ptr<Env>> MakeHedgingEnv(const std::map<std::string, std::string>& settings,
                                            const std::shared_ptr<const void>& prepared) {
  HedgingOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  if (!options.chain_file.empty()) {
    std::shared_ptr<const HedgingChainData> data =
        std::static_pointer_cast<const HedgingChainData>(prepared);
    if (data == nullptr) {
      RLT_ASSIGN_OR_RETURN(data, PrepareHedgingChain(options));
    }
    RLT_ASSIGN_OR_RETURN(auto env, ChainHedgingEnv::Create(options, std::move(data)));
    return std::unique_ptr<Env>(std::move(env));
  }
  const HedgingOptions defaults;
  if (options.contracts != defaults.contracts || options.min_days != defaults.min_days) {
    return Status::InvalidArgument(
        "[env] contracts and min_days apply with chain_file only (a listed chain); drop them "
        "to simulate paths, or set chain_file");
  }
  RLT_ASSIGN_OR_RETURN(auto env, DeltaHedgingEnv::Create(options));
  return std::unique_ptr<Env>(std::move(env));
}

// ---------------------------------------------------------------------------------------

void BsDeltaPolicy(const float* obs, int n, float* actions, bool /*first_step*/) {
  for (int i = 0; i < n; ++i)
    actions[i] = obs[static_cast<size_t>(i) * DeltaHedgingEnv::kObsDim + 3];
}

Result<HedgeSimulation> SimulateHedging(const HedgingOptions& options, int paths, uint64_t seed,
                                        const HedgePolicy& policy) {
  if (paths < 1 || paths > kMaxHedgePaths) {
    return Status::InvalidArgument("paths = " + std::to_string(paths) + ": expected 1 to " +
                                   std::to_string(kMaxHedgePaths));
  }
  const int chunk = std::min(paths, kHedgeChunk);
  std::vector<std::unique_ptr<DeltaHedgingEnv>> envs;
  envs.reserve(chunk);
  for (int i = 0; i < chunk; ++i) {
    RLT_ASSIGN_OR_RETURN(auto env, DeltaHedgingEnv::Create(options));
    envs.push_back(std::move(env));
  }
  const int steps = envs.front()->num_steps();
  const size_t info_dim = envs.front()->spec().info_names.size();
  std::vector<float> obs(static_cast<size_t>(chunk) * DeltaHedgingEnv::kObsDim);  // (chunk, 6)
  std::vector<float> actions(chunk);                                              // (chunk, 1)
  std::vector<double> info(static_cast<size_t>(chunk) * info_dim);  // (chunk, info_dim)
  HedgeSimulation sim;
  sim.bs_price = options.quantity * envs.front()->premium();
  sim.costs.resize(paths);
  double reward_sum = 0;
  for (int first = 0; first < paths; first += chunk) {
    const int n = std::min(chunk, paths - first);
    std::vector<double> returns(n, 0.0);
    for (int i = 0; i < n; ++i) {
      envs[i]->Seed(seed + static_cast<uint64_t>(first + i));
      envs[i]->Reset(&obs[static_cast<size_t>(i) * DeltaHedgingEnv::kObsDim], &info[i * info_dim]);
    }
    for (int s = 0; s < steps; ++s) {
      policy(obs.data(), n, actions.data(), s == 0);
      for (int i = 0; i < n; ++i) {
        const StepResult r =
            envs[i]->Step(&actions[i], &obs[static_cast<size_t>(i) * DeltaHedgingEnv::kObsDim],
                          &info[i * info_dim]);
        returns[i] += r.reward;
        RLT_CHECK_MSG(r.terminated == (s + 1 == steps), "hedging episode length");
      }
    }
    for (int i = 0; i < n; ++i) {
      sim.costs[first + i] = info[i * info_dim + 6];  // pv_cost at maturity
      reward_sum += returns[i];
    }
  }
  double sum = 0;
  for (double c : sim.costs) sum += c;
  sim.mean_cost = sum / paths;
  double ss = 0;
  for (double c : sim.costs) ss += (c - sim.mean_cost) * (c - sim.mean_cost);
  sim.sd_cost = paths > 1 ? std::sqrt(ss / (paths - 1)) : 0.0;
  sim.sd_over_price = sim.bs_price > 0 ? sim.sd_cost / sim.bs_price : 0.0;
  sim.mean_reward = reward_sum / paths;
  return sim;
}

}  // namespace rlt::env
