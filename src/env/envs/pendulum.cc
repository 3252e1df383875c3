// rltrade env: PendulumEnv implementation (see pendulum.h for the equations' source).
#include "env/envs/pendulum.h"

#include <cmath>

#include "core/options.h"

namespace rlt::env {
namespace {

// np.clip: a NaN stays NaN (a NaN action from a broken policy shows up in the obs and
// reward instead of being silently replaced by a bound, as std::fmin/fmax would do).
double Clip(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Python's v**2 is C pow(v, 2.0), which glibc rounds differently from v * v in about 0.1%
// of cases; the volatile exponent keeps the compiler from rewriting it as v * v.
double PyPow2(double v) {
  static volatile double two = 2.0;
  return std::pow(v, two);
}

}  // namespace

Result<std::unique_ptr<PendulumEnv>> PendulumEnv::Create(const PendulumOptions& o) {
  if (!(std::isfinite(o.g) && o.g >= 0)) {
    return Status::InvalidArgument("[env] g must be a finite gravity >= 0 (Pendulum-v1: 10.0)");
  }
  if (o.max_episode_steps < 1) {
    return Status::InvalidArgument("[env] max_episode_steps must be >= 1 (Pendulum-v1: 200), got " +
                                   std::to_string(o.max_episode_steps));
  }
  return std::unique_ptr<PendulumEnv>(new PendulumEnv(o));
}

PendulumEnv::PendulumEnv(const PendulumOptions& options) : options_(options) {
  spec_.id = "pendulum";
  spec_.obs_dim = 3;  // cos theta, sin theta, theta_dot
  spec_.action.discrete = false;
  spec_.action.dim = 1;
  spec_.action.low = {static_cast<float>(-kMaxTorque)};
  spec_.action.high = {static_cast<float>(kMaxTorque)};
  spec_.info_names = {"theta", "theta_dot", "torque", "steps"};
}

double PendulumEnv::AngleNormalize(double angle) {
  // Python's float %: fmod, then shifted into the divisor's sign.
  double r = std::fmod(angle + kPi, 2 * kPi);
  if (r < 0) r += 2 * kPi;
  return r - kPi;
}

void PendulumEnv::Reset(float* obs, double* info) {
  // Same draw order as Gymnasium's uniform(low=-high, high=high): theta, then theta_dot.
  state_.theta = rng_.Uniform(-kPi, kPi);
  state_.theta_dot = rng_.Uniform(-kResetThetaDot, kResetThetaDot);
  last_torque_ = 0;
  steps_ = 0;
  Write(obs, info);
}

void PendulumEnv::SetState(const State& state, float* obs, double* info) {
  state_ = state;
  Write(obs, info);
}

StepResult PendulumEnv::Step(const float* action, float* obs, double* info) {
  const double u = Clip(static_cast<double>(action[0]), -kMaxTorque, kMaxTorque);
  const double theta = state_.theta, theta_dot = state_.theta_dot;
  const double angle = AngleNormalize(theta);
  // Gymnasium: angle_normalize(th)**2 + .1 * thdot**2 + .001 * (u**2), v**2 being pow.
  const double cost = PyPow2(angle) + 0.1 * PyPow2(theta_dot) + 0.001 * PyPow2(u);

  const double g = options_.g;
  double new_theta_dot =
      theta_dot +
      (3 * g / (2 * kLength) * std::sin(theta) + 3.0 / (kMass * kLength * kLength) * u) * kDt;
  new_theta_dot = Clip(new_theta_dot, -kMaxSpeed, kMaxSpeed);
  state_.theta = theta + new_theta_dot * kDt;
  state_.theta_dot = new_theta_dot;
  last_torque_ = u;
  ++steps_;

  StepResult r;
  r.reward = static_cast<float>(-cost);
  r.terminated = false;  // Pendulum never terminates
  r.truncated = steps_ >= options_.max_episode_steps;
  Write(obs, info);
  return r;
}

void PendulumEnv::SaveState(StateWriter& out) const {
  Env::SaveState(out);  // rng_
  out.Put(state_.theta);
  out.Put(state_.theta_dot);
  out.Put(last_torque_);
  out.Put<int32_t>(steps_);
}

Status PendulumEnv::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(Env::LoadState(in));
  State s;
  double torque = 0;
  int32_t steps = 0;
  RLT_RETURN_IF_ERROR(in.Get(&s.theta, "pendulum theta"));
  RLT_RETURN_IF_ERROR(in.Get(&s.theta_dot, "pendulum theta_dot"));
  RLT_RETURN_IF_ERROR(in.Get(&torque, "pendulum torque"));
  RLT_RETURN_IF_ERROR(in.Get(&steps, "pendulum steps"));
  if (steps < 0) return in.Error("pendulum steps must be >= 0");
  state_ = s;
  last_torque_ = torque;
  steps_ = steps;
  return Status::Ok();
}

void PendulumEnv::Write(float* obs, double* info) const {
  obs[0] = static_cast<float>(std::cos(state_.theta));
  obs[1] = static_cast<float>(std::sin(state_.theta));
  obs[2] = static_cast<float>(state_.theta_dot);
  info[0] = AngleNormalize(state_.theta);
  info[1] = state_.theta_dot;
  info[2] = last_torque_;
  info[3] = steps_;
}

Result<std::unique_ptr<Env>> MakePendulumEnv(const std::map<std::string, std::string>& settings) {
  PendulumOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  RLT_ASSIGN_OR_RETURN(auto env, PendulumEnv::Create(options));
  return std::unique_ptr<Env>(std::move(env));
}

}  // namespace rlt::env
