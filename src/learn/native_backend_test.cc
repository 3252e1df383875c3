// The two learner backends ([policy] backend = "native" | "torch") inside PpoTrainer:
// they start from the same weights, a checkpoint written by either loads into either
// (parameters and Adam state), policy.rlt holds exactly policy.pt's parameters, and a
// native trainer resumes bit for bit. (Numerical equality of the engines themselves:
// native_oracle_test.cc.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "core/status_test_util.h"
#include "env/registry.h"
#include "learn/checkpoint.h"
#include "learn/native_learner.h"
#include "learn/torch_learner.h"
#include "learn/torch_policy.h"
#include "learn/trainer.h"
#include "native/tensor_file.h"
#include "testing/testing.h"

namespace rlt::learn {
namespace {

std::unique_ptr<env::VecEnv> MakeVecEnv(const std::string& id, int n, int threads = 1) {
  auto envs = env::MakeEnvs(id, {}, n);
  RLT_CHECK(envs.ok());
  return std::make_unique<env::VecEnv>(std::move(*envs), threads);
}

PpoOptions SmallPpo() {
  PpoOptions o;
  o.n_steps = 16;
  o.batch_size = 32;
  o.n_epochs = 3;
  o.total_timesteps = 10000;
  o.norm_obs = o.norm_reward = true;
  return o;
}

PolicyOptions Backend(const std::string& name) {
  PolicyOptions p;
  p.backend = name;
  return p;
}

// The same tensors by name (the backends list them in different orders), bit for bit.
void ExpectSameTensors(const native::TensorFile& a, const native::TensorFile& b) {
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const native::NamedTensor& t : a.tensors()) {
    const native::NamedTensor* u = b.Find(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    EXPECT_EQ(t.shape, u->shape) << t.name;
    EXPECT_EQ(t.f32, u->f32) << t.name;
  }
}

void ExpectSameParameters(PpoTrainer& a, PpoTrainer& b) {
  ExpectSameTensors(a.PolicyParameters(), b.PolicyParameters());
}

void ExpectSameAdamState(PpoTrainer& a, PpoTrainer& b) {
  const LearnerState sa = a.learner()->ExportState(), sb = b.learner()->ExportState();
  EXPECT_EQ(sa.adam_step, sb.adam_step);
  EXPECT_GT(sa.adam_step, 0);
  EXPECT_EQ(sa.lr, sb.lr);
  ExpectSameTensors(sa.exp_avg, sb.exp_avg);
  ExpectSameTensors(sa.exp_avg_sq, sb.exp_avg_sq);
}

// Both backends start from native::ActorCritic's seeded initialisation.
TEST(NativeBackend, IsTheDefaultAndBothBackendsStartFromTheNativeInitialisation) {
  EXPECT_EQ(PolicyOptions{}.backend, "native");
  PolicyOptions bad;
  bad.backend = "cuda";
  EXPECT_TRUE(IsError(ValidatePolicyOptions(bad), Status::Code::kInvalidArgument,
                      "[policy] backend must be native or torch, got 'cuda'"));
  auto env_a = MakeVecEnv("cartpole", 2), env_b = MakeVecEnv("cartpole", 2);
  PpoTrainer native(*env_a, Backend("native"), SmallPpo(), 3);
  PpoTrainer torch_backend(*env_b, Backend("torch"), SmallPpo(), 3);
  ASSERT_NE(native.native_learner(), nullptr);
  EXPECT_EQ(torch_backend.native_learner(), nullptr);
  EXPECT_NE(dynamic_cast<TorchLearner*>(torch_backend.learner()), nullptr);
  ExpectSameParameters(native, torch_backend);
  native::ActorCritic initial(NativeSpec(4, env_a->spec().action, Backend("native")), 3);
  native::TensorFile expected;
  initial.SaveParameters(expected);
  ExpectSameTensors(torch_backend.PolicyParameters(), expected);
}

// Train with `from`, checkpoint, load into a trainer of backend `to`: same parameters and
// Adam state, and the loaded trainer keeps training.
void CrossLoad(const std::string& from, const std::string& to) {
  SCOPED_TRACE(from + " -> " + to);
  SetComputeThreads(1);
  const rlt::testing::ScratchDir scratch("rlt_native_backend_");
  const std::filesystem::path dir = scratch / "ckpt";
  auto env_a = MakeVecEnv("cartpole", 4), env_b = MakeVecEnv("cartpole", 4);
  PpoTrainer a(*env_a, Backend(from), SmallPpo(), 5);
  ASSERT_TRUE(a.Iterate().ok());
  ASSERT_TRUE(a.Iterate().ok());
  ASSERT_TRUE(SaveCheckpoint(dir, a).ok());
  PpoTrainer b(*env_b, Backend(to), SmallPpo(), 6);
  const Status loaded = LoadCheckpoint(dir, b);
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  ExpectSameParameters(a, b);
  ExpectSameAdamState(a, b);
  if (NativeLearner* n = b.native_learner()) {  // the native network itself
    native::TensorFile mine;
    n->net().SaveParameters(mine);
    ExpectSameTensors(mine, a.PolicyParameters());
  }
  // policy.rlt: the same parameters, readable without LibTorch and into LibTorch.
  auto file = native::TensorFile::Read(dir / "policy.rlt");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ActorCritic fresh(4, env_a->spec().action, Backend(to));
  ASSERT_TRUE(LoadPolicyFromTensorFile(*file, fresh, "policy.rlt").ok());
  ExpectSameTensors(PolicyToTensorFile(fresh), a.PolicyParameters());
  auto stats = b.Iterate();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(b.iterations(), 3);
}

TEST(NativeBackend, CheckpointsLoadInEitherBackend) {
  CrossLoad("native", "torch");
  CrossLoad("torch", "native");
  CrossLoad("native", "native");
}

TEST(NativeBackend, ResumedNativeTrainerReproducesTheNextIterationsBitForBit) {
  SetComputeThreads(1);
  const rlt::testing::ScratchDir scratch("rlt_native_resume_");
  const std::filesystem::path dir = scratch / "ckpt";
  for (const char* id : {"cartpole", "pendulum"}) {  // Discrete and Box
    SCOPED_TRACE(id);
    auto env_a = MakeVecEnv(id, 4), env_b = MakeVecEnv(id, 4);
    PpoTrainer a(*env_a, Backend("native"), SmallPpo(), 7);
    ASSERT_TRUE(a.Iterate().ok());
    ASSERT_TRUE(SaveCheckpoint(dir, a).ok());
    PpoTrainer b(*env_b, Backend("native"), SmallPpo(), 8);
    ASSERT_TRUE(b.Iterate().ok());  // state that the load must overwrite
    ASSERT_TRUE(LoadCheckpoint(dir, b).ok());
    for (int it = 0; it < 2; ++it) {
      auto sa = a.Iterate(), sb = b.Iterate();
      ASSERT_TRUE(sa.ok() && sb.ok());
      EXPECT_EQ(sa->update.policy_gradient_loss, sb->update.policy_gradient_loss);
      EXPECT_EQ(sa->update.value_loss, sb->update.value_loss);
      EXPECT_EQ(sa->update.approx_kl, sb->update.approx_kl);
      EXPECT_EQ(sa->ep_rew_mean, sb->ep_rew_mean);
      EXPECT_EQ(sa->std, sb->std);
    }
    ExpectSameParameters(a, b);
    EXPECT_EQ(env_a->SaveState(), env_b->SaveState());
  }
}

// The data-parallel update (native_learner.h): with 2 or 3 threads every minibatch is cut
// into shards whose gradients are summed; the gradient of the whole minibatch must equal
// the serial one up to float summation order. One epoch of one minibatch (the whole
// rollout), so both start from the same parameters and the same rollout (the environments'
// results do not depend on the thread count). Shards of unequal size (25 rows over 2 or
// 3 workers) included.
TEST(NativeBackend, DataParallelUpdateMatchesTheSerialUpdate) {
  SetComputeThreads(1);
  for (const char* id : {"cartpole", "pendulum"}) {  // Discrete and Box
    for (int threads : {2, 3}) {
      SCOPED_TRACE(std::string(id) + " threads " + std::to_string(threads));
      PpoOptions o = SmallPpo();
      o.n_steps = 5;
      o.batch_size = 25;
      o.n_epochs = 1;
      auto env_a = MakeVecEnv(id, 5, 1), env_b = MakeVecEnv(id, 5, threads);
      PpoTrainer serial(*env_a, Backend("native"), o, 11),
          parallel(*env_b, Backend("native"), o, 11);
      auto sa = serial.Iterate(), sb = parallel.Iterate();
      ASSERT_TRUE(sa.ok() && sb.ok());
      const std::vector<float>& ga = serial.native_learner()->grads();
      const std::vector<float>& gb = parallel.native_learner()->grads();
      ASSERT_EQ(ga.size(), gb.size());
      // Gradients and losses are sums over the minibatch's 25 rows, summed per shard and then
      // over the shards: float32 sums of the same n terms in another order differ by at most
      // about n * eps * sum|terms|.
      const double n_rows = 25, bound = 4 * n_rows * std::numeric_limits<float>::epsilon();
      // Gradients: relative to the largest gradient (the rows' terms are of its size).
      double scale = 0;
      for (float g : ga) scale = std::max(scale, std::fabs(double{g}));
      ASSERT_GT(scale, 0);
      for (size_t k = 0; k < ga.size(); ++k) {
        ASSERT_NEAR(ga[k], gb[k], bound * scale) << "gradient " << k;
      }
      // Losses: n * eps relative to a mean of same-signed terms (value loss), or to the
      // terms' size (policy loss: its terms change sign; they are ratio * advantage with
      // advantages normalised to unit variance, so of size 1).
      EXPECT_NEAR(sa->update.value_loss, sb->update.value_loss,
                  bound * std::fabs(sa->update.value_loss));
      EXPECT_NEAR(sa->update.policy_gradient_loss, sb->update.policy_gradient_loss,
                  bound * std::max(std::fabs(sa->update.policy_gradient_loss), 1.0));
    }
  }
}

TEST(NativeBackend, NonFiniteParametersAreReportedByName) {
  SetComputeThreads(1);
  auto venv = MakeVecEnv("cartpole", 2);
  PpoTrainer t(*venv, Backend("native"), SmallPpo(), 1);
  ASSERT_TRUE(t.Iterate().ok());
  NativeLearner* n = t.native_learner();
  const native::ParamInfo* p = n->net().FindParam("vf_net.2.weight");
  ASSERT_NE(p, nullptr);
  n->net().params()[p->offset + 3] = NAN;
  const auto s = t.Iterate();
  // Poisoned before the update, the parameter makes the loss non-finite first, and
  // PpoTrainer::CheckFinite names the loss before any parameter.
  ASSERT_TRUE(IsError(s, Status::Code::kDataError, "PPO loss is not finite at update 2"));
}

}  // namespace
}  // namespace rlt::learn
