// rltrade learn: crash-safe PPO checkpoints.
//
// A checkpoint is one directory, staged and renamed into place with runlog::StagingDir
// (an existing `<dir>` is replaced atomically), so a crash never leaves a half-written
// checkpoint under the final name. Missing parent directories are created.
//   FORMAT          "rltrade-ppo-checkpoint 3" and the shapes (num_envs, obs_dim, act_dim)
//   options.txt     the resolved PPO options (key = value) and policy options
//   <extra files>   caller-supplied files, e.g. {"config.toml", resolved config}
//   policy.rlt      every parameter of the policy          } tensor files
//   optimizer.rlt   Adam's moments, step and learning rate } (native/tensor_file.h),
//   normalizer.rlt  VecNormalizer statistics               } read and written without
//   state.rlt       counters, episode window, the learner's random stream and recurrent
//                   states                                  LibTorch; their tensors are
//                   listed in learn/checkpoint_parts.h
// Either backend ([policy] backend) writes and loads the same files (its LearnerState,
// learn/learner.h); a checkpoint loads into a trainer of the other backend, which then
// keeps its own random stream.
//   envs.bin        the VecEnv's state (env/vec_env.h SaveState): every env's RNG and
//                   episode state, the observation/info/reward/flag buffers and the
//                   running return and length of each unfinished episode
// With all of it, a trainer that loads a checkpoint continues exactly as the one that
// saved it would have: same parameters and metrics bit for bit (same options and thread
// count; the env worker count does not matter), across a process restart.
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
// Version 2 checkpoints (written before the native format: the same files with LibTorch
// archives policy.pt, optimizer.pt, normalizer.pt and state.pt for the parts) load in
// builds with LibTorch (learn/torch_legacy.h) and are refused with a pointer to
// ConvertCheckpoints (`rltrade checkpoint convert`) in builds without. Version 1
// checkpoints (no envs.bin) are refused by the FORMAT check.
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
#include <vector>

#include "core/status.h"
#include "env/env.h"
#include "learn/normalize.h"
#include "learn/policy.h"
#include "learn/trainer.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// Evolution strategies (EsTrainer, learn/es.h) write the same directory layout with
//   FORMAT          "rltrade-es-checkpoint 2" and the shapes (version 1: normalizer.pt
//                   and policy.pt, read as version-2 PPO checkpoints are)
//   options.txt     the observation-normalisation keys every loader reads (ppo.norm_obs,
//                   ppo.clip_obs, ppo.norm_reward = false, ...), the es.* options and the
//                   policy options
//   policy.rlt, normalizer.rlt   as above (the actor searched; the value head and log_std
//                   at their initial values)
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

// Every tensor of `tensors` (read from `file`) is finite; otherwise a DataError naming
// `file` and the first tensor with a NaN or inf.
Status CheckFiniteTensors(const native::TensorFile& tensors, const std::string& file);

// The policy parameters of checkpoint `dir` (an actor-critic of `options`): policy.rlt, or
// in checkpoints written before it existed policy.pt (builds with LibTorch). Checked finite.
Result<native::TensorFile> ReadPolicyParameters(const std::filesystem::path& dir, int obs_dim,
                                                const env::ActionSpace& action,
                                                const PolicyOptions& options);
// The observation and reward statistics of checkpoint `dir` (normalizer.rlt, or
// normalizer.pt in builds with LibTorch) in a normaliser of `options`; lengths checked
// against obs_dim and num_envs.
Result<VecNormalizer> ReadNormalizer(const std::filesystem::path& dir, int obs_dim, int num_envs,
                                     const NormalizeOptions& options);

// Rewrites every checkpoint at or below `path` (a checkpoint directory, or a run directory
// with final/, checkpoints/step_<N>/ and seed directories) that predates the native format
// in place (learn/torch_legacy.h ConvertCheckpoint), stopping at the first failure. Lists
// the converted directories and those already native. Refused without LibTorch (the
// message says how to get it) or when `path` holds no checkpoint.
Status ConvertCheckpoints(const std::filesystem::path& path, std::vector<std::string>* converted,
                          std::vector<std::string>* current);

}  // namespace rlt::learn

#endif  // RLT_LEARN_CHECKPOINT_H_
