// rltrade core: WorkerPool implementation (spin, then futex sleep).
#include "core/thread_pool.h"

#include "core/status.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define RLT_CPU_RELAX() _mm_pause()
#else
#define RLT_CPU_RELAX() std::this_thread::yield()
#endif

namespace rlt {
namespace {
// ~a few tens of microseconds of spinning before a worker sleeps.
constexpr int kSpinIterations = 20000;
}  // namespace

int HardwareThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

WorkerPool::WorkerPool(int num_workers) : num_workers_(num_workers) {
  RLT_CHECK(num_workers >= 1);
  threads_.reserve(num_workers - 1);
  for (int i = 1; i < num_workers; ++i) threads_.emplace_back([this, i] { WorkerLoop(i); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::Run(const std::function<void(int)>& task) {
  if (num_workers_ == 1) {
    task(0);
    return;
  }
  task_ = &task;
  pending_.store(num_workers_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  task(0);
  int spins = 0;
  for (;;) {
    const int left = pending_.load(std::memory_order_acquire);
    if (left == 0) break;
    if (++spins < kSpinIterations) {
      RLT_CPU_RELAX();
    } else {
      pending_.wait(left, std::memory_order_acquire);
    }
  }
  task_ = nullptr;
}

void WorkerPool::WorkerLoop(int index) {
  // Generation 0 is the pool's state at construction. Starting from the constant (not
  // from a load) matters: a Run() may bump the generation before this thread first runs.
  uint64_t seen = 0;
  for (;;) {
    int spins = 0;
    uint64_t now;
    while ((now = generation_.load(std::memory_order_acquire)) == seen) {
      if (++spins < kSpinIterations) {
        RLT_CPU_RELAX();
      } else {
        generation_.wait(seen, std::memory_order_acquire);
      }
    }
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    (*task_)(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace rlt
