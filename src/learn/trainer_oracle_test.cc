// PpoTrainer's rollout against a LibTorch copy of its policy: truncated episodes are
// bootstrapped with V(terminal obs), Box actions are clipped, and the stored advantages are
// GAE of the stored rewards and values.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/status.h"
#include "env/env.h"
#include "env/vec_env.h"
#include "learn/policy.h"
#include "learn/rollout.h"
#include "learn/test_util.h"
#include "learn/torch_policy.h"
#include "learn/trainer.h"

namespace rlt::learn {
namespace {

using testing_util::SmallPpo;

// A LibTorch copy of a trainer's current policy (the oracle's forward).
ActorCritic TorchPolicyOf(Trainer& t, int obs_dim, const env::ActionSpace& space) {
  ActorCritic policy(obs_dim, space, t.policy_options());
  const Status loaded = LoadPolicyFromTensorFile(t.PolicyParameters(), policy, "the trainer");
  RLT_CHECK_MSG(loaded.ok(), loaded.message());
  return policy;
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

}  // namespace
}  // namespace rlt::learn
