// rltrade learn: crash-safe PPO checkpoints.
//
// A checkpoint is one directory, staged and renamed into place with runlog::StagingDir
// (an existing `<dir>` is replaced atomically), so a crash never leaves a half-written
// checkpoint under the final name. Missing parent directories are created.
//   FORMAT          "rltrade-ppo-checkpoint 2" and the shapes (num_envs, obs_dim, act_dim)
//   options.txt     the resolved PPO options (key = value) and policy options
//   <extra files>   caller-supplied files, e.g. {"config.toml", resolved config}
//   policy.pt       ActorCritic parameters and buffers (torch::save)
//   policy.rlt      the same parameters as a native tensor file (native/tensor_file.h;
//                   readable without LibTorch, learn::LoadPolicyFromTensorFile)
//   normalizer.pt   VecNormalizer statistics incl. per-env discounted returns
//   optimizer.pt    Adam state (torch::save of the optimizer). Its bytes differ between
//                   processes even for equal state: LibTorch 1.13 keys the state by the
//                   parameters' TensorImpl addresses and maps them back by position on load
//   state.pt        total_steps, iterations, the trainer's torch generator state, torch's
//                   global CPU generator state, last episode starts, the 100-episode window
//                   and, with the native backend, its RNG state (native_rng)
// Either backend ([policy] backend) writes and loads the same files: the native learner
// copies its parameters and Adam state into the torch policy and optimizer before saving
// and takes them back after loading (learn/native_learner.h).
//   envs.bin        the VecEnv's state (env/vec_env.h SaveState): every env's RNG and
//                   episode state, the observation/info/reward/flag buffers and the
//                   running return and length of each unfinished episode
// With all of it, a trainer that loads a checkpoint continues exactly as the one that
// saved it would have: same parameters and metrics bit for bit (same options and LibTorch
// thread count; the env worker count does not matter), across a process restart.
//   group.txt, member_<r>.bin
//                   data-parallel runs (PpoTrainer::EnableDataParallel): "ranks K" and
//                   "envs_per_rank N", and the state only rank r holds (its envs.bin, its
//                   normaliser's per-env discounted returns, its episode-start flags) for
//                   r = 1..K-1; rank 0's is in the files above. SaveCheckpoint is then a
//                   collective: every rank calls it, rank 0 writes, and every rank returns
//                   rank 0's outcome. LoadCheckpoint on a group of the same K and N restores
//                   each rank's own state (the run continues bit for bit); on any other K
//                   or N (or without a group) it keeps the policy, optimiser, normalisers and
//                   counters and starts every environment afresh (a note on stderr).
//   MANIFEST        written last (runlog/manifest.h): size and CRC-32C of every file above
//                   and of any other file in the directory
// Version 1 checkpoints (no envs.bin) are refused by the FORMAT check.
// Loading (LoadCheckpoint here, PolicyRunner::Load for eval and signal) first verifies
// the MANIFEST (a changed, missing or unlisted file is a DataError naming the file), then
// that every parameter and buffer read is finite (a NaN/inf is a DataError naming the
// file and the tensor).
// LoadCheckpoint() requires a trainer built with the same env kind, env options (and
// market data), shapes and PPO/policy options; it overwrites the trainer's and the
// VecEnv's state.
#ifndef RLT_LEARN_CHECKPOINT_H_
#define RLT_LEARN_CHECKPOINT_H_

#include <filesystem>
#include <map>
#include <string>

#include "core/status.h"
#include "learn/trainer.h"

namespace rlt::learn {

// Evolution strategies (EsTrainer, learn/es.h) write the same directory layout with
//   FORMAT          "rltrade-es-checkpoint 1" and the shapes
//   options.txt     the observation-normalisation keys every loader reads (ppo.norm_obs,
//                   ppo.clip_obs, ppo.norm_reward = false, ...), the es.* options and the
//                   policy options
//   policy.pt, policy.rlt, normalizer.pt   as above (the actor searched; the value head
//                   and log_std at their initial values)
//   es_state.bin    EsTrainer::SaveState(): generation, steps, Adam's moments, parameters
//   <extra files>, MANIFEST
// and no environment state: a generation depends only on the seed, its number and the
// parameters, so an ES checkpoint resumes bit for bit on any number of ranks. The Trainer
// overloads below dispatch on the trainer's kind.
//
// extra_files: file name (no '/') -> contents, written into the checkpoint as well.
Status SaveCheckpoint(const std::filesystem::path& dir, PpoTrainer& trainer,
                      const std::map<std::string, std::string>& extra_files = {});
Status LoadCheckpoint(const std::filesystem::path& dir, PpoTrainer& trainer);
Status SaveCheckpoint(const std::filesystem::path& dir, Trainer& trainer,
                      const std::map<std::string, std::string>& extra_files = {});
Status LoadCheckpoint(const std::filesystem::path& dir, Trainer& trainer);

// The checks every loader runs: `dir`/MANIFEST lists every file of `dir` and each matches.
Status VerifyCheckpointFiles(const std::filesystem::path& dir);

// Every parameter and buffer of `module` (loaded from `file`) is finite; otherwise a
// DataError naming `file` and the first tensor with a NaN or inf.
Status CheckFiniteModule(const torch::nn::Module& module, const std::string& file);

}  // namespace rlt::learn

#endif  // RLT_LEARN_CHECKPOINT_H_
