#include "perf/threads_check.h"

#include <gtest/gtest.h>

namespace rlt::perf {
namespace {

ThreadsSample Sample(int threads, std::vector<double> rates) {
  ThreadsSample s;
  s.threads = s.resolved_threads = threads;
  s.env_steps_per_sec = std::move(rates);
  return s;
}

TEST(ThreadsCheck, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
}

TEST(ThreadsCheck, ComparesMediansNotBestRuns) {
  // The default's single fast outlier (200) must not hide that its median (90) is below
  // 95% of the best fixed median (100, threads = 2).
  ThreadsVerdict v =
      Judge({Sample(0, {200, 90, 80}), Sample(1, {60, 70, 65}), Sample(2, {100, 99, 300})}, 0.05);
  EXPECT_EQ(v.best_threads, 2);
  EXPECT_DOUBLE_EQ(v.ratio, 0.9);
  EXPECT_FALSE(v.ok);
}

TEST(ThreadsCheck, WithinToleranceIsOk) {
  ThreadsVerdict v =
      Judge({Sample(0, {95, 96, 97}), Sample(1, {100, 100, 100}), Sample(2, {50, 50, 50})}, 0.05);
  EXPECT_EQ(v.best_threads, 1);
  EXPECT_DOUBLE_EQ(v.ratio, 0.96);
  EXPECT_TRUE(v.ok);
  EXPECT_NE(DescribeVerdict("c.toml", v, 0.05).find("ok:"), std::string::npos);
}

// With check_scaling, 2 threads below 95% of 1 thread fails even when the default picked
// the faster count; without it the same samples pass.
TEST(ThreadsCheck, ScalingCheckFailsWhenMoreThreadsAreSlower) {
  const std::vector<ThreadsSample> samples = {Sample(0, {100, 101, 99}), Sample(1, {100, 100, 100}),
                                              Sample(2, {90, 91, 89})};
  ThreadsVerdict plain = Judge(samples, 0.05);
  EXPECT_TRUE(plain.ok);
  EXPECT_DOUBLE_EQ(plain.scaling_ratio, 0.9);
  ThreadsVerdict checked = Judge(samples, 0.05, /*check_scaling=*/true);
  EXPECT_FALSE(checked.ok);
  EXPECT_EQ(checked.scaling_more, 2);
  EXPECT_EQ(checked.scaling_fewer, 1);
  const std::string text = DescribeVerdict("c.toml", checked, 0.05);
  EXPECT_NE(text.find("SLOWER: threads = 2 runs at 90.0% of threads = 1"), std::string::npos)
      << text;
}

// A count within tolerance of a smaller one passes the scaling check; so does scaling up.
TEST(ThreadsCheck, ScalingCheckPassesWithinToleranceAndWhenFaster) {
  ThreadsVerdict within =
      Judge({Sample(0, {100, 100, 100}), Sample(1, {100, 100, 100}), Sample(2, {97, 96, 98})}, 0.05,
            true);
  EXPECT_TRUE(within.ok);
  EXPECT_DOUBLE_EQ(within.scaling_ratio, 0.97);
  ThreadsVerdict faster =
      Judge({Sample(0, {170, 170, 170}), Sample(1, {100, 100, 100}), Sample(2, {170, 160, 180})},
            0.05, true);
  EXPECT_TRUE(faster.ok);
  EXPECT_DOUBLE_EQ(faster.scaling_ratio, 1.7);
}

}  // namespace
}  // namespace rlt::perf
