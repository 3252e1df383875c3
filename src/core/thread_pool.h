// rltrade core: a fixed pool of workers that run one task on every worker at once, and the
// thread counts of the process (cores given to it, divided among rltrade's own processes).
//
// Built for the environment engine's hot loop: Run() hands the same callable to all
// `num_workers` workers (the calling thread is worker 0) and returns when all are done.
//
// The threading model (one per process; measured by `rltrade bench threads`, see
// docs/performance.md):
//  - Small work runs inline. Run() measures how long the work takes on one thread (an
//    exponential average over calls) and, while that is below inline_below_seconds()
//    (default kDefaultInlineBelowSeconds: a handoff to a sleeping thread costs tens of
//    microseconds), calls task(0), task(1), ... task(num_workers - 1) one after the other on
//    the caller instead of waking the workers. Every task(w) still runs exactly once with
//    the same w, so slices and results are the same either way.
//  - Indices are claimed, not assigned: the caller and each woken worker take the next
//    index not yet taken, so a worker that is slow to wake (its core busy with another
//    job) leaves its index to the caller instead of stalling the call.
//  - Idle workers spin for at most kSpinSeconds (tens of microseconds), then sleep on a futex
//    (std::atomic::wait): while LibTorch or OpenBLAS compute between two Run() calls the
//    pool's threads are asleep and do not take cores from them.
//  - LibTorch's and OpenBLAS's own pools are made to sleep when idle too (see
//    process_env.h); their sizes are set in one place (learn::SetComputeThreads).
//
// Thread safety: Run() must be called from one thread at a time (the owner). The pool
// owns its threads; it is neither copyable nor movable.
#ifndef RLT_CORE_THREAD_POOL_H_
#define RLT_CORE_THREAD_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace rlt {

class WorkerPool {
 public:
  // Work estimated below this many seconds on one thread runs inline on the caller.
  static constexpr double kDefaultInlineBelowSeconds = 50e-6;
  // How long an idle worker (or the caller waiting for workers) spins before sleeping:
  // long enough to span the serial work between two Run() calls of a training update (a
  // PPO loss, a gradient norm), so a worker is awake for the next one; a wake from sleep
  // costs tens of microseconds. Measured: CartPole's update at 2 threads 1.25x faster
  // with 50 us than with 5 us (docs/performance.md).
  static constexpr double kSpinSeconds = 50e-6;

  // REQUIRES: num_workers >= 1. num_workers == 1 runs everything on the caller.
  explicit WorkerPool(int num_workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int num_workers() const { return num_workers_; }

  // Calls task(worker_index) once for each worker index in [0, num_workers) and blocks
  // until every call has returned: on whichever of the caller and the workers is free first
  // (each takes the next index not yet taken; the caller takes index 0), or all on the
  // caller in index order when the work is too small to be worth a handoff (see above).
  // So a worker the OS has not scheduled (another job on its core) does not hold up the
  // call: the caller runs the indices it has not taken. Which thread runs an index never
  // changes what it computes: tasks must index their outputs and scratch by worker_index.
  // The task must not throw and must not rely on the calls running at the same time
  // (no barriers or waits between workers).
  void Run(const std::function<void(int)>& task);

  // Run() goes inline while the measured one-thread time of its tasks is below `seconds`.
  // 0 = never inline (always hand off), +infinity = always inline. REQUIRES: seconds >= 0.
  void set_inline_below_seconds(double seconds);
  double inline_below_seconds() const { return inline_below_seconds_; }
  // The pool's current estimate of one Run()'s work on one thread, in seconds (0 before
  // the first Run()).
  double serial_seconds_estimate() const { return serial_estimate_; }
  // Whether the last Run() ran inline on the caller.
  bool last_run_inline() const { return last_run_inline_; }

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
  double inline_below_seconds_ = kDefaultInlineBelowSeconds;
  double serial_estimate_ = 0;  // exponential average, seconds; owner thread only
  bool has_estimate_ = false;
  bool last_run_inline_ = false;
  // Claims the next unclaimed index of Run() number `generation`; false when none is left
  // (or that Run() is over).
  bool Claim(uint64_t generation, int* index);

  alignas(64) std::atomic<uint64_t> generation_{0};
  // (generation << 16) | next unclaimed index of the current Run().
  alignas(64) std::atomic<uint64_t> claim_{0};
  alignas(64) std::atomic<int> pending_{0};  // indices of the current Run() not yet done
  std::atomic<bool> stop_{false};
};

// Number of hardware threads of the machine (at least 1). For "how many may I use", see
// AvailableCores().
int HardwareThreads();

// The CPUs this process may run on: the size of its affinity mask (sched_getaffinity of
// the calling thread, as set by taskset, cgroup cpusets or a job scheduler), capped by a
// cgroup v2 CPU quota (/sys/fs/cgroup/cpu.max, e.g. `docker run --cpus=1.5` gives 2) when
// one is set. At least 1.
int AvailableCores();

// The cores of a cgroup v2 cpu.max line "QUOTA PERIOD": ceil(QUOTA / PERIOD); 0 when there
// is no limit ("max ...") or the text does not parse.
int CoresFromCgroupCpuMax(std::string_view text);

// Threads for each of `processes` rltrade processes running at once on `cores` cores
// (parallel seeds, tuning trials, MPI ranks on one host): cores / processes, at least 1.
// REQUIRES: cores >= 1, processes >= 1.
int CoresPerProcess(int cores, int processes);

// A configured thread count ([run] threads) to the count to use: `requested` when > 0;
// 0 means CoresPerProcess(available_cores, processes). REQUIRES: requested >= 0.
int ResolveThreads(int requested, int available_cores, int processes);
// The same with available_cores = AvailableCores().
int ResolveThreads(int requested, int processes = 1);

}  // namespace rlt

#endif  // RLT_CORE_THREAD_POOL_H_
