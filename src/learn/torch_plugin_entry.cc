// rltrade learn: the torch plug-in's entry point (torch_plugin.h), compiled into
// librltrade_torch.so only. Everything else in the plug-in is hidden.
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "learn/torch_learner.h"
#include "learn/torch_legacy.h"
#include "learn/torch_plugin.h"
#include "learn/trainer.h"

namespace rlt::learn {
namespace {

// Best time per call of fn over repetitions lasting at least min_seconds in total (after a
// warm-up call), at least 3 repetitions.
template <typename Fn>
double BestSeconds(Fn&& fn, double min_seconds) {
  using Clock = std::chrono::steady_clock;
  fn();
  double best = 1e30, total = 0;
  for (int reps = 0; total < min_seconds || reps < 3; ++reps) {
    const auto t0 = Clock::now();
    fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
  }
  return best;
}

torch::Device DeviceOf(int cuda_device) {
  return cuda_device < 0 ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA, cuda_device);
}

double MatmulGflops(int n, int cuda_device, double min_seconds) {
  const torch::Device device = DeviceOf(cuda_device);
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

double OpOverheadMicros(int cuda_device) {
  const torch::Device device = DeviceOf(cuda_device);
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

TorchApi MakeApi() {
  TorchApi api;
  api.abi = kTorchApiAbi;
  api.sizeof_policy_options = sizeof(PolicyOptions);
  api.sizeof_learner_state = sizeof(LearnerState);
  api.sizeof_parts = sizeof(PpoCheckpointParts);
  api.torch_version = TORCH_VERSION;
  api.make_learner = &MakeTorchLearner;
  api.read_policy_archive = &ReadPolicyArchive;
  api.read_normalizer_archive = &ReadNormalizerArchive;
  api.read_legacy_ppo_parts = &ReadLegacyPpoParts;
  api.convert_checkpoint = &ConvertCheckpoint;
  api.set_threads = &SetTorchThreads;
  api.get_threads = [] { return static_cast<int>(torch::get_num_threads()); };
  api.cuda_device_count = [] {
    return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  };
  api.matmul_gflops = &MatmulGflops;
  api.op_overhead_us = &OpOverheadMicros;
  return api;
}

}  // namespace
}  // namespace rlt::learn

extern "C" __attribute__((visibility("default"))) const rlt::learn::TorchApi* rltrade_torch_api() {
  static const rlt::learn::TorchApi api = rlt::learn::MakeApi();
  return &api;
}
