// rltrade core: /proc readers (see proc_stats.h).
#include "core/proc_stats.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace rlt {
namespace {

// The value in kB of a "Key:   123 kB" line of a /proc file, in bytes; 0 if absent.
int64_t ProcKbField(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      return std::strtoll(line.c_str() + key.size() + 1, nullptr, 10) * 1024;
    }
  }
  return 0;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double ProcessCpuSeconds() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name "(...)": state is field 3; utime 14, stime 15 (proc(5)).
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::strtod(field.c_str(), nullptr);
    if (i == 15) stime = std::strtod(field.c_str(), nullptr);
  }
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return ticks > 0 ? (utime + stime) / static_cast<double>(ticks) : 0;
}

int64_t ResidentBytes() { return ProcKbField("/proc/self/status", "VmRSS"); }

int64_t PeakResidentBytes() {
  const int64_t hwm = ProcKbField("/proc/self/status", "VmHWM");
  if (hwm > 0) return hwm;
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
}

int64_t AvailableMemoryBytes() { return ProcKbField("/proc/meminfo", "MemAvailable"); }

bool IsRltradeProcessAlive(int64_t pid) {
  if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) != 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return cmdline.find("rltrade") != std::string::npos;
}

CpuMeter::CpuMeter() : last_cpu_(ProcessCpuSeconds()), last_wall_(WallSeconds()) {}

double CpuMeter::PercentSinceLast() {
  const double cpu = ProcessCpuSeconds(), wall = WallSeconds();
  const double percent = wall > last_wall_ ? 100.0 * (cpu - last_cpu_) / (wall - last_wall_) : 0;
  last_cpu_ = cpu;
  last_wall_ = wall;
  return percent;
}

}  // namespace rlt
