// Tests of the native LSTM layer (no LibTorch): forward against the plain double-precision
// reference, every gradient against central finite differences of it, episode resets.
// LibTorch's LSTM is the oracle in learn/native_oracle_test.cc.
#include "native/lstm.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/rng.h"
#include "native/test_util.h"

namespace rlt::native {
namespace {

using testing_util::ExpectClose;
using testing_util::RandomVector;
using testing_util::ToDouble;

TEST(Lstm, ForwardMatchesTheReferenceAndGradientsMatchFiniteDifferences) {
  Rng rng(9);
  const int in = 3, hidden = 5, steps = 6, batch = 4;
  Lstm lstm(in, hidden, 4);
  for (float& p : lstm.params()) p += static_cast<float>(rng.Normal() * 0.3);
  const auto x = RandomVector(static_cast<size_t>(steps) * batch * in, rng);
  const auto h0 = RandomVector(batch * hidden, rng, 0.5), c0 = RandomVector(batch * hidden, rng);
  std::vector<float> starts(steps * batch, 0.0f);
  starts[2 * batch + 1] = 1.0f;  // resets inside the sequence
  starts[4 * batch + 3] = 1.0f;
  starts[0 * batch + 2] = 1.0f;  // and at the first step
  std::vector<float> out(steps * batch * hidden), hn(batch * hidden), cn(batch * hidden);
  LstmWorkspace ws;
  lstm.Forward(ws, x.data(), steps, batch, h0.data(), c0.data(), starts.data(), out.data(),
               hn.data(), cn.data());
  std::vector<double> p = ToDouble(lstm.params()), xd = ToDouble(x), h0d = ToDouble(h0),
                      c0d = ToDouble(c0), sd = ToDouble(starts);
  std::vector<double> out_ref(out.size()), hn_ref(hn.size()), cn_ref(cn.size());
  LstmForwardReference(p.data(), in, hidden, xd.data(), steps, batch, h0d.data(), c0d.data(),
                       sd.data(), out_ref.data(), hn_ref.data(), cn_ref.data());
  auto as_float = [](const std::vector<double>& v) {
    return std::vector<float>(v.begin(), v.end());
  };
  ExpectClose(out, as_float(out_ref), 2e-6, "lstm out");
  ExpectClose(hn, as_float(hn_ref), 2e-6, "lstm h_n");
  ExpectClose(cn, as_float(cn_ref), 2e-6, "lstm c_n");

  const auto w_out = RandomVector(out.size(), rng), w_h = RandomVector(hn.size(), rng),
             w_c = RandomVector(cn.size(), rng);
  std::vector<float> grads(lstm.num_params(), 0.0f), dx(x.size()), dh0(h0.size()), dc0(c0.size());
  lstm.Backward(ws, w_out.data(), w_h.data(), w_c.data(), dx.data(), dh0.data(), dc0.data(),
                grads.data());
  auto loss = [&]() {
    LstmForwardReference(p.data(), in, hidden, xd.data(), steps, batch, h0d.data(), c0d.data(),
                         sd.data(), out_ref.data(), hn_ref.data(), cn_ref.data());
    double l = 0;
    for (size_t k = 0; k < out_ref.size(); ++k) l += out_ref[k] * w_out[k];
    for (size_t k = 0; k < hn_ref.size(); ++k) l += hn_ref[k] * w_h[k] + cn_ref[k] * w_c[k];
    return l;
  };
  auto check = [&](std::vector<double>& var, const std::vector<float>& analytic, const char* what) {
    std::vector<float> fd(var.size());
    for (size_t k = 0; k < var.size(); ++k) {
      const double h = 1e-6, v0 = var[k];
      var[k] = v0 + h;
      const double up = loss();
      var[k] = v0 - h;
      const double down = loss();
      var[k] = v0;
      fd[k] = static_cast<float>((up - down) / (2 * h));
    }
    ExpectClose(analytic, fd, 1e-4, what);
  };
  check(p, grads, "lstm parameter gradients");
  check(xd, dx, "lstm d_x");
  check(h0d, dh0, "lstm d_h0");
  check(c0d, dc0, "lstm d_c0");
  // The reset at step 0 of sequence 2 cuts its initial state off.
  for (int j = 0; j < hidden; ++j) {
    EXPECT_EQ(dh0[2 * hidden + j], 0.0f);
    EXPECT_EQ(dc0[2 * hidden + j], 0.0f);
  }
}

}  // namespace
}  // namespace rlt::native
