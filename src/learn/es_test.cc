// Evolution strategies (learn/es.h): centred ranks against values worked out
// by hand, the shared noise table's moments, OpenAI-ES and ARS solving CartPole-v1 (the
// deterministic policy's return >= 475 over 20 evaluation episodes, Gymnasium's threshold),
// one thread equal to two, a checkpoint resuming bit for bit, and bad options refused.
// (The K-rank population equal to the one-process population is MpiTrain.Es* in
// src/cli/mpi_cli_test.cc; the intraday environment improving on a random policy is
// src/cli/es_cli_test.cc.)
#include "learn/es.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/status_test_util.h"
#include "env/registry.h"
#include "learn/checkpoint.h"
#include "learn/evaluate.h"
#include "testing/testing.h"

namespace rlt::learn {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<env::VecEnv> CartPoleEnvs(int n) {
  auto envs = env::MakeEnvs("cartpole", {{}, nullptr, nullptr}, n);
  EXPECT_TRUE(envs.ok()) << envs.status().message();
  return std::make_unique<env::VecEnv>(std::move(*envs), n);
}

PolicyOptions SmallPolicy() {
  PolicyOptions p;
  p.pi = {32, 32};
  p.vf = {8};
  return p;
}

EsOptions CartPoleEs(const std::string& variant) {
  EsOptions o;
  o.variant = variant;
  o.population = 64;
  o.sigma = 0.1;
  o.learning_rate = variant == "ars" ? 0.02 : 0.03;
  o.top_directions = variant == "ars" ? 16 : 0;
  return o;
}

TEST(EsTest, CentredRanksMatchValuesWorkedOutByHand) {
  // Sorted: 1 (index 1), 2 (index 2), 3 (index 0): ranks 0, 1, 2 of n - 1 = 2.
  EXPECT_EQ(CentredRanks({3, 1, 2}), (std::vector<double>{0.5, -0.5, 0.0}));
  // Ties keep index order: the first of two equal fitnesses ranks lower.
  EXPECT_EQ(CentredRanks({7, 7}), (std::vector<double>{-0.5, 0.5}));
  EXPECT_EQ(CentredRanks({4, -1, 9, 0, 2}), (std::vector<double>{0.25, -0.5, 0.5, -0.25, 0.0}));
  EXPECT_EQ(CentredRanks({5}), (std::vector<double>{0.0}));
}

TEST(EsTest, TheNoiseTableIsStandardNormalAndOffsetsAreReproducible) {
  const int64_t size = 1 << 20;
  const std::vector<float> table = EsNoiseTable(3, size);
  double mean = 0, var = 0;
  for (float x : table) mean += x;
  mean /= size;
  for (float x : table) var += (x - mean) * (x - mean);
  var /= size;
  // Standard errors: 1/sqrt(2^20) ~ 0.001 for the mean, sqrt(2/2^20) ~ 0.0014 for the variance.
  EXPECT_NEAR(mean, 0.0, 0.005);
  EXPECT_NEAR(var, 1.0, 0.007);
  EXPECT_EQ(table, EsNoiseTable(3, size));
  EXPECT_NE(table[0], EsNoiseTable(4, 16)[0]);
  for (int64_t pair = 0; pair < 200; ++pair) {
    const int64_t offset = EsNoiseOffset(3, 5, pair, 1000, size);
    EXPECT_GE(offset, 0);
    EXPECT_LE(offset, size - 1000);
    EXPECT_EQ(offset, EsNoiseOffset(3, 5, pair, 1000, size));
  }
  EXPECT_NE(EsNoiseOffset(3, 5, 0, 1000, size), EsNoiseOffset(3, 6, 0, 1000, size));
}

// Trains until the population's mean return reaches 475 or 600,000 steps, then evaluates
// the deterministic policy.
double SolveCartPole(const std::string& variant) {
  auto venv = CartPoleEnvs(1);
  auto es = EsTrainer::Create(*venv, SmallPolicy(), CartPoleEs(variant), 1, 1);
  EXPECT_TRUE(es.ok()) << es.status().message();
  double mean = 0;
  while ((*es)->total_steps() < 600000 && mean < 475) {
    auto st = (*es)->Iterate();
    EXPECT_TRUE(st.ok()) << st.status().message();
    mean = st->ep_rew_mean;
  }
  auto eval_venv = CartPoleEnvs(4);
  auto stats = EvaluatePolicy((*es)->PolicyParameters(), (*es)->policy_options(),
                              (*es)->normalizer(), *eval_venv, 20, 1000);
  EXPECT_TRUE(stats.ok()) << stats.status().message();
  return stats->mean_reward;
}

TEST(EsTest, OpenAiEsSolvesCartPole) { EXPECT_GE(SolveCartPole("openai"), 475.0); }

TEST(EsTest, ArsSolvesCartPole) { EXPECT_GE(SolveCartPole("ars"), 475.0); }

std::vector<float> ThetaAfter(int generations, int threads, const std::string& variant) {
  auto venv = CartPoleEnvs(threads);
  auto es = EsTrainer::Create(*venv, SmallPolicy(), CartPoleEs(variant), 9, threads);
  EXPECT_TRUE(es.ok()) << es.status().message();
  for (int g = 0; g < generations; ++g) EXPECT_TRUE((*es)->Iterate().ok());
  return (*es)->theta();
}

TEST(EsTest, TwoThreadsGiveTheOneThreadRun) {
  for (const char* variant : {"openai", "ars"}) {
    const std::vector<float> one = ThetaAfter(4, 1, variant);
    EXPECT_TRUE(one == ThetaAfter(4, 2, variant)) << variant;
    EXPECT_FALSE(one == ThetaAfter(0, 1, variant)) << variant << ": the search moved nothing";
  }
}

TEST(EsTest, ACheckpointResumesBitForBit) {
  const fs::path dir = rlt::testing::NewScratchDir("rlt_es_ckpt_");
  auto venv = CartPoleEnvs(1);
  auto straight = EsTrainer::Create(*venv, SmallPolicy(), CartPoleEs("openai"), 5, 1);
  ASSERT_TRUE(straight.ok());
  for (int g = 0; g < 3; ++g) ASSERT_TRUE((*straight)->Iterate().ok());
  ASSERT_TRUE(SaveCheckpoint(dir / "ckpt", **straight).ok());
  for (int g = 0; g < 3; ++g) ASSERT_TRUE((*straight)->Iterate().ok());

  auto venv2 = CartPoleEnvs(1);
  auto resumed = EsTrainer::Create(*venv2, SmallPolicy(), CartPoleEs("openai"), 5, 1);
  ASSERT_TRUE(resumed.ok());
  const Status loaded = LoadCheckpoint(dir / "ckpt", **resumed);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ((*resumed)->iterations(), 3);
  for (int g = 0; g < 3; ++g) ASSERT_TRUE((*resumed)->Iterate().ok());
  EXPECT_TRUE((*resumed)->theta() == (*straight)->theta());
  EXPECT_TRUE((*resumed)->fitness() == (*straight)->fitness());
  EXPECT_EQ((*resumed)->total_steps(), (*straight)->total_steps());
  EXPECT_EQ((*resumed)->normalizer()->obs_var(), (*straight)->normalizer()->obs_var());

  // The policy the loaders read is the searched actor.
  auto from_file = EsTrainer::Create(*venv2, SmallPolicy(), CartPoleEs("openai"), 99, 1);
  ASSERT_TRUE(from_file.ok());
  ASSERT_TRUE(SaveCheckpoint(dir / "end", **straight).ok());
  auto params =
      ReadPolicyParameters(dir / "end", venv2->obs_dim(), venv2->spec().action, SmallPolicy());
  ASSERT_TRUE(params.ok()) << params.status().message();
  ASSERT_TRUE((*from_file)->LoadPolicyParameters(*params, "policy.rlt").ok());
  EXPECT_TRUE((*from_file)->theta() == (*straight)->theta());

  // A PPO checkpoint is not an ES checkpoint.
  std::string format = rlt::testing::ReadFile(dir / "ckpt" / "FORMAT");
  EXPECT_EQ(format.rfind("rltrade-es-checkpoint 2\n", 0), 0u) << format;
  fs::remove_all(dir);
}

TEST(EsTest, BadOptionsAreRefusedNamingTheKey) {
  auto venv = CartPoleEnvs(1);
  struct Case {
    void (*set)(EsOptions&);
    const char* key;
  };
  const Case cases[] = {
      {[](EsOptions& o) { o.population = 63; }, "population"},
      {[](EsOptions& o) { o.population = 0; }, "population"},
      {[](EsOptions& o) { o.sigma = 0; }, "sigma"},
      {[](EsOptions& o) { o.sigma = NAN; }, "sigma"},
      {[](EsOptions& o) { o.learning_rate = -1; }, "learning_rate"},
      {[](EsOptions& o) { o.weight_decay = -0.1; }, "weight_decay"},
      {[](EsOptions& o) { o.top_directions = 33; }, "top_directions"},
      {[](EsOptions& o) { o.episodes_per_member = 0; }, "episodes_per_member"},
      {[](EsOptions& o) { o.variant = "cma"; }, "variant"},
      {[](EsOptions& o) { o.noise_table_size = 100; }, "noise_table_size"},
  };
  for (const Case& c : cases) {
    EsOptions o = CartPoleEs("openai");
    c.set(o);
    auto es = EsTrainer::Create(*venv, SmallPolicy(), o, 1, 1);
    ASSERT_TRUE(IsError(es, Status::Code::kInvalidArgument, c.key)) << c.key;
  }
  PolicyOptions lstm = SmallPolicy();
  lstm.recurrent = "lstm";
  auto es = EsTrainer::Create(*venv, lstm, CartPoleEs("openai"), 1, 1);
  ASSERT_TRUE(IsError(es, Status::Code::kInvalidArgument, "[policy] recurrent = \"none\""));
}

}  // namespace
}  // namespace rlt::learn
