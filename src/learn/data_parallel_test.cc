// Data-parallel PPO: `mpirun -np 2` members with N environments each train
// the policy one process trains with 2N environments (PpoTrainer::EnableDataParallel).
// The two-rank run is data_parallel_worker under mpirun; the reference is the same code in
// this process with the group of one and twice the environments. The ranks' parameters
// must be bit-identical to each other (the trainer also checks a hash every update), and
// equal to the reference within 1e-5 relative (the sums are added in another order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/file_io.h"
#include "core/rng.h"
#include "learn/data_parallel_run.h"
#include "native/ppo_loss.h"
#include "testing/testing.h"

namespace rlt::learn::testing {
namespace {

std::string Mpirun(int ranks) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + std::string(RLT_MPIEXEC) +
         " --oversubscribe -np " + std::to_string(ranks) + " ";
}

DataParallelResult ReadRank(const std::string& dir, int rank) {
  auto text = ReadFile(dir + "/rank_" + std::to_string(rank) + ".txt");
  RLT_CHECK_MSG(text.ok(), text.status().message());
  auto r = ParseResult(*text);
  RLT_CHECK_MSG(r.ok(), r.status().message());
  return *r;
}

void ExpectTwoRanksEqualOneProcess(const std::string& id) {
  const rlt::testing::ScratchDir scratch("rlt_dp_");
  const std::string dir = scratch.path();
  const int updates = 3, envs_per_rank = 2;
  const std::string command = Mpirun(2) + RLT_DP_WORKER + " " + dir + " " + id + " " +
                              std::to_string(envs_per_rank) + " " + std::to_string(updates);
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const DataParallelResult r0 = ReadRank(dir, 0), r1 = ReadRank(dir, 1);
  EXPECT_EQ(r0.hash, r1.hash);
  ASSERT_EQ(r0.params, r1.params) << "the ranks' parameters differ";

  LocalCollective alone;
  auto ref = RunDataParallel(id, 2 * envs_per_rank, updates, alone);
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  EXPECT_EQ(r0.total_steps, ref->total_steps);
  EXPECT_EQ(r0.total_steps, int64_t{updates} * 64 * 2 * envs_per_rank);
  EXPECT_EQ(r0.episodes_seen, ref->episodes_seen);
  EXPECT_NEAR(r0.ep_rew_mean, ref->ep_rew_mean, 1e-9 * (1 + std::fabs(ref->ep_rew_mean)));
  // 1 - Var(returns - values) / Var(returns) from values that differ by ~1e-5 relative (the
  // parameters below): relative to its size, which is not bounded below.
  EXPECT_NEAR(r0.explained_variance, ref->explained_variance,
              1e-5 * std::max(1.0, std::fabs(ref->explained_variance)));
  ASSERT_EQ(r0.params.size(), ref->params.size());
  float scale = 0, worst = 0;
  for (size_t k = 0; k < ref->params.size(); ++k) {
    scale = std::max(scale, std::fabs(ref->params[k]));
    worst = std::max(worst, std::fabs(r0.params[k] - ref->params[k]));
  }
  EXPECT_LE(worst, 1e-5f * scale) << "max |2 ranks - 1 process| = " << worst;
  std::printf("%s: max |2 ranks - 1 process| = %.3g, max |parameter| = %.3g\n", id.c_str(), worst,
              scale);

  // The updates did train: the parameters moved from the untrained ones.
  auto untrained = RunDataParallel(id, 2 * envs_per_rank, 0, alone);
  ASSERT_TRUE(untrained.ok());
  float moved = 0;
  for (size_t k = 0; k < ref->params.size(); ++k) {
    moved = std::max(moved, std::fabs(untrained->params[k] - ref->params[k]));
  }
  EXPECT_GT(moved, 100 * worst + 1e-4f);
}

TEST(DataParallel, TwoRanksEqualOneProcessWithTwiceTheEnvironmentsCartPole) {
  ExpectTwoRanksEqualOneProcess("cartpole");
}

TEST(DataParallel, TwoRanksEqualOneProcessWithTwiceTheEnvironmentsPendulum) {
  ExpectTwoRanksEqualOneProcess("pendulum");
}

// Recurrent PPO (LSTM): per-environment action streams, minibatches of whole sequences
// stratified by environment, each rank's LSTM states.
TEST(DataParallel, TwoRanksEqualOneProcessWithTwiceTheEnvironmentsRecurrentCartPole) {
  ExpectTwoRanksEqualOneProcess("cartpole_lstm");
}

TEST(DataParallel, TwoRanksEqualOneProcessWithTwiceTheEnvironmentsRecurrentPendulum) {
  ExpectTwoRanksEqualOneProcess("pendulum_lstm");
}

// The shared loss with the group of one is PpoLoss (the one-pass advantage variance
// aside), value and gradients.
TEST(DataParallel, SharedLossOfOneMemberIsThePpoLoss) {
  const int b = 37;
  std::vector<float> values(b), log_probs(b), entropy(b), old_values(b), old_log_probs(b),
      advantages(b), returns(b);
  Rng rng(3);
  for (int i = 0; i < b; ++i) {
    values[i] = static_cast<float>(rng.Normal());
    old_values[i] = values[i] + 0.3f * static_cast<float>(rng.Normal());
    log_probs[i] = -1.0f + 0.2f * static_cast<float>(rng.Normal());
    old_log_probs[i] = log_probs[i] + 0.2f * static_cast<float>(rng.Normal());
    entropy[i] = 1.0f + static_cast<float>(rng.Uniform());
    advantages[i] = 5.0f + 2.0f * static_cast<float>(rng.Normal());
    returns[i] = static_cast<float>(rng.Normal());
  }
  const native::PpoLossInputs in{values.data(),     log_probs.data(),     entropy.data(),
                                 old_values.data(), old_log_probs.data(), advantages.data(),
                                 returns.data()};
  native::PpoLossSettings s;
  s.clip_range_vf = 0.2;
  s.ent_coef = 0.01;
  std::vector<float> dv(b), dl(b), de(b), dv2(b), dl2(b), de2(b);
  const native::PpoLossTerms a = native::PpoLoss(b, in, s, dv.data(), dl.data(), de.data());
  int calls = 0;
  const native::PpoLossTerms c = native::PpoLossShared(b, in, s, dv2.data(), dl2.data(), de2.data(),
                                                       [&](double*, int) { ++calls; });
  EXPECT_EQ(calls, 2);
  EXPECT_NEAR(a.loss, c.loss, 1e-6);
  EXPECT_NEAR(a.policy_loss, c.policy_loss, 1e-6);
  EXPECT_DOUBLE_EQ(a.value_loss, c.value_loss);
  EXPECT_DOUBLE_EQ(a.approx_kl, c.approx_kl);
  EXPECT_DOUBLE_EQ(a.clip_fraction, c.clip_fraction);
  for (int i = 0; i < b; ++i) {
    EXPECT_NEAR(dl[i], dl2[i], 1e-6f);
    EXPECT_EQ(dv[i], dv2[i]);
    EXPECT_EQ(de[i], de2[i]);
  }
}

}  // namespace
}  // namespace rlt::learn::testing
