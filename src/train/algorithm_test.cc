// Tests of the algorithms' registry: selection by [algo] name with errors that name the
// place and every entry, each entry's binding, checks, environment count, memory check,
// resolved and default [algo] rows and benchmark shape, and recurrent_ppo's policy rule
// through the same validation `rltrade train` runs.
#include "train/algorithm.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/status_test_util.h"
#include "learn/es.h"
#include "learn/memory_model.h"
#include "learn/ppo.h"
#include "testing/testing.h"
#include "train/train.h"

namespace rlt::train {
namespace {

config::Config Parse(const std::string& text) {
  Result<config::Config> c = config::Config::FromString(text, "algo.toml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

std::unique_ptr<Algorithm> Make(const config::Config& c) {
  Result<std::unique_ptr<Algorithm>> a = MakeAlgorithm(c);
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? std::move(*a) : nullptr;
}

std::map<std::string, std::string> AsMap(
    const std::vector<std::pair<std::string, std::string>>& rows) {
  return {rows.begin(), rows.end()};
}

TEST(AlgorithmRegistry, ListsPpoRecurrentPpoAndEsWithPpoFirst) {
  ASSERT_EQ(Algorithms().size(), 3u);
  EXPECT_STREQ(Algorithms()[0].name, "ppo");
  EXPECT_STREQ(Algorithms()[1].name, "recurrent_ppo");
  EXPECT_STREQ(Algorithms()[2].name, "es");
  for (const AlgorithmEntry& e : Algorithms()) {
    EXPECT_EQ(e.make()->name(), e.name);  // each entry makes its own algorithm
  }
}

TEST(AlgorithmRegistry, UnsetNameIsPpoAndAnUnknownNameListsEveryEntry) {
  Result<std::unique_ptr<Algorithm>> ppo = MakeAlgorithm(Parse("[algo]\nn_steps = 8\n"));
  ASSERT_TRUE(ppo.ok());
  EXPECT_EQ((*ppo)->name(), "ppo");
  Result<std::unique_ptr<Algorithm>> bad = MakeAlgorithm(Parse("[algo]\nname = \"a2c\"\n"));
  EXPECT_TRUE(IsError(bad.status(), Status::Code::kInvalidArgument,
                      "algo.toml:2: [algo] name = \"a2c\": expected one of \"ppo\""));
  EXPECT_NE(bad.status().message().find("\"recurrent_ppo\""), std::string::npos);
  EXPECT_NE(bad.status().message().find("\"es\""), std::string::npos);
}

TEST(AlgorithmRegistry, PpoBindsItsKeysAndRecordsThemWithoutName) {
  const config::Config c = Parse("[algo]\nn_steps = 32\nbatch_size = 64\n");
  auto algo = Make(c);
  ASSERT_TRUE(algo->Bind(c, 1000).ok());
  const auto rows = AsMap(algo->ResolvedRows());
  EXPECT_EQ(rows.at("n_steps"), "32");
  EXPECT_EQ(rows.at("batch_size"), "64");
  EXPECT_EQ(rows.count("name"), 0u);             // ppo is the default: not recorded
  EXPECT_EQ(rows.count("total_timesteps"), 0u);  // [run] total_steps is the run's length
  EXPECT_EQ(AsMap(algo->DefaultRows()).at("n_steps"), std::to_string(learn::PpoOptions().n_steps));
  EXPECT_EQ(algo->NumEnvs(/*configured=*/8, /*threads=*/2), 8);

  // An unknown key is the binder's error, naming the nearest key.
  const config::Config typo = Parse("[algo]\nn_step = 32\n");
  auto algo2 = Make(typo);
  EXPECT_TRUE(IsError(algo2->Bind(typo, 1000), Status::Code::kInvalidArgument, "'n_steps'"));
}

TEST(AlgorithmRegistry, PpoChecksReportEveryBadKeyAtItsPlace) {
  const config::Config c =
      Parse("[algo]\nn_steps = 32\nbatch_size = 48\nvf_coef = 500\nlearning_rate = 2\n");
  auto algo = Make(c);
  ASSERT_TRUE(algo->Bind(c, 6400).ok());
  RunOptions run;
  run.total_steps = 6400;
  const Status st = algo->Check(c, run, learn::PolicyOptions(), /*num_envs=*/4);
  // 32 x 4 = 128 samples: 48 does not divide them; the nearest divisors are 32 and 64.
  EXPECT_TRUE(IsError(st, Status::Code::kInvalidArgument,
                      "algo.toml:3: [algo] batch_size = 48: must divide algo.n_steps x "
                      "env.num_envs = 32 x 4 = 128 (every minibatch the same size); the nearest "
                      "valid values are 32 and 64"));
  EXPECT_NE(st.message().find("algo.toml:4: [algo] vf_coef = 5e+02: must be in [0, 100]"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("algo.toml:5: [algo] learning_rate = 2"), std::string::npos);
}

TEST(AlgorithmRegistry, RecurrentPpoRefusesAnMlpPolicyAndRecordsItsName) {
  const config::Config c = Parse("[algo]\nname = \"recurrent_ppo\"\nn_steps = 32\n");
  auto algo = Make(c);
  ASSERT_TRUE(algo->Bind(c, 1000).ok());
  RunOptions run;
  run.total_steps = 1000;
  learn::PolicyOptions mlp;
  EXPECT_TRUE(IsError(algo->Check(c, run, mlp, 2), Status::Code::kInvalidArgument,
                      "algo.toml:2: [algo] name = \"recurrent_ppo\": needs a recurrent policy"));
  learn::PolicyOptions lstm;
  lstm.recurrent = "lstm";
  // The recurrent rules of PPO apply: sequence_length 16 divides 32; batch_size 64 is 4 chunks.
  EXPECT_TRUE(algo->Check(c, run, lstm, 2).ok());
  const auto rows = algo->ResolvedRows();
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front(), std::make_pair(std::string("name"), std::string("recurrent_ppo")));
}

TEST(AlgorithmRegistry, EsStepsOneEnvPerThreadAndChecksItsNoiseTable) {
  const config::Config c =
      Parse("[algo]\nname = \"es\"\npopulation = 8\nnoise_table_size = 4096\n");
  auto algo = Make(c);
  ASSERT_TRUE(algo->Bind(c, 1000).ok());
  EXPECT_EQ(algo->NumEnvs(/*configured=*/16, /*threads=*/2), 2);
  const auto rows = AsMap(algo->ResolvedRows());
  EXPECT_EQ(rows.at("name"), "es");
  EXPECT_EQ(rows.at("population"), "8");
  EXPECT_EQ(AsMap(algo->DefaultRows()).at("population"),
            std::to_string(learn::EsOptions().population));
  env::EnvSpec spec;
  spec.obs_dim = 4;
  // 4096 floats = 16384 bytes: fits in 1 MB, not in 16 kB (80% of it is the limit).
  EXPECT_TRUE(algo->CheckMemory(c, learn::PolicyOptions(), spec, 2, 1 << 20).ok());
  EXPECT_TRUE(IsError(algo->CheckMemory(c, learn::PolicyOptions(), spec, 2, 16384),
                      Status::Code::kInvalidArgument,
                      "algo.toml:4: [algo] noise_table_size = 4096: the noise table needs"));
  // An ES key under ppo, or a PPO key under es, is an unknown key.
  const config::Config mixed = Parse("[algo]\nname = \"es\"\nn_steps = 8\n");
  auto es = Make(mixed);
  EXPECT_TRUE(IsError(es->Bind(mixed, 1000), Status::Code::kInvalidArgument, "n_steps"));
}

TEST(AlgorithmRegistry, PpoMemoryCheckNamesTheKeysToLower) {
  const config::Config c = Parse("[algo]\nn_steps = 2048\nbatch_size = 64\n");
  auto algo = Make(c);
  ASSERT_TRUE(algo->Bind(c, 1000).ok());
  env::EnvSpec spec;
  spec.obs_dim = 10;
  spec.action.dim = 1;
  learn::PolicyOptions wide;
  wide.pi = {4096, 4096};
  wide.vf = {4096, 4096};
  const learn::PpoOptions ppo = [] {
    learn::PpoOptions o;
    o.n_steps = 2048;
    o.batch_size = 64;
    return o;
  }();
  const double need = learn::EstimatePpoMemory(ppo, wide, 4, spec).total();
  EXPECT_TRUE(algo->CheckMemory(c, wide, spec, 4, static_cast<int64_t>(2 * need)).ok());
  const Status st = algo->CheckMemory(c, wide, spec, 4, static_cast<int64_t>(need / 2));
  EXPECT_TRUE(IsError(st, Status::Code::kInvalidArgument, "training would need about"));
  // The network dominates here, so the message points at the layer widths.
  EXPECT_NE(st.message().find("lower the layer widths (policy.pi, policy.vf"), std::string::npos);
}

TEST(AlgorithmRegistry, ShapesTellTheBenchmarksWhatAnUpdateIs) {
  const config::Config c = Parse("[algo]\nn_steps = 16\n");
  auto ppo = Make(c);
  ASSERT_TRUE(ppo->Bind(c, 1000).ok());
  SessionShape shape;
  shape.ranks = 3;
  ppo->DescribeShape(/*num_envs=*/4, shape);
  EXPECT_EQ(shape.algo, "ppo");
  EXPECT_EQ(shape.steps_per_update, 16 * 4 * 3);  // every rank's rollout
  EXPECT_TRUE(shape.dense_update);
  EXPECT_EQ(shape.n_steps, 16);
  EXPECT_EQ(shape.workload, "4 envs");

  const config::Config e = Parse("[algo]\nname = \"es\"\npopulation = 10\n");
  auto es = Make(e);
  ASSERT_TRUE(es->Bind(e, 1000).ok());
  SessionShape es_shape;
  es->DescribeShape(2, es_shape);
  EXPECT_EQ(es_shape.algo, "es");
  EXPECT_EQ(es_shape.population, 10);
  EXPECT_FALSE(es_shape.dense_update);
  EXPECT_EQ(es_shape.workload, "population 10");
  EXPECT_FALSE(es_shape.update_note.empty());
}

// The same validation `rltrade train` runs before it writes anything.
TEST(AlgorithmRegistry, TrainingValidatesRecurrentPpoAgainstThePolicy) {
  const testing::ScratchDir dir;
  auto write = [&](const std::string& name, const std::string& policy) {
    const std::string path = dir / name;
    std::ofstream(path) << "[run]\ntotal_steps = 256\n[env]\nid = \"cartpole\"\nnum_envs = 2\n"
                           "[algo]\nname = \"recurrent_ppo\"\nn_steps = 32\nbatch_size = 32\n"
                           "sequence_length = 8\n[policy]\n"
                        << policy;
    return path;
  };
  TrainRequest mlp;
  mlp.config_path = write("mlp.toml", "pi = [8]\nvf = [8]\n");
  EXPECT_TRUE(IsError(ValidateTraining(mlp), Status::Code::kInvalidArgument,
                      "mlp.toml:7: [algo] name = \"recurrent_ppo\": needs a recurrent policy"));
  TrainRequest lstm;
  lstm.config_path =
      write("lstm.toml", "pi = [8]\nvf = [8]\nrecurrent = \"lstm\"\nlstm_hidden_size = 8\n");
  const Status ok = ValidateTraining(lstm);
  EXPECT_TRUE(ok.ok()) << ok.message();
}

}  // namespace
}  // namespace rlt::train
