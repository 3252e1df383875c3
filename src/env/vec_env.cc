// rltrade env: VecEnv implementation.
#include "env/vec_env.h"

#include <algorithm>
#include <cstring>

#include "core/status.h"

namespace rlt::env {

VecEnv::VecEnv(std::vector<std::unique_ptr<Env>> envs, int threads)
    : envs_(std::move(envs)),
      num_envs_(static_cast<int>(envs_.size())),
      obs_dim_(envs_.empty() ? 0 : envs_.front()->spec().obs_dim),
      act_dim_(envs_.empty() ? 0 : envs_.front()->spec().action.dim),
      info_dim_(envs_.empty() ? 0 : static_cast<int>(envs_.front()->spec().info_names.size())),
      pool_(std::clamp(threads, 1, std::max(1, num_envs_))) {
  RLT_CHECK_MSG(num_envs_ > 0, "VecEnv needs at least one environment");
  for (const auto& e : envs_) {
    RLT_CHECK(e->spec().obs_dim == obs_dim_ && e->spec().action.dim == act_dim_);
  }
  const size_t n = num_envs_;
  obs_.assign(n * obs_dim_, 0.0f);
  terminal_obs_.assign(n * obs_dim_, 0.0f);
  rewards_.assign(n, 0.0f);
  terminated_.assign(n, 0);
  truncated_.assign(n, 0);
  info_.assign(n * info_dim_, 0.0);
  terminal_info_.assign(n * info_dim_, 0.0);
  running_return_.assign(n, 0.0);
  episode_return_.assign(n, 0.0);
  running_length_.assign(n, 0);
  episode_length_.assign(n, 0);
}

void VecEnv::Reset(uint64_t seed) {
  pool_.Run([&](int w) {
    auto [begin, end] = WorkerPool::Slice(num_envs_, pool_.num_workers(), w);
    for (int i = begin; i < end; ++i) {
      envs_[i]->Seed(seed + static_cast<uint64_t>(i));
      envs_[i]->Reset(&obs_[static_cast<size_t>(i) * obs_dim_],
                      &info_[static_cast<size_t>(i) * info_dim_]);
      rewards_[i] = 0.0f;
      terminated_[i] = truncated_[i] = 0;
      running_return_[i] = 0.0;
      running_length_[i] = 0;
    }
  });
}

void VecEnv::Step(const float* actions) {
  pool_.Run([this, actions](int w) { StepSlice(w, actions); });
}

void VecEnv::StepSlice(int worker, const float* actions) {
  auto [begin, end] = WorkerPool::Slice(num_envs_, pool_.num_workers(), worker);
  for (int i = begin; i < end; ++i) {
    float* obs = &obs_[static_cast<size_t>(i) * obs_dim_];
    double* info = &info_[static_cast<size_t>(i) * info_dim_];
    const StepResult r = envs_[i]->Step(actions + static_cast<size_t>(i) * act_dim_, obs, info);
    rewards_[i] = r.reward;
    terminated_[i] = r.terminated;
    truncated_[i] = r.truncated;
    running_return_[i] += r.reward;
    running_length_[i] += 1;
    if (r.terminated || r.truncated) {
      std::memcpy(&terminal_obs_[static_cast<size_t>(i) * obs_dim_], obs, sizeof(float) * obs_dim_);
      episode_return_[i] = running_return_[i];
      episode_length_[i] = running_length_[i];
      running_return_[i] = 0.0;
      running_length_[i] = 0;
      std::memcpy(&terminal_info_[static_cast<size_t>(i) * info_dim_], info,
                  sizeof(double) * info_dim_);
      envs_[i]->Reset(obs, info);
    }
  }
}

}  // namespace rlt::env
