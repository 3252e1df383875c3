// Tests of the native layers (no LibTorch): the vectorisable exp / tanh / sigmoid against
// libm, Linear and the activations, forward and backward, against their plain references.
#include "native/layers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "core/rng.h"
#include "native/test_util.h"

namespace rlt::native {
namespace {

using testing_util::ExpectClose;
using testing_util::RandomVector;

TEST(FastMath, ExpTanhSigmoidAgreeWithLibmToOneMillionth) {
  double worst_exp = 0, worst_tanh = 0, worst_sigmoid = 0;
  for (double x = -30.0; x <= 30.0; x += 0.00113) {
    const float xf = static_cast<float>(x);
    if (std::fabs(xf) < 80) {
      worst_exp = std::max(worst_exp, std::fabs(FastExp(xf) / std::exp(double{xf}) - 1.0));
    }
    const double t = std::tanh(double{xf});
    worst_tanh = std::max(worst_tanh, std::fabs(FastTanh(xf) - t) / std::fabs(t));
    const double s = 1.0 / (1.0 + std::exp(-double{xf}));
    worst_sigmoid = std::max(worst_sigmoid, std::fabs(FastSigmoid(xf) - s) / s);
  }
  for (float tiny : {1e-30f, -1e-20f, 3e-8f, -4e-4f, 0.39999f, 0.40001f, -0.4f}) {
    const double t = std::tanh(double{tiny});
    worst_tanh = std::max(worst_tanh, std::fabs(FastTanh(tiny) - t) / std::fabs(t));
  }
  EXPECT_LT(worst_exp, 1e-6);
  EXPECT_LT(worst_tanh, 1e-6);
  EXPECT_LT(worst_sigmoid, 1e-6);
  EXPECT_EQ(FastTanh(0.0f), 0.0f);
  EXPECT_EQ(FastTanh(50.0f), 1.0f);
  EXPECT_EQ(FastTanh(-50.0f), -1.0f);
}

// ---------------------------------------------------------------- Linear / activations

TEST(Linear, ForwardAndBackwardMatchTheReference) {
  Rng rng(2);
  for (auto [batch, in, out] : {std::tuple{3, 4, 2}, {64, 4, 64}, {256, 147, 64}, {64, 64, 1}}) {
    const auto x = RandomVector(static_cast<size_t>(batch) * in, rng);
    const auto w = RandomVector(static_cast<size_t>(out) * in, rng, 0.3);
    const auto b = RandomVector(out, rng);
    const auto dy = RandomVector(static_cast<size_t>(batch) * out, rng);
    std::vector<float> y(batch * out), y_ref(batch * out);
    LinearForward(y.data(), x.data(), w.data(), b.data(), batch, in, out);
    LinearForwardReference(y_ref.data(), x.data(), w.data(), b.data(), batch, in, out);
    ExpectClose(y, y_ref, 1e-5, "linear forward");
    // Accumulation into existing gradients.
    auto dw = RandomVector(w.size(), rng), db = RandomVector(b.size(), rng);
    auto dw_ref = dw, db_ref = db;
    std::vector<float> dx(x.size()), dx_ref(x.size());
    LinearBackward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), w.data(), batch, in, out);
    LinearBackwardReference(dx_ref.data(), dw_ref.data(), db_ref.data(), dy.data(), x.data(),
                            w.data(), batch, in, out);
    ExpectClose(dx, dx_ref, 1e-5, "linear dx");
    ExpectClose(dw, dw_ref, 1e-5, "linear dw");
    ExpectClose(db, db_ref, 1e-5, "linear db");
  }
}

TEST(Activation, ForwardAndBackwardMatchTheReference) {
  Rng rng(3);
  for (Activation act : {Activation::kTanh, Activation::kRelu}) {
    auto y = RandomVector(1000, rng, 2.0);
    y[0] = 0.0f;  // relu'(0) = 0 as in PyTorch
    auto y_ref = y;
    ActivationForward(act, y.data(), 1000);
    ActivationForwardReference(act, y_ref.data(), 1000);
    ExpectClose(y, y_ref, 1e-6, "activation forward");
    auto d = RandomVector(1000, rng);
    auto d_ref = d;
    ActivationBackward(act, d.data(), y_ref.data(), 1000);
    ActivationBackwardReference(act, d_ref.data(), y_ref.data(), 1000);
    ExpectClose(d, d_ref, 1e-6, "activation backward");
    if (act == Activation::kRelu) {
      EXPECT_EQ(d[0], 0.0f);
    }
  }
}

}  // namespace
}  // namespace rlt::native
