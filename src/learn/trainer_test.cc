// Tests of PpoTrainer on the native engine (no LibTorch): a smoke run and determinism.
// trainer_oracle_test.cc checks the rollout it stores against a LibTorch copy of its policy.
#include "learn/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "learn/policy.h"
#include "learn/test_util.h"

namespace rlt::learn {
namespace {

using testing_util::MakeExampleVecEnv;
using testing_util::SmallPpo;

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

}  // namespace
}  // namespace rlt::learn
