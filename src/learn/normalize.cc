// rltrade learn: VecNormalizer implementation (see normalize.h). Plain loops over the
// buffers' float64 storage: N x obs_dim is small and the torch per-op cost would dominate.
#include "learn/normalize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/status.h"

namespace rlt::learn {

void UpdateMoments(double* mean, double* var, double* count, int dim, const double* batch_mean,
                   const double* batch_var, double batch_count) {
  const double total = *count + batch_count;
  for (int j = 0; j < dim; ++j) {
    const double delta = batch_mean[j] - mean[j];
    const double m2 =
        var[j] * *count + batch_var[j] * batch_count + delta * delta * *count * batch_count / total;
    mean[j] += delta * batch_count / total;
    var[j] = m2 / total;
  }
  *count = total;
}

VecNormalizerImpl::VecNormalizerImpl(int obs_dim, int num_envs, const NormalizeOptions& options)
    : options_(options), obs_dim_(obs_dim), num_envs_(num_envs) {
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  obs_mean_ = register_buffer("obs_mean", torch::zeros({obs_dim}, f64));
  obs_var_ = register_buffer("obs_var", torch::ones({obs_dim}, f64));
  obs_count_ = register_buffer("obs_count", torch::full({1}, 1e-4, f64));
  ret_mean_ = register_buffer("ret_mean", torch::zeros({1}, f64));
  ret_var_ = register_buffer("ret_var", torch::ones({1}, f64));
  ret_count_ = register_buffer("ret_count", torch::full({1}, 1e-4, f64));
  returns_ = register_buffer("returns", torch::zeros({num_envs}, f64));
}

double VecNormalizerImpl::SharedMoments(const double* rows, int n, int dim, double* mean,
                                        double* var) const {
  std::vector<double> sums(dim + 1, 0.0);
  sums[dim] = n;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < dim; ++j) sums[j] += rows[static_cast<size_t>(i) * dim + j];
  }
  collective_->SumDoubles(sums.data(), dim + 1, "the normaliser's mean");
  const double total = sums[dim];
  for (int j = 0; j < dim; ++j) {
    mean[j] = sums[j] / total;
    sums[j] = 0.0;
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < dim; ++j) {
      const double d = rows[static_cast<size_t>(i) * dim + j] - mean[j];
      sums[j] += d * d;
    }
  }
  collective_->SumDoubles(sums.data(), dim, "the normaliser's variance");
  for (int j = 0; j < dim; ++j) var[j] = sums[j] / total;
  return total;
}

void VecNormalizerImpl::UpdateObs(const float* obs, int n) {
  if (!options_.norm_obs || n < 1) return;
  if (collective_ != nullptr) {
    scratch_.assign(obs, obs + static_cast<size_t>(n) * obs_dim_);
    std::vector<double> mean(obs_dim_), var(obs_dim_);
    const double total = SharedMoments(scratch_.data(), n, obs_dim_, mean.data(), var.data());
    UpdateMoments(obs_mean_.data_ptr<double>(), obs_var_.data_ptr<double>(),
                  obs_count_.data_ptr<double>(), obs_dim_, mean.data(), var.data(), total);
    return;
  }
  std::vector<double> mean(obs_dim_, 0.0), var(obs_dim_, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < obs_dim_; ++j) mean[j] += obs[static_cast<size_t>(i) * obs_dim_ + j];
  }
  for (double& m : mean) m /= n;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < obs_dim_; ++j) {
      const double d = obs[static_cast<size_t>(i) * obs_dim_ + j] - mean[j];
      var[j] += d * d;
    }
  }
  for (double& v : var) v /= n;  // population variance, as np.var
  UpdateMoments(obs_mean_.data_ptr<double>(), obs_var_.data_ptr<double>(),
                obs_count_.data_ptr<double>(), obs_dim_, mean.data(), var.data(), n);
}

void VecNormalizerImpl::MergeObsMoments(const double* batch_mean, const double* batch_var,
                                        double batch_count) {
  if (!options_.norm_obs || !(batch_count > 0)) return;
  UpdateMoments(obs_mean_.data_ptr<double>(), obs_var_.data_ptr<double>(),
                obs_count_.data_ptr<double>(), obs_dim_, batch_mean, batch_var, batch_count);
}

namespace {

// One normalised observation value: the formula NormalizeObs and NormalizeObsWith share.
inline float NormalizeOne(float x, double mean, double std, double clip) {
  return static_cast<float>(std::clamp((x - mean) / std, -clip, clip));
}

}  // namespace

void NormalizeObsWith(const ObsScale& s, const float* obs, int n, int dim, float* out) {
  const size_t total = static_cast<size_t>(n) * dim;
  if (!s.enabled) {
    if (out != obs) std::copy(obs, obs + total, out);
    return;
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < dim; ++j) {
      const size_t k = static_cast<size_t>(i) * dim + j;
      out[k] = NormalizeOne(obs[k], s.mean[j], s.std[j], s.clip);
    }
  }
}

ObsScale VecNormalizerImpl::Scale() const {
  ObsScale s;
  s.enabled = options_.norm_obs;
  if (!s.enabled) return s;
  const double* mean = obs_mean_.data_ptr<double>();
  const double* var = obs_var_.data_ptr<double>();
  s.mean.assign(mean, mean + obs_dim_);
  s.std.resize(obs_dim_);
  for (int j = 0; j < obs_dim_; ++j) s.std[j] = std::sqrt(var[j] + options_.epsilon);
  s.clip = options_.clip_obs;
  return s;
}

void VecNormalizerImpl::NormalizeObs(const float* obs, int n, float* out) const {
  const size_t total = static_cast<size_t>(n) * obs_dim_;
  if (!options_.norm_obs) {
    if (out != obs) std::copy(obs, obs + total, out);
    return;
  }
  const double* mean = obs_mean_.data_ptr<double>();
  const double* var = obs_var_.data_ptr<double>();
  const double clip = options_.clip_obs;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < obs_dim_; ++j) {
      const size_t k = static_cast<size_t>(i) * obs_dim_ + j;
      out[k] = NormalizeOne(obs[k], mean[j], std::sqrt(var[j] + options_.epsilon), clip);
    }
  }
}

void VecNormalizerImpl::ProcessRewards(const float* rewards, const uint8_t* dones, bool update,
                                       float* out) {
  double* returns = returns_.data_ptr<double>();
  if (update) {
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < num_envs_; ++i) {
      returns[i] = returns[i] * options_.gamma + rewards[i];
      mean += returns[i];
    }
    double count = num_envs_;
    if (collective_ != nullptr) {
      count = SharedMoments(returns, num_envs_, 1, &mean, &var);
    } else {
      mean /= num_envs_;
      for (int i = 0; i < num_envs_; ++i) var += (returns[i] - mean) * (returns[i] - mean);
      var /= num_envs_;
    }
    UpdateMoments(ret_mean_.data_ptr<double>(), ret_var_.data_ptr<double>(),
                  ret_count_.data_ptr<double>(), 1, &mean, &var, count);
  }
  const double std_dev = std::sqrt(return_var() + options_.epsilon);
  for (int i = 0; i < num_envs_; ++i) {
    if (options_.norm_reward) {
      const double clip = options_.clip_reward;
      out[i] = static_cast<float>(std::clamp(rewards[i] / std_dev, -clip, clip));
    } else {
      out[i] = rewards[i];
    }
    if (dones[i]) returns[i] = 0.0;
  }
}

void VecNormalizerImpl::ResetReturns() { returns_.zero_(); }

std::vector<double> VecNormalizerImpl::returns() const {
  const double* r = returns_.data_ptr<double>();
  return std::vector<double>(r, r + num_envs_);
}

void VecNormalizerImpl::set_returns(const std::vector<double>& r) {
  RLT_CHECK(static_cast<int>(r.size()) == num_envs_);
  std::copy(r.begin(), r.end(), returns_.data_ptr<double>());
}

double VecNormalizerImpl::obs_count() const { return obs_count_.data_ptr<double>()[0]; }
double VecNormalizerImpl::return_var() const { return ret_var_.data_ptr<double>()[0]; }
double VecNormalizerImpl::return_count() const { return ret_count_.data_ptr<double>()[0]; }

}  // namespace rlt::learn
