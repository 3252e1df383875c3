// rltrade perf: MeasureMachine() (see machine.h).
#include "perf/machine.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "core/rng.h"
#include "learn/policy.h"
#include "learn/torch_plugin.h"
#include "native/gemm.h"

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

// float32 n x n matmul rate of the native engine's product (native::GemmBlas, OpenBLAS's
// cblas_sgemm) on OpenBLAS's current thread count.
double NativeMatmulGflops(int n, double min_seconds) {
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), c(a.size());
  Rng rng(n);
  for (float& v : a) v = static_cast<float>(rng.Normal());
  for (float& v : b) v = static_cast<float>(rng.Normal());
  const double s = BestSeconds(
      [&] {
        native::GemmBlas(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
      },
      min_seconds);
  return 2.0 * n * n * static_cast<double>(n) / s / 1e9;
}

double MemcpyBandwidth() {
  const size_t bytes = size_t{256} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const double s = BestSeconds([&] { std::memcpy(dst.data(), src.data(), bytes); }, 0.3);
  return 2.0 * static_cast<double>(bytes) / s / 1e9;  // read + write
}

}  // namespace

double PeakMatmulGflops(int size, int threads) {
  native::SetBlasThreads(threads);
  const double g = NativeMatmulGflops(size, 0.2);
  native::SetBlasThreads(1);
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
  std::vector<int> threads = options.threads;
  if (threads.empty()) {
    for (int t = 1; t <= r.cores; ++t) threads.push_back(t);
  }
  DeviceReport cpu;
  cpu.device = "cpu";
  for (int t : threads) {
    native::SetBlasThreads(t);
    for (int n : options.sizes)
      cpu.matmul.push_back({n, t, NativeMatmulGflops(n, options.min_seconds)});
  }
  native::SetBlasThreads(1);
  // LibTorch's figures (its version, per-operator overhead, CUDA devices) when this build
  // has the torch plug-in; loading it maps LibTorch's libraries too, so the runtime check
  // below sees them.
  if (learn::TorchBackendBuilt()) {
    const Result<const learn::TorchApi*> torch = learn::Torch();
    if (torch.ok()) {
      const learn::TorchApi& api = **torch;
      r.torch_version = api.torch_version;
      api.set_threads(1);
      cpu.op_overhead_us = api.op_overhead_us(-1);
      for (int d = 0; d < api.cuda_device_count(); ++d) {
        DeviceReport gpu;
        gpu.device = "cuda:" + std::to_string(d);
        for (int n : options.sizes) {
          gpu.matmul.push_back({n, 0, api.matmul_gflops(n, d, options.min_seconds)});
        }
        gpu.op_overhead_us = api.op_overhead_us(d);
        r.devices.push_back(gpu);
      }
    } else {
      r.torch_version = "not loaded: " + torch.status().message();
    }
  }
  r.devices.insert(r.devices.begin(), cpu);
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
