// rltrade learn tests: helpers shared by the trainer and checkpoint tests (not part of the
// library): the example environment vectorised, and PPO settings small enough for a test.
#ifndef RLT_LEARN_TEST_UTIL_H_
#define RLT_LEARN_TEST_UTIL_H_

#include <memory>
#include <string>
#include <utility>

#include "core/status.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "learn/ppo.h"

namespace rlt::learn::testing_util {

// `n` example environments (env/envs/example.h) stepped on one thread.
inline std::unique_ptr<env::VecEnv> MakeExampleVecEnv(int n, double persistence = 0.7) {
  auto envs = env::MakeEnvs("example",
                            {{{"persistence", std::to_string(persistence)}}, nullptr, nullptr}, n);
  RLT_CHECK(envs.ok());
  return std::make_unique<env::VecEnv>(std::move(*envs), 1);
}

// 16 steps per environment, minibatches of 32, 3 epochs.
inline PpoOptions SmallPpo() {
  PpoOptions o;
  o.n_steps = 16;
  o.batch_size = 32;
  o.n_epochs = 3;
  o.total_timesteps = 10000;
  return o;
}

}  // namespace rlt::learn::testing_util

#endif  // RLT_LEARN_TEST_UTIL_H_
