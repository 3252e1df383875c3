// rltrade env: CartPoleEnv — Gymnasium's CartPole-v1, for validating the learners.
//
// Not a trading environment: a known-good control task on which PPO must reach the
// reward threshold (475 over 100 episodes) before we trust it on market data. It
// reproduces gymnasium/envs/classic_control/cartpole.py (Barto, Sutton & Anderson 1983,
// with the equations of Florian 2007, "Correct equations for the dynamics of the
// cart-pole system") plus the TimeLimit(500) wrapper that gymnasium.make adds:
//
//   action   Discrete(2), stored as one float: 1 pushes right (+force_mag), anything
//            else (0) pushes left. Values >= 0.5 count as 1, as in ExampleEnv.
//   obs      (x, x_dot, theta, theta_dot) as float32.
//   dynamics temp      = (F + m_p l theta_dot^2 sin theta) / (m_c + m_p)
//            theta_acc = (g sin theta - cos theta temp) /
//                        (l (4/3 - m_p cos^2 theta / (m_c + m_p)))
//            x_acc     = temp - m_p l theta_acc cos theta / (m_c + m_p)
//            explicit Euler with tau: every position uses the old velocity.
//            g = 9.8, m_c = 1.0, m_p = 0.1, l = 0.5 (half the pole), F = ±10, tau = 0.02.
//   reward   +1 every step, including the terminating one (Gymnasium v1 default; the
//            sutton_barto_reward variant is not offered).
//   end      terminated when |x| > 2.4 or |theta| > 12 deg (strict: exactly at the
//            threshold the episode goes on); truncated after max_episode_steps steps.
//            When both happen on one step only `terminated` is set (the house rule of
//            ExampleEnv; Gymnasium's TimeLimit would set both) so learners never
//            bootstrap from a terminal state.
//   reset    all four state values uniform in [-0.05, 0.05) from the env's own rng_.
//
// Precision: like Gymnasium (Python floats) the state is kept and integrated in double;
// only the observation is rounded to float32. The arithmetic follows Gymnasium's
// operation for operation, so from the same state and actions the trajectory is
// bit-identical (envs/gym_golden_test.cc replays recorded Gymnasium 0.29.1 episodes).
// Random numbers come from rlt::Rng, so seeds do not reproduce Gymnasium's NumPy reset
// states, only their distribution.
#ifndef RLT_ENV_ENVS_CARTPOLE_H_
#define RLT_ENV_ENVS_CARTPOLE_H_

#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "env/env.h"

namespace rlt::env {

struct CartPoleOptions {
  int max_episode_steps = 500;  // TimeLimit of CartPole-v1 (truncation)

  template <typename V>
  void VisitFields(V& v) {
    v("max_episode_steps", &max_episode_steps, "steps before truncation (CartPole-v1: 500)");
  }
};

// Owns only its state; not thread-safe (the engine steps it from one thread at a time).
class CartPoleEnv : public Env {
 public:
  // Gymnasium's constants (cartpole.py, CartPoleEnv.__init__).
  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassCart + kMassPole;
  static constexpr double kLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;  // seconds between state updates
  static constexpr double kThetaThreshold = 12 * 2 * 3.14159265358979323846 / 360;
  static constexpr double kXThreshold = 2.4;
  static constexpr double kResetBound = 0.05;

  // The full state (x, x_dot, theta, theta_dot), in double.
  struct State {
    double x = 0, x_dot = 0, theta = 0, theta_dot = 0;
  };

  static Result<std::unique_ptr<CartPoleEnv>> Create(const CartPoleOptions& options);

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
  explicit CartPoleEnv(const CartPoleOptions& options);
  void Write(float* obs, double* info) const;

  CartPoleOptions options_;
  EnvSpec spec_;
  State state_;
  int steps_ = 0;
};

Result<std::unique_ptr<Env>> MakeCartPoleEnv(const std::map<std::string, std::string>& settings);

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_CARTPOLE_H_
