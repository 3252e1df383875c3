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

}  // namespace
}  // namespace rlt::perf
