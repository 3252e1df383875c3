// rltrade learn: loading the torch plug-in (see torch_plugin.h).
#include "learn/torch_plugin.h"

#include <atomic>
#include <mutex>

#include "core/plugin.h"

namespace rlt::learn {
namespace {

std::atomic<const TorchApi*> g_api{nullptr};
std::mutex g_threads_mutex;
int g_torch_threads = 0;  // the last SetTorchThreadsWhenLoaded, 0: none

Result<const TorchApi*> Load() {
#ifndef RLT_WITH_TORCH
  return Status::Refused(
      "this rltrade was built without LibTorch; rebuild with it (install libtorch-dev, e.g. "
      "`bash scripts/install-deps.sh`, and configure with cmake -DRLT_WITH_TORCH=ON, which is "
      "what `make build` and `make test` do)");
#else
  PluginRequest request;
  request.file = kTorchPluginFile;
  request.symbol = kTorchPluginSymbol;
  request.build_dir = RLT_PLUGIN_BUILD_DIR;
  request.anchor = reinterpret_cast<const void*>(&Load);
  Result<void*> entry = LoadPluginSymbol(request);
  if (!entry.ok()) {
    return Status::NotFound(entry.status().message() +
                            "\nit is built beside the rltrade binary by builds with LibTorch "
                            "(cmake -DRLT_WITH_TORCH=ON); rebuild, or keep it beside the binary");
  }
  using Entry = const TorchApi* (*)();
  const TorchApi* api = reinterpret_cast<Entry>(*entry)();
  if (api == nullptr || api->abi != kTorchApiAbi ||
      api->sizeof_policy_options != sizeof(PolicyOptions) ||
      api->sizeof_learner_state != sizeof(LearnerState) ||
      api->sizeof_parts != sizeof(PpoCheckpointParts)) {
    return Status::DataError(std::string(kTorchPluginFile) +
                             " was built from other sources than this rltrade; rebuild both "
                             "from one tree (cmake --build)");
  }
  return api;
#endif
}

}  // namespace

Result<const TorchApi*> Torch() {
  static std::once_flag once;
  static Result<const TorchApi*> loaded = static_cast<const TorchApi*>(nullptr);
  std::call_once(once, [] {
    loaded = Load();
    if (!loaded.ok()) return;
    std::lock_guard<std::mutex> lock(g_threads_mutex);
    if (g_torch_threads > 0) (*loaded)->set_threads(g_torch_threads);
    g_api.store(*loaded);
  });
  return loaded;
}

bool TorchLoaded() { return g_api.load() != nullptr; }

void SetTorchThreadsWhenLoaded(int intra_op) {
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  g_torch_threads = intra_op;
  if (const TorchApi* api = g_api.load()) api->set_threads(intra_op);
}

}  // namespace rlt::learn
