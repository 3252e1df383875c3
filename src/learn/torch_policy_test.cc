// Tests of the torch backend's policy (LibTorch): the Gaussian and categorical
// log-probabilities and entropies against the analytic formulas, deterministic actions,
// and SB3's orthogonal init.
#include "learn/torch_policy.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "learn/policy.h"

namespace rlt::learn {
namespace {

TEST(Distributions, GaussianLogProbAndEntropyMatchTheAnalyticFormulas) {
  const torch::Tensor mean = torch::tensor({{0.5, -1.0, 2.0}, {0.0, 0.3, -0.7}}, torch::kDouble);
  const torch::Tensor log_std = torch::tensor({-0.5, 0.0, 0.7}, torch::kDouble);
  const torch::Tensor actions = torch::tensor({{1.0, -2.0, 0.0}, {0.1, 0.2, 0.3}}, torch::kDouble);
  const torch::Tensor lp = GaussianLogProb(mean, log_std, actions);
  const torch::Tensor ent = GaussianEntropy(log_std, 2);
  for (int b = 0; b < 2; ++b) {
    double expected = 0.0, expected_entropy = 0.0;
    for (int d = 0; d < 3; ++d) {
      const double sigma = std::exp(log_std[d].item<double>());
      const double x = actions[b][d].item<double>(), mu = mean[b][d].item<double>();
      expected += -std::pow(x - mu, 2) / (2 * sigma * sigma) -
                  std::log(sigma * std::sqrt(2 * std::numbers::pi));
      expected_entropy += 0.5 * std::log(2 * std::numbers::pi * std::numbers::e * sigma * sigma);
    }
    EXPECT_NEAR(lp[b].item<double>(), expected, 1e-12);
    EXPECT_NEAR(ent[b].item<double>(), expected_entropy, 1e-12);
  }
}

TEST(Distributions, CategoricalLogProbAndEntropyMatchAManualLogSoftmax) {
  const std::vector<std::vector<double>> logits = {{1.0, 2.0, -3.0}, {0.0, 0.0, 10.0}};
  const torch::Tensor t =
      torch::tensor({1.0, 2.0, -3.0, 0.0, 0.0, 10.0}, torch::kDouble).view({2, 3});
  const torch::Tensor actions = torch::tensor({{2.0}, {0.0}}, torch::kDouble);
  const torch::Tensor lp = CategoricalLogProb(t, actions);
  const torch::Tensor ent = CategoricalEntropy(t);
  const int chosen[2] = {2, 0};
  for (int b = 0; b < 2; ++b) {
    double z = 0;
    for (double l : logits[b]) z += std::exp(l);
    EXPECT_NEAR(lp[b].item<double>(), logits[b][chosen[b]] - std::log(z), 1e-12);
    double h = 0;
    for (double l : logits[b]) h -= std::exp(l) / z * (l - std::log(z));
    EXPECT_NEAR(ent[b].item<double>(), h, 1e-12);
  }
}

TEST(Policy, DeterministicActionsAreTheMeanAndTheArgmax) {
  torch::manual_seed(3);
  env::ActionSpace box{false, 2, 0, {-1, -1}, {1, 1}};
  ActorCritic gauss(5, box, PolicyOptions{});
  const torch::Tensor obs = torch::randn({4, 5});
  const ActResult a = gauss->Act(obs, nullptr, /*deterministic=*/true);
  EvaluateResult e;
  {
    torch::NoGradGuard g;
    const torch::Tensor mean = gauss->action_net()->forward(gauss->pi_net()->forward(obs));
    EXPECT_TRUE(torch::allclose(a.actions, mean));
  }
  env::ActionSpace discrete{true, 1, 3, {}, {}};
  ActorCritic cat(5, discrete, PolicyOptions{});
  const ActResult c = cat->Act(obs, nullptr, /*deterministic=*/true);
  torch::NoGradGuard g;
  const torch::Tensor logits = cat->action_net()->forward(cat->pi_net()->forward(obs));
  EXPECT_TRUE(torch::equal(c.actions.view({-1}).to(torch::kLong), logits.argmax(-1)));
  // Log-probs from Act() equal Evaluate() on the same actions.
  EXPECT_TRUE(torch::allclose(cat->Evaluate(obs, c.actions).log_probs, c.log_probs));
}

// ---------------------------------------------------------------- init

void ExpectOrthogonalRows(const torch::Tensor& w, double gain) {
  ASSERT_LE(w.size(0), w.size(1));
  const torch::Tensor wwt = torch::mm(w, w.t()).to(torch::kDouble);
  const torch::Tensor expected = gain * gain * torch::eye(w.size(0), torch::kDouble);
  EXPECT_TRUE(torch::allclose(wwt, expected, 1e-4, 1e-5 * gain * gain)) << wwt;
}

TEST(Policy, OrthogonalInitUsesSb3GainsAndZeroBiases) {
  torch::manual_seed(11);
  env::ActionSpace discrete{true, 1, 3, {}, {}};
  ActorCritic p(100, discrete, PolicyOptions{});  // first layers 64 x 100: rows <= cols
  torch::NoGradGuard g;
  for (auto* net : {&p->pi_net(), &p->vf_net()}) {
    for (int layer : {0, 2}) {  // Linear, Tanh, Linear, Tanh
      auto* linear = (*net)[layer]->as<torch::nn::Linear>();
      ASSERT_NE(linear, nullptr);
      ExpectOrthogonalRows(linear->weight, std::sqrt(2.0));
      EXPECT_EQ(linear->bias.abs().max().item<float>(), 0.0f);
    }
  }
  ExpectOrthogonalRows(p->action_net()->weight, 0.01);
  ExpectOrthogonalRows(p->value_net()->weight, 1.0);
  EXPECT_EQ(p->action_net()->bias.abs().max().item<float>(), 0.0f);
  EXPECT_EQ(p->value_net()->bias.abs().max().item<float>(), 0.0f);
}

}  // namespace
}  // namespace rlt::learn
