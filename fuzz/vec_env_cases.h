// rltrade fuzz: the environments whose saved states vec_env_state_fuzz loads (shared with
// seed_gen, which writes the seed states).
#ifndef RLT_FUZZ_VEC_ENV_CASES_H_
#define RLT_FUZZ_VEC_ENV_CASES_H_

#include <map>
#include <memory>
#include <string>

#include "env/registry.h"
#include "env/vec_env.h"
#include "fuzz_env_util.h"

namespace rlt::fuzz {

struct VecEnvCase {
  const char* id;
  int num_envs;
  std::map<std::string, std::string> settings;
};

inline const std::vector<VecEnvCase>& VecEnvCases() {
  static const std::vector<VecEnvCase> kCases = {
      {"cartpole", 3, {}}, {"pendulum", 2, {}},
      {"intraday", 2, {}}, {"intraday", 2, {{"reward", "shaped"}, {"episode_sessions", "2"}}},
      {"example", 2, {}},
  };
  return kCases;
}

// A fresh VecEnv (one worker thread) of case `c`, reset with seed 5.
inline std::unique_ptr<env::VecEnv> MakeCase(const VecEnvCase& c) {
  env::EnvContext ctx;
  ctx.settings = c.settings;
  if (std::string(c.id) == "intraday") ctx.market = SmallDataset();
  auto envs = env::MakeEnvs(c.id, ctx, c.num_envs);
  FUZZ_REQUIRE(envs.ok(), envs.status().message());
  auto vec = std::make_unique<env::VecEnv>(std::move(*envs), 1);
  vec->Reset(5);
  return vec;
}

}  // namespace rlt::fuzz

#endif  // RLT_FUZZ_VEC_ENV_CASES_H_
