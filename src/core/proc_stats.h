// rltrade core: what the kernel says about a process — CPU time, resident memory, whether
// a pid is alive — and the memory available to a new allocation. Linux /proc only;
// LibTorch-free (used by the training loop, `rltrade status` and `rltrade bench train`).
// Every function returns 0 / false when /proc cannot be read (never fails hard).
#ifndef RLT_CORE_PROC_STATS_H_
#define RLT_CORE_PROC_STATS_H_

#include <cstdint>

namespace rlt {

// user + system CPU seconds of this process (/proc/self/stat utime + stime, all threads).
double ProcessCpuSeconds();
// Resident set size now (VmRSS of /proc/self/status), bytes.
int64_t ResidentBytes();
// Peak resident set size (VmHWM of /proc/self/status; getrusage ru_maxrss if absent), bytes.
int64_t PeakResidentBytes();
// MemAvailable of /proc/meminfo, bytes (0 when unknown).
int64_t AvailableMemoryBytes();
// True when `pid` exists (kill(pid, 0)) and its /proc/<pid>/cmdline mentions "rltrade"
// (so a recycled pid of another program does not count as the run being alive).
bool IsRltradeProcessAlive(int64_t pid);

// CPU utilisation between two calls: 100 = one core busy for the whole interval.
class CpuMeter {
 public:
  CpuMeter();
  // Percent of one core used since the previous call (or construction).
  double PercentSinceLast();

 private:
  double last_cpu_, last_wall_;
};

}  // namespace rlt

#endif  // RLT_CORE_PROC_STATS_H_
