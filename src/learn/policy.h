// rltrade learn: the [policy] options of the actor-critic (Stable-Baselines3's
// ActorCriticPolicy): the network every learner builds (native::ActorCritic for MLP
// policies, native::RecurrentActorCritic for recurrent ones, and with the torch backend the
// LibTorch module of learn/torch_policy.h). LibTorch-free.
#ifndef RLT_LEARN_POLICY_H_
#define RLT_LEARN_POLICY_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::learn {

// Whether this build has the torch backend (built with -DRLT_WITH_TORCH=ON).
bool TorchBackendBuilt();
// Whether LibTorch sees a CUDA device (false without LibTorch; loads the torch plug-in).
bool CudaAvailable();

struct PolicyOptions {
  std::vector<int> pi = {64, 64};   // hidden layer widths of the policy net
  std::vector<int> vf = {64, 64};   // hidden layer widths of the value net
  std::string activation = "tanh";  // one of: tanh, relu
  double log_std_init = 0.0;        // initial log standard deviation (Box actions)
  bool ortho_init = true;           // orthogonal initialisation with SB3's gains
  // Who runs forward, backward and Adam: "native" (src/native/, no LibTorch operators;
  // every MLP actor-critic) or "torch" (LibTorch autograd, the oracle). Same semantics;
  // checkpoints load in either (learn/native_learner.h).
  std::string backend = "native";
  // Recurrent PPO (sb3-contrib RecurrentPPO): "lstm" puts an LSTM of lstm_hidden_size units
  // between the observation and each MLP tower (the actor's and, unless shared_lstm, the
  // critic's own); "none" is the MLP policy. Recurrent policies train on the native
  // engine only (native/recurrent_actor_critic.h); this module holds their parameters for
  // checkpoints.
  std::string recurrent = "none";
  int lstm_hidden_size = 256;
  bool shared_lstm = false;

  template <typename V>
  void VisitFields(V& v) {
    v("pi", &pi, "hidden layer widths of the policy net, e.g. [64, 64]");
    v("vf", &vf, "hidden layer widths of the value net, e.g. [64, 64]");
    v("activation", &activation, "hidden activation", {"tanh", "relu"});
    v("log_std_init", &log_std_init, "initial log std of the Gaussian (Box actions)");
    v("ortho_init", &ortho_init, "orthogonal init with gains sqrt(2) / 0.01 / 1");
    v("backend", &backend, "learner engine: native (own kernels) or torch (LibTorch)",
      {"native", "torch"});
    v("recurrent", &recurrent, "recurrent policy: none (MLP) or lstm (recurrent PPO)",
      {"none", "lstm"});
    v("lstm_hidden_size", &lstm_hidden_size, "LSTM units (recurrent = \"lstm\")");
    v("shared_lstm", &shared_lstm, "one LSTM for actor and critic (recurrent = \"lstm\")");
  }
  bool is_recurrent() const { return recurrent == "lstm"; }
};

// Fails with the key named for a bad value; also for backend = "torch" in a build without
// LibTorch (the message says how to get it).
Status ValidatePolicyOptions(const PolicyOptions& options);

}  // namespace rlt::learn

#endif  // RLT_LEARN_POLICY_H_
