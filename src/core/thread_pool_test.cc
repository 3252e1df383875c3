#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace rlt {
namespace {

TEST(WorkerPool, RunsTheTaskOnceOnEveryWorker) {
  for (int workers : {1, 2, 3, 5}) {
    WorkerPool pool(workers);
    std::vector<std::atomic<int>> calls(workers);
    for (int round = 0; round < 1000; ++round) {
      pool.Run([&](int w) { calls[w].fetch_add(1); });
    }
    for (int w = 0; w < workers; ++w) EXPECT_EQ(calls[w].load(), 1000) << "worker " << w;
  }
}

// Regression: a Run() issued before a worker thread first got scheduled was missed.
TEST(WorkerPool, RunRightAfterConstructionReachesEveryWorker) {
  for (int i = 0; i < 200; ++i) {
    WorkerPool pool(3);
    std::atomic<int> calls{0};
    pool.Run([&](int) { calls.fetch_add(1); });
    ASSERT_EQ(calls.load(), 3);
  }
}

TEST(WorkerPool, RunReturnsOnlyAfterAllWorkersFinished) {
  WorkerPool pool(3);
  std::vector<int> out(3000, 0);
  for (int round = 1; round <= 200; ++round) {
    pool.Run([&](int w) {
      auto [b, e] = WorkerPool::Slice(static_cast<int>(out.size()), 3, w);
      for (int i = b; i < e; ++i) out[i] = round;
    });
    for (int v : out) ASSERT_EQ(v, round);
  }
}

TEST(WorkerPool, SlicesPartitionTheRange) {
  for (int n : {0, 1, 7, 256}) {
    for (int k : {1, 2, 3, 8}) {
      int expected_begin = 0;
      for (int w = 0; w < k; ++w) {
        auto [b, e] = WorkerPool::Slice(n, k, w);
        EXPECT_EQ(b, expected_begin);
        EXPECT_LE(e - b, n / k + 1);
        EXPECT_GE(e - b, n / k);
        expected_begin = e;
      }
      EXPECT_EQ(expected_begin, n);
    }
  }
}

}  // namespace
}  // namespace rlt
