// rltrade learn: a VecNormalizer's statistics in LibTorch's archive (normalizer.pt), the
// layout of checkpoints written before the native checkpoint format: one module whose
// float64 buffers are obs_mean (obs_dim), obs_var (obs_dim), obs_count (1), ret_mean (1),
// ret_var (1), ret_count (1) and returns (num_envs). Compiled with LibTorch only.
// Thread-compatible.
#ifndef RLT_LEARN_TORCH_NORMALIZER_H_
#define RLT_LEARN_TORCH_NORMALIZER_H_

#include <string>

#include "core/status.h"
#include "learn/normalize.h"

namespace rlt::learn {

// The archive's bytes for `normalizer`'s statistics.
Result<std::string> NormalizerToTorchArchive(const VecNormalizerImpl& normalizer);
// Reads `path` (a normalizer.pt) into `normalizer`: a DataError naming the file when it is
// not such an archive, a buffer is missing, its length differs from the normaliser's
// obs_dim / num_envs, or a value is not finite.
Status LoadNormalizerFromTorchArchive(const std::string& path, VecNormalizerImpl* normalizer);

}  // namespace rlt::learn

#endif  // RLT_LEARN_TORCH_NORMALIZER_H_
