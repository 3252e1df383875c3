// Tests of the torch backend's PPO loss and gradient clipping (LibTorch) against a
// hand-computed SB3 reference.
#include "learn/torch_ppo.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace rlt::learn {
namespace {

TEST(PpoLoss, MatchesAHandComputedSb3ReferenceWithValueClipping) {
  const int B = 6;
  const std::vector<double> logp = {-0.5, -1.2, -0.1, -2.0, -0.7, -0.9};
  const std::vector<double> old_logp = {-0.6, -0.9, -0.1, -1.5, -1.3, -0.8};
  const std::vector<double> v = {0.5, 1.5, -0.2, 0.0, 2.0, 0.9};
  const std::vector<double> old_v = {0.4, 1.0, 0.0, 0.3, 2.5, 1.0};
  const std::vector<double> adv = {1.0, -0.5, 0.3, 2.0, -1.0, 0.1};
  const std::vector<double> ret = {1.0, 1.0, 0.0, 0.5, 1.5, 0.7};
  const std::vector<double> entropy = {1.1, 0.9, 1.0, 1.2, 0.8, 1.05};
  const double clip = 0.2, clip_vf = 0.3, ent_coef = 0.01, vf_coef = 0.5;
  auto T = [](const std::vector<double>& x) { return torch::tensor(x, torch::kDouble); };
  EvaluateResult eval{T(v), T(logp), T(entropy)};
  Minibatch mb{torch::Tensor(), torch::Tensor(), T(old_v), T(old_logp), T(adv), T(ret)};
  const PpoLoss loss = ComputePpoLoss(eval, mb, {clip, clip_vf, ent_coef, vf_coef, true});

  double mean = 0, var = 0;
  for (double a : adv) mean += a / B;
  for (double a : adv) var += (a - mean) * (a - mean) / (B - 1);  // unbiased
  double pg = 0, vf = 0, ent = 0, kl = 0, clipped = 0;
  for (int i = 0; i < B; ++i) {
    const double a = (adv[i] - mean) / (std::sqrt(var) + 1e-8);
    const double r = std::exp(logp[i] - old_logp[i]);
    pg += -std::min(a * r, a * std::clamp(r, 1 - clip, 1 + clip)) / B;
    const double vp = old_v[i] + std::clamp(v[i] - old_v[i], -clip_vf, clip_vf);
    vf += (ret[i] - vp) * (ret[i] - vp) / B;
    ent += -entropy[i] / B;
    kl += ((r - 1) - std::log(r)) / B;
    clipped += (std::abs(r - 1) > clip ? 1.0 : 0.0) / B;
  }
  EXPECT_NEAR(loss.policy_loss.item<double>(), pg, 1e-12);
  EXPECT_NEAR(loss.value_loss.item<double>(), vf, 1e-12);
  EXPECT_NEAR(loss.entropy_loss.item<double>(), ent, 1e-12);
  EXPECT_NEAR(loss.loss.item<double>(), pg + ent_coef * ent + vf_coef * vf, 1e-12);
  EXPECT_NEAR(loss.approx_kl, kl, 1e-12);
  EXPECT_NEAR(loss.clip_fraction, clipped, 1e-12);
  EXPECT_GT(clipped, 0.0);  // the fixture exercises clipping

  // Without value clipping the value loss is the plain MSE; one sample skips normalisation.
  const PpoLoss plain = ComputePpoLoss(eval, mb, {clip, 0.0, ent_coef, vf_coef, true});
  double mse = 0;
  for (int i = 0; i < B; ++i) mse += (ret[i] - v[i]) * (ret[i] - v[i]) / B;
  EXPECT_NEAR(plain.value_loss.item<double>(), mse, 1e-12);
  EvaluateResult one{T({v[0]}), T({logp[0]}), T({entropy[0]})};
  Minibatch mb1{torch::Tensor(),  torch::Tensor(), T({old_v[0]}),
                T({old_logp[0]}), T({2.5}),        T({ret[0]})};
  const double r0 = std::exp(logp[0] - old_logp[0]);
  EXPECT_NEAR(ComputePpoLoss(one, mb1, {clip, 0.0, 0.0, 0.5, true}).policy_loss.item<double>(),
              -std::min(2.5 * r0, 2.5 * std::min(r0, 1 + clip)), 1e-12);
}

TEST(PpoLoss, GradientClippingScalesToTheGlobalNorm) {
  torch::Tensor a = torch::zeros({3}, torch::requires_grad()),
                b = torch::zeros({2, 2}, torch::requires_grad());
  a.mutable_grad() = torch::tensor({3.0f, 0.0f, 4.0f});
  b.mutable_grad() = torch::tensor({{1.0f, 2.0f}, {2.0f, 4.0f}});
  const double norm = std::sqrt(9.0 + 16.0 + 1.0 + 4.0 + 4.0 + 16.0);
  EXPECT_NEAR(ClipGradNorm({a, b}, 0.5), norm, 1e-5);
  const double after =
      std::sqrt(a.grad().square().sum().item<double>() + b.grad().square().sum().item<double>());
  EXPECT_NEAR(after, 0.5, 1e-5);
  EXPECT_NEAR(a.grad()[2].item<double>() / a.grad()[0].item<double>(), 4.0 / 3.0, 1e-6);
  // Below the limit nothing changes.
  EXPECT_NEAR(ClipGradNorm({a, b}, 10.0), 0.5, 1e-5);
  EXPECT_NEAR(a.grad()[0].item<double>(), 3.0 * 0.5 / norm, 1e-5);
}

}  // namespace
}  // namespace rlt::learn
