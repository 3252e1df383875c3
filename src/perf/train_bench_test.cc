// Tests of `bench train`'s measurement library: the analytic FLOP count and a measured run
// of a tiny CartPole config (fractions sum to 1, every key filled).
#include "perf/train_bench.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/status_test_util.h"
#include "testing/testing.h"

namespace rlt::perf {
namespace {

TEST(UpdateFlops, CountsTwoInOutPerDenseLayerForwardAndTwiceThatBackward) {
  // CartPole: obs 4, Discrete(2) logits, pi = vf = [64, 64]; 256 samples, 10 epochs.
  const double pi_forward = 2.0 * (4 * 64 + 64 * 64 + 64 * 2);  // 8960
  const double vf_forward = 2.0 * (4 * 64 + 64 * 64 + 64 * 1);  // 8832
  EXPECT_DOUBLE_EQ(UpdateFlops(4, 2, {64, 64}, {64, 64}, 256, 10),
                   3.0 * (pi_forward + vf_forward) * 256 * 10);
  // No hidden layers: one dense layer per head.
  EXPECT_DOUBLE_EQ(UpdateFlops(3, 1, {}, {}, 1, 1), 3.0 * (2 * 3 * 1 + 2 * 3 * 1));
  // Recurrent: two LSTMs of 8 units on obs 3 (gates 4 x 8 = 32 outputs from 3 + 8 inputs),
  // towers reading the 8 LSTM outputs; one LSTM when shared.
  const double lstm = 2.0 * (3 + 8) * 32;  // 704
  const double heads = 2.0 * (8 * 4 + 4 * 2) + 2.0 * (8 * 4 + 4 * 1);
  EXPECT_DOUBLE_EQ(UpdateFlops(3, 2, {4}, {4}, 10, 2, 8, false), 3.0 * (2 * lstm + heads) * 20);
  EXPECT_DOUBLE_EQ(UpdateFlops(3, 2, {4}, {4}, 10, 2, 8, true), 3.0 * (lstm + heads) * 20);
}

TEST(MeasureTraining, ReportsEverySettingWithABreakdownSummingToOne) {
  const rlt::testing::ScratchDir scratch("rlt_train_bench_");
  const std::filesystem::path config = scratch / "config.toml";
  std::ofstream(config) << "[run]\ntotal_steps = 10000\nthreads = 1\n[env]\nid = \"cartpole\"\n"
                           "num_envs = 4\n[algo]\nn_steps = 64\nbatch_size = 64\nn_epochs = 2\n";
  TrainBenchOptions o;
  o.config_path = config.string();
  o.steps = 512;
  o.threads = {1};
  Result<std::vector<TrainBenchResult>> r = MeasureTraining(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const TrainBenchResult& b = r->front();
  EXPECT_EQ(b.device, "cpu");
  EXPECT_EQ(b.threads, 1);
  EXPECT_GE(b.steps, 512);
  EXPECT_NEAR(b.env_steps_per_sec, b.steps / b.seconds, 1e-6 * b.env_steps_per_sec);
  EXPECT_NEAR(b.projected_seconds, 10000 / b.env_steps_per_sec, 1e-9 * b.projected_seconds);
  double sum = 0;
  for (const auto& [phase, fraction] : b.breakdown) sum += fraction;
  EXPECT_NEAR(sum, 1.0, 0.02);
  EXPECT_EQ(b.breakdown.size(), 8u);
  EXPECT_GT(b.update_gflops, 0);
  EXPECT_GT(b.peak_gflops, 0);
  // End to end: the same FLOPs over the whole wall time, so below the update's rate.
  EXPECT_GT(b.end_to_end_gflops, 0);
  EXPECT_LT(b.end_to_end_gflops, b.update_gflops);
  EXPECT_NEAR(b.end_to_end_fraction, b.end_to_end_gflops / b.peak_gflops, 1e-12);
  EXPECT_GT(b.peak_rss_bytes, 0);
  const std::string md = TrainBenchMarkdown(o, *r);
  EXPECT_NE(md.find("## Recommendation"), std::string::npos);
  std::filesystem::remove(config);
}

TEST(MeasureTraining, RefusesCudaWhenThisBuildHasNone) {
  if (AvailableDevices().size() > 1) GTEST_SKIP() << "this build has CUDA";
  TrainBenchOptions o;
  o.config_path = "unused.toml";
  o.devices = {"cuda"};
  Result<std::vector<TrainBenchResult>> r = MeasureTraining(o);
  ASSERT_TRUE(
      IsError(r, Status::Code::kInvalidArgument, "--devices cuda: not available in this build"));
  EXPECT_NE(r.status().message().find("torch::cuda::is_available() is false"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace rlt::perf
