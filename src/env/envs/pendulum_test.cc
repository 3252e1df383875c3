#include "env/envs/pendulum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "env/registry.h"
#include "env/vec_env.h"

namespace rlt::env {
namespace {

constexpr double kPi = std::numbers::pi;

std::unique_ptr<PendulumEnv> NewEnv(double g = 10.0, int max_episode_steps = 200) {
  PendulumOptions o;
  o.g = g;
  o.max_episode_steps = max_episode_steps;
  auto env = PendulumEnv::Create(o);
  EXPECT_TRUE(env.ok());
  return std::move(env).value();
}

// Gymnasium Pendulum-v1's documented equations with m = l = 1, dt = 0.05, written out
// independently: the angle is wrapped with atan2 (same as Python's modulo form except at
// exactly +pi), the reward uses the state before the update and the clipped torque.
struct Expected {
  double theta, theta_dot, reward;
};
Expected ClosedForm(double theta, double theta_dot, double u, double g) {
  const double wrapped = std::atan2(std::sin(theta), std::cos(theta));
  const double reward = -(wrapped * wrapped + 0.1 * theta_dot * theta_dot + 0.001 * u * u);
  double next_dot = theta_dot + (1.5 * g * std::sin(theta) + 3.0 * u) * 0.05;
  next_dot = std::max(-8.0, std::min(8.0, next_dot));
  return {theta + 0.05 * next_dot, next_dot, reward};
}

TEST(PendulumEnv, OneStepMatchesTheClosedFormEquations) {
  struct Case {
    double theta, theta_dot;
    float u;
    double g;
  } cases[] = {{0.7, -1.3, 1.5f, 10.0},   {-2.9, 3.2, -0.25f, 10.0}, {5.0, 0.4, 2.0f, 10.0},
               {-7.5, -6.0, -1.0f, 10.0}, {1.1, 0.2, 0.75f, 9.81},   {2.0, -0.5, 1.0f, 0.0}};
  for (const Case& c : cases) {
    auto env = NewEnv(c.g);
    float obs[3];
    double info[4];
    env->Reset(obs, info);
    env->SetState({c.theta, c.theta_dot}, obs, info);
    const StepResult r = env->Step(&c.u, obs, info);
    const Expected want = ClosedForm(c.theta, c.theta_dot, c.u, c.g);
    EXPECT_NEAR(env->state().theta, want.theta, 1e-12) << c.theta;
    EXPECT_NEAR(env->state().theta_dot, want.theta_dot, 1e-12) << c.theta;
    EXPECT_FLOAT_EQ(r.reward, static_cast<float>(want.reward)) << c.theta;
    EXPECT_FALSE(r.terminated);
    EXPECT_FALSE(r.truncated);
    EXPECT_FLOAT_EQ(obs[0], static_cast<float>(std::cos(want.theta)));
    EXPECT_FLOAT_EQ(obs[1], static_cast<float>(std::sin(want.theta)));
    EXPECT_FLOAT_EQ(obs[2], static_cast<float>(want.theta_dot));
    EXPECT_EQ(info[2], static_cast<double>(c.u));
    EXPECT_EQ(info[3], 1.0);
  }
}

TEST(PendulumEnv, AngleNormalizeIsPythonsFlooredModuloIntoMinusPiToPi) {
  for (double a : {0.0, 1.0, -1.0, 3.0, -3.0, 4.0, -4.0, 10.0, -10.0, 100.0, -1e3}) {
    const double want = a - 2 * kPi * std::floor((a + kPi) / (2 * kPi));
    EXPECT_NEAR(PendulumEnv::AngleNormalize(a), want, 1e-12) << a;
    EXPECT_GE(PendulumEnv::AngleNormalize(a), -kPi);
    EXPECT_LT(PendulumEnv::AngleNormalize(a), kPi);
  }
  EXPECT_EQ(PendulumEnv::AngleNormalize(kPi), -kPi);  // ((pi + pi) % 2pi) - pi
  EXPECT_EQ(PendulumEnv::AngleNormalize(-kPi), -kPi);
}

TEST(PendulumEnv, ClipsTorqueToPlusMinusTwoBeforeDynamicsAndReward) {
  const PendulumEnv::State start{0.4, -0.6};
  auto step = [&](float u, double* torque) {
    auto env = NewEnv();
    float obs[3];
    double info[4];
    env->Reset(obs, info);
    env->SetState(start, obs, info);
    const StepResult r = env->Step(&u, obs, info);
    *torque = info[2];
    return std::pair<PendulumEnv::State, float>(env->state(), r.reward);
  };
  double torque;
  const auto at_high = step(2.0f, &torque);
  const auto at_low = step(-2.0f, &torque);
  for (float u : {2.5f, 7.0f, 1e30f}) {
    const auto over = step(u, &torque);
    EXPECT_EQ(torque, 2.0);
    EXPECT_EQ(over.first.theta, at_high.first.theta);
    EXPECT_EQ(over.first.theta_dot, at_high.first.theta_dot);
    EXPECT_EQ(over.second, at_high.second);
  }
  const auto under = step(-100.0f, &torque);
  EXPECT_EQ(torque, -2.0);
  EXPECT_EQ(under.first.theta_dot, at_low.first.theta_dot);
  EXPECT_EQ(under.second, at_low.second);
  // The clipped torque, not the requested one, is what the reward charges.
  const Expected want = ClosedForm(start.theta, start.theta_dot, 2.0, 10.0);
  EXPECT_FLOAT_EQ(at_high.second, static_cast<float>(want.reward));
  EXPECT_EQ(PendulumEnv::Create({}).value()->spec().action.low[0], -2.0f);
  EXPECT_EQ(PendulumEnv::Create({}).value()->spec().action.high[0], 2.0f);
}

TEST(PendulumEnv, ClipsAngularVelocityToEightAndRewardReachesItsDocumentedMinimum) {
  auto env = NewEnv();
  float obs[3];
  double info[4];
  env->Reset(obs, info);
  // sin(pi/2) = 1: 7.9 + (15 + 6) * 0.05 = 8.95, clipped to 8.
  env->SetState({kPi / 2, 7.9}, obs, info);
  float u = 2.0f;
  env->Step(&u, obs, info);
  EXPECT_EQ(env->state().theta_dot, 8.0);
  EXPECT_NEAR(env->state().theta, kPi / 2 + 8.0 * 0.05, 1e-15);
  env->SetState({-kPi / 2, -7.9}, obs, info);
  u = -2.0f;
  env->Step(&u, obs, info);
  EXPECT_EQ(env->state().theta_dot, -8.0);
  // Gymnasium's docs: the minimum reward is -(pi^2 + 0.1 * 8^2 + 0.001 * 2^2) = -16.2736044.
  env->SetState({kPi, 8.0}, obs, info);
  const StepResult r = env->Step(&u, obs, info);
  EXPECT_NEAR(r.reward, -16.2736044, 1e-5);
  // And the maximum, 0, upright at rest with no torque.
  env->SetState({0.0, 0.0}, obs, info);
  u = 0.0f;
  EXPECT_EQ(env->Step(&u, obs, info).reward, 0.0f);
}

TEST(PendulumEnv, NeverTerminatesAndTruncatesAtTwoHundredSteps) {
  auto env = NewEnv();
  env->Seed(8);
  Rng rng(4);
  float obs[3];
  double info[4];
  for (int episode = 0; episode < 3; ++episode) {
    env->Reset(obs, info);
    for (int step = 1; step <= 200; ++step) {
      const float u = static_cast<float>(rng.Uniform(-3.0, 3.0));
      const StepResult r = env->Step(&u, obs, info);
      ASSERT_FALSE(r.terminated);
      ASSERT_EQ(r.truncated, step == 200) << step;
      ASSERT_LE(r.reward, 0.0f);
      ASSERT_GE(r.reward, -16.2736045f);
      ASSERT_LE(std::fabs(obs[2]), 8.0f);
      ASSERT_NEAR(obs[0] * obs[0] + obs[1] * obs[1], 1.0f, 1e-5f);
    }
  }
}

TEST(PendulumEnv, ResetsThetaInPlusMinusPiAndVelocityInPlusMinusOne) {
  auto env = NewEnv();
  env->Seed(12);
  float obs[3];
  double info[4];
  double lo[2] = {10, 10}, hi[2] = {-10, -10};
  for (int k = 0; k < 20000; ++k) {
    env->Reset(obs, info);
    const double v[2] = {env->state().theta, env->state().theta_dot};
    ASSERT_GE(v[0], -kPi);
    ASSERT_LT(v[0], kPi);
    ASSERT_GE(v[1], -1.0);
    ASSERT_LT(v[1], 1.0);
    ASSERT_EQ(obs[0], static_cast<float>(std::cos(v[0])));
    ASSERT_EQ(obs[1], static_cast<float>(std::sin(v[0])));
    ASSERT_EQ(obs[2], static_cast<float>(v[1]));
    ASSERT_EQ(info[3], 0.0);
    for (int i = 0; i < 2; ++i) lo[i] = std::min(lo[i], v[i]), hi[i] = std::max(hi[i], v[i]);
  }
  EXPECT_LT(lo[0], -kPi + 0.01);
  EXPECT_GT(hi[0], kPi - 0.01);
  EXPECT_LT(lo[1], -0.999);
  EXPECT_GT(hi[1], 0.999);
}

std::vector<float> Trajectory(uint64_t seed) {
  auto env = NewEnv();
  env->Seed(seed);
  Rng actions(99);
  std::vector<float> out(3);
  double info[4];
  env->Reset(out.data(), info);
  for (int step = 0; step < 450; ++step) {
    const float u = static_cast<float>(actions.Uniform(-2.0, 2.0));
    float obs[3];
    const StepResult r = env->Step(&u, obs, info);
    out.insert(out.end(), obs, obs + 3);
    out.push_back(r.reward);
    if (r.truncated) env->Reset(obs, info), out.insert(out.end(), obs, obs + 3);
  }
  return out;
}

TEST(PendulumEnv, SameSeedGivesBitIdenticalTrajectories) {
  const std::vector<float> a = Trajectory(42), b = Trajectory(42), c = Trajectory(43);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(float) * a.size()));
  EXPECT_NE(a, c);
}

// Through the registry and VecEnv: every env truncates on step 200 together, keeps its
// last observation in terminal_obs, and starts a fresh episode in the same Step().
TEST(PendulumEnv, AutoResetsThroughVecEnvAndMatchesStandaloneEnvs) {
  const int n = 5;
  EnvContext ctx;
  ctx.settings = {{"g", "9.81"}};
  auto vec_envs = MakeEnvs("pendulum", ctx, n);
  auto solo = MakeEnvs("pendulum", ctx, n);
  ASSERT_TRUE(vec_envs.ok() && solo.ok());
  VecEnv vec(std::move(vec_envs).value(), 2);
  ASSERT_EQ(vec.obs_dim(), 3);
  ASSERT_EQ(vec.act_dim(), 1);
  ASSERT_EQ(vec.info_dim(), 4);
  vec.Reset(77);
  std::vector<float> obs(n * 3);
  std::vector<double> info(n * 4);
  for (int i = 0; i < n; ++i) {
    (*solo)[i]->Seed(77 + i);
    (*solo)[i]->Reset(&obs[i * 3], &info[i * 4]);
  }
  Rng rng(6);
  std::vector<double> ret(n, 0.0);
  for (int step = 1; step <= 450; ++step) {
    std::vector<float> actions(n);
    for (float& a : actions) a = static_cast<float>(rng.Uniform(-2.5, 2.5));
    vec.Step(actions.data());
    for (int i = 0; i < n; ++i) {
      const StepResult r = (*solo)[i]->Step(&actions[i], &obs[i * 3], &info[i * 4]);
      ret[i] += r.reward;
      ASSERT_EQ(r.reward, vec.rewards()[i]);
      ASSERT_EQ(vec.terminated()[i], 0);
      ASSERT_EQ(vec.truncated()[i] != 0, step % 200 == 0) << step;
      if (!vec.done(i)) continue;
      ASSERT_EQ(0, std::memcmp(vec.terminal_observations() + i * 3, &obs[i * 3], 12));
      EXPECT_EQ(vec.terminal_info()[i * 4 + 3], 200.0);
      EXPECT_EQ(vec.episode_lengths()[i], 200);
      EXPECT_NEAR(vec.episode_returns()[i], ret[i], 1e-6 * std::fabs(ret[i]));
      ret[i] = 0.0;
      (*solo)[i]->Reset(&obs[i * 3], &info[i * 4]);
      EXPECT_EQ(vec.info()[i * 4 + 3], 0.0);
      EXPECT_LT(std::fabs(vec.observations()[i * 3 + 2]), 1.0f);
    }
    ASSERT_EQ(0, std::memcmp(obs.data(), vec.observations(), sizeof(float) * obs.size()));
  }
}

TEST(PendulumEnv, IsRegisteredWithoutMarketDataAndRejectsBadOptions) {
  bool found = false;
  for (const EnvEntry& e : EnvRegistry()) {
    if (std::string(e.id) == "pendulum") found = !e.needs_market_data;
  }
  EXPECT_TRUE(found);
  auto env = MakePendulumEnv({});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ((*env)->spec().obs_dim, 3);
  EXPECT_FALSE((*env)->spec().action.discrete);
  EXPECT_TRUE(IsError(MakePendulumEnv({{"max_episode_steps", "0"}}), Status::Code::kInvalidArgument,
                      "max_episode_steps must be >= 1"));
  EXPECT_TRUE(IsError(MakePendulumEnv({{"g", "-1"}}), Status::Code::kInvalidArgument,
                      "g must be a finite gravity >= 0"));
  EXPECT_TRUE(IsError(MakePendulumEnv({{"g", "nan"}}), Status::Code::kInvalidArgument,
                      "'g' = 'nan': 'nan' is not a finite number"));
  auto typo = MakePendulumEnv({{"gravity", "10"}});
  EXPECT_TRUE(IsError(typo, Status::Code::kInvalidArgument, "unknown key 'gravity'"));
}

}  // namespace
}  // namespace rlt::env
