// rltrade learn: the torch plug-in, librltrade_torch.so, the one object that links LibTorch.
//
// Builds with LibTorch (-DRLT_WITH_TORCH=ON) make it beside the rltrade binary; the binary
// does not link it. It is opened the first time something needs LibTorch: a run with
// [policy] backend = "torch", a checkpoint written before the native format (policy.pt,
// normalizer.pt) or `rltrade checkpoint convert`, and the torch rows of `bench machine` and
// `bench train`. Every other command starts without LibTorch's hundreds of shared
// objects and its static initialisers (docs/performance.md has the startup figures).
//
// The plug-in carries its own copy of the code it needs from learn/, native/, env/,
// runlog/ and core/ (static libraries, every symbol but its entry point hidden), so it
// does not depend on the symbols of whatever loads it: the rltrade binary, a test or the
// Python extension. What crosses the boundary are the types of learn/'s headers, compiled
// from the same sources in the same build: TorchApi::abi and the sizes below refuse a
// plug-in from another build. LibTorch-free header.
#ifndef RLT_LEARN_TORCH_PLUGIN_H_
#define RLT_LEARN_TORCH_PLUGIN_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/status.h"
#include "env/env.h"
#include "learn/checkpoint_parts.h"
#include "learn/learner.h"
#include "learn/normalize.h"
#include "learn/policy.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// The entry point's name and the table it returns.
inline constexpr const char* kTorchPluginFile = "librltrade_torch.so";
inline constexpr const char* kTorchPluginSymbol = "rltrade_torch_api";
inline constexpr int kTorchApiAbi = 1;  // bump when TorchApi changes

struct TorchApi {
  int abi = 0;
  // sizeof of the types that cross, as the plug-in was compiled.
  size_t sizeof_policy_options = 0, sizeof_learner_state = 0, sizeof_parts = 0;
  const char* torch_version = "";
  // TorchLearner (torch_learner.h) starting from `initial`.
  std::unique_ptr<Learner> (*make_learner)(int obs_dim, const env::ActionSpace& space,
                                           const PolicyOptions& options,
                                           const LearnerState& initial, uint64_t seed) = nullptr;
  // Readers and conversion of pre-native checkpoints (torch_legacy.h).
  Result<native::TensorFile> (*read_policy_archive)(const std::string& path) = nullptr;
  Result<NormalizerStats> (*read_normalizer_archive)(const std::string& path) = nullptr;
  Result<PpoCheckpointParts> (*read_legacy_ppo_parts)(const std::filesystem::path& dir) = nullptr;
  Status (*convert_checkpoint)(const std::filesystem::path& dir, bool* converted) = nullptr;
  // LibTorch's intra-op threads (inter-op 1, when still allowed), and the count now.
  void (*set_threads)(int intra_op) = nullptr;
  int (*get_threads)() = nullptr;
  // CUDA devices LibTorch sees (0 on CPU-only builds).
  int (*cuda_device_count)() = nullptr;
  // Best float32 n x n matmul rate through LibTorch (cuda_device -1: the CPU), and the cost
  // of one small LibTorch operator in microseconds (bench machine).
  double (*matmul_gflops)(int n, int cuda_device, double min_seconds) = nullptr;
  double (*op_overhead_us)(int cuda_device) = nullptr;
};

// The plug-in's table, loaded on the first call (later calls return the same table or the
// same error). Errors: a build without LibTorch, or a plug-in that is missing or from
// another build; the message says how to get one.
Result<const TorchApi*> Torch();
// Whether an earlier Torch() call loaded it (never loads it).
bool TorchLoaded();
// LibTorch's intra-op thread count: set now if the plug-in is loaded, else when it loads
// (setting it never loads LibTorch). REQUIRES: intra_op >= 1.
void SetTorchThreadsWhenLoaded(int intra_op);

}  // namespace rlt::learn

#endif  // RLT_LEARN_TORCH_PLUGIN_H_
