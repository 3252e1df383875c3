// rltrade native: the MLP actor-critic of learn::ActorCritic (Stable-Baselines3's
// ActorCriticPolicy) without LibTorch: forward, backward and sampling in plain C++.
//
// Same architecture and semantics as learn/policy.h:
//  - two separate MLPs (pi and vf) of Linear + tanh|relu layers read the observation;
//  - a linear action head on the pi latent gives the Gaussian mean (Box; the log standard
//    deviation is a free state-independent parameter `log_std`) or categorical logits
//    (Discrete); a linear value head on the vf latent gives V(s);
//  - Gaussian log-probabilities and entropies are summed over action dimensions;
//  - initialisation: orthogonal weights with gain sqrt(2) (hidden), 0.01 (action head),
//    1 (value head), zero biases (ortho_init), else PyTorch's Linear default
//    U(-1/sqrt(in), 1/sqrt(in)); our own RNG (same distribution, not the same numbers).
// Parameters live in one flat float array (gradients in a second one of the same layout),
// each tensor named as in learn::ActorCritic's named_parameters() ("log_std",
// "pi_net.0.weight", "pi_net.2.bias", ..., "action_net.weight", "value_net.bias"), with
// PyTorch's shapes, so they copy 1:1 into the LibTorch module and back.
//
// Forward/Backward use a Workspace whose buffers are allocated once per batch capacity.
// Not thread-safe; several threads may run Evaluate/Backward concurrently with their own
// Workspace and gradient array (parameters are only read).
#ifndef RLT_NATIVE_ACTOR_CRITIC_H_
#define RLT_NATIVE_ACTOR_CRITIC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "native/layers.h"
#include "native/tensor_file.h"

namespace rlt::native {

struct ActorCriticSpec {
  int obs_dim = 1;
  bool discrete = false;
  int act_dim = 1;      // Box: action dimensions; Discrete: 1 (one float holds the index)
  int num_outputs = 1;  // Box: act_dim; Discrete: n
  std::vector<int> pi = {64, 64};
  std::vector<int> vf = {64, 64};
  Activation activation = Activation::kTanh;
  double log_std_init = 0.0;
  bool ortho_init = true;
};

// One parameter tensor inside the flat array.
struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0, size = 0;
};

// Scratch buffers for one batch; grown on demand, never shrunk.
struct ActorCriticWorkspace {
  int capacity = 0;
  std::vector<std::vector<float>> pi_out, vf_out;  // per hidden layer, (B, width)
  std::vector<float> head;                         // (B, num_outputs)
  std::vector<float> dist;      // Box: z = (a - mean) exp(-log_std); Discrete: log-softmax
  std::vector<float> values;    // (B)
  std::vector<float> d_a, d_b;  // (B, widest layer) ping-pong
  std::vector<float> d_head;    // (B, num_outputs)
  // Remembered by Evaluate() for Backward(): the inputs of the pi and vf towers (both the
  // observation, except in a recurrent policy, where they are the LSTMs' outputs).
  const float* obs = nullptr;
  const float* vf_in = nullptr;
  const float* actions = nullptr;
  int batch = 0;
};

class ActorCritic {
 public:
  // REQUIRES: ValidateSpec(spec).ok().
  ActorCritic(const ActorCriticSpec& spec, uint64_t seed);

  const ActorCriticSpec& spec() const { return spec_; }
  const std::vector<ParamInfo>& param_info() const { return param_info_; }
  int64_t num_params() const { return static_cast<int64_t>(params_.size()); }
  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  std::vector<float>& grads() { return grads_; }
  // nullptr when absent.
  const ParamInfo* FindParam(const std::string& name) const;
  // Adds every parameter to `file` as float32 under its name (with `prefix`).
  void SaveParameters(TensorFile& file, const std::string& prefix = "") const;
  // Reads every parameter from `file` (names with `prefix`, shapes checked); on error the
  // parameters are unchanged. `origin` names the file in messages.
  Status LoadParameters(const TensorFile& file, const std::string& origin,
                        const std::string& prefix = "");

  // One batched forward for B observations (B, obs_dim): actions (B, act_dim) sampled
  // with `rng` (Gaussian: mean + exp(log_std) N(0, 1); Discrete: inverse CDF of the
  // softmax) or the mean / argmax when deterministic; values (B); log_probs (B).
  // rng may be nullptr when deterministic. With rng_per_row, rng points to `batch`
  // generators and row i draws from rng[i] only (per-environment streams: the draws of an
  // environment do not depend on which other rows share the batch).
  void Act(const float* obs, int batch, Rng* rng, bool deterministic, float* actions, float* values,
           float* log_probs, bool rng_per_row = false);
  // The same with the policy tower (and sampling) on worker 0 of `pool` and the value tower
  // on worker 1 at once: the towers share nothing, so the results are Act()'s bit for bit.
  void Act(WorkerPool& pool, const float* obs, int batch, Rng* rng, bool deterministic,
           float* actions, float* values, float* log_probs, bool rng_per_row = false);
  // V(s) -> values (B).
  void PredictValues(const float* obs, int batch, float* values);

  // Values, log-probabilities and entropies of stored actions (B each), keeping the
  // activations in `ws` for Backward(). obs and actions must stay valid until Backward().
  void Evaluate(ActorCriticWorkspace& ws, const float* obs, const float* actions, int batch,
                float* values, float* log_probs, float* entropy);
  // Given dL/dvalues, dL/dlog_probs and dL/dentropy (B each) of the last Evaluate() on
  // `ws`, ACCUMULATES dL/dparameters into grads (num_params(), flat layout).
  void Backward(ActorCriticWorkspace& ws, const float* d_values, const float* d_log_probs,
                const float* d_entropy, float* grads);

  // The same network with separate inputs for the two towers (B, obs_dim) each: pi_in feeds
  // the policy tower, vf_in the value tower (a recurrent policy's actor and critic LSTM
  // outputs). Act/Evaluate/Backward above are these with pi_in = vf_in = obs.
  void ActSplit(const float* pi_in, const float* vf_in, int batch, Rng* rng, bool deterministic,
                float* actions, float* values, float* log_probs);
  void EvaluateSplit(ActorCriticWorkspace& ws, const float* pi_in, const float* vf_in,
                     const float* actions, int batch, float* values, float* log_probs,
                     float* entropy);
  // Also writes dL/dpi_in and dL/dvf_in (B, obs_dim) unless nullptr (overwritten).
  void BackwardSplit(ActorCriticWorkspace& ws, const float* d_values, const float* d_log_probs,
                     const float* d_entropy, float* grads, float* d_pi_in, float* d_vf_in);
  // The two towers separately: EvaluateSplit = EvaluatePolicy + EvaluateValue and
  // BackwardSplit = BackwardPolicy + BackwardValue. The policy half touches only the pi
  // tower, action head and log_std (parameters and gradients), the value half only the vf
  // tower and value head, so the halves may run at once on two threads when each has its
  // own workspace (gradient writes go to disjoint ranges of one array).
  void EvaluatePolicy(ActorCriticWorkspace& ws, const float* pi_in, const float* actions, int batch,
                      float* log_probs, float* entropy);
  void EvaluateValue(ActorCriticWorkspace& ws, const float* vf_in, int batch, float* values);
  void BackwardPolicy(ActorCriticWorkspace& ws, const float* d_log_probs, const float* d_entropy,
                      float* grads, float* d_pi_in);
  void BackwardValue(ActorCriticWorkspace& ws, const float* d_values, float* grads, float* d_vf_in);
  // Rollout halves with separate internal workspaces, safe to run at once on two threads:
  // sampled (or deterministic) actions and their log-probabilities from the policy tower,
  // and V from the value tower.
  void SampleActions(const float* pi_in, int batch, Rng* rng, bool deterministic, float* actions,
                     float* log_probs, bool rng_per_row = false);
  void PredictValuesConcurrent(const float* vf_in, int batch, float* values);

 private:
  struct Layer {
    int in = 0, out = 0;
    int64_t w = 0, b = 0;  // offsets of weight (out, in) and bias (out)
  };
  int64_t AddParam(const std::string& name, std::vector<int64_t> shape);
  void Initialise(uint64_t seed);
  void Reserve(ActorCriticWorkspace& ws, int batch) const;
  // Runs a tower's hidden layers; returns its latent (the input when it has none).
  const float* TowerForward(const std::vector<Layer>& tower, const float* x, int batch,
                            std::vector<std::vector<float>>& outs) const;
  // d (B, latent width) -> parameter gradients, and dx (B, in) unless nullptr; d is
  // clobbered.
  void TowerBackward(const std::vector<Layer>& tower, const float* x, int batch,
                     std::vector<std::vector<float>>& outs, float* d, float* scratch, float* grads,
                     float* dx) const;
  // ws.head (B, num_outputs) = action head of the pi tower.
  void ActionHeadForward(ActorCriticWorkspace& ws, const float* obs, int batch);
  void ValueForward(ActorCriticWorkspace& ws, const float* obs, int batch, float* values);

  ActorCriticSpec spec_;
  std::vector<ParamInfo> param_info_;
  std::vector<float> params_, grads_;
  std::vector<Layer> pi_, vf_;
  Layer action_head_, value_head_;
  int64_t log_std_ = -1;  // offset, Box only
  ActorCriticWorkspace inference_ws_, value_ws_;
};

Status ValidateSpec(const ActorCriticSpec& spec);

// ---- distribution math (plain loops; also the reference for tests) ----
// Gaussian, summed over the last dimension: lp_i = sum_j -0.5 z_ij^2 - log_std_j - log(2 pi)/2,
// z = (a - mean) exp(-log_std); stores z (B, d) when z_out != nullptr.
void GaussianLogProb(const float* mean, const float* log_std, const float* actions, int batch,
                     int dim, float* log_probs, float* z_out);
// Per-sample entropy sum_j (0.5 + 0.5 log(2 pi) + log_std_j) (the same for every sample).
float GaussianEntropy(const float* log_std, int dim);
// log-softmax of logits (B, n) into log_p (B, n).
void LogSoftmax(const float* logits, int batch, int n, float* log_p);

}  // namespace rlt::native

#endif  // RLT_NATIVE_ACTOR_CRITIC_H_
