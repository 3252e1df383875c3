// Recurrent PPO ([policy] recurrent = "lstm") inside PpoTrainer: it solves a memory task
// that MLP PPO cannot, its result does not depend on the thread count, it resumes from a
// checkpoint bit for bit (LSTM states included), and a checkpoint's policy runs in
// evaluation with its state carried. (The network's numerics against LibTorch autograd:
// native_oracle_test.cc.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/status_test_util.h"
#include "env/registry.h"
#include "learn/checkpoint.h"
#include "learn/evaluate.h"
#include "learn/inference.h"
#include "learn/recurrent_learner.h"
#include "learn/trainer.h"
#include "testing/testing.h"

namespace rlt::learn {
namespace {

std::unique_ptr<env::VecEnv> MakeVecEnv(const std::string& id, int n, int threads,
                                        std::map<std::string, std::string> settings = {}) {
  env::EnvContext ctx;
  ctx.settings = std::move(settings);
  auto envs = env::MakeEnvs(id, ctx, n);
  RLT_CHECK(envs.ok());
  return std::make_unique<env::VecEnv>(std::move(*envs), threads);
}

PolicyOptions Lstm(int hidden, bool shared = false) {
  PolicyOptions p;
  p.recurrent = "lstm";
  p.lstm_hidden_size = hidden;
  p.shared_lstm = shared;
  p.pi = {32};
  p.vf = {32};
  return p;
}

// The memory_cue settings of configs/memory_cue_rppo.toml.
PpoOptions CuePpo() {
  PpoOptions o;
  o.n_steps = 64;
  o.batch_size = 128;
  o.sequence_length = 16;
  o.n_epochs = 4;
  o.learning_rate = 1e-3;
  o.ent_coef = 0.01;
  o.total_timesteps = 40000;
  return o;
}

// Mean return of `episodes` deterministic episodes after training for the run length.
double TrainAndEvaluate(const PolicyOptions& policy, uint64_t seed) {
  auto venv = MakeVecEnv("memory_cue", 8, 1, {{"length", "8"}});
  PpoTrainer t(*venv, policy, CuePpo(), seed);
  while (t.total_steps() < CuePpo().total_timesteps) {
    auto s = t.Iterate();
    RLT_CHECK(s.ok());
  }
  auto eval_env = MakeVecEnv("memory_cue", 4, 1, {{"length", "8"}});
  auto stats = EvaluatePolicy(t.PolicyParameters(), t.policy_options(), t.normalizer(), *eval_env,
                              200, seed + 1000);
  RLT_CHECK(stats.ok());
  return stats->mean_reward;
}

TEST(RecurrentPpo, RemembersACueThatMlpPpoCannot) {
  SetComputeThreads(1);
  // Chance is 0 (+1 right, -1 wrong); remembering the cue gives 1 on every episode. Three
  // seeds each: recurrent PPO must be near 1 on every one, MLP PPO near 0 (no memory: a
  // deterministic MLP gives the same answer whatever the cue, so exactly 0 up to the cue
  // draw's imbalance).
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    EXPECT_GE(TrainAndEvaluate(Lstm(32), seed), 0.95);
    PolicyOptions mlp;
    mlp.pi = mlp.vf = {32};
    EXPECT_LE(std::fabs(TrainAndEvaluate(mlp, seed)), 0.3);
  }
  EXPECT_GE(TrainAndEvaluate(Lstm(32, /*shared=*/true), 4), 0.95);
}

void ExpectSameParameters(PpoTrainer& a, PpoTrainer& b) {
  const native::TensorFile pa = a.PolicyParameters(), pb = b.PolicyParameters();
  ASSERT_EQ(pa.tensors().size(), pb.tensors().size());
  for (size_t i = 0; i < pa.tensors().size(); ++i) {
    EXPECT_EQ(pa.tensors()[i].name, pb.tensors()[i].name);
    EXPECT_EQ(pa.tensors()[i].f32, pb.tensors()[i].f32) << pa.tensors()[i].name;
  }
}

PpoOptions SmallPpo() {
  PpoOptions o;
  o.n_steps = 32;
  o.batch_size = 32;
  o.sequence_length = 8;
  o.n_epochs = 2;
  o.total_timesteps = 10000;
  o.norm_obs = o.norm_reward = true;
  return o;
}

TEST(RecurrentPpo, OneAndTwoThreadsGiveTheSameResultBitForBit) {
  SetComputeThreads(1);
  for (const char* id : {"cartpole", "pendulum"}) {  // Discrete and Box
    SCOPED_TRACE(id);
    auto env_a = MakeVecEnv(id, 4, 1), env_b = MakeVecEnv(id, 4, 2);
    PpoTrainer a(*env_a, Lstm(16), SmallPpo(), 5), b(*env_b, Lstm(16), SmallPpo(), 5);
    for (int it = 0; it < 3; ++it) {
      auto sa = a.Iterate(), sb = b.Iterate();
      ASSERT_TRUE(sa.ok() && sb.ok());
      EXPECT_EQ(sa->update.value_loss, sb->update.value_loss);
      EXPECT_EQ(sa->update.approx_kl, sb->update.approx_kl);
    }
    ExpectSameParameters(a, b);
  }
}

TEST(RecurrentPpo, ResumedTrainerReproducesTheNextIterationsBitForBit) {
  SetComputeThreads(1);
  const rlt::testing::ScratchDir scratch("rlt_recurrent_resume_");
  const std::filesystem::path dir = scratch / "ckpt";
  for (const char* id : {"cartpole", "pendulum"}) {
    SCOPED_TRACE(id);
    auto env_a = MakeVecEnv(id, 4, 1), env_b = MakeVecEnv(id, 4, 1);
    PpoTrainer a(*env_a, Lstm(16), SmallPpo(), 7);
    ASSERT_TRUE(a.Iterate().ok());
    ASSERT_TRUE(SaveCheckpoint(dir, a).ok());
    PpoTrainer b(*env_b, Lstm(16), SmallPpo(), 8);
    ASSERT_TRUE(b.Iterate().ok());  // state (LSTM states too) that the load must overwrite
    ASSERT_TRUE(LoadCheckpoint(dir, b).ok());
    for (int it = 0; it < 2; ++it) {
      auto sa = a.Iterate(), sb = b.Iterate();
      ASSERT_TRUE(sa.ok() && sb.ok());
      EXPECT_EQ(sa->update.policy_gradient_loss, sb->update.policy_gradient_loss);
      EXPECT_EQ(sa->update.value_loss, sb->update.value_loss);
      EXPECT_EQ(sa->ep_rew_mean, sb->ep_rew_mean);
    }
    ExpectSameParameters(a, b);
  }
}

TEST(RecurrentPpo, SequenceSettingsThatDoNotFitTheRolloutAreRefused) {
  PpoOptions o = SmallPpo();
  o.sequence_length = 5;  // does not divide n_steps = 32
  Status s = ValidateRecurrentPpo(Lstm(8), o);
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "sequence_length = 5 must divide [algo] n_steps = 32"));
  o.sequence_length = 8;
  o.batch_size = 20;
  s = ValidateRecurrentPpo(Lstm(8), o);
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "[algo] batch_size = 20 must be a multiple of [algo] sequence_length = 8"));
  PolicyOptions torch_backend = Lstm(8);
  torch_backend.backend = "torch";
  // With LibTorch the recurrent policy is refused on its backend; without it, the backend
  // itself (the first check either way).
#ifdef RLT_TEST_WITH_TORCH
  EXPECT_TRUE(IsError(ValidatePolicyOptions(torch_backend), Status::Code::kInvalidArgument,
                      "[policy] recurrent = \"lstm\" trains on the native engine only"));
#else
  EXPECT_TRUE(IsError(ValidatePolicyOptions(torch_backend), Status::Code::kInvalidArgument,
                      "[policy] backend = \"torch\" needs LibTorch"));
#endif
}

TEST(RecurrentPpo, CheckpointRunsInEvaluationWithItsStateCarried) {
  SetComputeThreads(1);
  const rlt::testing::ScratchDir scratch("rlt_recurrent_runner_");
  auto venv = MakeVecEnv("memory_cue", 8, 1, {{"length", "8"}});
  PpoTrainer t(*venv, Lstm(32), CuePpo(), 2);
  while (t.total_steps() < CuePpo().total_timesteps) ASSERT_TRUE(t.Iterate().ok());
  ASSERT_TRUE(SaveCheckpoint(scratch / "final", t).ok());
  auto runner = PolicyRunner::Load(scratch / "final", 3, venv->spec().action);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  ASSERT_TRUE((*runner)->recurrent());
  // Step one episode by hand: cue 1 at the first step, then blanks, decide at the last.
  for (float cue : {0.0f, 1.0f}) {
    (*runner)->ResetState();
    float action = -1;
    for (int step = 0; step < 8; ++step) {
      const float obs[3] = {step == 0 && cue == 0 ? 1.0f : 0.0f,
                            step == 0 && cue == 1 ? 1.0f : 0.0f, step == 7 ? 1.0f : 0.0f};
      (*runner)->Act(obs, 1, &action, nullptr);
    }
    EXPECT_EQ(action, cue) << "the decision names the cue seen 7 steps earlier";
  }
  auto eval_env = MakeVecEnv("memory_cue", 3, 1, {{"length", "8"}});
  auto returns = (*runner)->EvaluateEpisodes(*eval_env, 30, 99);
  ASSERT_TRUE(returns.ok());
  for (double r : *returns) EXPECT_EQ(r, 1.0);
}

}  // namespace
}  // namespace rlt::learn
