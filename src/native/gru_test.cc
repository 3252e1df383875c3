// Tests of the native GRU: forward against the plain double-precision reference, every
// gradient against central differences of that reference, both directions, several
// shapes (B = 1, B = 33 past the small-batch kernel, T = 1), a shared (T, B, 2H) output
// buffer and accumulation into d_x. LibTorch's GRU is the oracle in
// learn/native_oracle_test.cc.
#include "native/gru.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"

namespace rlt::native {
namespace {

std::vector<float> Random(size_t n, Rng& rng, double scale = 1.0) {
  std::vector<float> v(n);
  for (float& e : v) e = static_cast<float>(rng.Normal() * scale);
  return v;
}

std::vector<double> ToDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

struct Shape {
  int in, hidden, steps, batch;
  bool reverse;
};

// sum(out .* w_out) + sum(h_n .* w_h) from the double reference.
double ReferenceLoss(const std::vector<double>& p, const Shape& s, const std::vector<double>& x,
                     const std::vector<double>& h0, const std::vector<float>& w_out,
                     const std::vector<float>& w_h) {
  std::vector<double> out(static_cast<size_t>(s.steps) * s.batch * s.hidden),
      hn(static_cast<size_t>(s.batch) * s.hidden);
  GruForwardReference(p.data(), s.in, s.hidden, s.reverse, x.data(), s.steps, s.batch, h0.data(),
                      out.data(), hn.data());
  double l = 0.0;
  for (size_t k = 0; k < out.size(); ++k) l += out[k] * w_out[k];
  for (size_t k = 0; k < hn.size(); ++k) l += hn[k] * w_h[k];
  return l;
}

TEST(Gru, ForwardMatchesTheReferenceAndGradientsMatchFiniteDifferences) {
  const Shape shapes[] = {{3, 5, 6, 4, false},
                          {3, 5, 6, 4, true},
                          {2, 4, 1, 1, false},
                          {4, 3, 5, 33, true},
                          {6, 8, 3, 2, false}};
  for (const Shape& s : shapes) {
    const std::string what = "in " + std::to_string(s.in) + " H " + std::to_string(s.hidden) +
                             " T " + std::to_string(s.steps) + " B " + std::to_string(s.batch) +
                             (s.reverse ? " reverse" : "");
    Rng rng(17 + s.batch);
    Gru gru(s.in, s.hidden, 4, s.reverse);
    for (float& p : gru.params()) p += static_cast<float>(rng.Normal() * 0.3);
    const auto x = Random(static_cast<size_t>(s.steps) * s.batch * s.in, rng);
    const auto h0 = Random(static_cast<size_t>(s.batch) * s.hidden, rng, 0.5);
    const size_t out_n = static_cast<size_t>(s.steps) * s.batch * s.hidden;
    std::vector<float> out(out_n), hn(static_cast<size_t>(s.batch) * s.hidden);
    GruWorkspace ws;
    gru.Forward(ws, x.data(), s.steps, s.batch, h0.data(), out.data(), s.hidden, hn.data());
    std::vector<double> p = ToDouble(gru.params()), xd = ToDouble(x), h0d = ToDouble(h0);
    std::vector<double> out_ref(out_n), hn_ref(hn.size());
    GruForwardReference(p.data(), s.in, s.hidden, s.reverse, xd.data(), s.steps, s.batch,
                        h0d.data(), out_ref.data(), hn_ref.data());
    for (size_t k = 0; k < out_n; ++k)
      ASSERT_NEAR(out[k], out_ref[k], 3e-6) << what << " out " << k;
    for (size_t k = 0; k < hn.size(); ++k) ASSERT_NEAR(hn[k], hn_ref[k], 3e-6) << what;

    const auto w_out = Random(out_n, rng), w_h = Random(hn.size(), rng);
    std::vector<float> grads(gru.num_params(), 0.0f), dx(x.size()), dh0(h0.size());
    gru.Backward(ws, w_out.data(), s.hidden, w_h.data(), dx.data(), false, dh0.data(),
                 grads.data());
    const double h = 1e-6;
    auto check = [&](std::vector<double>& v, const std::vector<float>& analytic, const char* name) {
      for (size_t k = 0; k < v.size(); ++k) {
        const double keep = v[k];
        v[k] = keep + h;
        const double up = ReferenceLoss(p, s, xd, h0d, w_out, w_h);
        v[k] = keep - h;
        const double down = ReferenceLoss(p, s, xd, h0d, w_out, w_h);
        v[k] = keep;
        const double fd = (up - down) / (2 * h);
        ASSERT_NEAR(analytic[k], fd, 2e-4 * std::max(1.0, std::abs(fd)))
            << what << " " << name << "[" << k << "]";
      }
    };
    check(p, grads, "params");
    check(xd, dx, "d_x");
    check(h0d, dh0, "d_h0");
  }
}

TEST(Gru, TwoDirectionsShareOneOutputBufferAndAccumulateDx) {
  Rng rng(5);
  const int in = 3, H = 4, T = 5, B = 3;
  Gru fwd(in, H, 1, false), bwd(in, H, 2, true);
  EXPECT_EQ(bwd.param_info()[0].name, "weight_ih_l0_reverse");
  EXPECT_EQ(fwd.param_info()[3].name, "bias_hh_l0");
  const auto x = Random(static_cast<size_t>(T) * B * in, rng);
  std::vector<float> both(static_cast<size_t>(T) * B * 2 * H), a(static_cast<size_t>(T) * B * H),
      b(a.size());
  GruWorkspace wf, wb, wa, wbb;
  fwd.Forward(wf, x.data(), T, B, nullptr, both.data(), 2 * H, nullptr);
  bwd.Forward(wb, x.data(), T, B, nullptr, both.data() + H, 2 * H, nullptr);
  fwd.Forward(wa, x.data(), T, B, nullptr, a.data(), H, nullptr);
  bwd.Forward(wbb, x.data(), T, B, nullptr, b.data(), H, nullptr);
  for (int r = 0; r < T * B; ++r) {
    for (int j = 0; j < H; ++j) {
      EXPECT_EQ(both[r * 2 * H + j], a[r * H + j]);
      EXPECT_EQ(both[r * 2 * H + H + j], b[r * H + j]);
    }
  }
  // d_x of both directions into one buffer equals the sum of the separate ones.
  const auto d_both = Random(both.size(), rng);
  std::vector<float> d_a(a.size()), d_b(b.size());
  for (int r = 0; r < T * B; ++r) {
    for (int j = 0; j < H; ++j) {
      d_a[r * H + j] = d_both[r * 2 * H + j];
      d_b[r * H + j] = d_both[r * 2 * H + H + j];
    }
  }
  std::vector<float> g1(fwd.num_params(), 0.0f), g2(bwd.num_params(), 0.0f);
  std::vector<float> dx_shared(x.size(), 0.0f), dx_a(x.size()), dx_b(x.size());
  fwd.Backward(wf, d_both.data(), 2 * H, nullptr, dx_shared.data(), false, nullptr, g1.data());
  bwd.Backward(wb, d_both.data() + H, 2 * H, nullptr, dx_shared.data(), true, nullptr, g2.data());
  fwd.Backward(wa, d_a.data(), H, nullptr, dx_a.data(), false, nullptr, g1.data());
  bwd.Backward(wbb, d_b.data(), H, nullptr, dx_b.data(), false, nullptr, g2.data());
  for (size_t k = 0; k < x.size(); ++k) EXPECT_NEAR(dx_shared[k], dx_a[k] + dx_b[k], 1e-6);
}

}  // namespace
}  // namespace rlt::native
