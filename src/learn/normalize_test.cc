// Tests of the observation and reward normaliser (no LibTorch): running statistics against
// two-pass ones, the cached scale of evolution strategies, reward scaling by the std of
// discounted returns.
#include "learn/normalize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace rlt::learn {
namespace {

TEST(VecNormalizer, RunningMeanAndVarianceMatchTwoPassStatistics) {
  const int D = 3;
  NormalizeOptions o;
  o.norm_obs = true;
  VecNormalizer norm(D, 4, o);
  std::mt19937 gen(5);
  std::normal_distribution<float> nd(2.0f, 3.0f);
  std::vector<float> all;
  for (int batch = 0; batch < 7; ++batch) {
    const int n = 4 + batch * 13;
    std::vector<float> x(n * D);
    for (int k = 0; k < n * D; ++k) x[k] = nd(gen) * (1 + k % D);
    norm->UpdateObs(x.data(), n);
    all.insert(all.end(), x.begin(), x.end());
  }
  const int total = static_cast<int>(all.size()) / D;
  EXPECT_NEAR(norm->obs_count(), total + 1e-4, 1e-9);
  for (int j = 0; j < D; ++j) {
    double mean = 0, var = 0;
    for (int i = 0; i < total; ++i) mean += all[i * D + j];
    mean /= total;
    for (int i = 0; i < total; ++i) var += (all[i * D + j] - mean) * (all[i * D + j] - mean);
    var /= total;
    // The prior (mean 0, var 1, count 1e-4) shifts results by O(1e-4 / total).
    EXPECT_NEAR(norm->obs_mean()[j], mean, 1e-5 * (1 + std::abs(mean)));
    EXPECT_NEAR(norm->obs_var()[j], var, 1e-5 * var);
  }
  const float probe[D] = {100.0f, 2.0f, -3.0f};
  float out[D];
  norm->NormalizeObs(probe, 1, out);
  for (int j = 0; j < D; ++j) {
    const double z = (probe[j] - norm->obs_mean()[j]) / std::sqrt(norm->obs_var()[j] + 1e-8);
    EXPECT_NEAR(out[j], std::clamp(z, -10.0, 10.0), 1e-5);
  }
  EXPECT_EQ(out[0], 10.0f);  // clipped

  // The scale evolution strategies compute once per generation gives the same values bit
  // for bit, clipping included; with norm_obs off both copy.
  const ObsScale scale = norm->Scale();
  float cached[D];
  NormalizeObsWith(scale, probe, 1, D, cached);
  for (int j = 0; j < D; ++j) EXPECT_EQ(cached[j], out[j]) << j;
  NormalizeOptions off;
  off.norm_obs = false;
  VecNormalizer plain(D, 1, off);
  NormalizeObsWith(plain->Scale(), probe, 1, D, cached);
  for (int j = 0; j < D; ++j) EXPECT_EQ(cached[j], probe[j]) << j;
}

TEST(VecNormalizer, RewardsAreScaledByTheStdOfDiscountedReturns) {
  const int N = 3, T = 60;
  NormalizeOptions o;
  o.norm_reward = true;
  o.gamma = 0.9;
  VecNormalizer norm(1, N, o);
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> u(-2.0f, 5.0f);
  std::vector<double> returns(N, 0.0), history;
  for (int t = 0; t < T; ++t) {
    float r[N], out[N];
    uint8_t done[N];
    for (int i = 0; i < N; ++i) {
      r[i] = u(gen);
      done[i] = (t * 7 + i * 3) % 11 == 0;
    }
    norm->ProcessRewards(r, done, /*update=*/true, out);
    for (int i = 0; i < N; ++i) {
      returns[i] = returns[i] * 0.9 + r[i];
      history.push_back(returns[i]);
    }
    double mean = 0, var = 0;
    for (double h : history) mean += h;
    mean /= history.size();
    for (double h : history) var += (h - mean) * (h - mean);
    var /= history.size();
    for (int i = 0; i < N; ++i) {
      // Tolerance covers the 1e-4 prior count (var 1), largest at the first steps.
      EXPECT_NEAR(out[i], std::clamp(r[i] / std::sqrt(var + 1e-8), -10.0, 10.0),
                  2e-4 * std::abs(out[i]) + 1e-6)
          << "t=" << t;
      if (done[i]) returns[i] = 0.0;
    }
  }
}

}  // namespace
}  // namespace rlt::learn
