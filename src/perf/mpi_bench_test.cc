// The communication model of `rltrade bench mpi` (perf/mpi_bench.h) against values worked
// out by hand from its formula.
#include "perf/mpi_bench.h"

#include <gtest/gtest.h>

namespace rlt::perf {
namespace {

train::SessionShape Shape() {
  train::SessionShape s;
  s.parameters = 1000;
  s.n_steps = 10;
  s.num_envs = 2;
  s.batch_size = 20;  // 10 samples of each env per minibatch: one minibatch per epoch
  s.n_epochs = 2;
  s.ranks = 1;
  return s;
}

TEST(MpiBenchModel, RingAllreducePerMinibatchAndLatencyBoundSmallSums) {
  const NetworkModel net{"test", 10, 1e-5};  // 1.25e9 bytes/s
  // K = 4: gradient 2*3*1e-5 + 2*3/4 * 4000 / 1.25e9 = 6.48e-5 s, twice (2 minibatches);
  // small sums: 2 per minibatch + 4 per update = 8, at 2 * log2(4) * 1e-5 = 4e-5 s each.
  EXPECT_NEAR(ModelCommunicateSeconds(Shape(), 4, net), 2 * 6.48e-5 + 8 * 4e-5, 1e-12);
  // Both normalisers add 4 small sums per vector step (10 steps).
  train::SessionShape normalised = Shape();
  normalised.norm_obs = normalised.norm_reward = true;
  EXPECT_NEAR(ModelCommunicateSeconds(normalised, 4, net), 2 * 6.48e-5 + 48 * 4e-5, 1e-12);
  EXPECT_EQ(ModelCommunicateSeconds(Shape(), 1, net), 0.0);
}

TEST(MpiBenchModel, ProjectionEfficiencyFallsWithRanksAndRisesWithBandwidth) {
  DataParallelMeasure one;
  one.shape = Shape();
  one.shape.parameters = 100000;
  one.seconds_per_update = 0.05;
  const std::vector<ProjectionRow> rows = ProjectScaling(one, {2, 8, 64, 512}, DefaultNetworks());
  ASSERT_EQ(rows.size(), 8u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_GT(rows[i].efficiency, 0);
    EXPECT_LE(rows[i].efficiency, 1);
    EXPECT_NEAR(rows[i].update_seconds, 0.05 + rows[i].communicate_seconds, 1e-12);
    // Rates reach 1e5 steps/s at 512 ranks: relative to the value, not absolute.
    const double rate = rows[i].ranks * 20 / rows[i].update_seconds;
    EXPECT_NEAR(rows[i].env_steps_per_sec, rate, 1e-12 * rate);
    if (i % 4 != 0) {
      EXPECT_LT(rows[i].efficiency, rows[i - 1].efficiency);
    }
    if (i >= 4) {  // 100 vs 10 Gbit/s
      EXPECT_GT(rows[i].efficiency, rows[i - 4].efficiency);
    }
  }
}

}  // namespace
}  // namespace rlt::perf
