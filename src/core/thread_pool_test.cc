#include "core/thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <thread>
#include <vector>

#include "core/rng.h"

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

// A deterministic "simulation" over slices: each element has its own RNG stream (like env
// i seeded seed + i), so the result must not depend on how the slices were run.
std::vector<double> SimulateOnPool(WorkerPool& pool, int n, int rounds) {
  std::vector<double> state(n, 0.0);
  std::vector<Rng> rngs;
  for (int i = 0; i < n; ++i) rngs.emplace_back(1234 + i);
  for (int r = 0; r < rounds; ++r) {
    pool.Run([&](int w) {
      auto [b, e] = WorkerPool::Slice(n, pool.num_workers(), w);
      for (int i = b; i < e; ++i) state[i] = 0.9 * state[i] + rngs[i].Normal();
    });
  }
  return state;
}

TEST(WorkerPool, InlineAndHandedOffRunsGiveIdenticalResults) {
  WorkerPool handed_off(3), inline_pool(3), one(1);
  handed_off.set_inline_below_seconds(0);  // never inline
  inline_pool.set_inline_below_seconds(std::numeric_limits<double>::infinity());
  const std::vector<double> a = SimulateOnPool(handed_off, 101, 50);
  EXPECT_FALSE(handed_off.last_run_inline());
  const std::vector<double> b = SimulateOnPool(inline_pool, 101, 50);
  EXPECT_TRUE(inline_pool.last_run_inline());
  const std::vector<double> c = SimulateOnPool(one, 101, 50);
  for (int i = 0; i < 101; ++i) {
    ASSERT_EQ(a[i], b[i]) << i;  // bit-identical
    ASSERT_EQ(a[i], c[i]) << i;
  }
}

TEST(WorkerPool, InlineRunsEveryIndexOnTheCallerInOrder) {
  WorkerPool pool(4);
  pool.set_inline_below_seconds(std::numeric_limits<double>::infinity());
  pool.Run([](int) {});  // the first Run() always hands off
  std::vector<int> order;
  std::vector<std::thread::id> ids;
  pool.Run([&](int w) {
    order.push_back(w);  // unsynchronised on purpose: inline means one thread
    ids.push_back(std::this_thread::get_id());
  });
  EXPECT_TRUE(pool.last_run_inline());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  for (const auto& id : ids) EXPECT_EQ(id, std::this_thread::get_id());
}

// Indices are claimed by whoever is free: while the caller is busy with index 0, the
// workers take the others. Each task waits (bounded) until all three have started, so no
// thread can take two, and all three threads must take part.
TEST(WorkerPool, HandedOffRunsUseTheWorkerThreads) {
  WorkerPool pool(3);
  pool.set_inline_below_seconds(0);
  std::vector<std::thread::id> ids(3);
  std::atomic<int> started{0};
  pool.Run([&](int w) {
    ids[w] = std::this_thread::get_id();
    started.fetch_add(1);
    for (int i = 0; i < 100000 && started.load() < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  EXPECT_FALSE(pool.last_run_inline());
  EXPECT_EQ(started.load(), 3);
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  EXPECT_NE(ids[1], std::this_thread::get_id());
  EXPECT_NE(ids[2], std::this_thread::get_id());
  EXPECT_NE(ids[1], ids[2]);
}

// Run() does not wait for a worker to wake before taking more indices: with tasks of
// nanoseconds the caller is through index 0 before a sleeping worker wakes, so over many
// calls it runs other indices too; every index still runs exactly once per call.
TEST(WorkerPool, TheCallerTakesTheIndicesNoWorkerHasTaken) {
  WorkerPool pool(4);
  pool.set_inline_below_seconds(0);
  std::vector<std::atomic<int>> calls(4);
  std::atomic<int> on_caller_beyond_zero{0};
  const auto caller = std::this_thread::get_id();
  for (int round = 0; round < 2000; ++round) {
    pool.Run([&](int w) {
      calls[w].fetch_add(1);
      if (w > 0 && std::this_thread::get_id() == caller) on_caller_beyond_zero.fetch_add(1);
    });
  }
  for (int w = 0; w < 4; ++w) EXPECT_EQ(calls[w].load(), 2000) << "index " << w;
  EXPECT_GT(on_caller_beyond_zero.load(), 0);
}

TEST(WorkerPool, SmallWorkGoesInlineAfterTheFirstRun) {
  // An empty task takes nanoseconds, far below the default threshold (50 us); the first
  // Run() hands off, every later one must run inline.
  // (A run preempted for milliseconds may push the estimate up for a few calls, hence
  // "most", not "all".)
  WorkerPool pool(2);
  pool.Run([](int) {});
  int inline_runs = 0;
  for (int i = 0; i < 20; ++i) {
    pool.Run([](int) {});
    inline_runs += pool.last_run_inline() ? 1 : 0;
  }
  EXPECT_GE(inline_runs, 10);
}

TEST(Threads, CoresPerProcessDividesAndNeverReturnsZero) {
  EXPECT_EQ(CoresPerProcess(8, 1), 8);
  EXPECT_EQ(CoresPerProcess(8, 2), 4);
  EXPECT_EQ(CoresPerProcess(8, 3), 2);
  EXPECT_EQ(CoresPerProcess(2, 4), 1);
}

TEST(Threads, ResolveKeepsAnExplicitCountAndDividesForZero) {
  EXPECT_EQ(ResolveThreads(3, /*available_cores=*/16, /*processes=*/4), 3);
  EXPECT_EQ(ResolveThreads(0, /*available_cores=*/16, /*processes=*/4), 4);
  EXPECT_EQ(ResolveThreads(0, /*available_cores=*/2, /*processes=*/1), 2);
}

TEST(Threads, CgroupCpuMax) {
  EXPECT_EQ(CoresFromCgroupCpuMax("max 100000"), 0);
  EXPECT_EQ(CoresFromCgroupCpuMax("150000 100000\n"), 2);
  EXPECT_EQ(CoresFromCgroupCpuMax("100000 100000"), 1);
  EXPECT_EQ(CoresFromCgroupCpuMax("50000 100000"), 1);
  EXPECT_EQ(CoresFromCgroupCpuMax("400000 100000"), 4);
  EXPECT_EQ(CoresFromCgroupCpuMax(""), 0);
  EXPECT_EQ(CoresFromCgroupCpuMax("x 100000"), 0);
}

// threads = 0 follows the affinity mask: pin this thread to one CPU and the process is
// "given" one core (sched_getaffinity(0) reads the calling thread's mask).
TEST(Threads, AvailableCoresFollowsTheAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const int allowed = CPU_COUNT(&saved);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c) {
    if (CPU_ISSET(c, &saved)) first = c;
  }
  ASSERT_GE(first, 0);
  EXPECT_LE(AvailableCores(), allowed);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const int pinned = AvailableCores();
  const int resolved = ResolveThreads(0);
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);  // restore before asserting
  EXPECT_EQ(pinned, 1);
  EXPECT_EQ(resolved, 1);
}

}  // namespace
}  // namespace rlt
