// rltrade learn: one small data-parallel PPO run, shared by the test that
// checks the K-process run against one process (data_parallel_test.cc) and the worker it
// launches under mpirun (data_parallel_worker.cc).
// Not thread-safe.
#ifndef RLT_LEARN_DATA_PARALLEL_RUN_H_
#define RLT_LEARN_DATA_PARALLEL_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/status.h"

namespace rlt::learn::testing {

struct DataParallelResult {
  std::vector<float> params;  // the native parameters after the updates (groups in order)
  uint64_t hash = 0;          // NativeLearner::ParamHash
  int64_t total_steps = 0;
  double ep_rew_mean = 0, explained_variance = 0, approx_kl = 0;
  int64_t episodes_seen = 0;
};

// Trains `updates` PPO updates of env `id` (cartpole or pendulum; with the suffix _lstm,
// a recurrent policy: 16 LSTM units, separate actor and critic LSTMs, sequence_length 16)
// with num_envs
// environments on this member of `group` (seed 7, observation and reward normalisation on,
// n_steps 64, batch_size 16 * num_envs * group.size(), 4 epochs).
Result<DataParallelResult> RunDataParallel(const std::string& id, int num_envs, int updates,
                                           Collective& group);

// The result as text (one value per line, floats in hexadecimal so they survive exactly),
// and back.
std::string FormatResult(const DataParallelResult& r);
Result<DataParallelResult> ParseResult(const std::string& text);

}  // namespace rlt::learn::testing

#endif  // RLT_LEARN_DATA_PARALLEL_RUN_H_
