// rltrade perf: measuring the machine — which BLAS and OpenMP runtimes are really loaded,
// the native engine's matmul GFLOP/s per thread count (OpenBLAS's cblas_sgemm), memory
// bandwidth, and in builds with LibTorch its version, per-operator overhead and CUDA
// devices (through the torch plug-in, learn/torch_plugin.h).
//
// Every figure is measured on the spot (best of several repetitions after a warm-up);
// nothing is estimated. LibTorch-free.
#ifndef RLT_PERF_MACHINE_H_
#define RLT_PERF_MACHINE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rlt::perf {

struct MatmulResult {
  int size = 0;  // square matrices size x size, float32
  int threads = 0;
  double gflops = 0;  // 2 n^3 / best time
};

struct DeviceReport {
  std::string device;  // "cpu", "cuda:0", ...
  std::vector<MatmulResult> matmul;
  double op_overhead_us = 0;  // one small LibTorch tensor add, microseconds (0: no LibTorch)
};

// OpenMP runtimes (libgomp, libiomp5, libomp) and BLAS libraries (libblas, libopenblas,
// libmkl) mapped into this process now: distinct paths in /proc/self/maps order.
struct LoadedRuntimes {
  std::vector<std::string> openmp, blas;
};
LoadedRuntimes FindLoadedRuntimes();

struct MachineReport {
  int cores = 0;             // hardware threads
  std::string cpu_model;     // from /proc/cpuinfo
  std::string blas_library;  // the libblas.so.3 actually mapped into the process
  std::string blas_config;   // openblas_get_config() when OpenBLAS is loaded
  // Every OpenMP runtime (libgomp, libiomp5, libomp) and BLAS library (libblas, libopenblas,
  // libmkl) mapped into the process, distinct paths in map order. Two OpenMP runtimes in
  // one process is the crash of the retrieval system rltrade replaces.
  std::vector<std::string> openmp_libraries, blas_libraries;
  bool duplicate_openmp() const { return openmp_libraries.size() > 1; }
  double memcpy_gbytes_per_sec = 0;   // single-thread copy of 256 MiB, read + write counted
  std::vector<DeviceReport> devices;  // CPU first; CUDA when this LibTorch has it
  std::string torch_version;          // "" without LibTorch
};

struct MachineBenchOptions {
  std::vector<int> sizes = {256, 1024, 2000};  // 2000: the size the original reports used
  std::vector<int> threads;                    // empty: 1..cores
  double min_seconds = 0.3;                    // per measurement
};

MachineReport MeasureMachine(const MachineBenchOptions& options);

// The best single-thread and all-thread float32 matmul rate for `size` (used by
// `bench train` to put achieved update GFLOP/s against the machine's peak).
double PeakMatmulGflops(int size, int threads);

}  // namespace rlt::perf

#endif  // RLT_PERF_MACHINE_H_
