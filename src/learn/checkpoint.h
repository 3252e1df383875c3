// rltrade learn: crash-safe PPO checkpoints.
//
// A checkpoint is one directory, staged and renamed into place with runlog::StagingDir
// (an existing `<dir>` is replaced atomically), so a crash never leaves a half-written
// checkpoint under the final name. Missing parent directories are created.
//   FORMAT          "rltrade-ppo-checkpoint 1" and the shapes (num_envs, obs_dim, act_dim)
//   options.txt     the resolved PPO options (key = value) and policy options
//   <extra files>   caller-supplied files, e.g. {"config.toml", resolved config}
//   policy.pt       ActorCritic parameters and buffers (torch::save)
//   normalizer.pt   VecNormalizer statistics incl. per-env discounted returns
//   optimizer.pt    Adam state (torch::save of the optimizer)
//   state.pt        total_steps, iterations, the trainer's torch generator state, torch's
//                   global CPU generator state, last episode starts, the 100-episode window
// Not included: the environments' own state and RNGs (Env::rng_ is protected and envs
// have no serialisation). A resumed run therefore continues from whatever state the
// caller's VecEnv is in — normally freshly Reset() — like SB3, which saves no env state.
// LoadCheckpoint() requires a trainer built with the same env shapes and options.
#ifndef RLT_LEARN_CHECKPOINT_H_
#define RLT_LEARN_CHECKPOINT_H_

#include <filesystem>
#include <map>
#include <string>

#include "core/status.h"
#include "learn/trainer.h"

namespace rlt::learn {

// extra_files: file name (no '/') -> contents, written into the checkpoint as well.
Status SaveCheckpoint(const std::filesystem::path& dir, PpoTrainer& trainer,
                      const std::map<std::string, std::string>& extra_files = {});
Status LoadCheckpoint(const std::filesystem::path& dir, PpoTrainer& trainer);

}  // namespace rlt::learn

#endif  // RLT_LEARN_CHECKPOINT_H_
