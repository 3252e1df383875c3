// rltrade native: RecurrentActorCritic implementation (see recurrent_actor_critic.h).
#include "native/recurrent_actor_critic.h"

#include <algorithm>

namespace rlt::native {
namespace {

ActorCriticSpec HeadSpec(const RecurrentSpec& s) {
  ActorCriticSpec head = s.head;
  head.obs_dim = s.hidden;
  return head;
}

// Seeds of the three parts, distinct streams from one seed.
uint64_t PartSeed(uint64_t seed, uint64_t part) { return seed ^ (0x9E3779B97F4A7C15ULL * part); }

}  // namespace

Status ValidateRecurrentSpec(const RecurrentSpec& s) {
  if (s.obs_dim < 1) return Status::InvalidArgument("recurrent policy: obs_dim must be >= 1");
  if (s.hidden < 1) {
    return Status::InvalidArgument("[policy] lstm_hidden_size must be >= 1, got " +
                                   std::to_string(s.hidden));
  }
  return ValidateSpec(HeadSpec(s));
}

void RecurrentState::Resize(int batch, int hidden, bool shared) {
  const size_t n = static_cast<size_t>(batch) * hidden;
  h_pi.assign(n, 0.0f);
  c_pi.assign(n, 0.0f);
  h_vf.assign(shared ? 0 : n, 0.0f);
  c_vf.assign(shared ? 0 : n, 0.0f);
}

void RecurrentState::Zero() {
  for (auto* v : {&h_pi, &c_pi, &h_vf, &c_vf}) std::fill(v->begin(), v->end(), 0.0f);
}

RecurrentActorCritic::RecurrentActorCritic(const RecurrentSpec& spec, uint64_t seed)
    : spec_(spec),
      actor_(spec.obs_dim, spec.hidden, PartSeed(seed, 1)),
      critic_(spec.shared_lstm ? 1 : spec.obs_dim, spec.shared_lstm ? 1 : spec.hidden,
              PartSeed(seed, 2)),
      mlp_(HeadSpec(spec), PartSeed(seed, 3)) {
  RLT_CHECK_MSG(ValidateRecurrentSpec(spec).ok(), ValidateRecurrentSpec(spec).ToString());
  prefixes_ = {"lstm_actor."};
  if (!shared()) prefixes_.push_back("lstm_critic.");
  prefixes_.push_back("");
}

const std::string& RecurrentActorCritic::group_prefix(int g) const { return prefixes_.at(g); }

const std::vector<ParamInfo>& RecurrentActorCritic::group_info(int g) const {
  if (g == 0) return actor_.param_info();
  if (g == 1 && !shared()) return critic_.param_info();
  return mlp_.param_info();
}

std::vector<float>& RecurrentActorCritic::group_params(int g) {
  if (g == 0) return actor_.params();
  if (g == 1 && !shared()) return critic_.params();
  return mlp_.params();
}

const std::vector<float>& RecurrentActorCritic::group_params(int g) const {
  return const_cast<RecurrentActorCritic*>(this)->group_params(g);
}

int64_t RecurrentActorCritic::num_params() const {
  int64_t n = 0;
  for (int g = 0; g < num_groups(); ++g) n += static_cast<int64_t>(group_params(g).size());
  return n;
}

bool RecurrentActorCritic::FindParam(const std::string& name, int* group,
                                     const ParamInfo** info) const {
  for (int g = 0; g < num_groups(); ++g) {
    const std::string& prefix = prefixes_[g];
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    for (const ParamInfo& p : group_info(g)) {
      if (name.size() == prefix.size() + p.name.size() &&
          name.compare(prefix.size(), std::string::npos, p.name) == 0) {
        *group = g;
        *info = &p;
        return true;
      }
    }
  }
  return false;
}

void RecurrentActorCritic::StepLstm(const Lstm& lstm, LstmWorkspace& ws, const float* obs, int n,
                                    const float* episode_starts, float* h, float* c) {
  // One step in place: Forward copies (h, c) (masked by the resets) before writing them.
  lstm.Forward(ws, obs, 1, n, h, c, episode_starts, h, nullptr, c);
}

void RecurrentActorCritic::Act(const float* obs, int n, const float* episode_starts,
                               RecurrentState& state, Rng* rng, bool deterministic, float* actions,
                               float* values, float* log_probs, bool rng_per_row) {
  const size_t rows = static_cast<size_t>(n) * hidden();
  RLT_CHECK(state.h_pi.size() >= rows);
  StepLstm(actor_, step_pi_ws_, obs, n, episode_starts, state.h_pi.data(), state.c_pi.data());
  if (!shared()) {
    StepLstm(critic_, step_vf_ws_, obs, n, episode_starts, state.h_vf.data(), state.c_vf.data());
  }
  mlp_.SampleActions(state.h_pi.data(), n, rng, deterministic, actions, log_probs, rng_per_row);
  mlp_.PredictValuesConcurrent(shared() ? state.h_pi.data() : state.h_vf.data(), n, values);
}

void RecurrentActorCritic::Act(WorkerPool& pool, const float* obs, int n,
                               const float* episode_starts, RecurrentState& state, Rng* rng,
                               bool deterministic, float* actions, float* values, float* log_probs,
                               bool rng_per_row) {
  if (pool.num_workers() < 2 || shared()) {
    Act(obs, n, episode_starts, state, rng, deterministic, actions, values, log_probs, rng_per_row);
    return;
  }
  RLT_CHECK(state.h_pi.size() >= static_cast<size_t>(n) * hidden());
  pool.Run([&](int w) {
    if (w == 0) {
      StepLstm(actor_, step_pi_ws_, obs, n, episode_starts, state.h_pi.data(), state.c_pi.data());
      mlp_.SampleActions(state.h_pi.data(), n, rng, deterministic, actions, log_probs, rng_per_row);
    } else if (w == 1) {
      StepLstm(critic_, step_vf_ws_, obs, n, episode_starts, state.h_vf.data(), state.c_vf.data());
      mlp_.PredictValuesConcurrent(state.h_vf.data(), n, values);
    }
  });
}

void RecurrentActorCritic::PredictValues(const float* obs, int k, const float* h, const float* c,
                                         const float* reset, float* values) {
  const size_t rows = static_cast<size_t>(k) * hidden();
  Reserve(value_h_, rows);
  Reserve(value_c_, rows);
  std::copy(h, h + rows, value_h_.begin());
  std::copy(c, c + rows, value_c_.begin());
  const Lstm& lstm = shared() ? actor_ : critic_;
  StepLstm(lstm, value_ws_, obs, k, reset, value_h_.data(), value_c_.data());
  mlp_.PredictValues(value_h_.data(), k, values);
}

void RecurrentActorCritic::EvaluateActor(RecurrentWorkspace& ws, const float* obs,
                                         const float* episode_starts, const float* h0,
                                         const float* c0, const float* actions, float* log_probs,
                                         float* entropy) {
  const int rows = ws.steps * ws.batch;
  Reserve(ws.pi_out, static_cast<size_t>(rows) * hidden());
  actor_.Forward(ws.pi_lstm, obs, ws.steps, ws.batch, h0, c0, episode_starts, ws.pi_out.data(),
                 nullptr, nullptr);
  mlp_.EvaluatePolicy(ws.pi_head, ws.pi_out.data(), actions, rows, log_probs, entropy);
}

void RecurrentActorCritic::EvaluateCritic(RecurrentWorkspace& ws, const float* obs,
                                          const float* episode_starts, const float* h0,
                                          const float* c0, float* values) {
  const int rows = ws.steps * ws.batch;
  if (!shared()) {
    Reserve(ws.vf_out, static_cast<size_t>(rows) * hidden());
    critic_.Forward(ws.vf_lstm, obs, ws.steps, ws.batch, h0, c0, episode_starts, ws.vf_out.data(),
                    nullptr, nullptr);
  }
  mlp_.EvaluateValue(ws.vf_head, shared() ? ws.pi_out.data() : ws.vf_out.data(), rows, values);
}

void RecurrentActorCritic::Evaluate(RecurrentWorkspace& ws, const float* obs,
                                    const float* episode_starts, int steps, int batch,
                                    const float* h0_pi, const float* c0_pi, const float* h0_vf,
                                    const float* c0_vf, const float* actions, float* values,
                                    float* log_probs, float* entropy, WorkerPool* pool) {
  RLT_CHECK(steps >= 1 && batch >= 1);
  ws.steps = steps;
  ws.batch = batch;
  if (pool != nullptr && pool->num_workers() >= 2 && !shared()) {
    pool->Run([&](int w) {
      if (w == 0) EvaluateActor(ws, obs, episode_starts, h0_pi, c0_pi, actions, log_probs, entropy);
      if (w == 1) EvaluateCritic(ws, obs, episode_starts, h0_vf, c0_vf, values);
    });
    return;
  }
  EvaluateActor(ws, obs, episode_starts, h0_pi, c0_pi, actions, log_probs, entropy);
  EvaluateCritic(ws, obs, episode_starts, h0_vf, c0_vf, values);
}

void RecurrentActorCritic::BackwardActor(RecurrentWorkspace& ws, const float* d_log_probs,
                                         const float* d_entropy, const std::vector<float*>& grads) {
  const size_t n = static_cast<size_t>(ws.steps) * ws.batch * hidden();
  Reserve(ws.d_pi, n);
  float* mlp_grads = grads[num_groups() - 1];
  mlp_.BackwardPolicy(ws.pi_head, d_log_probs, d_entropy, mlp_grads, ws.d_pi.data());
  if (shared()) return;  // the shared LSTM's backward waits for the critic's d_vf
  actor_.Backward(ws.pi_lstm, ws.d_pi.data(), nullptr, nullptr, nullptr, nullptr, nullptr,
                  grads[0]);
}

void RecurrentActorCritic::BackwardCritic(RecurrentWorkspace& ws, const float* d_values,
                                          const std::vector<float*>& grads) {
  const size_t n = static_cast<size_t>(ws.steps) * ws.batch * hidden();
  Reserve(ws.d_vf, n);
  float* mlp_grads = grads[num_groups() - 1];
  mlp_.BackwardValue(ws.vf_head, d_values, mlp_grads, ws.d_vf.data());
  if (shared()) return;
  critic_.Backward(ws.vf_lstm, ws.d_vf.data(), nullptr, nullptr, nullptr, nullptr, nullptr,
                   grads[1]);
}

void RecurrentActorCritic::Backward(RecurrentWorkspace& ws, const float* d_values,
                                    const float* d_log_probs, const float* d_entropy,
                                    const std::vector<float*>& grads, WorkerPool* pool) {
  RLT_CHECK(static_cast<int>(grads.size()) == num_groups());
  if (pool != nullptr && pool->num_workers() >= 2 && !shared()) {
    pool->Run([&](int w) {
      if (w == 0) BackwardActor(ws, d_log_probs, d_entropy, grads);
      if (w == 1) BackwardCritic(ws, d_values, grads);
    });
    return;
  }
  BackwardActor(ws, d_log_probs, d_entropy, grads);
  BackwardCritic(ws, d_values, grads);
  if (shared()) {
    const size_t n = static_cast<size_t>(ws.steps) * ws.batch * hidden();
    for (size_t k = 0; k < n; ++k) ws.d_pi[k] += ws.d_vf[k];
    actor_.Backward(ws.pi_lstm, ws.d_pi.data(), nullptr, nullptr, nullptr, nullptr, nullptr,
                    grads[0]);
  }
}

}  // namespace rlt::native
