// The native engine against an outside oracle: one PPO minibatch update recorded from
// Stable-Baselines3 2.3.0's own PPO.learn() (src/learn/testdata/, recorded by
// tests/goldens/record_goldens.py; the same fixtures learn/sb3_golden_test.cc replays on
// LibTorch). With SB3's parameters loaded by name: the loss terms, every gradient before
// and after global-norm clipping, the norm, and the parameters after one Adam step.
// Tolerance: 1e-5 relative to max(1, |expected|), as in sb3_golden_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "native/actor_critic.h"
#include "native/adam.h"
#include "native/ppo_loss.h"
#include "testing/testing.h"

namespace rlt::native {
namespace {

constexpr double kTol = 1e-5;
double Tol(double want) { return kTol * std::max(1.0, std::abs(want)); }

std::vector<float> Floats(const nlohmann::json& values) {
  std::vector<float> out;
  for (const nlohmann::json& v : values) out.push_back(static_cast<float>(v.get<double>()));
  return out;
}

void ExpectAllNear(const float* got, const nlohmann::json& want_entry, const std::string& what) {
  const std::vector<float> want = Floats(want_entry.at("values"));
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (!(std::abs(double{got[i]} - want[i]) <= Tol(want[i]))) {
      ADD_FAILURE() << what << "[" << i << "]: native " << got[i] << ", SB3 " << want[i];
      ++bad;
    }
  }
}

class NativeSb3Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(NativeSb3Golden, LossGradientsClippingAndOneAdamStepMatchPpoTrain) {
  const std::string path = std::string(RLT_SOURCE_DIR) + "/src/learn/testdata/" + GetParam();
  const std::string text = rlt::testing::ReadFile(path);
  ASSERT_FALSE(text.empty()) << "cannot read " << path;
  const nlohmann::json doc = nlohmann::json::parse(text);
  const nlohmann::json& p = doc.at("policy");
  ActorCriticSpec spec;
  spec.obs_dim = p.at("obs_dim");
  spec.discrete = p.at("discrete");
  spec.act_dim = p.at("act_dim");
  spec.num_outputs = spec.discrete ? p.at("n").get<int>() : spec.act_dim;
  spec.pi = p.at("pi").get<std::vector<int>>();
  spec.vf = p.at("vf").get<std::vector<int>>();
  spec.activation = p.at("activation") == "relu" ? Activation::kRelu : Activation::kTanh;
  ActorCritic net(spec, 0);
  const nlohmann::json& params = doc.at("params_before");
  ASSERT_EQ(params.size(), net.param_info().size());
  for (const ParamInfo& info : net.param_info()) {
    ASSERT_TRUE(params.contains(info.name)) << "SB3 has no parameter " << info.name;
    const std::vector<float> v = Floats(params.at(info.name).at("values"));
    ASSERT_EQ(static_cast<int64_t>(v.size()), info.size) << info.name;
    std::copy(v.begin(), v.end(), net.params().begin() + info.offset);
  }
  const nlohmann::json& mb = doc.at("minibatch");
  const int b = mb.at("size");
  const std::vector<float> obs = Floats(mb.at("obs")), actions = Floats(mb.at("actions"));
  const std::vector<float> old_values = Floats(mb.at("old_values"));
  const std::vector<float> old_log_probs = Floats(mb.at("old_log_probs"));
  const std::vector<float> advantages = Floats(mb.at("advantages"));
  const std::vector<float> returns = Floats(mb.at("returns"));
  const nlohmann::json& s = doc.at("settings");
  const PpoLossSettings settings{s.at("clip_range"), s.at("clip_range_vf"), s.at("ent_coef"),
                                 s.at("vf_coef"), s.at("normalize_advantage")};

  ActorCriticWorkspace ws;
  std::vector<float> values(b), log_probs(b), entropy(b), dv(b), dlp(b), dent(b);
  net.Evaluate(ws, obs.data(), actions.data(), b, values.data(), log_probs.data(), entropy.data());
  const PpoLossTerms t =
      PpoLoss(b,
              {values.data(), log_probs.data(), entropy.data(), old_values.data(),
               old_log_probs.data(), advantages.data(), returns.data()},
              settings, dv.data(), dlp.data(), dent.data());
  const nlohmann::json& want = doc.at("loss");
  EXPECT_NEAR(t.policy_loss, want.at("policy"), Tol(want.at("policy")));
  EXPECT_NEAR(t.value_loss, want.at("value"), Tol(want.at("value")));
  EXPECT_NEAR(t.entropy_loss, want.at("entropy"), Tol(want.at("entropy")));
  EXPECT_NEAR(t.loss, want.at("total"), Tol(want.at("total")));
  EXPECT_NEAR(t.approx_kl, want.at("approx_kl"), kTol);
  EXPECT_NEAR(t.clip_fraction, want.at("clip_fraction"), kTol);

  std::vector<float> grads(net.num_params(), 0.0f);
  net.Backward(ws, dv.data(), dlp.data(), dent.data(), grads.data());
  for (const ParamInfo& info : net.param_info()) {
    ExpectAllNear(grads.data() + info.offset, doc.at("grads_before_clip").at(info.name),
                  "grad " + info.name);
  }
  const double norm = ClipGradNorm(grads.data(), net.num_params(), s.at("max_grad_norm"));
  const double want_norm = doc.at("grad_norm_before_clip");
  EXPECT_NEAR(norm, want_norm, Tol(want_norm));
  for (const ParamInfo& info : net.param_info()) {
    ExpectAllNear(grads.data() + info.offset, doc.at("grads_after_clip").at(info.name),
                  "clipped grad " + info.name);
  }
  AdamOptions o;
  o.lr = s.at("learning_rate");
  o.eps = s.at("adam_eps");
  Adam adam(net.num_params(), o);
  adam.Step(net.params().data(), grads.data());
  for (const ParamInfo& info : net.param_info()) {
    ExpectAllNear(net.params().data() + info.offset, doc.at("params_after").at(info.name),
                  "param " + info.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Sb3, NativeSb3Golden,
                         ::testing::Values("sb3_ppo_discrete.json", "sb3_ppo_box.json"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "sb3_ppo_box.json" ? std::string("Box")
                                                                   : std::string("Discrete");
                         });

}  // namespace
}  // namespace rlt::native
