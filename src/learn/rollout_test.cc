// Tests of the rollout's GAE (no LibTorch): against the forward sum of TD errors of the GAE
// paper across episode boundaries, and the discounted returns it gives with lambda = 1.
#include "learn/rollout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace rlt::learn {
namespace {

// Reference: A_t = sum_l (gamma lambda)^l delta_{t+l}, the forward sum of the GAE paper,
// stopped after the step that ends an episode; the step after the rollout uses last_*.
TEST(Gae, MatchesForwardSumOfTdErrorsAcrossEpisodeBoundaries) {
  const int T = 13, N = 3;
  const float gamma = 0.97f, lambda = 0.9f;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> rewards(T * N), values(T * N), starts(T * N), last_values(N), last_dones(N);
  for (int k = 0; k < T * N; ++k) {
    rewards[k] = u(gen);
    values[k] = u(gen);
    starts[k] = u(gen) > 0.6f ? 1.0f : 0.0f;
  }
  for (int i = 0; i < N; ++i) {
    last_values[i] = u(gen);
    last_dones[i] = i == 1 ? 1.0f : 0.0f;
  }
  std::vector<float> adv(T * N), ret(T * N);
  ComputeGae(T, N, rewards.data(), values.data(), starts.data(), last_values.data(),
             last_dones.data(), gamma, lambda, adv.data(), ret.data());
  auto next_done = [&](int t, int i) {
    return t == T - 1 ? last_dones[i] : starts[(t + 1) * N + i];
  };
  auto next_value = [&](int t, int i) {
    return t == T - 1 ? last_values[i] : values[(t + 1) * N + i];
  };
  for (int i = 0; i < N; ++i) {
    for (int t = 0; t < T; ++t) {
      double expected = 0.0, weight = 1.0, magnitude = 0.0;  // magnitude: sum of |terms|
      for (int s = t; s < T; ++s) {
        const double nonterminal = 1.0 - next_done(s, i);
        const double delta =
            rewards[s * N + i] + gamma * next_value(s, i) * nonterminal - values[s * N + i];
        expected += weight * delta;
        magnitude += weight * (std::fabs(rewards[s * N + i]) +
                               std::fabs(gamma * next_value(s, i) * nonterminal) +
                               std::fabs(values[s * N + i]));
        if (nonterminal == 0.0) break;
        weight *= gamma * lambda;
      }
      // ComputeGae's float recursion over up to T steps of 4 operations each: within
      // 4 T eps of the sum of the terms' magnitudes.
      const double bound = 4 * T * std::numeric_limits<float>::epsilon() * magnitude;
      EXPECT_NEAR(adv[t * N + i], expected, bound) << "t=" << t << " env=" << i;
      EXPECT_NEAR(ret[t * N + i], expected + values[t * N + i],
                  bound + std::numeric_limits<float>::epsilon() * std::fabs(values[t * N + i]));
    }
  }
}

TEST(Gae, WithLambdaOneGivesDiscountedReturnsToEpisodeEnd) {
  // One env, episode ends after step 2 (start at 3), rollout ends mid-episode.
  const float gamma = 0.5f;
  std::vector<float> rewards = {1, 2, 4, 8, 16}, values = {0.3f, -1, 2, 0.5f, 1};
  std::vector<float> starts = {1, 0, 0, 1, 0}, last_value = {10}, last_done = {0};
  std::vector<float> adv(5), ret(5);
  ComputeGae(5, 1, rewards.data(), values.data(), starts.data(), last_value.data(),
             last_done.data(), gamma, 1.0f, adv.data(), ret.data());
  EXPECT_NEAR(ret[0], 1 + 0.5 * 2 + 0.25 * 4, 1e-6);
  EXPECT_NEAR(ret[2], 4, 1e-6);
  EXPECT_NEAR(ret[3], 8 + 0.5 * 16 + 0.25 * 10, 1e-6);
}

}  // namespace
}  // namespace rlt::learn
