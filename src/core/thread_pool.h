// rltrade core: a fixed pool of workers that run one task on every worker at once.
//
// Built for the environment engine's hot loop: Run() hands the same callable to all
// `num_workers` workers (the calling thread is worker 0) and returns when all are done.
// Workers spin briefly, then sleep on a futex (std::atomic::wait), so a step of a few
// microseconds costs no syscall while an idle pool costs no CPU.
//
// Thread safety: Run() must be called from one thread at a time (the owner). The pool
// owns its threads; it is neither copyable nor movable.
#ifndef RLT_CORE_THREAD_POOL_H_
#define RLT_CORE_THREAD_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace rlt {

class WorkerPool {
 public:
  // REQUIRES: num_workers >= 1. num_workers == 1 runs everything on the caller.
  explicit WorkerPool(int num_workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int num_workers() const { return num_workers_; }

  // Calls task(worker_index) once on each worker, index 0 on the caller; blocks until
  // every call has returned. The task must not throw.
  void Run(const std::function<void(int)>& task);

  // Splits [0, n) into num_workers contiguous slices; returns worker w's [begin, end).
  static std::pair<int, int> Slice(int n, int num_workers, int w) {
    const int base = n / num_workers, extra = n % num_workers;
    const int begin = w * base + (w < extra ? w : extra);
    return {begin, begin + base + (w < extra ? 1 : 0)};
  }

 private:
  void WorkerLoop(int index);

  int num_workers_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* task_ = nullptr;
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

// Number of hardware threads (at least 1).
int HardwareThreads();

}  // namespace rlt

#endif  // RLT_CORE_THREAD_POOL_H_
