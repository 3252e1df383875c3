// rltrade perf: MeasureMachine() (see machine.h).
#include "perf/machine.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

namespace rlt::perf {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Best time per call of fn over repetitions lasting at least min_seconds in total.
template <typename Fn>
double BestSeconds(Fn&& fn, double min_seconds) {
  fn();  // warm-up
  double best = 1e30, total = 0;
  int reps = 0;
  while (total < min_seconds || reps < 3) {
    const auto t0 = Clock::now();
    fn();
    const double s = Seconds(t0, Clock::now());
    best = std::min(best, s);
    total += s;
    ++reps;
  }
  return best;
}

std::string MappedLibrary(const char* needle) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos && line.find(needle, slash) != std::string::npos) {
      return line.substr(slash);
    }
  }
  return "";
}

// Distinct mapped files whose name (after the last '/') starts with one of `prefixes`.
std::vector<std::string> MappedLibraries(const std::vector<std::string>& prefixes) {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string name = path.substr(path.rfind('/') + 1);
    for (const std::string& p : prefixes) {
      if (name.rfind(p, 0) == 0 && std::find(found.begin(), found.end(), path) == found.end()) {
        found.push_back(path);
      }
    }
  }
  return found;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown";
}

// LibTorch's intra-op threads and OpenBLAS's own pool are separate: setting only the
// former leaves OpenBLAS on all cores (the "thread settings that changed nothing").
void SetThreads(int n) {
  torch::set_num_threads(n);
  using SetFn = void (*)(int);
  if (auto fn = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) fn(n);
}

double MatmulGflops(int n, const torch::Device& device, double min_seconds) {
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  torch::NoGradGuard no_grad;
  torch::Tensor a = torch::randn({n, n}, opts), b = torch::randn({n, n}, opts);
  torch::Tensor c = torch::empty({n, n}, opts);
  const double s = BestSeconds(
      [&] {
        torch::mm_out(c, a, b);
        if (device.is_cuda()) torch::cuda::synchronize();
      },
      min_seconds);
  return 2.0 * n * n * static_cast<double>(n) / s / 1e9;
}

double OpOverheadMicros(const torch::Device& device) {
  torch::NoGradGuard no_grad;
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  torch::Tensor x = torch::ones({8}, opts), y = torch::ones({8}, opts);
  constexpr int kCalls = 2000;
  const double s = BestSeconds(
      [&] {
        for (int i = 0; i < kCalls; ++i) x.add_(y);
        if (device.is_cuda()) torch::cuda::synchronize();
      },
      0.2);
  return s / kCalls * 1e6;
}

double MemcpyBandwidth() {
  const size_t bytes = size_t{256} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const double s = BestSeconds([&] { std::memcpy(dst.data(), src.data(), bytes); }, 0.3);
  return 2.0 * static_cast<double>(bytes) / s / 1e9;  // read + write
}

}  // namespace

double PeakMatmulGflops(int size, int threads) {
  const int saved = torch::get_num_threads();
  SetThreads(threads);
  const double g = MatmulGflops(size, torch::kCPU, 0.2);
  SetThreads(saved);
  return g;
}

LoadedRuntimes FindLoadedRuntimes() {
  return {MappedLibraries({"libgomp", "libiomp", "libomp."}),
          MappedLibraries({"libblas", "libopenblas", "libmkl"})};
}

MachineReport MeasureMachine(const MachineBenchOptions& options) {
  MachineReport r;
  r.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  r.cpu_model = CpuModel();
  r.torch_version = TORCH_VERSION;
  std::vector<int> threads = options.threads;
  if (threads.empty()) {
    for (int t = 1; t <= r.cores; ++t) threads.push_back(t);
  }
  const int saved = torch::get_num_threads();
  DeviceReport cpu;
  cpu.device = "cpu";
  for (int t : threads) {
    SetThreads(t);
    for (int n : options.sizes) {
      cpu.matmul.push_back({n, t, MatmulGflops(n, torch::kCPU, options.min_seconds)});
    }
  }
  SetThreads(1);
  cpu.op_overhead_us = OpOverheadMicros(torch::kCPU);
  SetThreads(saved);
  r.devices.push_back(cpu);
  if (torch::cuda::is_available()) {
    for (int d = 0; d < static_cast<int>(torch::cuda::device_count()); ++d) {
      DeviceReport gpu;
      const torch::Device dev(torch::kCUDA, d);
      gpu.device = "cuda:" + std::to_string(d);
      for (int n : options.sizes)
        gpu.matmul.push_back({n, 0, MatmulGflops(n, dev, options.min_seconds)});
      gpu.op_overhead_us = OpOverheadMicros(dev);
      r.devices.push_back(gpu);
    }
  }
  // After the matmuls, whichever BLAS served them is mapped into the process.
  const LoadedRuntimes runtimes = FindLoadedRuntimes();
  r.openmp_libraries = runtimes.openmp;
  r.blas_libraries = runtimes.blas;
  r.blas_library = MappedLibrary("libblas.so");
  if (r.blas_library.empty()) r.blas_library = MappedLibrary("openblas");
  if (r.blas_library.empty()) r.blas_library = MappedLibrary("mkl");
  using GetConfig = char* (*)();
  if (auto fn = reinterpret_cast<GetConfig>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    r.blas_config = fn();
  }
  r.memcpy_gbytes_per_sec = MemcpyBandwidth();
  return r;
}

}  // namespace rlt::perf
