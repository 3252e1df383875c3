// rltrade native: the recurrent (LSTM) actor-critic of recurrent PPO (sb3-contrib's
// RecurrentActorCriticPolicy), forward, backward and sampling in plain C++.
//
// Architecture (learn/policy.h builds the same module in LibTorch for checkpoints):
//   actor:  obs -> LSTM "lstm_actor" (hidden H) -> pi MLP tower -> action head (+ log_std)
//   critic: obs -> LSTM "lstm_critic" (hidden H) -> vf MLP tower -> value head
// With shared_lstm the critic reads the actor LSTM's output (no "lstm_critic"). The MLP
// part is native::ActorCritic with tower input width H (its parameter names unchanged:
// "pi_net.0.weight", ..., "action_net.bias", "log_std"); the LSTMs' parameters are named
// "lstm_actor.weight_ih_l0", ... as torch::nn::LSTM's under those module names.
//
// Recurrent state: (h, c) per environment for each LSTM (RecurrentState). Where an
// episode starts (episode_starts = 1) the state entering that step is zeroed first, in the
// rollout (Act) and in training (Evaluate), so both compute the same function.
//
// Parameters live in groups (the actor LSTM, the critic LSTM unless shared, the MLP part),
// each a flat float array with a gradient array of the same layout; an optimizer treats
// them as one parameter set (the learner runs Adam per group and clips by the global norm).
//
// Training evaluates whole sequences: obs (T, B, obs_dim) time-major with their stored
// initial states (B, H): each LSTM's input projection for all T*B rows is one matrix
// product (native/lstm.h), the MLP heads run on all T*B rows at once.
// Not thread-safe, except as documented per method.
#ifndef RLT_NATIVE_RECURRENT_ACTOR_CRITIC_H_
#define RLT_NATIVE_RECURRENT_ACTOR_CRITIC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "native/actor_critic.h"
#include "native/lstm.h"

namespace rlt::native {

struct RecurrentSpec {
  int obs_dim = 1;
  int hidden = 256;
  bool shared_lstm = false;
  // The MLP part; its obs_dim is set to `hidden` by the constructor.
  ActorCriticSpec head;
};

// (h, c) of each LSTM for `batch` rows, (batch, H) each. With a shared LSTM h_vf/c_vf are
// unused (empty).
struct RecurrentState {
  std::vector<float> h_pi, c_pi, h_vf, c_vf;
  void Resize(int batch, int hidden, bool shared);
  void Zero();
};

struct RecurrentWorkspace {
  LstmWorkspace pi_lstm, vf_lstm;
  ActorCriticWorkspace pi_head, vf_head;  // one per tower: the halves may run at once
  std::vector<float> pi_out, vf_out;      // (T*B, H) LSTM outputs
  std::vector<float> d_pi, d_vf;          // (T*B, H) their gradients
  int steps = 0, batch = 0;
};

class RecurrentActorCritic {
 public:
  // REQUIRES: ValidateRecurrentSpec(spec).ok().
  RecurrentActorCritic(const RecurrentSpec& spec, uint64_t seed);

  const RecurrentSpec& spec() const { return spec_; }
  bool shared() const { return spec_.shared_lstm; }
  int hidden() const { return spec_.hidden; }
  int act_dim() const { return mlp_.spec().act_dim; }

  // Parameter groups: 0 = "lstm_actor." (the actor LSTM), then "lstm_critic." unless
  // shared, then "" (the MLP part). Names of a group's tensors are prefix + ParamInfo.name.
  int num_groups() const { return shared() ? 2 : 3; }
  const std::string& group_prefix(int g) const;
  const std::vector<ParamInfo>& group_info(int g) const;
  std::vector<float>& group_params(int g);
  const std::vector<float>& group_params(int g) const;
  // Total parameter count over all groups.
  int64_t num_params() const;
  // Finds a tensor by its full name; false when absent.
  bool FindParam(const std::string& name, int* group, const ParamInfo** info) const;
  ActorCritic& mlp() { return mlp_; }
  const ActorCritic& mlp() const { return mlp_; }

  // One rollout step for n environments: zeroes the rows of `state` where
  // episode_starts (n, may be nullptr) != 0, advances both LSTMs by one step on obs
  // (n, obs_dim) (state updated in place), then samples actions (or the mean / argmax when
  // deterministic; rng may then be nullptr) with values and log-probabilities (n). With
  // rng_per_row, rng points to n generators and row i draws from rng[i] only
  // (ActorCritic::Act's per-environment streams). REQUIRES: state sized for n rows.
  void Act(const float* obs, int n, const float* episode_starts, RecurrentState& state, Rng* rng,
           bool deterministic, float* actions, float* values, float* log_probs,
           bool rng_per_row = false);
  // The same with the actor (LSTM, tower, sampling) on worker 0 of `pool` and the critic on
  // worker 1 at once (separate LSTMs only; bit-identical to Act()).
  void Act(WorkerPool& pool, const float* obs, int n, const float* episode_starts,
           RecurrentState& state, Rng* rng, bool deterministic, float* actions, float* values,
           float* log_probs, bool rng_per_row = false);
  // V of k observations (k, obs_dim) taken one step from the given critic states
  // (k, H each; for a shared LSTM, the actor states), which are not changed. reset (k, may
  // be nullptr): rows where the state is zeroed first.
  void PredictValues(const float* obs, int k, const float* h, const float* c, const float* reset,
                     float* values);

  // Training forward over B sequences of T steps: obs (T, B, obs_dim) time-major,
  // episode_starts (T, B), initial states (B, H) per LSTM (h0_vf/c0_vf ignored when
  // shared), actions (T*B, act_dim) in the same row order. Writes values, log_probs,
  // entropy (T*B) and keeps what Backward() needs in ws; the inputs must stay valid until
  // Backward(). With `pool` (>= 2 workers, separate LSTMs) the actor half runs on worker 0
  // and the critic half on worker 1: results equal the serial call bit for bit.
  void Evaluate(RecurrentWorkspace& ws, const float* obs, const float* episode_starts, int steps,
                int batch, const float* h0_pi, const float* c0_pi, const float* h0_vf,
                const float* c0_vf, const float* actions, float* values, float* log_probs,
                float* entropy, WorkerPool* pool = nullptr);
  // Given dL/dvalues, dL/dlog_probs, dL/dentropy (T*B each) of the last Evaluate() on ws,
  // ACCUMULATES the parameter gradients into grads[g] (group g's layout, one array per
  // group). Same `pool` rule as Evaluate().
  void Backward(RecurrentWorkspace& ws, const float* d_values, const float* d_log_probs,
                const float* d_entropy, const std::vector<float*>& grads,
                WorkerPool* pool = nullptr);

 private:
  // Actor / critic halves of Act, Evaluate and Backward.
  void StepLstm(const Lstm& lstm, LstmWorkspace& ws, const float* obs, int n,
                const float* episode_starts, float* h, float* c);
  void EvaluateActor(RecurrentWorkspace& ws, const float* obs, const float* episode_starts,
                     const float* h0, const float* c0, const float* actions, float* log_probs,
                     float* entropy);
  void EvaluateCritic(RecurrentWorkspace& ws, const float* obs, const float* episode_starts,
                      const float* h0, const float* c0, float* values);
  void BackwardActor(RecurrentWorkspace& ws, const float* d_log_probs, const float* d_entropy,
                     const std::vector<float*>& grads);
  void BackwardCritic(RecurrentWorkspace& ws, const float* d_values,
                      const std::vector<float*>& grads);
  static void Reserve(std::vector<float>& v, size_t n) {
    if (v.size() < n) v.resize(n);
  }

  RecurrentSpec spec_;
  Lstm actor_, critic_;  // critic_ unused when shared
  ActorCritic mlp_;
  std::vector<std::string> prefixes_;
  LstmWorkspace step_pi_ws_, step_vf_ws_, value_ws_;
  std::vector<float> step_pi_out_, step_vf_out_, value_h_, value_c_, value_out_;
};

Status ValidateRecurrentSpec(const RecurrentSpec& spec);

}  // namespace rlt::native

#endif  // RLT_NATIVE_RECURRENT_ACTOR_CRITIC_H_
