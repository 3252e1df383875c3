// rltrade learn: checkpoints written before the native checkpoint format, whose parts are
// LibTorch archives (PPO "rltrade-ppo-checkpoint 2": policy.pt, optimizer.pt,
// normalizer.pt, state.pt; evolution strategies "rltrade-es-checkpoint 1": policy.pt,
// normalizer.pt). Compiled with LibTorch only: such a checkpoint loads directly in a build
// with LibTorch, and ConvertCheckpoint (`rltrade checkpoint convert`) rewrites it in the
// native format for every build.
// Thread-compatible.
#ifndef RLT_LEARN_TORCH_LEGACY_H_
#define RLT_LEARN_TORCH_LEGACY_H_

#include <filesystem>
#include <string>

#include "core/status.h"
#include "learn/checkpoint_parts.h"
#include "learn/normalize.h"
#include "native/tensor_file.h"

namespace rlt::learn {

// The float parameters of a policy.pt, by their dotted names (policy.rlt's tensors); a
// DataError naming the file when it is unreadable or holds a NaN or inf.
Result<native::TensorFile> ReadPolicyArchive(const std::string& path);
// The statistics of a normalizer.pt.
Result<NormalizerStats> ReadNormalizerArchive(const std::string& path);
// Every part of a version-2 PPO checkpoint directory (everything but its envs.bin, member
// and extra files, which did not change format).
Result<PpoCheckpointParts> ReadLegacyPpoParts(const std::filesystem::path& dir);

// Rewrites checkpoint `dir` (PPO version 2 or ES version 1) in the native format in place,
// through a staging copy renamed over it, so a failure leaves it as it was. A checkpoint
// already in the native format is left alone (*converted = false).
Status ConvertCheckpoint(const std::filesystem::path& dir, bool* converted);

}  // namespace rlt::learn

#endif  // RLT_LEARN_TORCH_LEGACY_H_
