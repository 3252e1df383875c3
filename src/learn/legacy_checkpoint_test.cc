// Checkpoints written before the native checkpoint format (version 2: LibTorch archives
// policy.pt, optimizer.pt, normalizer.pt, state.pt) load in a build with LibTorch and
// convert to the native format (learn/torch_legacy.h). The version-2 files are written here
// as rltrade wrote them until the native format (learn/checkpoint.cc before it: torch::save
// of the ActorCritic module and of torch::optim::Adam, the normaliser's buffers as a module,
// state.pt as one OutputArchive), from a trainer's state, so that the test checks the old
// layout against a run whose continuation is known.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/options.h"
#include "env/registry.h"
#include "learn/checkpoint.h"
#include "learn/inference.h"
#include "learn/torch_learner.h"
#include "learn/torch_legacy.h"
#include "learn/torch_policy.h"
#include "learn/trainer.h"
#include "runlog/manifest.h"
#include "testing/testing.h"

namespace rlt::learn {
namespace {
namespace fs = std::filesystem;

std::unique_ptr<env::VecEnv> MakeVecEnv(const std::string& id, int n) {
  auto envs = env::MakeEnvs(id, {}, n);
  RLT_CHECK(envs.ok());
  return std::make_unique<env::VecEnv>(std::move(*envs), 1);
}

PpoOptions SmallPpo() {
  PpoOptions o;
  o.n_steps = 16;
  o.batch_size = 32;
  o.n_epochs = 3;
  o.total_timesteps = 10000;
  o.norm_obs = o.norm_reward = true;
  o.learning_rate = *Schedule::Parse("linear(1e-3, 0)");
  return o;
}

PolicyOptions Backend(const std::string& name) {
  PolicyOptions p;
  p.pi = p.vf = {16};
  p.backend = name;
  return p;
}

// The normaliser's buffers as the version-2 VecNormalizer module registered them.
struct NormalizerModule : torch::nn::Module {
  explicit NormalizerModule(const NormalizerStats& s) {
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
    register_buffer("obs_mean", torch::tensor(s.obs_mean, f64));
    register_buffer("obs_var", torch::tensor(s.obs_var, f64));
    register_buffer("obs_count", torch::full({1}, s.obs_count, f64));
    register_buffer("ret_mean", torch::full({1}, s.ret_mean, f64));
    register_buffer("ret_var", torch::full({1}, s.ret_var, f64));
    register_buffer("ret_count", torch::full({1}, s.ret_count, f64));
    register_buffer("returns", torch::tensor(s.returns, f64));
  }
};

// A version-2 checkpoint of `t` in `dir`.
void WriteVersionTwo(const fs::path& dir, PpoTrainer& t) {
  fs::create_directories(dir);
  std::string options;
  for (const auto& row : DescribeOptions(t.ppo_options()))
    options += "ppo." + row.key + " = " + row.value + "\n";
  for (const auto& row : DescribeOptions(t.policy_options()))
    options += "policy." + row.key + " = " + row.value + "\n";
  rlt::testing::WriteFile(dir / "options.txt", options);
  rlt::testing::WriteFile(dir / "envs.bin", t.venv().SaveState());
  const int obs_dim = t.venv().obs_dim();
  const LearnerState s = t.learner()->ExportState();
  ActorCritic policy(obs_dim, t.venv().spec().action, t.policy_options());
  ASSERT_TRUE(LoadPolicyFromTensorFile(s.params, policy, "state").ok());
  torch::save(policy, (dir / "policy.pt").string());
  torch::optim::Adam adam(policy->parameters(), torch::optim::AdamOptions(s.lr).eps(1e-5));
  ASSERT_TRUE(ImportTorchState(s, policy, adam, "state").ok());
  torch::save(adam, (dir / "optimizer.pt").string());
  auto normalizer = std::make_shared<NormalizerModule>(t.normalizer()->stats());
  torch::save(normalizer, (dir / "normalizer.pt").string());
  const PpoTrainer::State st = t.state();
  torch::serialize::OutputArchive a;
  a.write("counters", torch::tensor({st.total_steps, st.iterations}, torch::kLong));
  auto* torch_learner = dynamic_cast<TorchLearner*>(t.learner());
  a.write("generator", torch_learner != nullptr ? torch_learner->generator().get_state()
                                                : at::detail::createCPUGenerator(1).get_state());
  a.write("global_generator", at::detail::getDefaultCPUGenerator().get_state());
  std::vector<int64_t> starts(st.last_episode_starts.begin(), st.last_episode_starts.end());
  a.write("last_episode_starts", torch::tensor(starts, torch::kLong));
  std::vector<double> returns;
  std::vector<int64_t> lengths;
  for (const auto& [r, l] : st.episodes) {
    returns.push_back(r);
    lengths.push_back(l);
  }
  a.write("episode_returns", torch::tensor(returns, torch::kDouble));
  a.write("episode_lengths", torch::tensor(lengths, torch::kLong));
  if (torch_learner == nullptr) {
    std::vector<int64_t> words = t.learner()->RngWords();
    a.write("native_rng", torch::tensor(words, torch::kLong));
  }
  a.save_to((dir / "state.pt").string());
  rlt::testing::WriteFile(dir / "FORMAT", "rltrade-ppo-checkpoint 2\nnum_envs " +
                                              std::to_string(t.venv().num_envs()) + "\nobs_dim " +
                                              std::to_string(obs_dim) + "\nact_dim " +
                                              std::to_string(t.venv().act_dim()) + "\n");
  ASSERT_TRUE(runlog::WriteDirManifest(dir.string()).ok());
}

// b continues exactly as a does for two more updates.
void ExpectSameContinuation(PpoTrainer& a, PpoTrainer& b) {
  EXPECT_EQ(a.total_steps(), b.total_steps());
  EXPECT_EQ(a.iterations(), b.iterations());
  for (int it = 0; it < 2; ++it) {
    auto sa = a.Iterate(), sb = b.Iterate();
    ASSERT_TRUE(sa.ok() && sb.ok());
    EXPECT_EQ(sa->update.policy_gradient_loss, sb->update.policy_gradient_loss);
    EXPECT_EQ(sa->update.value_loss, sb->update.value_loss);
    EXPECT_EQ(sa->update.approx_kl, sb->update.approx_kl);
    EXPECT_EQ(sa->learning_rate, sb->learning_rate);
    EXPECT_EQ(sa->ep_rew_mean, sb->ep_rew_mean);
  }
  const native::TensorFile pa = a.PolicyParameters(), pb = b.PolicyParameters();
  ASSERT_EQ(pa.tensors().size(), pb.tensors().size());
  for (const native::NamedTensor& t : pa.tensors()) {
    ASSERT_NE(pb.Find(t.name), nullptr) << t.name;
    EXPECT_EQ(pb.Find(t.name)->f32, t.f32) << t.name;
  }
}

TEST(LegacyCheckpoint, VersionTwoLoadsAndConvertsAndTheRunContinuesBitForBit) {
  SetComputeThreads(1);
  for (const char* backend : {"native", "torch"}) {
    SCOPED_TRACE(backend);
    const rlt::testing::ScratchDir scratch("rlt_legacy_ckpt_");
    const fs::path old_dir = scratch / "v2", converted = scratch / "v3";
    auto env_a = MakeVecEnv("pendulum", 4);
    PpoTrainer a(*env_a, Backend(backend), SmallPpo(), 5);
    for (int it = 0; it < 2; ++it) ASSERT_TRUE(a.Iterate().ok());
    WriteVersionTwo(old_dir, a);
    fs::copy(old_dir, converted, fs::copy_options::recursive);

    // The old directory loads as it is.
    auto env_b = MakeVecEnv("pendulum", 4);
    PpoTrainer b(*env_b, Backend(backend), SmallPpo(), 99);
    const Status loaded = LoadCheckpoint(old_dir, b);
    ASSERT_TRUE(loaded.ok()) << loaded.ToString();

    // Converted, it holds tensor files only, and loads the same.
    std::vector<std::string> done, current;
    const Status conv = ConvertCheckpoints(converted, &done, &current);
    ASSERT_TRUE(conv.ok()) << conv.ToString();
    EXPECT_EQ(done, std::vector<std::string>{converted.string()});
    for (const char* f : {"policy.pt", "optimizer.pt", "normalizer.pt", "state.pt"}) {
      EXPECT_FALSE(fs::exists(converted / f)) << f;
    }
    for (const char* f : {"policy.rlt", "optimizer.rlt", "normalizer.rlt", "state.rlt"}) {
      EXPECT_TRUE(fs::exists(converted / f)) << f;
    }
    EXPECT_EQ(rlt::testing::ReadFile(converted / "FORMAT").rfind("rltrade-ppo-checkpoint 3\n", 0),
              0u);
    auto env_c = MakeVecEnv("pendulum", 4);
    PpoTrainer c(*env_c, Backend(backend), SmallPpo(), 98);
    ASSERT_TRUE(LoadCheckpoint(converted, c).ok());
    // A second conversion finds nothing to do.
    done.clear();
    ASSERT_TRUE(ConvertCheckpoints(converted, &done, &current).ok());
    EXPECT_TRUE(done.empty());
    EXPECT_EQ(current, std::vector<std::string>{converted.string()});

    // Evaluation reads both alike.
    auto old_runner = PolicyRunner::Load(old_dir.string(), 3, env_a->spec().action);
    auto new_runner = PolicyRunner::Load(converted.string(), 3, env_a->spec().action);
    ASSERT_TRUE(old_runner.ok() && new_runner.ok());
    const float obs[6] = {0.5f, -0.2f, 1.0f, -1.0f, 0.3f, 4.0f};
    float act_old[2], act_new[2], v_old[2], v_new[2];
    (*old_runner)->Act(obs, 2, act_old, v_old);
    (*new_runner)->Act(obs, 2, act_new, v_new);
    EXPECT_EQ(std::vector<float>(act_old, act_old + 2), std::vector<float>(act_new, act_new + 2));
    EXPECT_EQ(std::vector<float>(v_old, v_old + 2), std::vector<float>(v_new, v_new + 2));

    auto env_d = MakeVecEnv("pendulum", 4);
    PpoTrainer d(*env_d, Backend(backend), SmallPpo(), 5);
    ASSERT_TRUE(LoadCheckpoint(converted, d).ok());
    ExpectSameContinuation(a, b);
    ExpectSameContinuation(d, c);
  }
}

TEST(LegacyCheckpoint, ConvertingNothingOrABrokenArchiveChangesNothing) {
  const rlt::testing::ScratchDir scratch("rlt_legacy_bad_");
  std::vector<std::string> done, current;
  EXPECT_EQ(ConvertCheckpoints(scratch / "none", &done, &current).code(), Status::Code::kRefused);
  fs::create_directories(scratch / "empty");
  const Status empty = ConvertCheckpoints(scratch / "empty", &done, &current);
  EXPECT_EQ(empty.code(), Status::Code::kRefused);
  EXPECT_NE(empty.message().find("holds no checkpoint"), std::string::npos) << empty.message();
  // A version-2 checkpoint whose policy.pt is not an archive: an error naming the file, and
  // the directory as it was.
  SetComputeThreads(1);
  auto venv = MakeVecEnv("cartpole", 2);
  PpoTrainer t(*venv, Backend("native"), SmallPpo(), 1);
  const fs::path dir = scratch / "v2";
  WriteVersionTwo(dir, t);
  rlt::testing::WriteFile(dir / "policy.pt", "not a zip");
  ASSERT_TRUE(runlog::WriteDirManifest(dir.string()).ok());
  const Status bad = ConvertCheckpoints(dir, &done, &current);
  EXPECT_EQ(bad.code(), Status::Code::kDataError);
  EXPECT_NE(bad.message().find("policy.pt"), std::string::npos) << bad.message();
  EXPECT_TRUE(fs::exists(dir / "policy.pt"));
  EXPECT_FALSE(fs::exists(dir / "policy.rlt"));
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(scratch.fs_path())) entries += e.is_directory();
  EXPECT_EQ(entries, 2u);  // empty/ and v2/: no staging directory left behind
}

}  // namespace
}  // namespace rlt::learn
