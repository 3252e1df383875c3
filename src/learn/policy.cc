// rltrade learn: PolicyOptions validation (see policy.h).
#include "learn/policy.h"

#include "learn/torch_plugin.h"

namespace rlt::learn {

bool TorchBackendBuilt() {
#ifdef RLT_WITH_TORCH
  return true;
#else
  return false;
#endif
}

bool CudaAvailable() {
  if (!TorchBackendBuilt()) return false;
  const Result<const TorchApi*> torch = Torch();
  return torch.ok() && (*torch)->cuda_device_count() > 0;
}

Status ValidatePolicyOptions(const PolicyOptions& o) {
  for (int w : o.pi) {
    if (w < 1) return Status::InvalidArgument("[policy] pi: layer widths must be >= 1");
  }
  for (int w : o.vf) {
    if (w < 1) return Status::InvalidArgument("[policy] vf: layer widths must be >= 1");
  }
  if (o.activation != "tanh" && o.activation != "relu") {
    return Status::InvalidArgument("[policy] activation must be tanh or relu");
  }
  if (o.backend != "native" && o.backend != "torch") {
    return Status::InvalidArgument("[policy] backend must be native or torch, got '" + o.backend +
                                   "'");
  }
  if (o.backend == "torch" && !TorchBackendBuilt()) {
    return Status::InvalidArgument(
        "[policy] backend = \"torch\" needs LibTorch, and this rltrade was built without it; "
        "set [policy] backend = \"native\" (the same PPO), or rebuild with LibTorch: install "
        "libtorch-dev and configure with cmake -DRLT_WITH_TORCH=ON");
  }
  if (o.recurrent != "none" && o.recurrent != "lstm") {
    return Status::InvalidArgument("[policy] recurrent must be none or lstm, got '" + o.recurrent +
                                   "'");
  }
  if (o.is_recurrent()) {
    if (o.lstm_hidden_size < 1 || o.lstm_hidden_size > 8192) {
      return Status::InvalidArgument("[policy] lstm_hidden_size must be in [1, 8192], got " +
                                     std::to_string(o.lstm_hidden_size));
    }
    if (o.backend != "native") {
      return Status::InvalidArgument(
          "[policy] recurrent = \"lstm\" trains on the native engine only; set [policy] backend "
          "= \"native\" (LibTorch autograd is its test oracle, not a training backend)");
    }
  }
  if (o.backend == "torch") {
    // Loads LibTorch now, so a missing or mismatched plug-in is an error before any work.
    const Result<const TorchApi*> torch = Torch();
    if (!torch.ok()) {
      return Status::InvalidArgument("[policy] backend = \"torch\": " + torch.status().message() +
                                     "; or set [policy] backend = \"native\" (the same PPO)");
    }
  }
  return Status::Ok();
}

}  // namespace rlt::learn
