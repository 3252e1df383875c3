// Tests of the native recurrent actor-critic (no LibTorch).
#include "native/recurrent_actor_critic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"

namespace rlt::native {
namespace {

// RecurrentActorCritic's gradients against central finite differences of its own forward
// (LibTorch autograd is the exact oracle in learn/native_oracle_test.cc; this check runs in
// the LibTorch-free sanitizer build too), for separate and shared LSTMs.
TEST(RecurrentActorCritic, GradientsMatchFiniteDifferences) {
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "shared" : "separate");
    RecurrentSpec spec;
    spec.obs_dim = 3;
    spec.hidden = 5;
    spec.shared_lstm = shared;
    spec.head.discrete = false;
    spec.head.act_dim = spec.head.num_outputs = 2;
    spec.head.pi = {4};
    spec.head.vf = {4};
    spec.head.log_std_init = -0.2;
    RecurrentActorCritic net(spec, 9);
    Rng rng(4);
    const int steps = 4, batch = 2, rows = steps * batch;
    auto random = [&](size_t n, double scale) {
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>(rng.Normal() * scale);
      return v;
    };
    const auto obs = random(rows * 3, 1.0), actions = random(rows * 2, 0.5);
    const auto h0 = random(batch * 5, 0.3), c0 = random(batch * 5, 0.3);
    const auto wv = random(rows, 1.0), wl = random(rows, 1.0), wh = random(rows, 1.0);
    std::vector<float> starts(rows, 0.0f);
    starts[2 * batch + 1] = 1.0f;
    auto loss = [&](RecurrentWorkspace& ws) {
      std::vector<float> v(rows), lp(rows), ent(rows);
      net.Evaluate(ws, obs.data(), starts.data(), steps, batch, h0.data(), c0.data(), h0.data(),
                   c0.data(), actions.data(), v.data(), lp.data(), ent.data());
      double sum = 0;
      for (int k = 0; k < rows; ++k)
        sum += double{wv[k]} * v[k] + double{wl[k]} * lp[k] + double{wh[k]} * ent[k];
      return sum;
    };
    RecurrentWorkspace ws;
    loss(ws);
    std::vector<std::vector<float>> grads;
    std::vector<float*> ptrs;
    for (int g = 0; g < net.num_groups(); ++g) grads.emplace_back(net.group_params(g).size(), 0.0f);
    for (auto& g : grads) ptrs.push_back(g.data());
    net.Backward(ws, wv.data(), wl.data(), wh.data(), ptrs);
    for (int g = 0; g < net.num_groups(); ++g) {
      std::vector<float>& p = net.group_params(g);
      for (size_t k = 0; k < p.size(); k += 7) {  // every 7th parameter of every group
        const float saved = p[k];
        const float eps = 1e-2f;
        p[k] = saved + eps;
        const double up = loss(ws);
        p[k] = saved - eps;
        const double down = loss(ws);
        p[k] = saved;
        const double numeric = (up - down) / (2.0 * eps);
        EXPECT_NEAR(grads[g][k], numeric, 2e-2 * std::fabs(numeric) + 2e-3)
            << net.group_prefix(g) << " parameter " << k;
      }
    }
  }
}

}  // namespace
}  // namespace rlt::native
