// rltrade learn: VecNormalizer implementation (see normalize.h). Plain loops over float64
// vectors: N x obs_dim is small.
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
  stats_.obs_mean.assign(obs_dim, 0.0);
  stats_.obs_var.assign(obs_dim, 1.0);
  stats_.returns.assign(num_envs, 0.0);
}

Status VecNormalizerImpl::set_stats(const NormalizerStats& s, const std::string& what) {
  auto size_error = [&](const char* name, size_t got, int expected, const char* of) {
    return Status::DataError(what + ": '" + name + "' has " + std::to_string(got) +
                             " values, expected " + std::to_string(expected) + " (" + of +
                             "); the checkpoint belongs to another environment shape");
  };
  if (s.obs_mean.size() != static_cast<size_t>(obs_dim_))
    return size_error("obs_mean", s.obs_mean.size(), obs_dim_, "obs_dim");
  if (s.obs_var.size() != static_cast<size_t>(obs_dim_))
    return size_error("obs_var", s.obs_var.size(), obs_dim_, "obs_dim");
  if (s.returns.size() != static_cast<size_t>(num_envs_))
    return size_error("returns", s.returns.size(), num_envs_, "num_envs");
  auto bad = [&](const char* name) {
    return Status::DataError(what + ": statistic '" + name +
                             "' holds NaN, inf or a negative variance or count; the checkpoint "
                             "is unusable (training diverged or the file was altered); use an "
                             "earlier checkpoint");
  };
  for (double v : s.obs_mean)
    if (!std::isfinite(v)) return bad("obs_mean");
  for (double v : s.obs_var)
    if (!std::isfinite(v) || v < 0) return bad("obs_var");
  for (double v : s.returns)
    if (!std::isfinite(v)) return bad("returns");
  if (!std::isfinite(s.obs_count) || s.obs_count < 0) return bad("obs_count");
  if (!std::isfinite(s.ret_mean)) return bad("ret_mean");
  if (!std::isfinite(s.ret_var) || s.ret_var < 0) return bad("ret_var");
  if (!std::isfinite(s.ret_count) || s.ret_count < 0) return bad("ret_count");
  stats_ = s;
  return Status::Ok();
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
    UpdateMoments(stats_.obs_mean.data(), stats_.obs_var.data(), &stats_.obs_count, obs_dim_,
                  mean.data(), var.data(), total);
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
  UpdateMoments(stats_.obs_mean.data(), stats_.obs_var.data(), &stats_.obs_count, obs_dim_,
                mean.data(), var.data(), n);
}

void VecNormalizerImpl::MergeObsMoments(const double* batch_mean, const double* batch_var,
                                        double batch_count) {
  if (!options_.norm_obs || !(batch_count > 0)) return;
  UpdateMoments(stats_.obs_mean.data(), stats_.obs_var.data(), &stats_.obs_count, obs_dim_,
                batch_mean, batch_var, batch_count);
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
  const double* mean = stats_.obs_mean.data();
  const double* var = stats_.obs_var.data();
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
  const double* mean = stats_.obs_mean.data();
  const double* var = stats_.obs_var.data();
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
  double* returns = stats_.returns.data();
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
    UpdateMoments(&stats_.ret_mean, &stats_.ret_var, &stats_.ret_count, 1, &mean, &var, count);
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

void VecNormalizerImpl::ResetReturns() {
  std::fill(stats_.returns.begin(), stats_.returns.end(), 0.0);
}

std::vector<double> VecNormalizerImpl::returns() const { return stats_.returns; }

void VecNormalizerImpl::set_returns(const std::vector<double>& r) {
  RLT_CHECK(static_cast<int>(r.size()) == num_envs_);
  stats_.returns = r;
}

}  // namespace rlt::learn
