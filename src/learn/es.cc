// rltrade learn: evolution strategies (see es.h).
#include "learn/es.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numeric>

#include "core/options.h"
#include "core/rng.h"
#include "core/state_io.h"
#include "learn/native_learner.h"
#include "native/layers.h"

namespace rlt::learn {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Exact sums: a double as a 128-bit fixed-point number with 40 fractional bits, so that
// sums over members are exact and the same in any grouping (one rank or many). A member's
// sum must stay below kFixedLimit in magnitude (2^60, about 1.2e18; 2^24 members of that
// size still fit).
using Fixed = __int128;
constexpr double kFixedScale = 0x1p40;
constexpr double kFixedLimit = 0x1p60;

bool ToFixed(double x, Fixed* out) {
  if (!(std::fabs(x) < kFixedLimit)) return false;
  const double y = std::nearbyint(std::fabs(x) * kFixedScale);  // an integer below 2^100
  const double hi = std::floor(y * 0x1p-64);
  const double lo = y - hi * 0x1p64;  // exact: an integer below 2^64 with <= 53 bits
  const Fixed magnitude = (static_cast<Fixed>(static_cast<uint64_t>(hi)) << 64) +
                          static_cast<Fixed>(static_cast<uint64_t>(lo));
  *out = x < 0 ? -magnitude : magnitude;
  return true;
}

double FromFixed(Fixed v) {
  const bool negative = v < 0;
  const unsigned __int128 magnitude =
      negative ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
  const double value = (static_cast<double>(static_cast<uint64_t>(magnitude >> 64)) * 0x1p64 +
                        static_cast<double>(static_cast<uint64_t>(magnitude))) /
                       kFixedScale;
  return negative ? -value : value;
}

constexpr const char* kStateMagic = "rltrade-es-state";
constexpr uint32_t kStateVersion = 1;
constexpr double kAdamBeta1 = 0.9, kAdamBeta2 = 0.999, kAdamEpsilon = 1e-8;

// The actor's Linear layers in order, as (weight, bias) of the native network: the pi
// hidden layers ("pi_net.<k>.weight", k ascending), then the action head.
std::vector<std::pair<const native::ParamInfo*, const native::ParamInfo*>> ActorLayers(
    const native::ActorCritic& net) {
  std::vector<std::pair<const native::ParamInfo*, const native::ParamInfo*>> layers;
  auto add = [&](const std::string& prefix) {
    const native::ParamInfo* w = net.FindParam(prefix + "weight");
    const native::ParamInfo* b = net.FindParam(prefix + "bias");
    RLT_CHECK_MSG(w != nullptr && b != nullptr && w->shape.size() == 2,
                  "the native actor has no layer " + prefix);
    layers.emplace_back(w, b);
  };
  for (const native::ParamInfo& p : net.param_info()) {
    const std::string& name = p.name;
    if (name.rfind("pi_net.", 0) == 0 && name.size() > 7 &&
        name.compare(name.size() - 7, 7, ".weight") == 0) {
      add(name.substr(0, name.size() - 6));
    }
  }
  add("action_net.");
  return layers;
}

}  // namespace

Status ValidateEsOptions(const EsOptions& o,
                         const std::function<std::string(const std::string&)>& place) {
  auto bad = [&](const std::string& key, const std::string& expected) {
    return Status::InvalidArgument((place ? place(key) : "[algo] " + key) + ": expected " +
                                   expected);
  };
  if (o.variant != "openai" && o.variant != "ars") return bad("variant", "\"openai\" or \"ars\"");
  if (o.population < 2 || o.population % 2 != 0 || o.population > (1 << 24)) {
    return bad("population", "an even number of members from 2 to 16777216 (mirrored pairs), got " +
                                 std::to_string(o.population));
  }
  if (!(o.sigma > 0) || !std::isfinite(o.sigma)) {
    return bad("sigma", "a positive perturbation standard deviation such as 0.02");
  }
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate)) {
    return bad("learning_rate", "a positive step size such as 0.01");
  }
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay)) {
    return bad("weight_decay", "a coefficient >= 0 such as 0.005");
  }
  if (o.top_directions < 0 || o.top_directions > o.population / 2) {
    return bad("top_directions", "0 (all) to population / 2 = " + std::to_string(o.population / 2) +
                                     " pairs, got " + std::to_string(o.top_directions));
  }
  if (o.episodes_per_member < 1 || o.episodes_per_member > 1000) {
    return bad("episodes_per_member", "1 to 1000");
  }
  if (!(o.clip_obs > 0)) return bad("clip_obs", "a positive clip such as 10");
  if (o.max_episode_steps < 1) return bad("max_episode_steps", "at least 1 step");
  if (o.noise_table_size < 1 || o.noise_table_size > (int64_t{1} << 31)) {
    return bad("noise_table_size", "1 to 2147483648 floats");
  }
  return Status::Ok();
}

std::vector<double> CentredRanks(const std::vector<double>& fitness) {
  const size_t n = fitness.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return fitness[a] < fitness[b]; });
  std::vector<double> ranks(n, 0.0);
  if (n < 2) return ranks;
  for (size_t r = 0; r < n; ++r) {
    ranks[order[r]] = static_cast<double>(r) / static_cast<double>(n - 1) - 0.5;
  }
  return ranks;
}

std::vector<float> EsNoiseTable(uint64_t seed, int64_t size) {
  std::vector<float> table(static_cast<size_t>(size));
  Rng rng(StreamSeed(seed, 20, 0, 0, 0));
  for (float& x : table) x = static_cast<float>(rng.Normal());
  return table;
}

int64_t EsNoiseOffset(uint64_t seed, int64_t generation, int64_t pair, int64_t n,
                      int64_t table_size) {
  Rng rng(StreamSeed(seed, 22, static_cast<uint64_t>(generation), static_cast<uint64_t>(pair), 0));
  return static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(table_size - n + 1)));
}

Result<std::unique_ptr<EsTrainer>> EsTrainer::Create(env::VecEnv& venv,
                                                     const PolicyOptions& policy_options,
                                                     const EsOptions& options, uint64_t seed,
                                                     int threads) {
  RLT_RETURN_IF_ERROR(ValidatePolicyOptions(policy_options));
  RLT_RETURN_IF_ERROR(ValidateEsOptions(options));
  if (policy_options.is_recurrent()) {
    return Status::InvalidArgument(
        "[algo] name = \"es\" searches MLP policies: set [policy] recurrent = \"none\" (or "
        "train the recurrent policy with PPO)");
  }
  RLT_RETURN_IF_ERROR(ValidateActionSpace(venv.spec()));
  std::unique_ptr<EsTrainer> t(new EsTrainer(venv, policy_options, options, seed, threads));
  if (static_cast<int64_t>(t->theta_.size()) > options.noise_table_size) {
    return Status::InvalidArgument(
        "[algo] noise_table_size = " + std::to_string(options.noise_table_size) +
        " floats is smaller than the actor's " + std::to_string(t->theta_.size()) +
        " parameters; set it to at least 100 times that");
  }
  return t;
}

EsTrainer::EsTrainer(env::VecEnv& venv, const PolicyOptions& policy_options,
                     const EsOptions& options, uint64_t seed, int threads)
    : venv_(venv),
      policy_options_(policy_options),
      options_(options),
      seed_(seed),
      obs_dim_(venv.obs_dim()),
      act_dim_(venv.act_dim()),
      outputs_(venv.spec().action.discrete ? venv.spec().action.n : venv.spec().action.dim),
      discrete_(venv.spec().action.discrete),
      low_(venv.spec().action.low),
      high_(venv.spec().action.high),
      relu_(policy_options.activation == "relu"),
      net_(NativeSpec(venv.obs_dim(), venv.spec().action, policy_options), seed),
      pool_(std::clamp(threads, 1, venv.num_envs())) {
  NormalizeOptions norm;
  norm.norm_obs = options.norm_obs;
  norm.norm_reward = false;
  norm.clip_obs = options.clip_obs;
  normalizer_ = VecNormalizer(obs_dim_, venv.num_envs(), norm);
  size_t offset = 0;
  for (const auto& [w, b] : ActorLayers(net_)) {
    const int out = static_cast<int>(w->shape[0]), in = static_cast<int>(w->shape[1]);
    layers_.push_back({in, out, offset});
    width_ = std::max(width_, out);
    offset += static_cast<size_t>(in) * out + out;
  }
  theta_.assign(offset, 0.0f);
  ThetaFromNet();
  adam_m_.assign(theta_.size(), 0.0);
  adam_v_.assign(theta_.size(), 0.0);
  const size_t members = static_cast<size_t>(options.population);
  fitness_.assign(members, 0.0);
  steps_.assign(members, 0);
  obs_sums_.assign(members * (2 * obs_dim_ + 1), 0.0);
}

void EsTrainer::ThetaFromNet() {
  const auto layers = ActorLayers(net_);
  const std::vector<float>& params = net_.params();
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    const float* wp = params.data() + layers[l].first->offset;  // (out, in)
    float* dst = &theta_[layer.offset];
    for (int o = 0; o < layer.out; ++o) {
      for (int i = 0; i < layer.in; ++i)
        dst[static_cast<size_t>(i) * layer.out + o] = wp[o * layer.in + i];
    }
    std::copy_n(params.data() + layers[l].second->offset, layer.out,
                dst + static_cast<size_t>(layer.in) * layer.out);
  }
}

native::TensorFile EsTrainer::PolicyParameters() {
  const auto layers = ActorLayers(net_);
  std::vector<float>& params = net_.params();
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    float* wp = params.data() + layers[l].first->offset;  // (out, in)
    const float* src = &theta_[layer.offset];
    for (int o = 0; o < layer.out; ++o) {
      for (int i = 0; i < layer.in; ++i)
        wp[o * layer.in + i] = src[static_cast<size_t>(i) * layer.out + o];
    }
    std::copy_n(src + static_cast<size_t>(layer.in) * layer.out, layer.out,
                params.data() + layers[l].second->offset);
  }
  native::TensorFile file;
  net_.SaveParameters(file);
  return file;
}

Status EsTrainer::LoadPolicyParameters(const native::TensorFile& file, const std::string& origin) {
  RLT_RETURN_IF_ERROR(net_.LoadParameters(file, origin));
  ThetaFromNet();
  return Status::Ok();
}

Status EsTrainer::EnableDataParallel(Collective* group) {
  if (generation_ > 0) {
    return Status::InvalidArgument("EnableDataParallel after the first generation");
  }
  if (group->size() > options_.population / 2) {
    return Status::InvalidArgument(
        "[algo] population = " + std::to_string(options_.population) +
        " gives fewer mirrored pairs (population / 2 = " + std::to_string(options_.population / 2) +
        ") than the " + std::to_string(group->size()) +
        " ranks, and every rank needs one; raise population to at least " +
        std::to_string(2 * group->size()));
  }
  group_ = group;
  return Status::Ok();
}

void EsTrainer::Forward(const float* params, const float* obs, float* action,
                        float* scratch) const {
  const float* x = obs;
  float* bufs[2] = {scratch, scratch + width_};
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    float* y = bufs[l % 2];
    const float* w = params + layer.offset;
    std::memcpy(y, w + static_cast<size_t>(layer.in) * layer.out, sizeof(float) * layer.out);
    for (int i = 0; i < layer.in; ++i) {
      const float xi = x[i];
      const float* row = w + static_cast<size_t>(i) * layer.out;
      for (int o = 0; o < layer.out; ++o) y[o] += xi * row[o];
    }
    if (l + 1 < layers_.size()) {
      native::ActivationForward(relu_ ? native::Activation::kRelu : native::Activation::kTanh, y,
                                layer.out);
    }
    x = y;
  }
  if (discrete_) {
    action[0] = static_cast<float>(std::max_element(x, x + outputs_) - x);  // first maximum
  } else {
    for (int k = 0; k < act_dim_; ++k) action[k] = std::clamp(x[k], low_[k], high_[k]);
  }
}

void EsTrainer::PlayMember(int slot, int64_t member, std::vector<float>& params,
                           std::vector<float>& scratch, double* env_seconds,
                           double* forward_seconds) {
  const int64_t pair = member / 2;
  const float scale = static_cast<float>(member % 2 == 0 ? options_.sigma : -options_.sigma);
  const int64_t n = static_cast<int64_t>(theta_.size());
  const float* eps = &noise_[EsNoiseOffset(seed_, generation_, pair, n, options_.noise_table_size)];
  for (int64_t k = 0; k < n; ++k) params[k] = theta_[k] + scale * eps[k];
  const int row = 2 * obs_dim_ + 1;
  double* sums = &obs_sums_[static_cast<size_t>(member) * row];
  std::fill(sums, sums + row, 0.0);
  float* obs_norm = scratch.data();
  float* action = obs_norm + obs_dim_;
  float* hidden = action + std::max(act_dim_, 1);
  double total = 0;
  int64_t steps = 0;
  for (int e = 0; e < options_.episodes_per_member; ++e) {
    venv_.ResetOne(slot, StreamSeed(seed_, 21, static_cast<uint64_t>(generation_),
                                    static_cast<uint64_t>(pair), static_cast<uint64_t>(e)));
    const float* obs = venv_.observations() + static_cast<size_t>(slot) * obs_dim_;
    double ret = 0;
    auto t0 = Clock::now();
    for (int t = 0; t < options_.max_episode_steps; ++t) {
      if (options_.norm_obs) {
        for (int j = 0; j < obs_dim_; ++j) {
          sums[j] += obs[j];
          sums[obs_dim_ + j] += static_cast<double>(obs[j]) * obs[j];
        }
        sums[2 * obs_dim_] += 1;
      }
      NormalizeObsWith(obs_scale_, obs, 1, obs_dim_, obs_norm);
      Forward(params.data(), obs_norm, action, hidden);
      const auto t1 = Clock::now();
      venv_.StepOne(slot, action);
      const auto t2 = Clock::now();
      *forward_seconds += Seconds(t0, t1);
      *env_seconds += Seconds(t1, t2);
      t0 = t2;
      ret += venv_.rewards()[slot];
      ++steps;
      if (venv_.done(slot)) break;
    }
    total += ret;
  }
  fitness_[member] = total / options_.episodes_per_member;
  steps_[member] = steps;
}

std::vector<int64_t> EsTrainer::PairBounds(int64_t pairs, int ranks) const {
  std::vector<int64_t> bounds(ranks + 1, 0);
  bounds[ranks] = pairs;
  if (static_cast<int>(rank_rates_.size()) != ranks) {  // no measurement yet: equal shares
    for (int r = 1; r < ranks; ++r) bounds[r] = pairs * r / ranks;
    return bounds;
  }
  // Shares proportional to the ranks' measured rates, at least one pair each (so every
  // rank keeps being measured). Every rank computes this from the same gathered rates.
  double total = 0;
  for (double rate : rank_rates_) total += std::max(rate, 1e-9);
  double cumulative = 0;
  for (int r = 1; r < ranks; ++r) {
    cumulative += std::max(rank_rates_[r - 1], 1e-9);
    const int64_t b = std::llround(static_cast<double>(pairs) * cumulative / total);
    bounds[r] = std::clamp<int64_t>(b, bounds[r - 1] + 1, pairs - (ranks - r));
  }
  return bounds;
}

Result<IterationStats> EsTrainer::Iterate() {
  Collective& group = group_ != nullptr ? *group_ : alone_;
  const auto start = Clock::now();
  // Built at the first generation, so setups that never train (validation, the thread
  // trial) do not pay for it.
  if (noise_.empty()) noise_ = EsNoiseTable(seed_, options_.noise_table_size);
  obs_scale_ = normalizer_->Scale();  // the statistics change only between generations
  const int64_t pairs = options_.population / 2;
  const std::vector<int64_t> bounds = PairBounds(pairs, group.size());
  const int64_t pair_begin = bounds[group.rank()], pair_end = bounds[group.rank() + 1];
  const int members = static_cast<int>(2 * (pair_end - pair_begin));
  const int workers = pool_.num_workers();
  std::vector<double> env_seconds(workers, 0.0), forward_seconds(workers, 0.0);
  pool_.Run([&](int w) {
    std::vector<float> params(theta_.size());
    std::vector<float> scratch(static_cast<size_t>(obs_dim_ + std::max(act_dim_, 1) + 2 * width_));
    auto [begin, end] = WorkerPool::Slice(members, workers, w);
    for (int i = begin; i < end; ++i) {
      PlayMember(w, 2 * pair_begin + i, params, scratch, &env_seconds[w], &forward_seconds[w]);
    }
  });
  const auto evaluated = Clock::now();
  timing_.env_step += std::accumulate(env_seconds.begin(), env_seconds.end(), 0.0) / workers;
  timing_.inference +=
      std::accumulate(forward_seconds.begin(), forward_seconds.end(), 0.0) / workers;

  // One Allgather: each rank's evaluation rate (pairs per second, for the next
  // partition), its members' fitness and steps, and (norm_obs) its members' observation
  // sums added up exactly (Fixed): so the totals do not depend on who evaluated what.
  const int row = 2 * obs_dim_ + 1;
  std::vector<Fixed> partial(options_.norm_obs ? row : 0, 0);
  for (int i = 0; i < members && options_.norm_obs; ++i) {
    const double* sums = &obs_sums_[static_cast<size_t>(2 * pair_begin + i) * row];
    for (int j = 0; j < row; ++j) {
      Fixed v = 0;
      if (!ToFixed(sums[j], &v)) {
        return Status::DataError(fmt::format(
            "generation {}: member {}'s observation sums reach {:g}, beyond the {:g} the exact "
            "statistics hold; the environment's observations are too large to normalise (set "
            "algo.norm_obs = false or rescale them)",
            generation_ + 1, 2 * pair_begin + i, sums[j], kFixedLimit));
      }
      partial[j] += v;
    }
  }
  std::string mine(
      sizeof(double) * (1 + 2 * static_cast<size_t>(members)) + sizeof(Fixed) * partial.size(),
      '\0');
  {
    char* out = mine.data();
    const double rate =
        static_cast<double>(pair_end - pair_begin) / std::max(1e-9, Seconds(start, evaluated));
    std::memcpy(out, &rate, sizeof rate);
    out += sizeof rate;
    for (int i = 0; i < members; ++i) {
      const size_t m = static_cast<size_t>(2 * pair_begin + i);
      const double r[2] = {fitness_[m], static_cast<double>(steps_[m])};
      std::memcpy(out, r, sizeof r);
      out += sizeof r;
    }
    if (!partial.empty()) std::memcpy(out, partial.data(), sizeof(Fixed) * partial.size());
  }
  const std::vector<std::string> all = group.Allgather(mine, "the population's fitnesses");
  std::vector<Fixed> obs_total(partial.size(), 0);
  rank_rates_.assign(group.size(), 0.0);
  for (int k = 0; k < group.size(); ++k) {
    const int64_t count = 2 * (bounds[k + 1] - bounds[k]);
    const std::string& part = all[k];
    if (part.size() !=
        sizeof(double) * (1 + 2 * static_cast<size_t>(count)) + sizeof(Fixed) * partial.size()) {
      return Status::DataError("rank " + std::to_string(k) + " sent " +
                               std::to_string(part.size()) +
                               " bytes of fitnesses; the ranks disagree on the partition");
    }
    const char* in = part.data();
    std::memcpy(&rank_rates_[k], in, sizeof(double));
    in += sizeof(double);
    for (int64_t i = 0; i < count; ++i) {
      double r[2];
      std::memcpy(r, in, sizeof r);
      in += sizeof r;
      fitness_[2 * bounds[k] + i] = r[0];
      steps_[2 * bounds[k] + i] = static_cast<int64_t>(r[1]);
    }
    for (size_t j = 0; j < obs_total.size(); ++j) {
      Fixed v;
      std::memcpy(&v, in + j * sizeof(Fixed), sizeof v);
      obs_total[j] += v;
    }
  }
  const auto gathered = Clock::now();
  timing_.communicate += Seconds(evaluated, gathered);
  for (double f : fitness_) {
    if (!std::isfinite(f)) {
      return Status::DataError("generation " + std::to_string(generation_ + 1) +
                               ": a member's episode return is not finite (the environment's "
                               "rewards overflowed); training stopped");
    }
  }

  Update();
  // Observation statistics of this generation (the exact totals).
  if (options_.norm_obs) {
    const double count = FromFixed(obs_total[2 * obs_dim_]);
    if (count > 0) {
      std::vector<double> mean(obs_dim_), var(obs_dim_);
      for (int j = 0; j < obs_dim_; ++j) {
        mean[j] = FromFixed(obs_total[j]) / count;
        var[j] = std::max(0.0, FromFixed(obs_total[obs_dim_ + j]) / count - mean[j] * mean[j]);
      }
      normalizer_->MergeObsMoments(mean.data(), var.data(), count);
    }
  }
  timing_.optimizer += Seconds(gathered, Clock::now());
  ++generation_;
  int64_t steps = 0;
  for (int64_t s : steps_) steps += s;
  total_steps_ += steps;

  IterationStats st;
  const double n = static_cast<double>(fitness_.size());
  st.episodes_seen = static_cast<int64_t>(fitness_.size()) * options_.episodes_per_member;
  st.ep_rew_mean = std::accumulate(fitness_.begin(), fitness_.end(), 0.0) / n;
  st.ep_len_mean = static_cast<double>(steps) / static_cast<double>(st.episodes_seen);
  const auto [lo, hi] = std::minmax_element(fitness_.begin(), fitness_.end());
  double var = 0;
  for (double f : fitness_) var += (f - st.ep_rew_mean) * (f - st.ep_rew_mean);
  double theta_norm = 0;
  for (float x : theta_) theta_norm += static_cast<double>(x) * x;
  st.algo_rows = {{"es/fitness_max", *hi},
                  {"es/fitness_min", *lo},
                  {"es/fitness_std", std::sqrt(var / n)},
                  {"es/grad_norm", last_grad_norm_},
                  {"es/update_norm", last_update_norm_},
                  {"es/param_norm", std::sqrt(theta_norm)},
                  {"es/sigma", options_.sigma},
                  {"train/learning_rate", options_.learning_rate}};
  st.learning_rate = options_.learning_rate;
  st.total_timesteps = total_steps_;
  st.iterations = generation_;
  st.fps = static_cast<double>(steps) / std::max(1e-9, Seconds(start, Clock::now()));
  return st;
}

void EsTrainer::Update() {
  const int64_t n = static_cast<int64_t>(theta_.size());
  const int64_t pairs = options_.population / 2;
  // The weighted noise sum g = sum_p w_p eps_p, in pair order per parameter.
  std::vector<double> weights(static_cast<size_t>(pairs), 0.0);
  double scale = 0;
  if (options_.variant == "openai") {
    const std::vector<double> u = CentredRanks(fitness_);
    for (int64_t p = 0; p < pairs; ++p) weights[p] = u[2 * p] - u[2 * p + 1];
    scale = 1.0 / static_cast<double>(options_.population);
  } else {
    std::vector<int64_t> order(static_cast<size_t>(pairs));
    std::iota(order.begin(), order.end(), int64_t{0});
    auto best = [&](int64_t p) { return std::max(fitness_[2 * p], fitness_[2 * p + 1]); };
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return best(a) > best(b); });
    const int64_t b = options_.top_directions > 0 ? options_.top_directions : pairs;
    double mean = 0, var = 0;
    for (int64_t k = 0; k < b; ++k) mean += fitness_[2 * order[k]] + fitness_[2 * order[k] + 1];
    mean /= 2.0 * b;
    for (int64_t k = 0; k < b; ++k) {
      for (int s = 0; s < 2; ++s) {
        const double d = fitness_[2 * order[k] + s] - mean;
        var += d * d;
      }
    }
    const double sigma_r = std::sqrt(var / (2.0 * b));
    if (!(sigma_r > 0)) {  // every return equal: no direction is better
      last_grad_norm_ = last_update_norm_ = 0;
      return;
    }
    for (int64_t k = 0; k < b; ++k) {
      weights[order[k]] = fitness_[2 * order[k]] - fitness_[2 * order[k] + 1];
    }
    scale = 1.0 / (static_cast<double>(b) * sigma_r);
  }
  // g = sum_p weights[p] eps_p, four pairs per pass over g (the noise reads dominate).
  std::vector<double> g(static_cast<size_t>(n), 0.0);
  constexpr int kBlock = 4;
  for (int64_t p0 = 0; p0 < pairs; p0 += kBlock) {
    const float* eps[kBlock];
    double w[kBlock];
    for (int b = 0; b < kBlock; ++b) {
      const int64_t p = std::min(p0 + b, pairs - 1);
      w[b] = p0 + b < pairs ? weights[p] : 0.0;
      eps[b] = &noise_[EsNoiseOffset(seed_, generation_, p, n, options_.noise_table_size)];
    }
    for (int64_t k = 0; k < n; ++k) {
      g[k] += (w[0] * eps[0][k] + w[1] * eps[1][k]) + (w[2] * eps[2][k] + w[3] * eps[3][k]);
    }
  }
  double grad_norm = 0, update_norm = 0;
  for (int64_t k = 0; k < n; ++k) {
    g[k] *= scale;
    grad_norm += g[k] * g[k];
  }
  if (options_.variant == "openai") {
    ++adam_t_;
    const double a = options_.learning_rate *
                     std::sqrt(1 - std::pow(kAdamBeta2, static_cast<double>(adam_t_))) /
                     (1 - std::pow(kAdamBeta1, static_cast<double>(adam_t_)));
    for (int64_t k = 0; k < n; ++k) {
      const double grad = -g[k] + options_.weight_decay * theta_[k];
      adam_m_[k] = kAdamBeta1 * adam_m_[k] + (1 - kAdamBeta1) * grad;
      adam_v_[k] = kAdamBeta2 * adam_v_[k] + (1 - kAdamBeta2) * grad * grad;
      const double step = -a * adam_m_[k] / (std::sqrt(adam_v_[k]) + kAdamEpsilon);
      theta_[k] = static_cast<float>(theta_[k] + step);
      update_norm += step * step;
    }
  } else {
    for (int64_t k = 0; k < n; ++k) {
      const double step = options_.learning_rate * g[k];
      theta_[k] = static_cast<float>(theta_[k] + step);
      update_norm += step * step;
    }
  }
  last_grad_norm_ = std::sqrt(grad_norm);
  last_update_norm_ = std::sqrt(update_norm);
}

std::string EsTrainer::SaveState() const {
  StateWriter out;
  out.PutString(kStateMagic);
  out.Put<uint32_t>(kStateVersion);
  out.Put<int64_t>(static_cast<int64_t>(theta_.size()));
  out.Put<int64_t>(generation_);
  out.Put<int64_t>(total_steps_);
  out.Put<int64_t>(adam_t_);
  out.PutArray(adam_m_.data(), adam_m_.size());
  out.PutArray(adam_v_.data(), adam_v_.size());
  out.PutArray(theta_.data(), theta_.size());
  return out.Release();
}

Status EsTrainer::LoadState(std::string_view bytes, const std::string& what) {
  StateReader in(bytes, what);
  std::string_view magic;
  RLT_RETURN_IF_ERROR(in.GetString(&magic, "magic"));
  if (magic != kStateMagic) {
    return in.Error("not an evolution-strategies state (no '" + std::string(kStateMagic) +
                    "' header)");
  }
  RLT_RETURN_IF_ERROR(in.Expect<uint32_t>(kStateVersion, "state version"));
  RLT_RETURN_IF_ERROR(in.Expect<int64_t>(static_cast<int64_t>(theta_.size()), "parameter count"));
  int64_t generation = 0, steps = 0, adam_t = 0;
  RLT_RETURN_IF_ERROR(in.Get(&generation, "generation"));
  RLT_RETURN_IF_ERROR(in.Get(&steps, "total steps"));
  RLT_RETURN_IF_ERROR(in.Get(&adam_t, "Adam step"));
  if (generation < 0 || steps < 0 || adam_t < 0 || adam_t > generation) {
    return in.Error("counters out of range (generation " + std::to_string(generation) + ", steps " +
                    std::to_string(steps) + ", Adam step " + std::to_string(adam_t) + ")");
  }
  std::vector<double> m(adam_m_.size()), v(adam_v_.size());
  std::vector<float> theta(theta_.size());
  RLT_RETURN_IF_ERROR(in.GetArray(m.data(), m.size(), "Adam first moments"));
  RLT_RETURN_IF_ERROR(in.GetArray(v.data(), v.size(), "Adam second moments"));
  RLT_RETURN_IF_ERROR(in.GetArray(theta.data(), theta.size(), "parameters"));
  RLT_RETURN_IF_ERROR(in.Finish());
  for (size_t k = 0; k < theta.size(); ++k) {
    if (!std::isfinite(theta[k]) || !std::isfinite(m[k]) || !(v[k] >= 0)) {
      return in.Error("parameter " + std::to_string(k) + " or its Adam moments are not finite");
    }
  }
  generation_ = generation;
  total_steps_ = steps;
  adam_t_ = adam_t;
  adam_m_ = std::move(m);
  adam_v_ = std::move(v);
  theta_ = std::move(theta);
  return Status::Ok();
}

}  // namespace rlt::learn
