// rltrade env: N environments stepped together, with structure-of-arrays buffers.
//
// VecEnv owns N Env instances and a WorkerPool; worker w steps a fixed contiguous slice
// of environments. All buffers are allocated once, in the constructor:
//   observations   (N, obs_dim)  float32   obs after the step (after auto-reset)
//   terminal_obs   (N, obs_dim)  float32   valid for env i only where done(i)
//   rewards        (N)           float32
//   terminated     (N)           uint8
//   truncated      (N)           uint8
//   info           (N, info_dim) float64   per-env values named by spec().info_names
//   terminal_info  (N, info_dim) float64   info of the finished episode's last step,
//                                          valid where done(i)
//   episode_return (N), episode_length (N): totals of the episode that ended, valid
//                  where done(i) (for logging ep_rew_mean / ep_len_mean)
// Auto-reset follows Stable-Baselines3's VecEnv: in the same Step() an env whose
// episode ended writes its last observation to terminal_obs, resets, and leaves the
// first observation of its next episode in observations.
//
// Determinism: Reset(seed) seeds env i with seed + i; each env only touches its own
// rows and its own RNG, so results do not depend on the number of threads.
// Thread safety: one thread drives a VecEnv. Buffers may be read between calls.
//
// State: SaveState() captures everything a later Step() depends on or reports — every
// env's SaveState() (RNG and episode state) and every buffer above, plus the running
// return/length of each unfinished episode — behind a header (magic, version, num_envs,
// obs_dim, act_dim, info_dim, env id). LoadState() into a VecEnv built from the same env
// kind and options (any thread count) continues bit for bit as the saved one would have.
#ifndef RLT_ENV_VEC_ENV_H_
#define RLT_ENV_VEC_ENV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/thread_pool.h"
#include "env/env.h"

namespace rlt::env {

// Bytes one environment of `spec` holds, estimated before N are built (memory checks of
// `rltrade train` and the Python module's make_vec): ~kEnvObjectBytes for the object and
// its state (the intraday env holds its options, a copy of the eligible session list and
// its portfolio; the market data and features are shared), plus its rows of the VecEnv's
// arrays: observations and terminal observations (2 x obs_dim floats), actions, info and
// terminal info (2 x info_dim doubles), rewards and flags.
inline constexpr double kEnvObjectBytes = 4096;
inline double EnvBytesEach(const EnvSpec& spec) {
  return kEnvObjectBytes + (2.0 * spec.obs_dim + spec.action.dim + 2) * sizeof(float) +
         2.0 * static_cast<double>(spec.info_names.size()) * sizeof(double);
}

class VecEnv {
 public:
  // REQUIRES: !envs.empty(), all envs share one spec shape; threads >= 1 (capped at N).
  VecEnv(std::vector<std::unique_ptr<Env>> envs, int threads);
  VecEnv(const VecEnv&) = delete;
  VecEnv& operator=(const VecEnv&) = delete;

  const EnvSpec& spec() const { return envs_.front()->spec(); }
  int num_envs() const { return num_envs_; }
  int obs_dim() const { return obs_dim_; }
  int act_dim() const { return act_dim_; }
  int info_dim() const { return info_dim_; }
  int threads() const { return pool_.num_workers(); }

  // Seeds env i with seed + i and resets all envs.
  void Reset(uint64_t seed);
  // actions: (N, act_dim). Steps every env once, auto-resetting finished ones.
  void Step(const float* actions);
  // One env at a time, for callers that drive each env on its own schedule (evolution
  // strategies run one episode per population member, learn/es.h). ResetOne seeds env i
  // with `seed` and starts its episode (observations, info, flags and running totals of
  // row i); StepOne is Step() for env i alone (same auto-reset and episode totals).
  // Calls for different i may run on different threads at once (each touches row i only).
  void ResetOne(int i, uint64_t seed);
  void StepOne(int i, const float* action);

  // The complete state (see the file comment), as bytes for a checkpoint file.
  std::string SaveState() const;
  // Restores SaveState()'s bytes. `what` names their source in errors. A header that does
  // not match this VecEnv (env count, dims, env id) is a DataError that changes nothing;
  // after any other error (truncated or corrupt data) the state is unspecified: Reset().
  Status LoadState(std::string_view bytes, const std::string& what = "env state");

  const float* observations() const { return obs_.data(); }
  float* mutable_observations() { return obs_.data(); }
  const float* terminal_observations() const { return terminal_obs_.data(); }
  const float* rewards() const { return rewards_.data(); }
  const uint8_t* terminated() const { return terminated_.data(); }
  const uint8_t* truncated() const { return truncated_.data(); }
  bool done(int i) const { return terminated_[i] || truncated_[i]; }
  const double* info() const { return info_.data(); }
  const double* terminal_info() const { return terminal_info_.data(); }
  const double* episode_returns() const { return episode_return_.data(); }
  const int64_t* episode_lengths() const { return episode_length_.data(); }
  Env& env(int i) { return *envs_[i]; }

 private:
  void StepSlice(int worker, const float* actions);

  std::vector<std::unique_ptr<Env>> envs_;
  int num_envs_, obs_dim_, act_dim_, info_dim_;
  WorkerPool pool_;
  std::vector<float> obs_, terminal_obs_, rewards_;
  std::vector<uint8_t> terminated_, truncated_;
  std::vector<double> info_, terminal_info_;
  std::vector<double> running_return_, episode_return_;
  std::vector<int64_t> running_length_, episode_length_;
};

}  // namespace rlt::env

#endif  // RLT_ENV_VEC_ENV_H_
