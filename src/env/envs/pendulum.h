// rltrade env: PendulumEnv — Gymnasium's Pendulum-v1, for validating continuous-action
// learners.
//
// Not a trading environment: the classic swing-up task with a Box action, on which PPO
// with a Gaussian policy must get well above the random-policy return (about -1200)
// before we trust it on market data. It reproduces
// gymnasium/envs/classic_control/pendulum.py plus the TimeLimit(200) wrapper that
// gymnasium.make adds:
//
//   action   Box(1) in [-max_torque, max_torque] = [-2, 2]: the torque u, clipped to the
//            bounds inside Step() (the policy may emit any float).
//   obs      (cos theta, sin theta, theta_dot) as float32; theta = 0 is upright.
//   reward   -(angle_normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2) with the state
//            *before* the update and the clipped u; angle_normalize maps to [-pi, pi)
//            like Python's ((a + pi) % (2 pi)) - pi. Range [-16.2736044, 0].
//   dynamics semi-implicit Euler, m = 1, l = 1, dt = 0.05, g = `g` (default 10.0):
//            theta_dot' = clip(theta_dot + (3 g / (2 l) sin theta + 3 / (m l^2) u) dt, -8, 8)
//            theta'     = theta + theta_dot' dt       (theta itself is never wrapped)
//   end      never terminates; truncated after max_episode_steps (200) steps.
//   reset    theta uniform in [-pi, pi), theta_dot uniform in [-1, 1), from rng_.
//
// Precision: like Gymnasium (float64 NumPy state) the state and reward are computed in
// double; the observation is rounded to float32 and the reward to float at the end.
// Random numbers come from rlt::Rng: same distribution as Gymnasium, not same numbers.
// From the same state and actions, recorded Gymnasium 0.29.1 episodes are reproduced to
// 1e-12 in the state (NumPy's sin/cos differ from glibc's in the last bit; see
// envs/gym_golden_test.cc).
#ifndef RLT_ENV_ENVS_PENDULUM_H_
#define RLT_ENV_ENVS_PENDULUM_H_

#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "env/env.h"

namespace rlt::env {

struct PendulumOptions {
  double g = 10.0;              // gravity in m/s^2 (Gymnasium's `g` argument)
  int max_episode_steps = 200;  // TimeLimit of Pendulum-v1 (truncation)

  template <typename V>
  void VisitFields(V& v) {
    v("g", &g, "gravity in m/s^2 (Pendulum-v1: 10.0)");
    v("max_episode_steps", &max_episode_steps, "steps before truncation (Pendulum-v1: 200)");
  }
};

// Owns only its state; not thread-safe (the engine steps it from one thread at a time).
class PendulumEnv : public Env {
 public:
  // Gymnasium's constants (pendulum.py, PendulumEnv.__init__).
  static constexpr double kMaxSpeed = 8.0;
  static constexpr double kMaxTorque = 2.0;
  static constexpr double kDt = 0.05;
  static constexpr double kMass = 1.0;
  static constexpr double kLength = 1.0;
  static constexpr double kPi = 3.14159265358979323846;
  static constexpr double kResetThetaDot = 1.0;  // theta_dot ~ U[-1, 1)

  struct State {
    double theta = 0, theta_dot = 0;
  };

  static Result<std::unique_ptr<PendulumEnv>> Create(const PendulumOptions& options);

  // ((a + pi) mod 2 pi) - pi with a floored modulo (Python's %): result in [-pi, pi).
  static double AngleNormalize(double angle);

  const EnvSpec& spec() const override { return spec_; }
  void Reset(float* obs, double* info) override;
  StepResult Step(const float* action, float* obs, double* info) override;
  void SaveState(StateWriter& out) const override;
  Status LoadState(StateReader& in) override;

  const State& state() const { return state_; }
  // Replaces the state mid-episode (tests, and starting from a chosen state). Writes
  // the matching obs and info; the step count is kept. REQUIRES: Reset() was called.
  void SetState(const State& state, float* obs, double* info);

 private:
  explicit PendulumEnv(const PendulumOptions& options);
  void Write(float* obs, double* info) const;

  PendulumOptions options_;
  EnvSpec spec_;
  State state_;
  double last_torque_ = 0;  // the clipped torque of the last step (info)
  int steps_ = 0;
};

Result<std::unique_ptr<Env>> MakePendulumEnv(const std::map<std::string, std::string>& settings);

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_PENDULUM_H_
