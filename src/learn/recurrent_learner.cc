// rltrade learn: RecurrentLearner implementation (see recurrent_learner.h).
#include "learn/recurrent_learner.h"

#include <algorithm>
#include <cmath>

#include "learn/trainer.h"
#include "native/ppo_loss.h"

namespace rlt::learn {
namespace {

// A stream distinct from the environments' and from NativeLearner's.
uint64_t LearnerSeed(uint64_t seed) { return seed * 0xD1B54A32D192ED03ULL + 0x524E4E4C53ULL; }

}  // namespace

Status ValidateRecurrentPpo(const PolicyOptions& policy, const PpoOptions& ppo) {
  if (!policy.is_recurrent()) return Status::Ok();
  const int L = ppo.sequence_length;
  if (L < 1 || L > ppo.n_steps || ppo.n_steps % L != 0) {
    std::string divisors;
    for (int d : {8, 16, 32, 64, 128}) {
      if (d <= ppo.n_steps && ppo.n_steps % d == 0)
        divisors += (divisors.empty() ? "" : ", ") + std::to_string(d);
    }
    return Status::InvalidArgument("[algo] sequence_length = " + std::to_string(L) +
                                   " must divide [algo] n_steps = " + std::to_string(ppo.n_steps) +
                                   " (recurrent PPO trains on whole chunks of the rollout)" +
                                   (divisors.empty() ? "" : "; e.g. " + divisors));
  }
  if (ppo.batch_size % L != 0) {
    return Status::InvalidArgument(
        "[algo] batch_size = " + std::to_string(ppo.batch_size) +
        " must be a multiple of [algo] sequence_length = " + std::to_string(L) +
        " (a recurrent minibatch is whole sequences); e.g. batch_size = " +
        std::to_string(std::max(1, ppo.batch_size / L) * L));
  }
  return Status::Ok();
}

native::RecurrentSpec MakeRecurrentSpec(int obs_dim, const env::ActionSpace& space,
                                        const PolicyOptions& o) {
  native::RecurrentSpec s;
  s.obs_dim = obs_dim;
  s.hidden = o.lstm_hidden_size;
  s.shared_lstm = o.shared_lstm;
  s.head.discrete = space.discrete;
  s.head.act_dim = space.discrete ? 1 : space.dim;
  s.head.num_outputs = space.discrete ? space.n : space.dim;
  s.head.pi = o.pi;
  s.head.vf = o.vf;
  s.head.activation =
      o.activation == "relu" ? native::Activation::kRelu : native::Activation::kTanh;
  s.head.log_std_init = o.log_std_init;
  s.head.ortho_init = o.ortho_init;
  return s;
}

std::vector<std::string> RecurrentParamNames(const native::RecurrentActorCritic& net) {
  std::vector<std::string> names;
  for (int g = 0; g < net.num_groups(); ++g) {
    for (const native::ParamInfo& p : net.group_info(g))
      names.push_back(net.group_prefix(g) + p.name);
  }
  return names;
}

Result<std::unique_ptr<native::RecurrentActorCritic>> RecurrentNetFromParameters(
    const native::TensorFile& params, int obs_dim, const env::ActionSpace& space,
    const PolicyOptions& options, const std::string& origin) {
  RLT_CHECK(options.is_recurrent());
  auto net = std::make_unique<native::RecurrentActorCritic>(
      MakeRecurrentSpec(obs_dim, space, options), /*seed=*/0);
  std::vector<std::pair<const native::NamedTensor*, float*>> found;
  for (int g = 0; g < net->num_groups(); ++g) {
    for (const native::ParamInfo& p : net->group_info(g)) {
      RLT_ASSIGN_OR_RETURN(
          const native::NamedTensor* t,
          params.Get(net->group_prefix(g) + p.name, native::DType::kFloat32, p.shape, origin));
      found.emplace_back(t, net->group_params(g).data() + p.offset);
    }
  }
  for (const auto& [t, out] : found) std::copy(t->f32.begin(), t->f32.end(), out);
  return net;
}

RecurrentLearner::RecurrentLearner(int obs_dim, const env::ActionSpace& space,
                                   const PolicyOptions& options, const PpoOptions& ppo,
                                   int num_envs, uint64_t seed, int threads)
    : net_(MakeRecurrentSpec(obs_dim, space, options), seed),
      rng_(LearnerSeed(seed)),
      num_envs_(num_envs),
      n_steps_(ppo.n_steps),
      seq_len_(ppo.sequence_length),
      hidden_(options.lstm_hidden_size) {
  RLT_CHECK(options.is_recurrent() && ValidateRecurrentPpo(options, ppo).ok() && threads >= 1);
  int64_t total = 0;
  for (int g = 0; g < net_.num_groups(); ++g) {
    const int64_t n = static_cast<int64_t>(net_.group_params(g).size());
    adam_.emplace_back(n, native::AdamOptions{});
    group_offset_.push_back(total);
    total += n;
  }
  group_offset_.push_back(total);
  grads_.assign(total, 0.0f);
  for (int g = 0; g < net_.num_groups(); ++g)
    grad_ptrs_.push_back(grads_.data() + group_offset_[g]);
  if (threads >= 2 && !net_.shared()) {
    pool_ = std::make_unique<WorkerPool>(2);
    SetBlasThreads(1);
  }
  state_.Resize(num_envs, hidden_, net_.shared());
  chunk_state_.resize(n_steps_ / seq_len_);
  for (auto& s : chunk_state_) s.Resize(num_envs, hidden_, net_.shared());
}

NativeParamResolver RecurrentLearner::Resolver() const {
  auto* self = const_cast<RecurrentLearner*>(this);
  return [self](const std::string& name) {
    NativeParamSlot slot;
    int g = 0;
    const native::ParamInfo* p = nullptr;
    if (!self->net_.FindParam(name, &g, &p)) return slot;
    slot.param = self->net_.group_params(g).data() + p->offset;
    slot.exp_avg = self->adam_[g].exp_avg().data() + p->offset;
    slot.exp_avg_sq = self->adam_[g].exp_avg_sq().data() + p->offset;
    slot.shape = p->shape;
    slot.size = p->size;
    return slot;
  };
}

void RecurrentLearner::Act(int t, const float* obs, int n, const float* episode_starts,
                           float* actions, float* values, float* log_probs) {
  RLT_CHECK(n == num_envs_ && t >= 0 && t < n_steps_);
  if (t % seq_len_ == 0) chunk_state_[t / seq_len_] = state_;
  const bool per_env = data_parallel().has_value();
  Rng* rng = per_env ? ActStreams(n) : &rng_;
  if (pool_) {
    net_.Act(*pool_, obs, n, episode_starts, state_, rng, /*deterministic=*/false, actions, values,
             log_probs, per_env);
  } else {
    net_.Act(obs, n, episode_starts, state_, rng, /*deterministic=*/false, actions, values,
             log_probs, per_env);
  }
}

void RecurrentLearner::PredictValues(const float* obs, const int* envs, int k, const float* reset,
                                     float* values) {
  const size_t H = hidden_;
  scratch_h_.resize(k * H);
  scratch_c_.resize(k * H);
  const std::vector<float>& h = net_.shared() ? state_.h_pi : state_.h_vf;
  const std::vector<float>& c = net_.shared() ? state_.c_pi : state_.c_vf;
  for (int j = 0; j < k; ++j) {
    const int i = envs == nullptr ? j : envs[j];
    std::copy_n(h.data() + i * H, H, scratch_h_.data() + j * H);
    std::copy_n(c.data() + i * H, H, scratch_c_.data() + j * H);
  }
  net_.PredictValues(obs, k, scratch_h_.data(), scratch_c_.data(), reset, values);
}

void RecurrentLearner::Gather(RolloutBuffer& buffer, int64_t first, int m) {
  const int obs_dim = net_.spec().obs_dim, act_dim = net_.act_dim();
  const int64_t N = num_envs_;
  const size_t H = hidden_;
  const float* obs = buffer.flat_obs();
  const float* actions = buffer.flat_actions();
  const float* starts = buffer.episode_starts(0);
  const float* old_values = buffer.flat_values();
  const float* old_log_probs = buffer.flat_log_probs();
  const float* advantages = buffer.flat_advantages();
  const float* returns = buffer.flat_returns();
  for (int s = 0; s < m; ++s) {
    const int64_t q = perm_[first + s];
    const int64_t chunk = q / N, env = q % N;
    const native::RecurrentState& init = chunk_state_[chunk];
    std::copy_n(init.h_pi.data() + env * H, H, mb_h_pi_.data() + s * H);
    std::copy_n(init.c_pi.data() + env * H, H, mb_c_pi_.data() + s * H);
    if (!net_.shared()) {
      std::copy_n(init.h_vf.data() + env * H, H, mb_h_vf_.data() + s * H);
      std::copy_n(init.c_vf.data() + env * H, H, mb_c_vf_.data() + s * H);
    }
    for (int t = 0; t < seq_len_; ++t) {
      const int64_t src = (chunk * seq_len_ + t) * N + env;  // buffer row (step, env)
      const int64_t dst = static_cast<int64_t>(t) * m + s;   // minibatch row (t, sequence)
      std::copy_n(obs + src * obs_dim, obs_dim, mb_obs_.data() + dst * obs_dim);
      std::copy_n(actions + src * act_dim, act_dim, mb_actions_.data() + dst * act_dim);
      mb_starts_[dst] = starts[src];
      mb_values_[dst] = old_values[src];
      mb_log_probs_[dst] = old_log_probs[src];
      mb_advantages_[dst] = advantages[src];
      mb_returns_[dst] = returns[src];
    }
  }
}

void RecurrentLearner::ClipAndStep(double max_grad_norm) {
  // native::ClipGradNorm's rule over all groups together (each group's sum of squares,
  // added in group order), then Adam per group. With two workers the actor LSTM's group
  // runs on worker 0 and the others on worker 1; the sums and the element-wise steps are
  // the serial ones, so the result does not depend on the thread count.
  const int groups = net_.num_groups();
  std::vector<double>& ss = group_sum_squares_;
  ss.assign(groups, 0.0);
  auto size = [&](int g) { return group_offset_[g + 1] - group_offset_[g]; };
  auto sum_squares = [&](int g) { ss[g] = native::SumOfSquares(grad_ptrs_[g], size(g)); };
  auto step = [&](int g, float c) {
    if (c < 1.0f) native::Scale(grad_ptrs_[g], size(g), c);
    adam_[g].Step(net_.group_params(g).data(), grad_ptrs_[g]);
  };
  auto worker_groups = [&](int w, const auto& fn) {
    for (int g = 0; g < groups; ++g) {
      if ((g == 0) == (w == 0)) fn(g);
    }
  };
  if (pool_) {
    pool_->Run([&](int w) { worker_groups(w, sum_squares); });
  } else {
    for (int g = 0; g < groups; ++g) sum_squares(g);
  }
  double total = 0.0;
  for (double part : ss) total += part;
  const double coef = max_grad_norm / (std::sqrt(total) + 1e-6);
  const float c = coef < 1.0 ? static_cast<float>(coef) : 1.0f;
  if (pool_) {
    pool_->Run([&](int w) { worker_groups(w, [&](int g) { step(g, c); }); });
  } else {
    for (int g = 0; g < groups; ++g) step(g, c);
  }
}

UpdateStats RecurrentLearner::Update(RolloutBuffer& buffer, const PpoOptions& o,
                                     const PpoLossSettings& s, double lr, UpdateTiming* timing) {
  RLT_CHECK(buffer.n_steps() == n_steps_ && buffer.n_envs() == num_envs_);
  for (auto& a : adam_) a.set_lr(lr);
  const int chunks = n_steps_ / seq_len_;
  int per_batch = std::max(1, o.batch_size / seq_len_);
  int per_env = 0;  // data-parallel: each environment's chunks per minibatch
  if (const auto& dp = data_parallel()) {
    const int64_t seqs = std::min<int64_t>(per_batch, int64_t{chunks} * dp->global_envs);
    per_env = static_cast<int>(seqs / dp->global_envs);
    RLT_CHECK(per_env >= 1 && chunks % per_env == 0);
    per_batch = per_env * num_envs_;
  }
  const size_t rows = static_cast<size_t>(per_batch) * seq_len_;
  const size_t H = hidden_;
  mb_obs_.resize(rows * net_.spec().obs_dim);
  mb_actions_.resize(rows * net_.act_dim());
  for (auto* v : {&mb_starts_, &mb_values_, &mb_log_probs_, &mb_advantages_, &mb_returns_, &values_,
                  &log_probs_, &entropy_, &d_values_, &d_log_probs_, &d_entropy_}) {
    v->resize(rows);
  }
  for (auto* v : {&mb_h_pi_, &mb_c_pi_, &mb_h_vf_, &mb_c_vf_}) v->resize(per_batch * H);
  const PpoMinibatchBuffers buffers{values_.data(),     log_probs_.data(),    entropy_.data(),
                                    mb_values_.data(),  mb_log_probs_.data(), mb_advantages_.data(),
                                    mb_returns_.data(), d_values_.data(),     d_log_probs_.data(),
                                    d_entropy_.data()};
  auto forward = [&](int64_t first, int m) {
    Gather(buffer, first, m);
    net_.Evaluate(ws_, mb_obs_.data(), mb_starts_.data(), seq_len_, m, mb_h_pi_.data(),
                  mb_c_pi_.data(), mb_h_vf_.data(), mb_c_vf_.data(), mb_actions_.data(),
                  values_.data(), log_probs_.data(), entropy_.data(), pool_.get());
    return m * seq_len_;
  };
  auto backward = [&] {
    std::fill(grads_.begin(), grads_.end(), 0.0f);
    net_.Backward(ws_, d_values_.data(), d_log_probs_.data(), d_entropy_.data(), grad_ptrs_,
                  pool_.get());
  };
  auto step = [&] { ClipAndStep(o.max_grad_norm); };
  if (const auto& dp = data_parallel()) {
    // One flat sum over every parameter group's gradients (grads_ holds them end to end).
    auto sum_gradients = [&] {
      dp->collective->SumFloats(grads_.data(), static_cast<int64_t>(grads_.size()),
                                "the gradient sum");
    };
    return RunSharedPpoEpochs(o, s, *dp, update_index(), num_envs_, chunks, per_env, perm_, buffers,
                              forward, backward, sum_gradients, step, timing);
  }
  const int64_t sequences = static_cast<int64_t>(num_envs_) * chunks;
  return RunPpoEpochs(o, s, sequences, per_batch, rng_, perm_, buffers, forward, backward, step,
                      timing);
}

LearnerState RecurrentLearner::ExportState() const {
  return ExportSlots(RecurrentParamNames(net_), Resolver(), adam_[0].step(), adam_[0].options().lr);
}

Status RecurrentLearner::ImportState(const LearnerState& s, const std::string& origin) {
  RLT_RETURN_IF_ERROR(ImportSlots(RecurrentParamNames(net_), Resolver(), s, origin));
  for (auto& a : adam_) {
    a.set_step(s.adam_step);
    a.set_lr(s.lr);
  }
  return Status::Ok();
}

Status RecurrentLearner::SetRngWords(const std::vector<int64_t>& words, const std::string& origin) {
  RLT_ASSIGN_OR_RETURN(const RngState r, RngStateFromWords(words, origin));
  rng_.set_state(r);
  return Status::Ok();
}

double RecurrentLearner::MeanStd() const {
  int g = 0;
  const native::ParamInfo* p = nullptr;
  if (!net_.FindParam("log_std", &g, &p)) return 0.0;
  const float* v = net_.group_params(g).data() + p->offset;
  double s = 0;
  for (int64_t k = 0; k < p->size; ++k) s += std::exp(double{v[k]});
  return s / static_cast<double>(p->size);
}

std::string RecurrentLearner::FirstNonFinite(bool grads) const {
  for (int g = 0; g < net_.num_groups(); ++g) {
    const float* v = grads ? grad_ptrs_[g] : net_.group_params(g).data();
    for (const native::ParamInfo& p : net_.group_info(g)) {
      for (int64_t k = 0; k < p.size; ++k) {
        if (!std::isfinite(v[p.offset + k])) return net_.group_prefix(g) + p.name;
      }
    }
  }
  return "";
}

uint64_t RecurrentLearner::ParamHash() const {
  uint64_t h = kFnvOffset;
  for (int g = 0; g < net_.num_groups(); ++g) {
    h = HashFloats(h, net_.group_params(g).data(), net_.group_params(g).size());
  }
  return h;
}

void RecurrentLearner::PoisonFirstParameter() {
  const native::ParamInfo& first = net_.group_info(0).front();
  std::fill_n(net_.group_params(0).begin() + first.offset, first.size, NAN);
}

std::vector<float> RecurrentLearner::RecurrentStates() const {
  std::vector<float> out;
  for (const auto* v : {&state_.h_pi, &state_.c_pi, &state_.h_vf, &state_.c_vf}) {
    out.insert(out.end(), v->begin(), v->end());
  }
  return out;
}

Status RecurrentLearner::SetRecurrentStates(const std::vector<float>& states) {
  const size_t per = static_cast<size_t>(num_envs_) * hidden_;
  const size_t expected = per * (net_.shared() ? 2 : 4);
  if (states.size() != expected) {
    return Status::DataError("recurrent state holds " + std::to_string(states.size()) +
                             " values, expected " + std::to_string(expected) + " (" +
                             std::to_string(num_envs_) + " envs x " + std::to_string(hidden_) +
                             " units); the checkpoint belongs to another policy shape");
  }
  for (float v : states) {
    if (!std::isfinite(v)) return Status::DataError("recurrent state holds NaN or inf values");
  }
  size_t at = 0;
  for (auto* v : {&state_.h_pi, &state_.c_pi, &state_.h_vf, &state_.c_vf}) {
    std::copy_n(states.begin() + at, v->size(), v->begin());
    at += v->size();
  }
  return Status::Ok();
}

}  // namespace rlt::learn
