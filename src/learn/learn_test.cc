// Tests of rlt_learn: every numeric piece against an independent reference written here
// (plain double loops of the published formulas), plus trainer smoke, determinism and
// checkpoint round-trip checks.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "core/options.h"
#include "env/envs/example.h"
#include "env/registry.h"
#include "learn/checkpoint.h"
#include "learn/evaluate.h"
#include "learn/normalize.h"
#include "learn/rollout.h"
#include "learn/schedule.h"
#include "learn/torch_policy.h"
#include "learn/torch_ppo.h"
#include "learn/trainer.h"
#include "testing/testing.h"

namespace rlt::learn {
namespace {

// A LibTorch copy of a trainer's current policy (the oracle's forward).
ActorCritic TorchPolicyOf(Trainer& t, int obs_dim, const env::ActionSpace& space) {
  ActorCritic policy(obs_dim, space, t.policy_options());
  const Status loaded = LoadPolicyFromTensorFile(t.PolicyParameters(), policy, "the trainer");
  RLT_CHECK_MSG(loaded.ok(), loaded.message());
  return policy;
}

// EvaluatePolicy on a LibTorch module's parameters.
Result<EvalStats> EvaluateModule(ActorCritic& policy, const VecNormalizer& normalizer,
                                 env::VecEnv& venv, int episodes, uint64_t seed) {
  return EvaluatePolicy(PolicyToTensorFile(policy), policy->options(), normalizer, venv, episodes,
                        seed);
}

// Two learner states hold the same parameters, Adam moments, step and learning rate.
void ExpectSameLearnerState(const LearnerState& a, const LearnerState& b) {
  EXPECT_EQ(a.adam_step, b.adam_step);
  EXPECT_EQ(a.lr, b.lr);
  const native::TensorFile* files[3][2] = {
      {&a.params, &b.params}, {&a.exp_avg, &b.exp_avg}, {&a.exp_avg_sq, &b.exp_avg_sq}};
  for (const auto& [fa, fb] : files) {
    ASSERT_EQ(fa->tensors().size(), fb->tensors().size());
    for (size_t i = 0; i < fa->tensors().size(); ++i) {
      EXPECT_EQ(fa->tensors()[i].name, fb->tensors()[i].name);
      EXPECT_EQ(fa->tensors()[i].f32, fb->tensors()[i].f32) << fa->tensors()[i].name;
    }
  }
}

std::unique_ptr<env::VecEnv> MakeExampleVecEnv(int n, double persistence = 0.7) {
  auto envs = env::MakeEnvs("example",
                            {{{"persistence", std::to_string(persistence)}}, nullptr, nullptr}, n);
  RLT_CHECK(envs.ok());
  return std::make_unique<env::VecEnv>(std::move(*envs), 1);
}

// A Box test env: obs = (steps / 10, the action it last received). Episodes of kind 0 are
// truncated after 3 steps, kind 1 terminate after 4. Reward 1 every step.
class ProbeEnv : public env::Env {
 public:
  explicit ProbeEnv(int kind) : kind_(kind) {
    spec_.id = "probe";
    spec_.obs_dim = 2;
    spec_.action = {false, 1, 0, {-1.0f}, {1.0f}};
  }
  const env::EnvSpec& spec() const override { return spec_; }
  void Reset(float* obs, double*) override {
    steps_ = 0;
    obs[0] = 0.0f;
    obs[1] = 0.0f;
  }
  env::StepResult Step(const float* action, float* obs, double*) override {
    ++steps_;
    obs[0] = 0.1f * steps_;
    obs[1] = action[0];
    env::StepResult r;
    r.reward = 1.0f;
    r.truncated = kind_ == 0 && steps_ == 3;
    r.terminated = kind_ == 1 && steps_ == 4;
    return r;
  }

 private:
  int kind_;
  int steps_ = 0;
  env::EnvSpec spec_;
};

std::unique_ptr<env::VecEnv> MakeProbeVecEnv() {
  std::vector<std::unique_ptr<env::Env>> envs;
  for (int i = 0; i < 4; ++i) envs.push_back(std::make_unique<ProbeEnv>(i % 2));
  return std::make_unique<env::VecEnv>(std::move(envs), 1);
}

// ---------------------------------------------------------------- GAE

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

// ---------------------------------------------------------------- distributions

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

TEST(Policy, OptionsBindByKeyAndInvalidWidthsAreRejected) {
  PolicyOptions o;
  ASSERT_TRUE(SetOption(o, "pi", "[32, 16]").ok());
  ASSERT_TRUE(SetOption(o, "activation", "relu").ok());
  EXPECT_EQ(o.pi, (std::vector<int>{32, 16}));
  EXPECT_FALSE(SetOption(o, "activation", "gelu").ok());
  EXPECT_TRUE(ValidatePolicyOptions(o).ok());
  o.vf = {64, 0};
  EXPECT_FALSE(ValidatePolicyOptions(o).ok());
}

// ---------------------------------------------------------------- PPO loss

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

// ---------------------------------------------------------------- normalisers

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

// ---------------------------------------------------------------- schedules

TEST(Schedule, ConstantAndLinearFollowSb3Progress) {
  auto at = [](const Schedule& s, double p) { return s.Value({p, 1, 1}); };
  EXPECT_EQ(at(*Schedule::Parse("3e-4"), 0.3), 3e-4);
  const Schedule lin = *Schedule::Parse("linear(1e-3, 0)");
  EXPECT_DOUBLE_EQ(at(lin, 1.0), 1e-3);
  EXPECT_DOUBLE_EQ(at(lin, 0.5), 5e-4);
  EXPECT_DOUBLE_EQ(at(lin, 0.0), 0.0);
  // The last rollout can overshoot total_timesteps: the value stays at `end`.
  EXPECT_DOUBLE_EQ(at(lin, -0.01), 0.0);
  const Schedule up = *Schedule::Parse(" linear( 0.1 , 0.3 ) ");
  EXPECT_DOUBLE_EQ(at(up, 0.25), 0.25);
  EXPECT_FALSE(Schedule::Parse("linear(1)").ok());
  EXPECT_FALSE(Schedule::Parse("cosine(1, 2)").ok());
  EXPECT_FALSE(Schedule::Parse("linear(a, 2)").ok());
}

TEST(Schedule, WarmupCosineRisesLinearlyThenDecaysToTheFinalFraction) {
  const Schedule s = *Schedule::Parse("warmup_cosine(1e-3, 10, 0.1)");
  auto at = [&](int64_t u) { return s.Value({0.0, u, 110}); };
  EXPECT_DOUBLE_EQ(at(1), 1e-4);
  EXPECT_DOUBLE_EQ(at(5), 5e-4);
  EXPECT_DOUBLE_EQ(at(10), 1e-3);
  EXPECT_NEAR(at(60), 1e-3 * (0.1 + 0.9 * 0.5), 1e-15);  // half-way: cos(pi/2) = 0
  EXPECT_NEAR(at(35), 1e-3 * (0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi / 4))), 1e-15);
  EXPECT_NEAR(at(110), 1e-4, 1e-15);
  EXPECT_EQ(Schedule::Parse(s.ToString())->ToString(), s.ToString());
}

TEST(PpoOptions, SchedulesAndNumbersBindByKey) {
  PpoOptions o;
  ASSERT_TRUE(SetOption(o, "learning_rate", "linear(1e-3, 0)").ok());
  ASSERT_TRUE(SetOption(o, "clip_range", "0.1").ok());
  EXPECT_DOUBLE_EQ(o.learning_rate.Value({0.5, 1, 1}), 5e-4);
  EXPECT_DOUBLE_EQ(o.clip_range.Value({0.5, 1, 1}), 0.1);
  const Status bad = SetOption(o, "learnig_rate", "1");
  EXPECT_NE(bad.message().find("learning_rate"), std::string::npos);
  EXPECT_FALSE(SetOption(o, "ent_coef", "linear(").ok());
}

// ---------------------------------------------------------------- trainer

PpoOptions SmallPpo() {
  PpoOptions o;
  o.n_steps = 16;
  o.batch_size = 32;
  o.n_epochs = 3;
  o.total_timesteps = 10000;
  return o;
}

TEST(PpoTrainer, SmokeRunAdvancesStepsAndKeepsLossesFinite) {
  SetComputeThreads(1);
  auto venv = MakeExampleVecEnv(4);
  auto trainer = PpoTrainer::Create(*venv, PolicyOptions{}, SmallPpo(), 1);
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  for (int it = 1; it <= 3; ++it) {
    auto stats = (*trainer)->Iterate();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ((*trainer)->total_steps(), it * 16 * 4);
    EXPECT_EQ(stats->total_timesteps, it * 16 * 4);
    for (const auto& [name, value] : stats->Named()) EXPECT_TRUE(std::isfinite(value)) << name;
    EXPECT_EQ(stats->update.optimizer_steps, 3 * 2);  // 64 samples / 32 per batch, 3 epochs
  }
  EXPECT_GT((*trainer)->timing().env_step, 0.0);
  EXPECT_GT((*trainer)->timing().backward, 0.0);
}

TEST(PpoTrainer, SameSeedGivesIdenticalResults) {
  SetComputeThreads(1);
  PpoOptions o = SmallPpo();
  o.norm_obs = o.norm_reward = true;
  std::vector<double> runs[2];
  for (auto& run : runs) {
    auto venv = MakeExampleVecEnv(4);
    PpoTrainer t(*venv, PolicyOptions{}, o, 42);
    for (int it = 0; it < 2; ++it) {
      auto s = t.Iterate();
      ASSERT_TRUE(s.ok());
      for (const auto& [name, v] : s->Named()) {
        if (name != "time/fps") run.push_back(v);
      }
    }
  }
  EXPECT_EQ(runs[0], runs[1]);
}

// With learning rate 0 the policy after Iterate() is the one that collected the rollout,
// so the stored rewards can be checked against V(terminal obs) recomputed here.
TEST(PpoTrainer, BootstrapsTruncatedEpisodesAndClipsBoxActions) {
  SetComputeThreads(1);
  auto venv = MakeProbeVecEnv();
  PpoOptions o = SmallPpo();
  o.n_steps = 7;
  o.learning_rate = 0.0;
  o.gamma = 0.9;
  PolicyOptions p;
  p.log_std_init = 1.0;  // wide samples: many fall outside [-1, 1]
  PpoTrainer t(*venv, p, o, 3);
  ASSERT_TRUE(t.Iterate().ok());
  ActorCritic policy = TorchPolicyOf(t, venv->obs_dim(), venv->spec().action);
  RolloutBuffer& b = t.rollout();
  int clipped = 0;
  for (int step = 0; step < 7; ++step) {
    for (int i = 0; i < 4; ++i) {
      const float* obs = b.obs(step) + i * 2;
      // Env kind 0 is truncated on its 3rd step: the step with obs[0] == 0.2.
      const bool truncating = i % 2 == 0 && std::abs(obs[0] - 0.2f) < 1e-6f;
      float expected = 1.0f;
      if (truncating) {
        const float term[2] = {0.3f, std::clamp(b.actions(step)[i], -1.0f, 1.0f)};
        const float v =
            policy->PredictValues(torch::from_blob(const_cast<float*>(term), {1, 2})).item<float>();
        expected += 0.9f * v;
      }
      EXPECT_NEAR(b.rewards(step)[i], expected, 1e-6) << "step " << step << " env " << i;
      const float a = b.actions(step)[i];
      if (step + 1 < 7 && b.episode_starts(step + 1)[i] == 0.0f) {
        EXPECT_EQ(b.obs(step + 1)[i * 2 + 1], std::clamp(a, -1.0f, 1.0f));
        clipped += std::abs(a) > 1.0f;
      }
    }
  }
  EXPECT_GT(clipped, 0);
  // Stored advantages agree with the reference GAE on the stored rewards and values.
  std::vector<float> last_values(4), last_dones(4), adv(28), ret(28);
  for (int i = 0; i < 4; ++i) {
    last_dones[i] = venv->done(i);
  }
  const torch::Tensor lv =
      policy->PredictValues(torch::from_blob(venv->mutable_observations(), {4, 2}));
  for (int i = 0; i < 4; ++i) last_values[i] = lv[i].item<float>();
  ComputeGae(7, 4, b.rewards(0), b.values(0), b.episode_starts(0), last_values.data(),
             last_dones.data(), 0.9f, 0.95f, adv.data(), ret.data());
  for (int k = 0; k < 28; ++k) EXPECT_NEAR(b.flat_advantages()[k], adv[k], 1e-5);
}

TEST(Checkpoint, ResumedTrainerReproducesTheNextIterationBitForBit) {
  SetComputeThreads(1);
  PpoOptions o = SmallPpo();
  o.norm_obs = o.norm_reward = true;
  o.learning_rate = *Schedule::Parse("linear(1e-3, 0)");
  const rlt::testing::ScratchDir scratch("rlt_learn_ckpt_");
  const std::filesystem::path dir = scratch / "ckpt";

  auto env_a = MakeExampleVecEnv(4);
  PpoTrainer a(*env_a, PolicyOptions{}, o, 5);
  for (int it = 0; it < 2; ++it) ASSERT_TRUE(a.Iterate().ok());
  ASSERT_TRUE(SaveCheckpoint(dir, a).ok());
  // Overwriting an existing checkpoint works; extra files land beside the model.
  ASSERT_TRUE(SaveCheckpoint(dir, a, {{"config.toml", "seed = 5\n"}}).ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "config.toml"));
  EXPECT_TRUE(std::filesystem::exists(dir / "FORMAT"));

  EXPECT_TRUE(std::filesystem::exists(dir / "envs.bin"));

  // b starts from other weights and envs seeded and stepped differently: everything, the
  // envs' RNGs and episodes included, comes from the checkpoint. Same thread count as a
  // (the native update's summation order depends on it; env results do not,
  // vec_env_test.cc).
  auto envs_b = env::MakeEnvs("example", {{{"persistence", "0.7"}}, nullptr, nullptr}, 4);
  ASSERT_TRUE(envs_b.ok());
  env::VecEnv env_b(std::move(*envs_b), env_a->threads());
  PpoTrainer b(env_b, PolicyOptions{}, o, 999);
  ASSERT_TRUE(b.Iterate().ok());
  const Status loaded = LoadCheckpoint(dir, b);
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  EXPECT_EQ(b.total_steps(), a.total_steps());
  EXPECT_EQ(b.iterations(), 2);
  // Parameters and Adam state (moments, step, learning rate) are a's.
  ExpectSameLearnerState(a.learner()->ExportState(), b.learner()->ExportState());
  for (int it = 0; it < 2; ++it) {
    auto sa = a.Iterate();
    auto sb = b.Iterate();
    ASSERT_TRUE(sa.ok() && sb.ok());
    EXPECT_EQ(sa->update.policy_gradient_loss, sb->update.policy_gradient_loss);
    EXPECT_EQ(sa->update.value_loss, sb->update.value_loss);
    EXPECT_EQ(sa->update.entropy_loss, sb->update.entropy_loss);
    EXPECT_EQ(sa->update.approx_kl, sb->update.approx_kl);
    EXPECT_EQ(sa->learning_rate, sb->learning_rate);
    EXPECT_EQ(sa->episodes_seen, sb->episodes_seen);
    EXPECT_EQ(sa->ep_rew_mean, sb->ep_rew_mean);
    EXPECT_EQ(sa->ep_len_mean, sb->ep_len_mean);
  }
  EXPECT_EQ(env_b.SaveState(), env_a->SaveState());
  ExpectSameLearnerState(a.learner()->ExportState(), b.learner()->ExportState());
  EXPECT_EQ(a.normalizer()->obs_var(), b.normalizer()->obs_var());

  EXPECT_EQ(LoadCheckpoint(dir / "missing", b).code(), Status::Code::kNotFound);
  auto env_c = MakeExampleVecEnv(3);
  PpoTrainer c(*env_c, PolicyOptions{}, o, 1);
  EXPECT_EQ(LoadCheckpoint(dir, c).code(), Status::Code::kDataError);
  // A damaged or missing envs.bin is an error naming the file, not a silent fresh start.
  {
    std::ofstream cut(dir / "envs.bin", std::ios::binary | std::ios::trunc);
    cut << "rltrade";
  }
  const Status damaged = LoadCheckpoint(dir, b);
  EXPECT_EQ(damaged.code(), Status::Code::kDataError);
  EXPECT_NE(damaged.message().find("envs.bin"), std::string::npos) << damaged.message();
  std::filesystem::remove(dir / "envs.bin");
  EXPECT_EQ(LoadCheckpoint(dir, b).code(), Status::Code::kNotFound);
  std::filesystem::remove_all(dir);
}

// A linear policy on the example env's observation (window moves, then x / bound) with no
// hidden layers: logits = (0, w * last move), so argmax picks "up" (1) iff w * move > 0.
ActorCritic LastMovePolicy(int window, float w) {
  PolicyOptions po;
  po.pi = {};
  po.vf = {};
  env::ActionSpace space;
  space.discrete = true;
  space.dim = 1;
  space.n = 2;
  ActorCritic policy(window + 1, space, po);
  torch::NoGradGuard no_grad;
  policy->action_net()->weight.zero_();
  policy->action_net()->bias.zero_();
  policy->action_net()->weight[1][window - 1] = w;
  return policy;
}

// persistence = 1: every move repeats the first one, so guessing the last move again is
// right at every step: reward +1 per step, and x walks straight to +-bound (terminated
// after `bound` steps) or is truncated at max_steps, whichever comes first.
TEST(EvaluatePolicy, FollowingTheLastMoveOnAPersistentWalkEarnsOnePerStep) {
  for (const auto& [max_steps, expected] : {std::pair{100, 20}, std::pair{8, 8}}) {
    auto envs = env::MakeEnvs(
        "example",
        {{{"persistence", "1"}, {"max_steps", std::to_string(max_steps)}}, nullptr, nullptr}, 3);
    ASSERT_TRUE(envs.ok());
    env::VecEnv venv(std::move(*envs), 2);
    ActorCritic policy = LastMovePolicy(/*window=*/4, /*w=*/1.0f);
    VecNormalizer normalizer(venv.obs_dim(), venv.num_envs(), NormalizeOptions{});
    auto s = EvaluateModule(policy, normalizer, venv, /*episodes=*/7, /*seed=*/11);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_EQ(s->episode_rewards.size(), 7u);
    for (size_t e = 0; e < 7; ++e) {
      EXPECT_EQ(s->episode_rewards[e], expected);
      EXPECT_EQ(s->episode_lengths[e], expected);
    }
    EXPECT_EQ(s->mean_reward, expected);
    EXPECT_EQ(s->std_reward, 0.0);
    EXPECT_EQ(s->mean_ep_length, expected);
    EXPECT_FALSE(s->has_net_worth);
    // The opposite guess is wrong at every step.
    ActorCritic contrarian = LastMovePolicy(4, -1.0f);
    auto c = EvaluateModule(contrarian, normalizer, venv, 7, 11);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->mean_reward, -expected);
  }
}

// Observations go through the training statistics (without updating them): with the
// last-move component's mean shifted to 2 (var 1), moves +1 / -1 normalise to -1 / -3, so
// the same policy always guesses "down": +bound on walks that go down, -bound on walks up.
TEST(EvaluatePolicy, NormalisesObservationsWithTheTrainingStatisticsWithoutUpdatingThem) {
  auto envs = env::MakeEnvs("example", {{{"persistence", "1"}}, nullptr, nullptr}, 2);
  ASSERT_TRUE(envs.ok());
  env::VecEnv venv(std::move(*envs), 1);
  NormalizeOptions no;
  no.norm_obs = true;
  VecNormalizer normalizer(venv.obs_dim(), venv.num_envs(), no);
  // Two observations with last move 1 and 3: mean 2, population variance 1 (count 2 + 1e-4).
  std::vector<float> batch(2 * venv.obs_dim(), 0.0f);
  batch[3] = 1.0f;
  batch[venv.obs_dim() + 3] = 3.0f;
  normalizer->UpdateObs(batch.data(), 2);
  const double count = normalizer->obs_count();
  const std::vector<double> mean = normalizer->obs_mean();
  ActorCritic policy = LastMovePolicy(4, 1.0f);
  auto s = EvaluateModule(policy, normalizer, venv, 10, 3);
  ASSERT_TRUE(s.ok());
  int up = 0, down = 0;
  for (double r : s->episode_rewards) {
    EXPECT_TRUE(r == 20 || r == -20) << r;
    (r > 0 ? down : up) += 1;
  }
  EXPECT_GT(up, 0);  // with raw observations every episode would earn +20
  EXPECT_EQ(normalizer->obs_count(), count);
  EXPECT_EQ(normalizer->obs_mean(), mean);
}

TEST(EvaluatePolicy, IsRepeatableAndDrawsNothingFromTorchsGenerator) {
  auto envs = env::MakeEnvs("pendulum", {{}, nullptr, nullptr}, 2);
  ASSERT_TRUE(envs.ok());
  env::VecEnv venv(std::move(*envs), 1);
  torch::manual_seed(0);
  ActorCritic policy(venv.obs_dim(), venv.spec().action, PolicyOptions{});
  NormalizeOptions no;
  no.norm_obs = true;
  VecNormalizer normalizer(venv.obs_dim(), venv.num_envs(), no);
  venv.Reset(5);
  normalizer->UpdateObs(venv.observations(), venv.num_envs());
  torch::manual_seed(9);
  auto a = EvaluateModule(policy, normalizer, venv, 3, 100);
  const torch::Tensor after_eval = torch::rand({4});
  auto b = EvaluateModule(policy, normalizer, venv, 3, 100);
  ASSERT_TRUE(a.ok() && b.ok());
  torch::manual_seed(9);
  EXPECT_TRUE(torch::equal(after_eval, torch::rand({4})));
  EXPECT_EQ(a->episode_rewards, b->episode_rewards);
  EXPECT_EQ(a->episode_lengths, std::vector<int64_t>(3, 200));  // Pendulum-v1 time limit
  auto other_seed = EvaluateModule(policy, normalizer, venv, 3, 101);
  ASSERT_TRUE(other_seed.ok());
  EXPECT_NE(a->episode_rewards, other_seed->episode_rewards);
  EXPECT_FALSE(EvaluateModule(policy, normalizer, venv, 0, 100).ok());
}

}  // namespace
}  // namespace rlt::learn
