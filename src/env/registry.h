// rltrade env: the explicit registry of environments by short id.
//
// Ids (registry.cc): "example" (the annotated template), "intraday" (market data),
// "cartpole" and "pendulum" (Gymnasium's classic-control tasks, to validate learners),
// "hedging" (delta-hedging a short option, envs/delta_hedging.h), "options" (a portfolio
// of an index and listed options on it, envs/options_portfolio.h).
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
#include <utility>
#include <vector>

#include "core/options.h"
#include "core/status.h"
#include "env/env.h"
#include "env/market_dataset.h"

namespace rlt::env {

// What a factory gets: the [env] settings (minus `id` and `num_envs`) and, for market
// environments, the prepared dataset.
struct EnvContext {
  std::map<std::string, std::string> settings;
  std::shared_ptr<const MarketDataset> market;
  // Data an environment prepares once for all its instances (EnvEntry::prepare): MakeEnvs
  // sets it before calling the factory; empty for environments without a prepare hook.
  std::shared_ptr<const void> prepared;
};

using EnvFactory = Result<std::unique_ptr<Env>> (*)(const EnvContext&);
// The keys of an environment's options struct (its VisitFields names, in order).
using EnvKeys = std::vector<std::string> (*)();
// Applies one [env] setting to a default options struct: a bad value's error (without
// place), Ok otherwise (unknown keys included: check them against EnvKeys first).
using EnvSettingCheck = Status (*)(const std::string& key, const std::string& value);
// Every option of the environment as (key, value text) rows in declaration order: the
// defaults with `settings` applied (DescribeOptions). Errors as SetOptions (unknown key,
// bad value). The saved config.toml records these (train::ResolveEnvSection).
// Builds the read-only data every instance of an environment shares (e.g. the options
// environment's priced chain), once per MakeEnvs call.
using EnvPrepare =
    Result<std::shared_ptr<const void>> (*)(const std::map<std::string, std::string>& settings);
using EnvOptionRows = Result<std::vector<std::pair<std::string, std::string>>> (*)(
    const std::map<std::string, std::string>& settings);
// Every option of the environment with its type, default, doc and allowed values
// (DocumentOptions of a default struct): the [env] tables of docs/config.md.
using EnvOptionDocs = std::vector<OptionDoc> (*)();

struct EnvEntry {
  const char* id;
  const char* summary;
  bool needs_market_data;
  EnvFactory make;
  EnvKeys keys = nullptr;
  EnvSettingCheck check_setting = nullptr;
  EnvOptionRows option_rows = nullptr;
  EnvOptionDocs option_docs = nullptr;
  EnvPrepare prepare = nullptr;
};

// Checks one [env] key of environment `id` before any environment is built, so that a
// config can name the key's file:line: an unknown key is an error naming the nearest of
// the environment's keys and `extra_keys` (those the caller handles, e.g. id, num_envs);
// a bad value is the options struct's error. Unknown ids are Ok (MakeEnvs names them).
Status CheckEnvSetting(const std::string& id, const std::string& key, const std::string& value,
                       const std::vector<std::string>& extra_keys);

const std::vector<EnvEntry>& EnvRegistry();

// EnvOptionRows of environment `id`: every option's effective value. Unknown ids are an
// error naming the nearest id.
Result<std::vector<std::pair<std::string, std::string>>> EnvOptionValues(
    const std::string& id, const std::map<std::string, std::string>& settings);

// Builds `num_envs` environments of kind `id`. Unknown ids name the nearest valid id.
Result<std::vector<std::unique_ptr<Env>>> MakeEnvs(const std::string& id, const EnvContext& ctx,
                                                   int num_envs);

}  // namespace rlt::env

#endif  // RLT_ENV_REGISTRY_H_
