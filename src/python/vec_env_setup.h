// rltrade python: a VecEnv from make_vec's arguments, built exactly as `rltrade train`
// builds its environments: the options become a config ([env] id, num_envs and every key;
// [data], [features], [split] from the section dicts) and go through train::BuildEnvSetup
// and env::MakeEnvs, so a key means the same in TOML and in Python, and a bad one gets
// the same message. A market environment without [split] gets the default split (its
// sessions' first 60% train, next 20% validation, last 20% test). Shared by the extension
// module and the parity harness (parity_harness.cc).
#ifndef RLT_PYTHON_VEC_ENV_SETUP_H_
#define RLT_PYTHON_VEC_ENV_SETUP_H_

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/status.h"
#include "env/vec_env.h"

namespace rlt::python {

// (section, key, value text): section "env", "data", "features" or "split".
using Setting = std::tuple<std::string, std::string, std::string>;

// num_threads 0 = the cores this process may use (at most num_envs).
Result<std::unique_ptr<env::VecEnv>> MakeVecEnv(const std::string& env_id, int num_envs,
                                                int num_threads,
                                                const std::vector<Setting>& settings);

}  // namespace rlt::python

#endif  // RLT_PYTHON_VEC_ENV_SETUP_H_
