// rltrade learn: NativeLearner implementation (see native_learner.h).
#include "learn/native_learner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "learn/recurrent_learner.h"
#include "learn/trainer.h"
#include "native/ppo_loss.h"

namespace rlt::learn {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

native::ActorCriticSpec NativeSpec(int obs_dim, const env::ActionSpace& space,
                                   const PolicyOptions& o) {
  native::ActorCriticSpec s;
  s.obs_dim = obs_dim;
  s.discrete = space.discrete;
  s.act_dim = space.discrete ? 1 : space.dim;
  s.num_outputs = space.discrete ? space.n : space.dim;
  s.pi = o.pi;
  s.vf = o.vf;
  s.activation = o.activation == "relu" ? native::Activation::kRelu : native::Activation::kTanh;
  s.log_std_init = o.log_std_init;
  s.ortho_init = o.ortho_init;
  return s;
}

namespace {

// A stream distinct from the environments' (env i is seeded seed + i).
uint64_t LearnerSeed(uint64_t seed) { return seed * 0x9E3779B97F4A7C15ULL + 0x6E617469766543ULL; }

// The rollout's flat (n_steps * n_envs, ...) arrays a minibatch is gathered from.
struct FlatRollout {
  const float *obs, *actions, *old_values, *old_log_probs, *advantages, *returns;
};
FlatRollout FlatArrays(RolloutBuffer& buffer) {
  return {buffer.flat_obs(),       buffer.flat_actions(),    buffer.flat_values(),
          buffer.flat_log_probs(), buffer.flat_advantages(), buffer.flat_returns()};
}

}  // namespace

Result<std::unique_ptr<native::ActorCritic>> NativeNetFromParameters(
    const native::TensorFile& params, int obs_dim, const env::ActionSpace& space,
    const PolicyOptions& options, const std::string& origin) {
  RLT_CHECK(NativeSupports(options));
  auto net = std::make_unique<native::ActorCritic>(NativeSpec(obs_dim, space, options), /*seed=*/0);
  RLT_RETURN_IF_ERROR(net->LoadParameters(params, origin));
  return net;
}

bool NativeSupports(const PolicyOptions& options) {
  PolicyOptions o = options;
  o.backend = "native";  // which engine trained it does not matter to the network
  return ValidatePolicyOptions(o).ok();
}

NativeLearner::NativeLearner(int obs_dim, const env::ActionSpace& space,
                             const PolicyOptions& options, uint64_t seed, int threads)
    : net_(NativeSpec(obs_dim, space, options), seed),
      adam_(net_.num_params(), native::AdamOptions{}),
      rng_(LearnerSeed(seed)),
      grads_(net_.num_params(), 0.0f) {
  RLT_CHECK(threads >= 1);
  if (threads > 1) {
    pool_ = std::make_unique<WorkerPool>(threads);
    shard_ws_.resize(threads);
    shard_grads_.assign(threads, std::vector<float>(net_.num_params(), 0.0f));
    sum_squares_.assign(threads, 0.0);
    SetBlasThreads(1);
  }
}

void NativeLearner::Act(const float* obs, int n, float* actions, float* values, float* log_probs) {
  if (data_parallel()) {
    Rng* streams = ActStreams(n);
    if (pool_) {
      net_.Act(*pool_, obs, n, streams, false, actions, values, log_probs, true);
    } else {
      net_.Act(obs, n, streams, false, actions, values, log_probs, true);
    }
    return;
  }
  if (pool_) {
    net_.Act(*pool_, obs, n, &rng_, /*deterministic=*/false, actions, values, log_probs);
  } else {
    net_.Act(obs, n, &rng_, /*deterministic=*/false, actions, values, log_probs);
  }
}

void NativeLearner::PredictValues(const float* obs, int n, float* values) {
  net_.PredictValues(obs, n, values);
}

UpdateStats NativeLearner::Update(RolloutBuffer& buffer, const PpoOptions& o,
                                  const PpoLossSettings& s, double lr, UpdateTiming* timing) {
  adam_.set_lr(lr);
  const int64_t n = buffer.size();
  const std::optional<DataParallel>& dp = data_parallel();
  int per_env = 0;  // data-parallel: each environment's samples per minibatch
  int64_t rows = std::min<int64_t>(o.batch_size, n);
  if (dp) {
    const int64_t batch =
        std::min<int64_t>(o.batch_size, static_cast<int64_t>(buffer.n_steps()) * dp->global_envs);
    per_env = static_cast<int>(batch / dp->global_envs);
    RLT_CHECK(per_env >= 1 && buffer.n_steps() % per_env == 0);
    rows = static_cast<int64_t>(per_env) * buffer.n_envs();  // this member's share
  }
  const auto [obs, actions, old_values, old_log_probs, advantages, returns] = FlatArrays(buffer);
  SizeMinibatch(static_cast<size_t>(rows));
  const PpoMinibatchBuffers buffers{values_.data(),     log_probs_.data(),    entropy_.data(),
                                    mb_values_.data(),  mb_log_probs_.data(), mb_advantages_.data(),
                                    mb_returns_.data(), d_values_.data(),     d_log_probs_.data(),
                                    d_entropy_.data()};
  auto forward = [&](int64_t start, int b) {
    if (pool_) {
      ParallelForward(start, b, obs, actions, old_values, old_log_probs, advantages, returns);
    } else {
      Gather(start, 0, b, obs, actions, old_values, old_log_probs, advantages, returns);
      net_.Evaluate(ws_, mb_obs_.data(), mb_actions_.data(), b, values_.data(), log_probs_.data(),
                    entropy_.data());
    }
    last_batch_ = b;
    return b;
  };
  auto backward = [&] {
    if (pool_) {
      ParallelBackward(last_batch_);
    } else {
      std::fill(grads_.begin(), grads_.end(), 0.0f);
      net_.Backward(ws_, d_values_.data(), d_log_probs_.data(), d_entropy_.data(), grads_.data());
    }
  };
  auto serial_step = [&] {
    native::ClipGradNorm(grads_.data(), net_.num_params(), o.max_grad_norm);
    adam_.Step(net_.params().data(), grads_.data());
  };
  if (dp) {
    // The summed gradient's norm is the group's: clip and step after the sum, serially.
    auto sum_gradients = [&] {
      dp->collective->SumFloats(grads_.data(), static_cast<int64_t>(grads_.size()),
                                "the gradient sum");
    };
    return RunSharedPpoEpochs(o, s, *dp, update_index(), buffer.n_envs(), buffer.n_steps(), per_env,
                              perm_, buffers, forward, backward, sum_gradients, serial_step,
                              timing);
  }
  auto step = [&] {
    if (pool_) {
      ParallelStep(o.max_grad_norm);
    } else {
      serial_step();
    }
  };
  return RunPpoEpochs(o, s, n, o.batch_size, rng_, perm_, buffers, forward, backward, step, timing);
}

uint64_t StreamSeed(uint64_t seed, uint64_t kind, uint64_t a, uint64_t b, uint64_t c) {
  // SplitMix64's finaliser over the coordinates in turn: distinct coordinates give
  // unrelated seeds (Rng::Seed expands the result with SplitMix64 again).
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  uint64_t h = mix(seed + 0x9e3779b97f4a7c15ULL);
  for (uint64_t v : {kind, a, b, c}) h = mix(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
  return h;
}

Status ValidateDataParallel(const PpoOptions& o, const PolicyOptions& policy, int num_envs,
                            int members) {
  const int64_t global = static_cast<int64_t>(num_envs) * members;
  if (policy.is_recurrent()) {
    // Minibatches of whole sequences: the same number of chunks from every environment.
    RLT_RETURN_IF_ERROR(ValidateRecurrentPpo(policy, o));
    const int L = o.sequence_length, chunks = o.n_steps / L;
    const int64_t seqs = std::min<int64_t>(o.batch_size / L, int64_t{chunks} * global);
    if (seqs % global != 0 || chunks % (seqs / global) != 0) {
      int per_env = static_cast<int>(std::max<int64_t>(1, seqs / global));
      while (chunks % per_env != 0) ++per_env;
      return Status::InvalidArgument(fmt::format(
          "[algo] batch_size = {}: data-parallel training of a recurrent policy takes the same "
          "number of sequences ({} steps each, algo.sequence_length) from every environment "
          "into each minibatch, so batch_size / sequence_length = {} must be a multiple of "
          "env.num_envs x ranks = {} x {} = {}, and the quotient must divide the {} chunks of "
          "algo.n_steps = {}; e.g. batch_size = {}",
          o.batch_size, L, o.batch_size / L, num_envs, members, global, chunks, o.n_steps,
          global * per_env * L));
    }
    return Status::Ok();
  }
  if (policy.backend != "native") {
    return Status::InvalidArgument(
        "data-parallel training (mpirun -np K rltrade train) runs on the native backend; set "
        "[policy] backend = \"native\" (--set policy.backend=native)");
  }
  const int64_t batch = std::min<int64_t>(o.batch_size, static_cast<int64_t>(o.n_steps) * global);
  if (batch % global != 0 || o.n_steps % (batch / global) != 0) {
    int per_env = static_cast<int>(std::max<int64_t>(1, batch / global));
    while (o.n_steps % per_env != 0) ++per_env;
    return Status::InvalidArgument(fmt::format(
        "[algo] batch_size = {}: data-parallel training takes the same number of samples from "
        "every environment into each minibatch, so batch_size must be a multiple of "
        "env.num_envs x ranks = {} x {} = {}, and batch_size / {} must divide algo.n_steps = "
        "{}; e.g. batch_size = {}",
        o.batch_size, num_envs, members, global, global, o.n_steps, global * per_env));
  }
  return Status::Ok();
}

void NativeLearner::SizeMinibatch(size_t rows) {
  mb_obs_.resize(rows * net_.spec().obs_dim);
  mb_actions_.resize(rows * net_.spec().act_dim);
  for (auto* v : {&mb_values_, &mb_log_probs_, &mb_advantages_, &mb_returns_, &values_, &log_probs_,
                  &entropy_, &d_values_, &d_log_probs_, &d_entropy_}) {
    v->resize(rows);
  }
}

Rng* Learner::ActStreams(int n) {
  RLT_CHECK(dp_.has_value());
  act_rngs_.resize(n);
  for (int i = 0; i < n; ++i) {
    act_rngs_[i].Seed(StreamSeed(dp_->seed, 1, static_cast<uint64_t>(dp_->first_env + i),
                                 static_cast<uint64_t>(vector_step_), 0));
  }
  return act_rngs_.data();
}

uint64_t HashFloats(uint64_t h, const float* data, size_t n) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  for (size_t k = 0; k < n * sizeof(float); ++k) h = (h ^ bytes[k]) * 0x100000001b3ULL;
  return h;
}

uint64_t NativeLearner::ParamHash() const {
  return HashFloats(kFnvOffset, net_.params().data(), net_.params().size());
}

UpdateStats RunSharedPpoEpochs(const PpoOptions& o, const PpoLossSettings& s,
                               const DataParallel& dp, int64_t update, int n_envs, int units,
                               int per_env, std::vector<int64_t>& perm,
                               const PpoMinibatchBuffers& buf,
                               const std::function<int(int64_t first, int count)>& forward,
                               const std::function<void()>& backward,
                               const std::function<void()>& sum_gradients,
                               const std::function<void()>& step, UpdateTiming* timing) {
  RLT_CHECK(per_env >= 1 && units % per_env == 0);
  const int count = per_env * n_envs;  // this member's items of every minibatch
  const int minibatches = units / per_env;
  Collective& group = *dp.collective;
  double comm_seconds = 0;
  auto sum = [&](double* data, int n) {
    const auto c0 = Clock::now();
    group.SumDoubles(data, n, "the PPO loss sums");
    comm_seconds += Seconds(c0, Clock::now());
  };
  UpdateLossLog log;
  UpdateStats stats;
  perm.resize(static_cast<size_t>(units) * n_envs);
  std::vector<int64_t> env_perm(units);
  Rng shuffle;
  for (int epoch = 0; epoch < o.n_epochs && !stats.early_stopped; ++epoch) {
    ++stats.epochs;
    log.StartEpoch();
    // perm holds minibatch j's items at [j * count, (j + 1) * count), environment by
    // environment: item u * n_envs + i for the units u of environment i's j-th slice.
    for (int i = 0; i < n_envs; ++i) {
      shuffle.Seed(StreamSeed(dp.seed, 2, static_cast<uint64_t>(dp.first_env + i),
                              static_cast<uint64_t>(update), static_cast<uint64_t>(epoch)));
      for (int u = 0; u < units; ++u) env_perm[u] = u;
      for (int u = units - 1; u > 0; --u) {  // Fisher-Yates
        std::swap(env_perm[u], env_perm[static_cast<int64_t>(shuffle.UniformInt(u + 1))]);
      }
      for (int j = 0; j < minibatches; ++j) {
        for (int k = 0; k < per_env; ++k) {
          perm[static_cast<size_t>(j) * count + static_cast<size_t>(i) * per_env + k] =
              env_perm[static_cast<size_t>(j) * per_env + k] * n_envs + i;
        }
      }
    }
    for (int j = 0; j < minibatches; ++j) {
      const auto t0 = Clock::now();
      comm_seconds = 0;
      const int b = forward(static_cast<int64_t>(j) * count, count);
      const native::PpoLossTerms t =
          native::PpoLossShared(b,
                                {buf.values, buf.log_probs, buf.entropy, buf.old_values,
                                 buf.old_log_probs, buf.advantages, buf.returns},
                                s, buf.d_values, buf.d_log_probs, buf.d_entropy, sum);
      log.Add(t.policy_loss, t.value_loss, t.entropy_loss, t.clip_fraction, t.approx_kl);
      stats.loss = t.loss;
      const auto t1 = Clock::now();
      if (o.target_kl > 0 && t.approx_kl > 1.5 * o.target_kl) {
        stats.early_stopped = true;
        if (timing) {
          timing->forward += Seconds(t0, t1) - comm_seconds;
          timing->communicate += comm_seconds;
        }
        break;
      }
      backward();
      const auto t2 = Clock::now();
      sum_gradients();
      const auto t3 = Clock::now();
      step();
      ++stats.optimizer_steps;
      if (timing) {
        timing->forward += Seconds(t0, t1) - comm_seconds;
        timing->backward += Seconds(t1, t2);
        timing->communicate += comm_seconds + Seconds(t2, t3);
        timing->optimizer += Seconds(t3, Clock::now());
      }
    }
  }
  log.WriteMeans(&stats);
  return stats;
}

UpdateStats RunPpoEpochs(const PpoOptions& o, const PpoLossSettings& s, int64_t items,
                         int per_batch, Rng& rng, std::vector<int64_t>& perm,
                         const PpoMinibatchBuffers& buf,
                         const std::function<int(int64_t first, int count)>& forward,
                         const std::function<void()>& backward, const std::function<void()>& step,
                         UpdateTiming* timing) {
  UpdateLossLog log;
  UpdateStats stats;
  perm.resize(items);
  for (int epoch = 0; epoch < o.n_epochs && !stats.early_stopped; ++epoch) {
    ++stats.epochs;
    log.StartEpoch();
    for (int64_t k = 0; k < items; ++k) perm[k] = k;
    for (int64_t k = items - 1; k > 0; --k) {  // Fisher-Yates
      std::swap(perm[k], perm[static_cast<int64_t>(rng.UniformInt(k + 1))]);
    }
    for (int64_t first = 0; first < items; first += per_batch) {
      const auto t0 = Clock::now();
      const int b = forward(first, static_cast<int>(std::min<int64_t>(per_batch, items - first)));
      const native::PpoLossTerms t =
          native::PpoLoss(b,
                          {buf.values, buf.log_probs, buf.entropy, buf.old_values,
                           buf.old_log_probs, buf.advantages, buf.returns},
                          s, buf.d_values, buf.d_log_probs, buf.d_entropy);
      log.Add(t.policy_loss, t.value_loss, t.entropy_loss, t.clip_fraction, t.approx_kl);
      stats.loss = t.loss;
      const auto t1 = Clock::now();
      if (timing) timing->forward += Seconds(t0, t1);
      if (o.target_kl > 0 && t.approx_kl > 1.5 * o.target_kl) {
        stats.early_stopped = true;
        break;
      }
      backward();
      const auto t2 = Clock::now();
      step();
      ++stats.optimizer_steps;
      if (timing) {
        timing->backward += Seconds(t1, t2);
        timing->optimizer += Seconds(t2, Clock::now());
      }
    }
  }
  log.WriteMeans(&stats);
  return stats;
}

void NativeLearner::Gather(int64_t start, int lo, int hi, const float* obs, const float* actions,
                           const float* old_values, const float* old_log_probs,
                           const float* advantages, const float* returns) {
  const int obs_dim = net_.spec().obs_dim, act_dim = net_.spec().act_dim;
  for (int i = lo; i < hi; ++i) {
    const int64_t j = perm_[start + i];
    std::copy_n(obs + j * obs_dim, obs_dim, mb_obs_.data() + static_cast<size_t>(i) * obs_dim);
    std::copy_n(actions + j * act_dim, act_dim,
                mb_actions_.data() + static_cast<size_t>(i) * act_dim);
    mb_values_[i] = old_values[j];
    mb_log_probs_[i] = old_log_probs[j];
    mb_advantages_[i] = advantages[j];
    mb_returns_[i] = returns[j];
  }
}

void NativeLearner::ParallelForward(int64_t start, int b, const float* obs, const float* actions,
                                    const float* old_values, const float* old_log_probs,
                                    const float* advantages, const float* returns) {
  const int workers = pool_->num_workers();
  const int obs_dim = net_.spec().obs_dim, act_dim = net_.spec().act_dim;
  pool_->Run([&](int w) {
    const auto [lo, hi] = WorkerPool::Slice(b, workers, w);
    if (lo == hi) return;
    Gather(start, lo, hi, obs, actions, old_values, old_log_probs, advantages, returns);
    net_.Evaluate(shard_ws_[w], mb_obs_.data() + static_cast<size_t>(lo) * obs_dim,
                  mb_actions_.data() + static_cast<size_t>(lo) * act_dim, hi - lo,
                  values_.data() + lo, log_probs_.data() + lo, entropy_.data() + lo);
  });
}

void NativeLearner::ParallelBackward(int b) {
  const int workers = pool_->num_workers();
  pool_->Run([&](int w) {
    std::vector<float>& g = shard_grads_[w];
    std::fill(g.begin(), g.end(), 0.0f);
    const auto [lo, hi] = WorkerPool::Slice(b, workers, w);
    if (lo == hi) return;
    net_.Backward(shard_ws_[w], d_values_.data() + lo, d_log_probs_.data() + lo,
                  d_entropy_.data() + lo, g.data());
  });
  // Sum in worker order (fixed), split over the workers by parameter ranges, with each
  // range's sum of squares for the clipping norm.
  const int64_t p = net_.num_params();
  pool_->Run([&](int w) {
    const auto [lo, hi] = WorkerPool::Slice(static_cast<int>(p), workers, w);
    double ss = 0.0;
    for (int64_t k = lo; k < hi; ++k) {
      float sum = shard_grads_[0][k];
      for (int v = 1; v < workers; ++v) sum += shard_grads_[v][k];
      grads_[k] = sum;
      ss += static_cast<double>(sum) * sum;
    }
    sum_squares_[w] = ss;
  });
}

void NativeLearner::ParallelStep(double max_grad_norm) {
  // ClipGradNorm's rule (native/adam.h) with the norm from the ranges' sums of squares,
  // added in worker order; then Adam element-wise on the same ranges.
  double ss = 0.0;
  for (double part : sum_squares_) ss += part;
  const double coef = max_grad_norm / (std::sqrt(ss) + 1e-6);
  const float c = static_cast<float>(coef);
  adam_.Advance();
  const int workers = pool_->num_workers();
  const int64_t p = net_.num_params();
  pool_->Run([&](int w) {
    const auto [lo, hi] = WorkerPool::Slice(static_cast<int>(p), workers, w);
    if (coef < 1.0) {
      for (int64_t k = lo; k < hi; ++k) grads_[k] *= c;
    }
    adam_.StepRange(net_.params().data(), grads_.data(), lo, hi);
  });
}

std::vector<int64_t> RngStateWords(const RngState& r) {
  std::vector<int64_t> words(6);
  for (int i = 0; i < 4; ++i) std::memcpy(&words[i], &r.s[i], 8);
  std::memcpy(&words[4], &r.spare, 8);
  words[5] = r.has_spare;
  return words;
}

Result<RngState> RngStateFromWords(const std::vector<int64_t>& words, const std::string& origin) {
  if (words.size() != 6) {
    return Status::DataError(origin + ": the random stream's state has " +
                             std::to_string(words.size()) +
                             " words, expected 6 (a checkpoint of another backend?)");
  }
  RngState r;
  for (int i = 0; i < 4; ++i) std::memcpy(&r.s[i], &words[i], 8);
  std::memcpy(&r.spare, &words[4], 8);
  r.has_spare = words[5] != 0;
  return r;
}

LearnerState ExportSlots(const std::vector<std::string>& names, const NativeParamResolver& resolve,
                         int64_t adam_step, double lr) {
  LearnerState s;
  s.adam_step = adam_step;
  s.lr = lr;
  for (const std::string& name : names) {
    const NativeParamSlot p = resolve(name);
    RLT_CHECK_MSG(p.param != nullptr, "no native parameter " + name);
    s.params.AddFloat32(name, p.shape, p.param);
    if (adam_step > 0) {
      s.exp_avg.AddFloat32(name, p.shape, p.exp_avg);
      s.exp_avg_sq.AddFloat32(name, p.shape, p.exp_avg_sq);
    }
  }
  return s;
}

Status ImportSlots(const std::vector<std::string>& names, const NativeParamResolver& resolve,
                   const LearnerState& s, const std::string& origin) {
  struct Found {
    NativeParamSlot slot;
    const native::NamedTensor *param, *m, *v;
  };
  std::vector<Found> found;
  for (const std::string& name : names) {
    const NativeParamSlot p = resolve(name);
    RLT_CHECK_MSG(p.param != nullptr, "no native parameter " + name);
    Found f{p, nullptr, nullptr, nullptr};
    RLT_ASSIGN_OR_RETURN(f.param, s.params.Get(name, native::DType::kFloat32, p.shape, origin));
    if (s.adam_step > 0) {
      RLT_ASSIGN_OR_RETURN(
          f.m, s.exp_avg.Get(name, native::DType::kFloat32, p.shape, origin + " (Adam exp_avg)"));
      RLT_ASSIGN_OR_RETURN(f.v, s.exp_avg_sq.Get(name, native::DType::kFloat32, p.shape,
                                                 origin + " (Adam exp_avg_sq)"));
    }
    found.push_back(f);
  }
  for (const Found& f : found) {
    std::copy(f.param->f32.begin(), f.param->f32.end(), f.slot.param);
    if (f.m != nullptr) {
      std::copy(f.m->f32.begin(), f.m->f32.end(), f.slot.exp_avg);
      std::copy(f.v->f32.begin(), f.v->f32.end(), f.slot.exp_avg_sq);
    } else {
      std::fill(f.slot.exp_avg, f.slot.exp_avg + f.slot.size, 0.0f);
      std::fill(f.slot.exp_avg_sq, f.slot.exp_avg_sq + f.slot.size, 0.0f);
    }
  }
  return Status::Ok();
}

NativeParamResolver NativeLearner::Resolver() const {
  auto* self = const_cast<NativeLearner*>(this);
  return [self](const std::string& name) {
    NativeParamSlot slot;
    const native::ParamInfo* p = self->net_.FindParam(name);
    if (p == nullptr) return slot;
    slot.param = self->net_.params().data() + p->offset;
    slot.exp_avg = self->adam_.exp_avg().data() + p->offset;
    slot.exp_avg_sq = self->adam_.exp_avg_sq().data() + p->offset;
    slot.shape = p->shape;
    slot.size = p->size;
    return slot;
  };
}

std::vector<std::string> NativeLearner::ParamNames() const {
  std::vector<std::string> names;
  for (const native::ParamInfo& p : net_.param_info()) names.push_back(p.name);
  return names;
}

LearnerState NativeLearner::ExportState() const {
  return ExportSlots(ParamNames(), Resolver(), adam_.step(), adam_.options().lr);
}

Status NativeLearner::ImportState(const LearnerState& s, const std::string& origin) {
  RLT_RETURN_IF_ERROR(ImportSlots(ParamNames(), Resolver(), s, origin));
  adam_.set_step(s.adam_step);
  adam_.set_lr(s.lr);
  return Status::Ok();
}

Status NativeLearner::SetRngWords(const std::vector<int64_t>& words, const std::string& origin) {
  RLT_ASSIGN_OR_RETURN(const RngState r, RngStateFromWords(words, origin));
  rng_.set_state(r);
  return Status::Ok();
}

std::string NativeLearner::FirstNonFinite(bool grads) const {
  const std::vector<float>& v = grads ? grads_ : net_.params();
  for (const native::ParamInfo& p : net_.param_info()) {
    for (int64_t k = 0; k < p.size; ++k) {
      if (!std::isfinite(v[p.offset + k])) return p.name;
    }
  }
  return "";
}

void NativeLearner::PoisonFirstParameter() {
  const native::ParamInfo& first = net_.param_info().front();
  std::fill_n(net_.params().begin() + first.offset, first.size, NAN);
}

double NativeLearner::MeanStd() const {
  const native::ParamInfo* p = net_.FindParam("log_std");
  if (p == nullptr) return 0.0;
  double s = 0;
  for (int64_t k = 0; k < p->size; ++k) s += std::exp(double{net_.params()[p->offset + k]});
  return s / static_cast<double>(p->size);
}

}  // namespace rlt::learn
