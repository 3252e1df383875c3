// rltrade core: WorkerPool implementation (inline below a work threshold; short spin, then
// futex sleep) and the process's thread counts.
#include "core/thread_pool.h"

#include <sched.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/status.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define RLT_CPU_RELAX() _mm_pause()
#else
#define RLT_CPU_RELAX() std::this_thread::yield()
#endif

namespace rlt {
namespace {

using Clock = std::chrono::steady_clock;

// Spins while still_waiting() holds, for at most WorkerPool::kSpinSeconds of wall time (a
// bound in time, not iterations: one pause instruction takes 10 to 140 cycles depending on
// the CPU). Returns true when the wait ended, false when the caller should sleep.
template <class StillWaiting>
bool SpinBriefly(StillWaiting still_waiting) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(WorkerPool::kSpinSeconds));
  for (int i = 1;; ++i) {
    if (!still_waiting()) return true;
    RLT_CPU_RELAX();
    if ((i & 15) == 0 && Clock::now() >= deadline) return false;
  }
}

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// claim_ packs (generation tag << kIndexBits) | next index: 48 bits of the generation (it
// only has to differ from the previous Run()'s) and 16 of the index.
constexpr int kIndexBits = 16;
constexpr uint64_t ClaimBase(uint64_t generation) {
  return (generation & ((uint64_t{1} << (64 - kIndexBits)) - 1)) << kIndexBits;
}

// Weight of the newest measurement in the work estimate: adapts within a few calls when
// the work changes, and one preempted call does not flip the mode for long.
constexpr double kEstimateWeight = 0.25;

}  // namespace

int HardwareThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int CoresFromCgroupCpuMax(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  char* end = nullptr;
  const long long q = std::strtoll(quota.c_str(), &end, 10);
  if (end == quota.c_str() || *end != '\0' || q <= 0) return 0;
  return static_cast<int>((q + period - 1) / period);
}

int AvailableCores() {
  int cores = HardwareThreads();
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    const int n = CPU_COUNT(&mask);
    if (n > 0) cores = n;
  }
  std::ifstream cpu_max("/sys/fs/cgroup/cpu.max");
  std::string line;
  if (cpu_max && std::getline(cpu_max, line)) {
    const int quota_cores = CoresFromCgroupCpuMax(line);
    if (quota_cores > 0 && quota_cores < cores) cores = quota_cores;
  }
  return cores < 1 ? 1 : cores;
}

int CoresPerProcess(int cores, int processes) {
  RLT_CHECK(cores >= 1 && processes >= 1);
  const int per = cores / processes;
  return per < 1 ? 1 : per;
}

int ResolveThreads(int requested, int available_cores, int processes) {
  RLT_CHECK(requested >= 0);
  return requested > 0 ? requested : CoresPerProcess(available_cores, processes);
}

int ResolveThreads(int requested, int processes) {
  return requested > 0 ? requested : ResolveThreads(0, AvailableCores(), processes);
}

WorkerPool::WorkerPool(int num_workers) : num_workers_(num_workers) {
  RLT_CHECK(num_workers >= 1 && num_workers < (1 << kIndexBits));
  threads_.reserve(num_workers - 1);
  for (int i = 1; i < num_workers; ++i) threads_.emplace_back([this, i] { WorkerLoop(i); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::set_inline_below_seconds(double seconds) {
  RLT_CHECK(seconds >= 0);
  inline_below_seconds_ = seconds;
}

bool WorkerPool::Claim(uint64_t generation, int* index) {
  const uint64_t base = ClaimBase(generation);
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (c < base || c - base >= static_cast<uint64_t>(num_workers_)) return false;
    if (claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      *index = static_cast<int>(c - base);
      return true;
    }
  }
}

void WorkerPool::Run(const std::function<void(int)>& task) {
  if (num_workers_ == 1) {
    task(0);
    last_run_inline_ = true;
    return;
  }
  // The first Run() hands off (large work must not pay a serial first call); afterwards
  // the estimate decides.
  const bool run_inline = has_estimate_ && serial_estimate_ < inline_below_seconds_;
  double serial = -1;
  if (run_inline) {
    const auto t0 = Clock::now();
    for (int w = 0; w < num_workers_; ++w) task(w);
    serial = SecondsSince(t0);
  } else {
    task_ = &task;
    const uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
    pending_.store(num_workers_, std::memory_order_relaxed);
    claim_.store(ClaimBase(generation), std::memory_order_relaxed);
    generation_.store(generation, std::memory_order_release);
    generation_.notify_all();
    // The caller takes indices too, index 0 first, until none is left.
    const auto t1 = Clock::now();
    int mine = 0, index = 0;
    while (Claim(generation, &index)) {
      task(index);
      ++mine;
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
    // The one-thread time of the whole Run() from the caller's share, without the
    // handoff's cost (which is what the estimate must not include).
    if (mine > 0) serial = SecondsSince(t1) / mine * num_workers_;
    for (;;) {
      const int left = pending_.load(std::memory_order_acquire);
      if (left == 0) break;
      if (!SpinBriefly([&] { return pending_.load(std::memory_order_acquire) == left; })) {
        pending_.wait(left, std::memory_order_acquire);
      }
    }
    task_ = nullptr;
  }
  if (serial >= 0) {
    serial_estimate_ = has_estimate_
                           ? (1 - kEstimateWeight) * serial_estimate_ + kEstimateWeight * serial
                           : serial;
    has_estimate_ = true;
  }
  last_run_inline_ = run_inline;
}

void WorkerPool::WorkerLoop(int /*thread_index*/) {
  // Generation 0 is the pool's state at construction. Starting from the constant (not
  // from a load) matters: a Run() may bump the generation before this thread first runs.
  uint64_t seen = 0;
  for (;;) {
    uint64_t now;
    while ((now = generation_.load(std::memory_order_acquire)) == seen) {
      if (!SpinBriefly([&] { return generation_.load(std::memory_order_acquire) == seen; })) {
        generation_.wait(seen, std::memory_order_acquire);
      }
    }
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    // task_ is this generation's while an index of it is claimed and not done: the Run()
    // waits for every index before it returns and before the next one sets task_.
    int index = 0;
    while (Claim(seen, &index)) {
      (*task_)(index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }
}

}  // namespace rlt
