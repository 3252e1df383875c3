// rltrade env: CartPoleEnv implementation (see cartpole.h for the equations' source).
#include "env/envs/cartpole.h"

#include <cmath>

#include "core/options.h"

namespace rlt::env {
namespace {

// Python's v**2 (float or NumPy float64) is C pow(v, 2.0), which glibc rounds differently
// from v * v in about 0.1% of cases. The exponent is read through a volatile so that the
// compiler cannot rewrite pow(v, 2.0) as v * v.
double PyPow2(double v) {
  static volatile double two = 2.0;
  return std::pow(v, two);
}

}  // namespace

Result<std::unique_ptr<CartPoleEnv>> CartPoleEnv::Create(const CartPoleOptions& o) {
  if (o.max_episode_steps < 1) {
    return Status::InvalidArgument("[env] max_episode_steps must be >= 1 (CartPole-v1: 500), got " +
                                   std::to_string(o.max_episode_steps));
  }
  return std::unique_ptr<CartPoleEnv>(new CartPoleEnv(o));
}

CartPoleEnv::CartPoleEnv(const CartPoleOptions& options) : options_(options) {
  spec_.id = "cartpole";
  spec_.obs_dim = 4;  // x, x_dot, theta, theta_dot
  spec_.action.discrete = true;
  spec_.action.dim = 1;
  spec_.action.n = 2;
  spec_.info_names = {"x", "theta", "steps"};
}

void CartPoleEnv::Reset(float* obs, double* info) {
  // Same draw order as Gymnasium's uniform(size=(4,)): x, x_dot, theta, theta_dot.
  state_.x = rng_.Uniform(-kResetBound, kResetBound);
  state_.x_dot = rng_.Uniform(-kResetBound, kResetBound);
  state_.theta = rng_.Uniform(-kResetBound, kResetBound);
  state_.theta_dot = rng_.Uniform(-kResetBound, kResetBound);
  steps_ = 0;
  Write(obs, info);
}

void CartPoleEnv::SetState(const State& state, float* obs, double* info) {
  state_ = state;
  Write(obs, info);
}

StepResult CartPoleEnv::Step(const float* action, float* obs, double* info) {
  const double force = action[0] >= 0.5f ? kForceMag : -kForceMag;
  const double cos_theta = std::cos(state_.theta);
  const double sin_theta = std::sin(state_.theta);
  // Gymnasium's expressions operation for operation (same grouping, v**2 as pow), so the
  // trajectory is bit-identical to Python's (gym_golden_test.cc; no FMA: CMakeLists.txt).
  const double temp = (force + kPoleMassLength * PyPow2(state_.theta_dot) * sin_theta) / kTotalMass;
  const double theta_acc = (kGravity * sin_theta - cos_theta * temp) /
                           (kLength * (4.0 / 3.0 - kMassPole * PyPow2(cos_theta) / kTotalMass));
  const double x_acc = temp - kPoleMassLength * theta_acc * cos_theta / kTotalMass;
  // Explicit Euler (Gymnasium's default kinematics_integrator = "euler").
  state_.x += kTau * state_.x_dot;
  state_.x_dot += kTau * x_acc;
  state_.theta += kTau * state_.theta_dot;
  state_.theta_dot += kTau * theta_acc;
  ++steps_;

  StepResult r;
  r.terminated = state_.x < -kXThreshold || state_.x > kXThreshold ||
                 state_.theta < -kThetaThreshold || state_.theta > kThetaThreshold;
  r.truncated = !r.terminated && steps_ >= options_.max_episode_steps;
  r.reward = 1.0f;  // every step, the terminating one included (v1)
  Write(obs, info);
  return r;
}

void CartPoleEnv::SaveState(StateWriter& out) const {
  Env::SaveState(out);  // rng_
  out.Put(state_.x);
  out.Put(state_.x_dot);
  out.Put(state_.theta);
  out.Put(state_.theta_dot);
  out.Put<int32_t>(steps_);
}

Status CartPoleEnv::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(Env::LoadState(in));
  State s;
  int32_t steps = 0;
  RLT_RETURN_IF_ERROR(in.Get(&s.x, "cartpole x"));
  RLT_RETURN_IF_ERROR(in.Get(&s.x_dot, "cartpole x_dot"));
  RLT_RETURN_IF_ERROR(in.Get(&s.theta, "cartpole theta"));
  RLT_RETURN_IF_ERROR(in.Get(&s.theta_dot, "cartpole theta_dot"));
  RLT_RETURN_IF_ERROR(in.Get(&steps, "cartpole steps"));
  if (steps < 0) return in.Error("cartpole steps must be >= 0");
  state_ = s;
  steps_ = steps;
  return Status::Ok();
}

void CartPoleEnv::Write(float* obs, double* info) const {
  obs[0] = static_cast<float>(state_.x);
  obs[1] = static_cast<float>(state_.x_dot);
  obs[2] = static_cast<float>(state_.theta);
  obs[3] = static_cast<float>(state_.theta_dot);
  info[0] = state_.x;
  info[1] = state_.theta;
  info[2] = steps_;
}

Result<std::unique_ptr<Env>> MakeCartPoleEnv(const std::map<std::string, std::string>& settings) {
  CartPoleOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  RLT_ASSIGN_OR_RETURN(auto env, CartPoleEnv::Create(options));
  return std::unique_ptr<Env>(std::move(env));
}

}  // namespace rlt::env
