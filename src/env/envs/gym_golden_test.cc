// Outside goldens for the classic-control envs: trajectories recorded from Gymnasium
// 0.29.1's own CartPole-v1 and Pendulum-v1 (testdata/README.md says how), replayed here.
//
// Our envs draw their reset states from rlt::Rng, not NumPy's PCG64, so each episode
// starts from Gymnasium's recorded reset state (SetState) and then replays the recorded
// actions; every observation, reward and end flag after that is ours.
//
// Tolerances (measured, and why):
//   CartPole: bit-identical (float32 observations and float64 state). Both sides do the
//     same double operations in the same order with glibc 2.36's sin, cos and pow (cartpole.cc
//     mirrors Python's grouping and v**2, and is compiled without FMA contraction). The
//     open-loop replay of a balanced 500-step episode amplifies any last-bit difference
//     (the upright pole is unstable), so anything short of bit-identical fails loudly.
//   Pendulum: state within 1e-12, observations and rewards within one float32 ulp. NumPy
//     1.24 evaluates np.sin / np.cos with its own SIMD kernels, which differ from glibc's
//     in the last bit for most arguments (measured: 63% of random inputs); over 200 steps
//     the state stays within about 1e-13.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "env/envs/cartpole.h"
#include "env/envs/pendulum.h"
#include "testing/testing.h"

namespace rlt::env {
namespace {

// The distance between |x| as a float32 and the next float32 up.
double Float32Ulp(double x) {
  const float f = static_cast<float>(std::abs(x));
  return static_cast<double>(std::nextafter(f, INFINITY)) - f;
}

nlohmann::json LoadFixture(const std::string& name) {
  const std::string path = std::string(RLT_SOURCE_DIR) + "/src/env/envs/testdata/" + name;
  const std::string text = rlt::testing::ReadFile(path);
  EXPECT_FALSE(text.empty()) << "cannot read " << path
                             << " (regenerate with tests/goldens/record_goldens.py)";
  return nlohmann::json::parse(text);
}

TEST(GymGolden, FixturesNameGymnasium0291AndItsCommit) {
  for (const char* name : {"gym_cartpole_v1.json", "gym_pendulum_v1.json"}) {
    const nlohmann::json doc = LoadFixture(name);
    const nlohmann::json& gym = doc.at("provenance").at("gymnasium");
    EXPECT_EQ(gym.at("version"), "0.29.1") << name;
    EXPECT_EQ(gym.at("commit").get<std::string>().size(), 40u) << name;
    EXPECT_FALSE(doc.at("episodes").empty()) << name;
  }
}

TEST(GymGolden, CartPoleReproducesGymnasiumTrajectoriesBitForBit) {
  const nlohmann::json doc = LoadFixture("gym_cartpole_v1.json");
  int terminated_episodes = 0, truncated_episodes = 0;
  for (const nlohmann::json& ep : doc.at("episodes")) {
    SCOPED_TRACE("seed " + std::to_string(ep.at("seed").get<int>()));
    auto created = CartPoleEnv::Create(CartPoleOptions{});
    ASSERT_TRUE(created.ok());
    CartPoleEnv& env = **created;
    float obs[4];
    double info[3];
    env.Reset(obs, info);
    const std::vector<double> s0 = ep.at("reset_state");
    env.SetState({s0[0], s0[1], s0[2], s0[3]}, obs, info);
    const std::vector<double> reset_obs = ep.at("reset_obs");
    for (int k = 0; k < 4; ++k) EXPECT_EQ(obs[k], static_cast<float>(reset_obs[k]));

    const nlohmann::json& steps = ep.at("steps");
    for (size_t t = 0; t < steps.size(); ++t) {
      const nlohmann::json& st = steps[t];
      SCOPED_TRACE("step " + std::to_string(t));
      const float action = st.at("action").get<int>();
      const StepResult r = env.Step(&action, obs, info);
      const std::vector<double> want_obs = st.at("obs"), want_state = st.at("state");
      for (int k = 0; k < 4; ++k) ASSERT_EQ(obs[k], static_cast<float>(want_obs[k])) << k;
      const CartPoleEnv::State& s = env.state();
      const double got_state[4] = {s.x, s.x_dot, s.theta, s.theta_dot};
      for (int k = 0; k < 4; ++k) ASSERT_EQ(got_state[k], want_state[k]) << k;
      EXPECT_EQ(r.reward, st.at("reward").get<double>());
      const bool terminated = st.at("terminated"), truncated = st.at("truncated");
      ASSERT_EQ(r.terminated, terminated);
      // House rule: when both happen only `terminated` is set (cartpole.h).
      ASSERT_EQ(r.truncated, truncated && !terminated);
      const bool last = t + 1 == steps.size();
      ASSERT_EQ(r.terminated || r.truncated, last);
      if (last) (terminated ? terminated_episodes : truncated_episodes) += 1;
    }
  }
  // The fixture covers both ways an episode ends.
  EXPECT_GT(terminated_episodes, 0);
  EXPECT_GT(truncated_episodes, 0);
}

TEST(GymGolden, PendulumReproducesGymnasiumTrajectories) {
  const nlohmann::json doc = LoadFixture("gym_pendulum_v1.json");
  int clipped_actions = 0;
  for (const nlohmann::json& ep : doc.at("episodes")) {
    SCOPED_TRACE("seed " + std::to_string(ep.at("seed").get<int>()));
    auto created = PendulumEnv::Create(PendulumOptions{});
    ASSERT_TRUE(created.ok());
    PendulumEnv& env = **created;
    float obs[3];
    double info[4];
    env.Reset(obs, info);
    const std::vector<double> s0 = ep.at("reset_state");
    env.SetState({s0[0], s0[1]}, obs, info);
    const std::vector<double> reset_obs = ep.at("reset_obs");
    for (int k = 0; k < 3; ++k) EXPECT_EQ(obs[k], static_cast<float>(reset_obs[k]));

    const nlohmann::json& steps = ep.at("steps");
    for (size_t t = 0; t < steps.size(); ++t) {
      const nlohmann::json& st = steps[t];
      SCOPED_TRACE("step " + std::to_string(t));
      const float action = static_cast<float>(st.at("action").get<double>());
      if (std::abs(action) > PendulumEnv::kMaxTorque) ++clipped_actions;
      const StepResult r = env.Step(&action, obs, info);
      const std::vector<double> want_obs = st.at("obs"), want_state = st.at("state");
      for (int k = 0; k < 3; ++k) ASSERT_NEAR(obs[k], want_obs[k], Float32Ulp(want_obs[k])) << k;
      ASSERT_NEAR(env.state().theta, want_state[0], 1e-12);
      ASSERT_NEAR(env.state().theta_dot, want_state[1], 1e-12);
      const double want_reward = st.at("reward");  // float64 in Gymnasium, float32 here
      ASSERT_NEAR(r.reward, want_reward, Float32Ulp(want_reward));
      ASSERT_EQ(r.terminated, st.at("terminated").get<bool>());
      ASSERT_EQ(r.truncated, st.at("truncated").get<bool>());
    }
    EXPECT_TRUE(steps.back().at("truncated").get<bool>());  // TimeLimit(200) reached
  }
  EXPECT_GT(clipped_actions, 0);  // the fixture exercises the torque clip
}

}  // namespace
}  // namespace rlt::env
