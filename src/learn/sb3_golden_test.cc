// Outside goldens for the learner: one PPO update recorded from Stable-Baselines3 2.3.0's
// own PPO.learn() (testdata/README.md says how), reproduced here with our ActorCritic,
// ComputeGae, ComputePpoLoss, ClipGradNorm and LibTorch's Adam after loading SB3's
// parameters. Two cases: CartPole-v1 (Discrete(2)) and Pendulum-v1 (Box(1), value clipping).
//
// Tolerance: 1e-5, relative to max(1, |expected|). Both sides run LibTorch 1.13 float32
// kernels, but the formulas are not written the same way (e.g. SB3's Normal.log_prob
// divides by 2 var where we scale by exp(-log_std); SB3's GAE carries its recursion in
// float64 because `1.0 - dones` is a float64 array), so results agree to float32 rounding
// (measured: about 1e-7 relative), not bit for bit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "learn/rollout.h"
#include "learn/torch_policy.h"
#include "learn/torch_ppo.h"
#include "testing/testing.h"

namespace rlt::learn {
namespace {

constexpr double kTol = 1e-5;

double Tol(double want) { return kTol * std::max(1.0, std::abs(want)); }

nlohmann::json LoadFixture(const std::string& name) {
  const std::string path = std::string(RLT_SOURCE_DIR) + "/src/learn/testdata/" + name;
  const std::string text = rlt::testing::ReadFile(path);
  EXPECT_FALSE(text.empty()) << "cannot read " << path
                             << " (regenerate with tests/goldens/record_goldens.py)";
  return nlohmann::json::parse(text);
}

std::vector<float> Floats(const nlohmann::json& values) {
  std::vector<float> out;
  for (const nlohmann::json& v : values) out.push_back(static_cast<float>(v.get<double>()));
  return out;
}

torch::Tensor ToTensor(const nlohmann::json& values, std::vector<int64_t> shape) {
  const std::vector<float> v = Floats(values);
  return torch::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())},
                          torch::kFloat32)
      .clone()
      .reshape(shape);
}

torch::Tensor NamedTensor(const nlohmann::json& entry) {
  return ToTensor(entry.at("values"), entry.at("shape").get<std::vector<int64_t>>());
}

void ExpectAllNear(const torch::Tensor& got, const torch::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const torch::Tensor g = got.contiguous().to(torch::kDouble);
  const torch::Tensor w = want.contiguous().to(torch::kDouble);
  const double* gp = g.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  int bad = 0;
  for (int64_t i = 0; i < g.numel() && bad < 5; ++i) {
    if (!(std::abs(gp[i] - wp[i]) <= Tol(wp[i]))) {
      ADD_FAILURE() << what << "[" << i << "]: ours " << gp[i] << ", SB3 " << wp[i];
      ++bad;
    }
  }
}

// The policy of a fixture, with SB3's recorded parameters loaded by name.
struct Case {
  nlohmann::json doc;
  ActorCritic policy{nullptr};
  Minibatch batch;
  PpoLossSettings settings;
};

Case LoadCase(const std::string& name) {
  Case c;
  c.doc = LoadFixture(name);
  const nlohmann::json& p = c.doc.at("policy");
  env::ActionSpace space;
  space.discrete = p.at("discrete");
  space.dim = p.at("act_dim");
  space.n = p.at("n");
  if (!space.discrete) {
    space.low.assign(space.dim, -1.0f);
    space.high.assign(space.dim, 1.0f);
  }
  PolicyOptions options;
  options.pi = p.at("pi").get<std::vector<int>>();
  options.vf = p.at("vf").get<std::vector<int>>();
  options.activation = p.at("activation");
  options.ortho_init = false;  // every parameter is overwritten below
  c.policy = ActorCritic(p.at("obs_dim").get<int>(), space, options);

  const nlohmann::json& params = c.doc.at("params_before");
  std::set<std::string> ours;
  {
    torch::NoGradGuard no_grad;
    for (auto& item : c.policy->named_parameters()) {
      ours.insert(item.key());
      EXPECT_TRUE(params.contains(item.key())) << "SB3 has no parameter " << item.key();
      if (params.contains(item.key())) item.value().copy_(NamedTensor(params.at(item.key())));
    }
  }
  EXPECT_EQ(ours.size(), params.size()) << "parameter sets differ";

  const nlohmann::json& mb = c.doc.at("minibatch");
  const int64_t b = mb.at("size");
  c.batch.obs = ToTensor(mb.at("obs"), {b, p.at("obs_dim").get<int64_t>()});
  c.batch.actions = ToTensor(mb.at("actions"), {b, p.at("act_dim").get<int64_t>()});
  c.batch.old_values = ToTensor(mb.at("old_values"), {b});
  c.batch.old_log_probs = ToTensor(mb.at("old_log_probs"), {b});
  c.batch.advantages = ToTensor(mb.at("advantages"), {b});
  c.batch.returns = ToTensor(mb.at("returns"), {b});

  const nlohmann::json& s = c.doc.at("settings");
  c.settings.clip_range = s.at("clip_range");
  c.settings.clip_range_vf = s.at("clip_range_vf");
  c.settings.ent_coef = s.at("ent_coef");
  c.settings.vf_coef = s.at("vf_coef");
  c.settings.normalize_advantage = s.at("normalize_advantage");
  return c;
}

class Sb3Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Sb3Golden, FixtureNamesSb3230AndItsCommit) {
  const nlohmann::json doc = LoadFixture(GetParam());
  const nlohmann::json& prov = doc.at("provenance");
  EXPECT_EQ(prov.at("stable_baselines3").at("version"), "2.3.0");
  EXPECT_EQ(prov.at("stable_baselines3").at("commit").get<std::string>().size(), 40u);
  EXPECT_EQ(prov.at("gymnasium").at("version"), "0.29.1");
  // One epoch of one minibatch: the logged means are that minibatch's values.
  const nlohmann::json& s = doc.at("settings");
  EXPECT_EQ(s.at("n_epochs"), 1);
  EXPECT_EQ(s.at("batch_size").get<int>(),
            s.at("n_steps").get<int>() * doc.at("n_envs").get<int>());
}

TEST_P(Sb3Golden, GaeMatchesRolloutBufferComputeReturnsAndAdvantage) {
  const nlohmann::json doc = LoadFixture(GetParam());
  const nlohmann::json& g = doc.at("gae");
  const int n_steps = g.at("n_steps"), n_envs = g.at("n_envs");
  const nlohmann::json& in = g.at("input");
  const std::vector<float> rewards = Floats(in.at("rewards")), values = Floats(in.at("values"));
  const std::vector<float> starts = Floats(in.at("episode_starts"));
  const std::vector<float> last_values = Floats(in.at("last_values"));
  const std::vector<float> last_dones = Floats(in.at("last_dones"));
  ASSERT_EQ(rewards.size(), static_cast<size_t>(n_steps * n_envs));
  // The rollout crosses episode boundaries (otherwise the mask is untested).
  EXPECT_GT(std::count(starts.begin() + n_envs, starts.end(), 1.0f), 0);
  std::vector<float> adv(rewards.size()), ret(rewards.size());
  const nlohmann::json& s = doc.at("settings");
  ComputeGae(n_steps, n_envs, rewards.data(), values.data(), starts.data(), last_values.data(),
             last_dones.data(), s.at("gamma").get<float>(), s.at("gae_lambda").get<float>(),
             adv.data(), ret.data());
  const std::vector<float> want_adv = Floats(g.at("output").at("advantages"));
  const std::vector<float> want_ret = Floats(g.at("output").at("returns"));
  for (size_t k = 0; k < adv.size(); ++k) {
    EXPECT_NEAR(adv[k], want_adv[k], Tol(want_adv[k])) << k;
    EXPECT_NEAR(ret[k], want_ret[k], Tol(want_ret[k])) << k;
  }
}

TEST_P(Sb3Golden, LossTermsMatchPpoTrain) {
  Case c = LoadCase(GetParam());
  const PpoLoss loss =
      ComputePpoLoss(c.policy->Evaluate(c.batch.obs, c.batch.actions), c.batch, c.settings);
  const nlohmann::json& want = c.doc.at("loss");
  EXPECT_NEAR(loss.policy_loss.item<double>(), want.at("policy"), Tol(want.at("policy")));
  EXPECT_NEAR(loss.value_loss.item<double>(), want.at("value"), Tol(want.at("value")));
  EXPECT_NEAR(loss.entropy_loss.item<double>(), want.at("entropy"), Tol(want.at("entropy")));
  EXPECT_NEAR(loss.loss.item<double>(), want.at("total"), Tol(want.at("total")));
  EXPECT_NEAR(loss.approx_kl, want.at("approx_kl"), kTol);
  EXPECT_NEAR(loss.clip_fraction, want.at("clip_fraction"), kTol);
  // The fixture has ratios on both sides of the clip (both branches of the min are used).
  EXPECT_GT(want.at("clip_fraction").get<double>(), 0.0);
  EXPECT_LT(want.at("clip_fraction").get<double>(), 1.0);
}

TEST_P(Sb3Golden, GradientsClippingAndOneAdamStepMatch) {
  Case c = LoadCase(GetParam());
  const nlohmann::json& s = c.doc.at("settings");
  torch::optim::Adam adam(c.policy->parameters(),
                          torch::optim::AdamOptions(s.at("learning_rate").get<double>())
                              .eps(s.at("adam_eps").get<double>()));
  const PpoLoss loss =
      ComputePpoLoss(c.policy->Evaluate(c.batch.obs, c.batch.actions), c.batch, c.settings);
  adam.zero_grad();
  loss.loss.backward();
  const nlohmann::json& grads = c.doc.at("grads_before_clip");
  for (auto& item : c.policy->named_parameters()) {
    ExpectAllNear(item.value().grad(), NamedTensor(grads.at(item.key())), "grad " + item.key());
  }
  const double norm = ClipGradNorm(c.policy->parameters(), s.at("max_grad_norm"));
  const double want_norm = c.doc.at("grad_norm_before_clip");
  EXPECT_NEAR(norm, want_norm, Tol(want_norm));
  EXPECT_GT(want_norm, s.at("max_grad_norm").get<double>());  // the clip really scales
  const nlohmann::json& clipped = c.doc.at("grads_after_clip");
  for (auto& item : c.policy->named_parameters()) {
    ExpectAllNear(item.value().grad(), NamedTensor(clipped.at(item.key())),
                  "clipped grad " + item.key());
  }
  adam.step();
  const nlohmann::json& after = c.doc.at("params_after");
  for (auto& item : c.policy->named_parameters()) {
    ExpectAllNear(item.value(), NamedTensor(after.at(item.key())), "param " + item.key());
  }
}

INSTANTIATE_TEST_SUITE_P(Sb3, Sb3Golden,
                         ::testing::Values("sb3_ppo_discrete.json", "sb3_ppo_box.json"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "sb3_ppo_box.json" ? std::string("Box")
                                                                   : std::string("Discrete");
                         });

}  // namespace
}  // namespace rlt::learn
