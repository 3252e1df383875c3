// Tests of checkpoints (no LibTorch): a resumed trainer reproduces the next iterations bit
// for bit, and missing, mismatched or damaged checkpoints are errors naming what is wrong.
#include "learn/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "env/registry.h"
#include "env/vec_env.h"
#include "learn/schedule.h"
#include "learn/test_util.h"
#include "learn/trainer.h"
#include "testing/testing.h"

namespace rlt::learn {
namespace {

using testing_util::MakeExampleVecEnv;
using testing_util::SmallPpo;

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

}  // namespace
}  // namespace rlt::learn
