// rltrade env: the explicit registry of environments by short id.
//
// Ids (registry.cc): "example" (the annotated template), "intraday" (market data),
// "cartpole" and "pendulum" (Gymnasium's classic-control tasks, to validate learners).
// Adding an environment takes, besides its file pair env/envs/<name>.{h,cc}: in
// registry.cc one include, one Make<Name> wrapper and one EnvRegistry() entry; the .cc
// and its test in env/CMakeLists.txt; and a case in env_state_test.cc (the test
// EnvStateCases.CoverEveryRegisteredEnvironment fails until it exists). See
// docs/ARCHITECTURE.md, "Where does my change go".
#ifndef RLT_ENV_REGISTRY_H_
#define RLT_ENV_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "env/env.h"
#include "env/market_dataset.h"

namespace rlt::env {

// What a factory gets: the [env] settings (minus `id` and `num_envs`) and, for market
// environments, the prepared dataset.
struct EnvContext {
  std::map<std::string, std::string> settings;
  std::shared_ptr<const MarketDataset> market;
};

using EnvFactory = Result<std::unique_ptr<Env>> (*)(const EnvContext&);

struct EnvEntry {
  const char* id;
  const char* summary;
  bool needs_market_data;
  EnvFactory make;
};

const std::vector<EnvEntry>& EnvRegistry();

// Builds `num_envs` environments of kind `id`. Unknown ids name the nearest valid id.
Result<std::vector<std::unique_ptr<Env>>> MakeEnvs(const std::string& id, const EnvContext& ctx,
                                                   int num_envs);

}  // namespace rlt::env

#endif  // RLT_ENV_REGISTRY_H_
