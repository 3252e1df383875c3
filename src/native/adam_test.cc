// Tests of native Adam(W) and gradient clipping (no LibTorch): Adam against the paper's
// formula in double, decoupled weight decay, steps on disjoint ranges against one step.
#include "native/adam.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "native/test_util.h"

namespace rlt::native {
namespace {

using testing_util::RandomVector;
using testing_util::ToDouble;

// The data-parallel learner steps Adam on disjoint parameter ranges (Advance() once, then
// StepRange() per range): element-wise, so the result is Step()'s bit for bit.
TEST(Adam, StepOnRangesEqualsOneStep) {
  const int64_t n = 1001;
  Rng rng(5);
  std::vector<float> p1(n), p2, g(n);
  for (float& v : p1) v = static_cast<float>(rng.Normal());
  p2 = p1;
  Adam whole(n, AdamOptions{}), ranged(n, AdamOptions{});
  for (int step = 0; step < 4; ++step) {
    for (float& v : g) v = static_cast<float>(rng.Normal());
    whole.Step(p1.data(), g.data());
    ranged.Advance();
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, 333}, {333, 800}, {800, n}}) {
      ranged.StepRange(p2.data(), g.data(), lo, hi);
    }
    ASSERT_EQ(p1, p2) << "step " << step;
  }
  EXPECT_EQ(whole.exp_avg(), ranged.exp_avg());
  EXPECT_EQ(whole.exp_avg_sq(), ranged.exp_avg_sq());
}

TEST(Adam, FollowsThePaperFormulaInDouble) {
  Rng rng(8);
  const int64_t n = 300;
  AdamOptions o;
  o.lr = 1e-3;
  auto params = RandomVector(n, rng);
  std::vector<double> ref_p = ToDouble(params), m(n, 0.0), v(n, 0.0);
  Adam adam(n, o);
  for (int step = 1; step <= 6; ++step) {
    auto grads = RandomVector(n, rng, step == 3 ? 1e-6 : 1.0);  // tiny grads: eps matters
    adam.Step(params.data(), grads.data());
    const auto g = ToDouble(grads);
    AdamStepReference(o, step, ref_p.data(), g.data(), m.data(), v.data(), n);
  }
  EXPECT_EQ(adam.step(), 6);
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_NEAR(params[k], ref_p[k], 1e-5 * std::fabs(ref_p[k]) + 1e-8) << k;
  }
}

TEST(Adam, DecoupledWeightDecayShrinksParametersBeforeTheUpdate) {
  // AdamW (Loshchilov & Hutter, decoupled): with zero gradients the moments stay zero and
  // each step only multiplies the parameters by 1 - lr * weight_decay.
  AdamOptions o;
  o.lr = 0.1;
  o.weight_decay = 0.5;
  std::vector<float> p = {2.0f, -4.0f}, zero = {0.0f, 0.0f};
  Adam adam(2, o);
  adam.Step(p.data(), zero.data());
  adam.Step(p.data(), zero.data());
  EXPECT_FLOAT_EQ(p[0], 2.0f * 0.95f * 0.95f);
  EXPECT_FLOAT_EQ(p[1], -4.0f * 0.95f * 0.95f);
  // With gradients: the double reference, which applies the same decay.
  Rng rng(11);
  const int64_t n = 200;
  o.lr = 1e-2;
  o.weight_decay = 0.01;
  o.eps = 1e-8;
  auto params = RandomVector(n, rng);
  std::vector<double> ref_p = ToDouble(params), m(n, 0.0), v(n, 0.0);
  Adam adamw(n, o);
  for (int step = 1; step <= 5; ++step) {
    auto grads = RandomVector(n, rng);
    adamw.Step(params.data(), grads.data());
    const auto g = ToDouble(grads);
    AdamStepReference(o, step, ref_p.data(), g.data(), m.data(), v.data(), n);
  }
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_NEAR(params[k], ref_p[k], 1e-5 * std::fabs(ref_p[k]) + 1e-7) << k;
  }
}

TEST(ClipGradNorm, ScalesToTheMaximumNormOnlyWhenAbove) {
  std::vector<float> g = {3.0f, 4.0f, 0.0f};
  EXPECT_DOUBLE_EQ(ClipGradNorm(g.data(), 3, 10.0), 5.0);
  EXPECT_EQ(g[0], 3.0f);
  EXPECT_DOUBLE_EQ(ClipGradNorm(g.data(), 3, 0.5), 5.0);
  EXPECT_NEAR(g[0], 3.0 * 0.5 / (5.0 + 1e-6), 1e-7);
  EXPECT_NEAR(g[1], 4.0 * 0.5 / (5.0 + 1e-6), 1e-7);
}

}  // namespace
}  // namespace rlt::native
