// rltrade native tests: helpers shared by the tests of the engine (not part of the library).
// Random buffers, an element-wise closeness check relative to the tensor's scale, float to
// double copies, and random PPO-loss inputs (ppo_loss_test.cc, actor_critic_test.cc).
#ifndef RLT_NATIVE_TEST_UTIL_H_
#define RLT_NATIVE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "native/ppo_loss.h"

namespace rlt::native::testing_util {

inline std::vector<float> RandomVector(size_t n, Rng& rng, double scale = 1.0) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.Normal() * scale);
  return v;
}

inline double MaxAbs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// |a - b| <= rtol (|b| + scale) element-wise, scale = max |b| over the tensor.
inline void ExpectClose(const std::vector<float>& a, const std::vector<float>& b, double rtol,
                        const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  const double scale = MaxAbs(b);
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_LE(std::fabs(a[k] - b[k]), rtol * (std::fabs(b[k]) + scale))
        << what << " element " << k << ": " << a[k] << " vs " << b[k];
  }
}

inline std::vector<double> ToDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The inputs of one PPO-loss minibatch.
struct LossData {
  int batch;
  std::vector<float> values, log_probs, entropy, old_values, old_log_probs, advantages, returns;
  PpoLossInputs Inputs() const {
    return {values.data(),        log_probs.data(),  entropy.data(), old_values.data(),
            old_log_probs.data(), advantages.data(), returns.data()};
  }
};

// Random inputs whose old values and log-probabilities are near the current ones, so some
// ratios and values are clipped.
inline LossData RandomLossData(int batch, Rng& rng) {
  LossData d;
  d.batch = batch;
  d.values = RandomVector(batch, rng);
  d.log_probs = RandomVector(batch, rng);
  d.entropy = RandomVector(batch, rng);
  d.old_values = d.values;
  d.old_log_probs = d.log_probs;
  for (int i = 0; i < batch; ++i) {
    d.old_values[i] += static_cast<float>(rng.Uniform(-0.5, 0.5));
    d.old_log_probs[i] += static_cast<float>(rng.Uniform(-0.4, 0.4));  // some ratios clipped
  }
  d.advantages = RandomVector(batch, rng, 2.0);
  d.returns = RandomVector(batch, rng);
  return d;
}

}  // namespace rlt::native::testing_util

#endif  // RLT_NATIVE_TEST_UTIL_H_
