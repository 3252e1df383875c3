#include "env/envs/cartpole.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "env/registry.h"
#include "env/vec_env.h"

namespace rlt::env {
namespace {

// Gymnasium CartPole-v1's limits, as literals (12 * 2 * math.pi / 360 in Python).
constexpr double kThetaLimit = 0.20943951023931953;
constexpr double kXLimit = 2.4;

std::unique_ptr<CartPoleEnv> NewEnv(int max_episode_steps = 500) {
  CartPoleOptions o;
  o.max_episode_steps = max_episode_steps;
  auto env = CartPoleEnv::Create(o);
  EXPECT_TRUE(env.ok());
  return std::move(env).value();
}

// The frictionless cart-pole of Florian (2007), eqs. (23) and (24) with mu_c = mu_p = 0,
// written out here with Gymnasium's constants, then one explicit Euler step of 0.02 s.
CartPoleEnv::State ClosedFormStep(const CartPoleEnv::State& s, double force) {
  const double g = 9.8, mc = 1.0, mp = 0.1, l = 0.5, tau = 0.02;
  const double st = std::sin(s.theta), ct = std::cos(s.theta);
  const double theta_acc =
      (g * st + ct * (-force - mp * l * s.theta_dot * s.theta_dot * st) / (mc + mp)) /
      (l * (4.0 / 3.0 - mp * ct * ct / (mc + mp)));
  const double x_acc =
      (force + mp * l * (s.theta_dot * s.theta_dot * st - theta_acc * ct)) / (mc + mp);
  return {s.x + tau * s.x_dot, s.x_dot + tau * x_acc, s.theta + tau * s.theta_dot,
          s.theta_dot + tau * theta_acc};
}

TEST(CartPoleEnv, OneStepMatchesTheClosedFormEquationsWithEulerIntegration) {
  auto env = NewEnv();
  float obs[4];
  double info[3];
  env->Seed(3);
  env->Reset(obs, info);
  const CartPoleEnv::State start{0.3, -0.7, 0.11, 1.9};
  for (float action : {0.0f, 1.0f}) {
    env->SetState(start, obs, info);
    const StepResult r = env->Step(&action, obs, info);
    const CartPoleEnv::State want = ClosedFormStep(start, action == 1.0f ? 10.0 : -10.0);
    const CartPoleEnv::State& got = env->state();
    EXPECT_NEAR(got.x, want.x, 1e-12);
    EXPECT_NEAR(got.x_dot, want.x_dot, 1e-12);
    EXPECT_NEAR(got.theta, want.theta, 1e-12);
    EXPECT_NEAR(got.theta_dot, want.theta_dot, 1e-12);
    // The observation is the double state rounded to float32.
    EXPECT_EQ(obs[0], static_cast<float>(got.x));
    EXPECT_EQ(obs[1], static_cast<float>(got.x_dot));
    EXPECT_EQ(obs[2], static_cast<float>(got.theta));
    EXPECT_EQ(obs[3], static_cast<float>(got.theta_dot));
    EXPECT_EQ(info[0], got.x);
    EXPECT_EQ(info[1], got.theta);
    EXPECT_EQ(info[2], 1.0);
    EXPECT_EQ(r.reward, 1.0f);
    EXPECT_FALSE(r.terminated);
    EXPECT_FALSE(r.truncated);
    env->Reset(obs, info);
  }
  // Pushing right accelerates the cart right and the pole's top left (relative to rest).
  float right = 1.0f;
  env->SetState({}, obs, info);
  env->Step(&right, obs, info);
  EXPECT_GT(env->state().x_dot, 0.0);
  EXPECT_LT(env->state().theta_dot, 0.0);
  EXPECT_EQ(env->state().x, 0.0);  // Euler: position moves with the old velocity
}

// Terminates only strictly beyond |x| = 2.4 or |theta| = 12 degrees, checked on the state
// after the step; the terminating step still earns +1.
TEST(CartPoleEnv, TerminatesStrictlyBeyondTheThresholdsWithRewardOne) {
  EXPECT_EQ(CartPoleEnv::kThetaThreshold, kThetaLimit);
  EXPECT_EQ(CartPoleEnv::kXThreshold, kXLimit);
  struct Case {
    CartPoleEnv::State state;
    bool terminated;
  };
  // With zero velocity the Euler step leaves the position exactly where it was.
  const Case cases[] = {
      {{kXLimit, 0.0, 0.0, 0.0}, false},     {{-kXLimit, 0.0, 0.0, 0.0}, false},
      {{0.0, 0.0, kThetaLimit, 0.0}, false}, {{0.0, 0.0, -kThetaLimit, 0.0}, false},
      {{kXLimit, 1e-9, 0.0, 0.0}, true},     {{-kXLimit, -1e-9, 0.0, 0.0}, true},
      {{0.0, 0.0, kThetaLimit, 1e-9}, true}, {{0.0, 0.0, -kThetaLimit, -1e-9}, true},
  };
  auto env = NewEnv();
  float obs[4];
  double info[3];
  const float action = 0.0f;
  for (const Case& c : cases) {
    env->Reset(obs, info);
    env->SetState(c.state, obs, info);
    const StepResult r = env->Step(&action, obs, info);
    EXPECT_EQ(r.terminated, c.terminated)
        << "x=" << c.state.x << " x_dot=" << c.state.x_dot << " theta=" << c.state.theta;
    EXPECT_FALSE(r.truncated);
    EXPECT_EQ(r.reward, 1.0f);
  }
}

// The 500-step time limit is a truncation, not a termination; a step that both falls
// and hits the limit reports only the termination.
TEST(CartPoleEnv, TruncatesAtFiveHundredStepsNotTerminates) {
  auto env = NewEnv();
  float obs[4];
  double info[3];
  env->Seed(11);
  env->Reset(obs, info);
  for (int step = 1; step <= 500; ++step) {
    env->SetState({}, obs, info);  // keep the pole upright so only the clock can end it
    const float action = static_cast<float>(step % 2);
    const StepResult r = env->Step(&action, obs, info);
    ASSERT_FALSE(r.terminated) << step;
    ASSERT_EQ(r.truncated, step == 500) << step;
    ASSERT_EQ(r.reward, 1.0f);
    ASSERT_EQ(info[2], step);
  }
  env->Reset(obs, info);
  for (int step = 1; step < 500; ++step) {
    env->SetState({}, obs, info);
    const float action = 0.0f;
    ASSERT_FALSE(env->Step(&action, obs, info).truncated);
  }
  env->SetState({kXLimit, 1.0, 0.0, 0.0}, obs, info);
  const float action = 1.0f;
  const StepResult last = env->Step(&action, obs, info);
  EXPECT_TRUE(last.terminated);
  EXPECT_FALSE(last.truncated);
  EXPECT_EQ(last.reward, 1.0f);
}

TEST(CartPoleEnv, ResetsUniformlyWithinFiveHundredthsInEveryCoordinate) {
  auto env = NewEnv();
  env->Seed(7);
  float obs[4];
  double info[3];
  double lo[4] = {1, 1, 1, 1}, hi[4] = {-1, -1, -1, -1}, sum[4] = {};
  const int n = 20000;
  for (int k = 0; k < n; ++k) {
    env->Reset(obs, info);
    const CartPoleEnv::State& s = env->state();
    const double v[4] = {s.x, s.x_dot, s.theta, s.theta_dot};
    for (int i = 0; i < 4; ++i) {
      ASSERT_GE(v[i], -0.05);
      ASSERT_LT(v[i], 0.05);
      ASSERT_EQ(obs[i], static_cast<float>(v[i]));
      lo[i] = std::min(lo[i], v[i]);
      hi[i] = std::max(hi[i], v[i]);
      sum[i] += v[i];
    }
    ASSERT_EQ(info[2], 0.0);
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_LT(lo[i], -0.0499);
    EXPECT_GT(hi[i], 0.0499);
    // Mean of U[-0.05, 0.05): sd 0.0289 / sqrt(n) = 2e-4; 5 sd.
    EXPECT_NEAR(sum[i] / n, 0.0, 1e-3);
  }
}

std::vector<float> Trajectory(uint64_t seed) {
  auto env = NewEnv();
  env->Seed(seed);
  Rng actions(99);
  std::vector<float> out(4);
  double info[3];
  env->Reset(out.data(), info);
  for (int step = 0; step < 300; ++step) {
    const float a = static_cast<float>(actions.UniformInt(2));
    float obs[4];
    const StepResult r = env->Step(&a, obs, info);
    out.insert(out.end(), obs, obs + 4);
    if (r.terminated || r.truncated) env->Reset(obs, info), out.insert(out.end(), obs, obs + 4);
  }
  return out;
}

TEST(CartPoleEnv, SameSeedGivesBitIdenticalTrajectories) {
  const std::vector<float> a = Trajectory(42), b = Trajectory(42), c = Trajectory(43);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(float) * a.size()));
  EXPECT_NE(a, c);
}

// Through the registry and VecEnv: random play ends episodes by termination; on that
// step terminal_obs is beyond a threshold, the new obs is a fresh reset state, and each
// env matches a standalone env seeded seed + i.
TEST(CartPoleEnv, AutoResetsThroughVecEnvAndMatchesStandaloneEnvs) {
  const int n = 6;
  EnvContext ctx;
  ctx.settings = {{"max_episode_steps", "40"}};
  auto vec_envs = MakeEnvs("cartpole", ctx, n);
  auto solo = MakeEnvs("cartpole", ctx, n);
  ASSERT_TRUE(vec_envs.ok() && solo.ok());
  VecEnv vec(std::move(vec_envs).value(), 2);
  ASSERT_EQ(vec.obs_dim(), 4);
  ASSERT_EQ(vec.info_dim(), 3);
  vec.Reset(1000);
  std::vector<float> obs(n * 4);
  std::vector<double> info(n * 3);
  for (int i = 0; i < n; ++i) {
    (*solo)[i]->Seed(1000 + i);
    (*solo)[i]->Reset(&obs[i * 4], &info[i * 3]);
  }
  Rng rng(5);
  int terminated = 0, truncated = 0;
  std::vector<int> length(n, 0);
  for (int step = 0; step < 400; ++step) {
    std::vector<float> actions(n);
    for (float& a : actions) a = static_cast<float>(rng.UniformInt(2));
    vec.Step(actions.data());
    for (int i = 0; i < n; ++i) {
      const StepResult r = (*solo)[i]->Step(&actions[i], &obs[i * 4], &info[i * 3]);
      ++length[i];
      ASSERT_EQ(r.terminated, vec.terminated()[i] != 0);
      ASSERT_EQ(r.truncated, vec.truncated()[i] != 0);
      ASSERT_EQ(r.reward, vec.rewards()[i]);
      if (!vec.done(i)) continue;
      const float* last = vec.terminal_observations() + i * 4;
      ASSERT_EQ(0, std::memcmp(last, &obs[i * 4], sizeof(float) * 4));
      if (r.terminated) {
        ++terminated;
        EXPECT_TRUE(std::fabs(vec.terminal_info()[i * 3 + 0]) > kXLimit ||
                    std::fabs(vec.terminal_info()[i * 3 + 1]) > kThetaLimit);
      } else {
        ++truncated;
        EXPECT_EQ(length[i], 40);
      }
      EXPECT_EQ(vec.episode_lengths()[i], length[i]);
      EXPECT_EQ(vec.episode_returns()[i], static_cast<double>(length[i]));  // +1 per step
      (*solo)[i]->Reset(&obs[i * 4], &info[i * 3]);
      length[i] = 0;
      for (int k = 0; k < 4; ++k) EXPECT_LE(std::fabs(vec.observations()[i * 4 + k]), 0.05f);
      EXPECT_EQ(vec.info()[i * 3 + 2], 0.0);
    }
    ASSERT_EQ(0, std::memcmp(obs.data(), vec.observations(), sizeof(float) * obs.size()));
  }
  EXPECT_GT(terminated, 10);  // random play drops the pole within a few dozen steps
}

TEST(CartPoleEnv, IsRegisteredWithoutMarketDataAndRejectsBadOptions) {
  bool found = false;
  for (const EnvEntry& e : EnvRegistry()) {
    if (std::string(e.id) == "cartpole") found = !e.needs_market_data;
  }
  EXPECT_TRUE(found);
  auto env = MakeCartPoleEnv({});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ((*env)->spec().obs_dim, 4);
  EXPECT_TRUE((*env)->spec().action.discrete);
  EXPECT_EQ((*env)->spec().action.n, 2);
  EXPECT_EQ((*env)->spec().action.dim, 1);
  EXPECT_TRUE(IsError(MakeCartPoleEnv({{"max_episode_steps", "0"}}), Status::Code::kInvalidArgument,
                      "max_episode_steps must be >= 1"));
  auto typo = MakeCartPoleEnv({{"max_episode_step", "10"}});
  ASSERT_TRUE(IsError(typo, Status::Code::kInvalidArgument, "unknown key 'max_episode_step'"));
  EXPECT_NE(typo.status().message().find("max_episode_steps"), std::string::npos);
}

}  // namespace
}  // namespace rlt::env
