// rltrade learn: observation and reward normalisation with Stable-Baselines3's VecNormalize
// semantics (common/vec_env/vec_normalize.py, common/running_mean_std.py).
//
//   observations  obs' = clip((obs - mean) / sqrt(var + epsilon), -clip_obs, clip_obs)
//                 with a running mean/var (Chan et al. parallel update, count starts at
//                 1e-4, mean 0, var 1) updated with each batch of N observations while
//                 training (after every env step and after reset), never in evaluation.
//   rewards       each env keeps a discounted return R = gamma R + r (R = 0 after an
//                 episode end); the running variance of R (updated with the N returns of
//                 each step) scales rewards: r' = clip(r / sqrt(var_R + epsilon), +-clip).
// Statistics are float64, as in SB3; outputs are float32. Plain C++ (no LibTorch): every
// statistic, including the per-env discounted returns, is in NormalizerStats, which
// checkpoints save and restore (learn/checkpoint.h).
// VecNormalizer is a shared handle to a VecNormalizerImpl (normalizer->UpdateObs(...)).
// Not thread-safe.
#ifndef RLT_LEARN_NORMALIZE_H_
#define RLT_LEARN_NORMALIZE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/status.h"

namespace rlt::learn {

struct NormalizeOptions {
  bool norm_obs = false;
  bool norm_reward = false;
  double clip_obs = 10.0;
  double clip_reward = 10.0;
  double gamma = 0.99;    // discount of the return whose std scales rewards
  double epsilon = 1e-8;  // added to variances before the square root
};

// Running mean/variance update (Chan et al.; SB3 RunningMeanStd.update_from_moments).
// mean, var: (dim); count: scalar. batch_*: moments of a batch of batch_count samples.
void UpdateMoments(double* mean, double* var, double* count, int dim, const double* batch_mean,
                   const double* batch_var, double batch_count);

// The per-dimension shift and scale of observation normalisation: mean and
// sqrt(var + epsilon), with the clip (enabled = false: observations pass unchanged).
struct ObsScale {
  bool enabled = false;
  std::vector<double> mean, std;
  double clip = 0;
};
// out (n, dim) = clamp((obs - mean) / std, -clip, clip) (a copy when !s.enabled); out may
// alias obs.
void NormalizeObsWith(const ObsScale& s, const float* obs, int n, int dim, float* out);

// Every statistic of a VecNormalizer (the names are those of the checkpoint's tensors).
struct NormalizerStats {
  std::vector<double> obs_mean, obs_var;  // (obs_dim) each
  double obs_count = 1e-4;
  double ret_mean = 0, ret_var = 1, ret_count = 1e-4;
  std::vector<double> returns;  // (num_envs) discounted returns
};

class VecNormalizerImpl {
 public:
  VecNormalizerImpl(int obs_dim, int num_envs, const NormalizeOptions& options);

  const NormalizeOptions& options() const { return options_; }
  // Data-parallel training: with a collective, every statistics update uses the
  // moments of all the group's environments (sums over the members, two passes), so each
  // member keeps the statistics one process with all the environments would. nullptr (the
  // default): this process's environments only. Not owned; must outlive the normaliser.
  void set_collective(Collective* collective) { collective_ = collective; }
  // Updates the observation statistics with obs (n, obs_dim). No-op unless norm_obs.
  void UpdateObs(const float* obs, int n);
  // Merges the moments of batch_count observations gathered elsewhere (evolution
  // strategies sum them over the whole population, learn/es.h) into the statistics, as
  // UpdateObs would merge those observations. No-op unless norm_obs.
  void MergeObsMoments(const double* batch_mean, const double* batch_var, double batch_count);
  // out (n, obs_dim) = normalised obs (a copy when !norm_obs). out may alias obs.
  void NormalizeObs(const float* obs, int n, float* out) const;
  // The current statistics as NormalizeObs applies them, for callers that normalise many
  // batches between two updates (evolution strategies: a whole generation):
  // NormalizeObsWith(Scale(), ...) gives NormalizeObs's values bit for bit.
  ObsScale Scale() const;
  // For one step of all num_envs envs: when `update`, R = gamma R + r and the return
  // statistics are updated; writes the normalised rewards (a copy when !norm_reward) to
  // out, then resets R where done. rewards, dones, out: (num_envs).
  void ProcessRewards(const float* rewards, const uint8_t* dones, bool update, float* out);
  // Forgets the per-env discounted returns (after VecEnv::Reset()).
  void ResetReturns();
  // The per-env discounted returns (num_envs), for a data-parallel checkpoint's member state.
  std::vector<double> returns() const;
  // REQUIRES: r.size() == num_envs.
  void set_returns(const std::vector<double>& r);

  // Statistics.
  const std::vector<double>& obs_mean() const { return stats_.obs_mean; }  // (obs_dim)
  const std::vector<double>& obs_var() const { return stats_.obs_var; }    // (obs_dim)
  double obs_count() const { return stats_.obs_count; }
  double return_var() const { return stats_.ret_var; }
  double return_count() const { return stats_.ret_count; }
  int obs_dim() const { return obs_dim_; }
  int num_envs() const { return num_envs_; }

  // All statistics, for checkpoints.
  const NormalizerStats& stats() const { return stats_; }
  // Restores statistics read from `what` (a file name for messages): a DataError naming
  // it when a length differs from this normaliser's obs_dim / num_envs, or a value is not
  // finite (or a count or variance is negative).
  Status set_stats(const NormalizerStats& stats, const std::string& what);

 private:
  NormalizeOptions options_;
  int obs_dim_, num_envs_;
  NormalizerStats stats_;
  Collective* collective_ = nullptr;
  // Mean and population variance (dim each) of n rows (n, dim) over the collective.
  // Returns the number of rows over the collective.
  double SharedMoments(const double* rows, int n, int dim, double* mean, double* var) const;
  std::vector<double> scratch_;
};

// A shared handle to a VecNormalizerImpl (copies share one normaliser); empty when built
// from nullptr.
class VecNormalizer {
 public:
  VecNormalizer(std::nullptr_t = nullptr) {}  // NOLINT: implicit, as a pointer
  VecNormalizer(int obs_dim, int num_envs, const NormalizeOptions& options)
      : impl_(std::make_shared<VecNormalizerImpl>(obs_dim, num_envs, options)) {}
  VecNormalizerImpl* operator->() const { return impl_.get(); }
  VecNormalizerImpl& operator*() const { return *impl_; }
  VecNormalizerImpl* get() const { return impl_.get(); }
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  std::shared_ptr<VecNormalizerImpl> impl_;
};

}  // namespace rlt::learn

#endif  // RLT_LEARN_NORMALIZE_H_
