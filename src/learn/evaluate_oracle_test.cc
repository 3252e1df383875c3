// Tests of EvaluatePolicy on policies built as LibTorch modules: a hand-set linear policy's
// rewards on the example environment, normalisation with the training statistics, and
// repeatable episodes that draw nothing from LibTorch's generator.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status_test_util.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "learn/evaluate.h"
#include "learn/normalize.h"
#include "learn/policy.h"
#include "learn/torch_policy.h"

namespace rlt::learn {
namespace {

// EvaluatePolicy on a LibTorch module's parameters.
Result<EvalStats> EvaluateModule(ActorCritic& policy, const VecNormalizer& normalizer,
                                 env::VecEnv& venv, int episodes, uint64_t seed) {
  return EvaluatePolicy(PolicyToTensorFile(policy), policy->options(), normalizer, venv, episodes,
                        seed);
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
  EXPECT_TRUE(IsError(EvaluateModule(policy, normalizer, venv, 0, 100),
                      Status::Code::kInvalidArgument,
                      "evaluation needs at least one episode (got 0)"));
}

}  // namespace
}  // namespace rlt::learn
