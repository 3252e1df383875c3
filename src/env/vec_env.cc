// rltrade env: VecEnv implementation.
#include "env/vec_env.h"

#include <algorithm>
#include <cstring>
#include <string>

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
    for (int i = begin; i < end; ++i) ResetOne(i, seed + static_cast<uint64_t>(i));
  });
}

void VecEnv::ResetOne(int i, uint64_t seed) {
  envs_[i]->Seed(seed);
  envs_[i]->Reset(&obs_[static_cast<size_t>(i) * obs_dim_],
                  &info_[static_cast<size_t>(i) * info_dim_]);
  rewards_[i] = 0.0f;
  terminated_[i] = truncated_[i] = 0;
  running_return_[i] = 0.0;
  running_length_[i] = 0;
}

namespace {
constexpr const char* kStateMagic = "rltrade-vecenv-state";
constexpr uint32_t kStateVersion = 1;
}  // namespace

std::string VecEnv::SaveState() const {
  StateWriter out;
  out.PutString(kStateMagic);
  out.Put<uint32_t>(kStateVersion);
  out.Put<int32_t>(num_envs_);
  out.Put<int32_t>(obs_dim_);
  out.Put<int32_t>(act_dim_);
  out.Put<int32_t>(info_dim_);
  out.PutString(spec().id);
  for (const auto& e : envs_) {  // each env's bytes length-prefixed: checked per env on load
    StateWriter env_out;
    e->SaveState(env_out);
    out.PutString(env_out.data());
  }
  out.PutArray(obs_.data(), obs_.size());
  out.PutArray(terminal_obs_.data(), terminal_obs_.size());
  out.PutArray(rewards_.data(), rewards_.size());
  out.PutArray(terminated_.data(), terminated_.size());
  out.PutArray(truncated_.data(), truncated_.size());
  out.PutArray(info_.data(), info_.size());
  out.PutArray(terminal_info_.data(), terminal_info_.size());
  out.PutArray(running_return_.data(), running_return_.size());
  out.PutArray(episode_return_.data(), episode_return_.size());
  out.PutArray(running_length_.data(), running_length_.size());
  out.PutArray(episode_length_.data(), episode_length_.size());
  return out.Release();
}

Status VecEnv::LoadState(std::string_view bytes, const std::string& what) {
  StateReader in(bytes, what);
  std::string_view magic;
  RLT_RETURN_IF_ERROR(in.GetString(&magic, "magic"));
  if (magic != kStateMagic) {
    return in.Error("not a saved VecEnv state (no '" + std::string(kStateMagic) + "' header)");
  }
  RLT_RETURN_IF_ERROR(in.Expect<uint32_t>(kStateVersion, "state version"));
  RLT_RETURN_IF_ERROR(in.Expect<int32_t>(num_envs_, "num_envs"));
  RLT_RETURN_IF_ERROR(in.Expect<int32_t>(obs_dim_, "obs_dim"));
  RLT_RETURN_IF_ERROR(in.Expect<int32_t>(act_dim_, "act_dim"));
  RLT_RETURN_IF_ERROR(in.Expect<int32_t>(info_dim_, "info_dim"));
  RLT_RETURN_IF_ERROR(in.ExpectString(spec().id, "env id"));
  std::vector<std::string_view> env_bytes(num_envs_);
  for (auto& b : env_bytes) RLT_RETURN_IF_ERROR(in.GetString(&b, "env state"));
  // The buffers' size is checked before any env is touched: a short file changes nothing.
  const size_t n = num_envs_;
  const size_t buffer_bytes = sizeof(float) * (2 * n * obs_dim_ + n) + 2 * n +
                              sizeof(double) * (2 * n * info_dim_ + 2 * n) +
                              sizeof(int64_t) * 2 * n;
  if (in.remaining() != buffer_bytes) {
    return in.Error("expected " + std::to_string(buffer_bytes) + " bytes of buffers after the " +
                    "env states, found " + std::to_string(in.remaining()));
  }
  for (int i = 0; i < num_envs_; ++i) {
    StateReader env_in(env_bytes[i], what + " (env " + std::to_string(i) + ")");
    RLT_RETURN_IF_ERROR(envs_[i]->LoadState(env_in));
    RLT_RETURN_IF_ERROR(env_in.Finish());
  }
  RLT_RETURN_IF_ERROR(in.GetArray(obs_.data(), obs_.size(), "observations"));
  RLT_RETURN_IF_ERROR(in.GetArray(terminal_obs_.data(), terminal_obs_.size(), "terminal_obs"));
  RLT_RETURN_IF_ERROR(in.GetArray(rewards_.data(), rewards_.size(), "rewards"));
  RLT_RETURN_IF_ERROR(in.GetArray(terminated_.data(), terminated_.size(), "terminated"));
  RLT_RETURN_IF_ERROR(in.GetArray(truncated_.data(), truncated_.size(), "truncated"));
  RLT_RETURN_IF_ERROR(in.GetArray(info_.data(), info_.size(), "info"));
  RLT_RETURN_IF_ERROR(in.GetArray(terminal_info_.data(), terminal_info_.size(), "terminal_info"));
  RLT_RETURN_IF_ERROR(
      in.GetArray(running_return_.data(), running_return_.size(), "running returns"));
  RLT_RETURN_IF_ERROR(
      in.GetArray(episode_return_.data(), episode_return_.size(), "episode returns"));
  RLT_RETURN_IF_ERROR(
      in.GetArray(running_length_.data(), running_length_.size(), "running lengths"));
  RLT_RETURN_IF_ERROR(
      in.GetArray(episode_length_.data(), episode_length_.size(), "episode lengths"));
  // Step() adds 1 to a running length: a corrupt one near INT64_MAX would overflow (found
  // by fuzz/vec_env_state_fuzz). No run gets anywhere near 2^62 steps.
  for (size_t i = 0; i < n; ++i) {
    for (int64_t length : {running_length_[i], episode_length_[i]}) {
      if (length < 0 || length > (int64_t{1} << 62)) {
        return in.Error("episode length " + std::to_string(length) + " of env " +
                        std::to_string(i) + " is out of range (corrupt state)");
      }
    }
  }
  return in.Finish();
}

void VecEnv::Step(const float* actions) {
  pool_.Run([this, actions](int w) { StepSlice(w, actions); });
}

void VecEnv::StepSlice(int worker, const float* actions) {
  auto [begin, end] = WorkerPool::Slice(num_envs_, pool_.num_workers(), worker);
  for (int i = begin; i < end; ++i) StepOne(i, actions + static_cast<size_t>(i) * act_dim_);
}

void VecEnv::StepOne(int i, const float* action) {
  float* obs = &obs_[static_cast<size_t>(i) * obs_dim_];
  double* info = &info_[static_cast<size_t>(i) * info_dim_];
  const StepResult r = envs_[i]->Step(action, obs, info);
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

}  // namespace rlt::env
