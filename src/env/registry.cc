// rltrade env: the registry — one line per environment.
#include "env/registry.h"

#include <algorithm>

#include "core/options.h"
#include "env/envs/cartpole.h"
#include "env/envs/delta_hedging.h"
#include "env/envs/example.h"
#include "env/envs/intraday.h"
#include "env/envs/memory_cue.h"
#include "env/envs/options_portfolio.h"
#include "env/envs/pendulum.h"

namespace rlt::env {
namespace {

Result<std::unique_ptr<Env>> MakeExample(const EnvContext& ctx) {
  return MakeExampleEnv(ctx.settings);
}
Result<std::unique_ptr<Env>> MakeCartPole(const EnvContext& ctx) {
  return MakeCartPoleEnv(ctx.settings);
}
Result<std::unique_ptr<Env>> MakePendulum(const EnvContext& ctx) {
  return MakePendulumEnv(ctx.settings);
}
Result<std::unique_ptr<Env>> MakeMemoryCue(const EnvContext& ctx) {
  return MakeMemoryCueEnv(ctx.settings);
}
Result<std::unique_ptr<Env>> MakeHedging(const EnvContext& ctx) {
  return MakeHedgingEnv(ctx.settings, ctx.prepared);
}
Result<std::unique_ptr<Env>> MakeOptions(const EnvContext& ctx) {
  return MakeOptionsPortfolioEnv(ctx.settings, ctx.prepared);
}
Result<std::unique_ptr<Env>> MakeIntraday(const EnvContext& ctx) {
  return MakeIntradayEnv(ctx.settings, ctx.market);
}

template <typename Options>
std::vector<std::string> KeysOf() {
  std::vector<std::string> keys;
  for (const auto& row : DescribeOptions(Options())) keys.push_back(row.key);
  return keys;
}

template <typename Options>
Result<std::vector<std::pair<std::string, std::string>>> OptionRows(
    const std::map<std::string, std::string>& settings) {
  Options options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& row : DescribeOptions(options)) rows.emplace_back(row.key, row.value);
  return rows;
}

template <typename Options>
std::vector<OptionDoc> DocsOf() {
  return DocumentOptions(Options());
}

template <typename Options>
Status CheckSetting(const std::string& key, const std::string& value) {
  Options options;
  return SetOption(options, key, value);
}

}  // namespace

const std::vector<EnvEntry>& EnvRegistry() {
  static const std::vector<EnvEntry> kEntries = {
      {"example", "toy random-walk sign prediction (the template)", false, MakeExample,
       KeysOf<ExampleOptions>, CheckSetting<ExampleOptions>, OptionRows<ExampleOptions>,
       DocsOf<ExampleOptions>},
      {"intraday", "intraday stock trading on one symbol's bars", true, MakeIntraday,
       KeysOf<IntradayOptions>, CheckSetting<IntradayOptions>, OptionRows<IntradayOptions>,
       DocsOf<IntradayOptions>},
      {"cartpole", "Gymnasium CartPole-v1 (learner validation)", false, MakeCartPole,
       KeysOf<CartPoleOptions>, CheckSetting<CartPoleOptions>, OptionRows<CartPoleOptions>,
       DocsOf<CartPoleOptions>},
      {"pendulum", "Gymnasium Pendulum-v1 (learner validation)", false, MakePendulum,
       KeysOf<PendulumOptions>, CheckSetting<PendulumOptions>, OptionRows<PendulumOptions>,
       DocsOf<PendulumOptions>},
      {"memory_cue", "remember a cue shown at the first step (recurrent policy validation)", false,
       MakeMemoryCue, KeysOf<MemoryCueOptions>, CheckSetting<MemoryCueOptions>,
       OptionRows<MemoryCueOptions>, DocsOf<MemoryCueOptions>},
      {"hedging", "delta-hedge a short European option (mean-variance reward)", false, MakeHedging,
       KeysOf<HedgingOptions>, CheckSetting<HedgingOptions>, OptionRows<HedgingOptions>,
       DocsOf<HedgingOptions>, PrepareHedging},
      {"options", "a portfolio of an index and 20 listed option buckets (self-financing)", false,
       MakeOptions, KeysOf<OptionsPortfolioOptions>, CheckSetting<OptionsPortfolioOptions>,
       OptionRows<OptionsPortfolioOptions>, DocsOf<OptionsPortfolioOptions>,
       PrepareOptionsPortfolio},
  };
  return kEntries;
}

Result<std::vector<std::unique_ptr<Env>>> MakeEnvs(const std::string& id, const EnvContext& ctx,
                                                   int num_envs) {
  if (num_envs < 1) return Status::InvalidArgument("[env] num_envs must be >= 1");
  std::vector<std::string> ids;
  for (const EnvEntry& e : EnvRegistry()) {
    ids.emplace_back(e.id);
    if (id != e.id) continue;
    if (e.needs_market_data && !ctx.market) {
      return Status::InvalidArgument("environment '" + id + "' needs market data ([data] file)");
    }
    EnvContext local = ctx;
    if (e.prepare != nullptr && !local.prepared) {
      RLT_ASSIGN_OR_RETURN(local.prepared, e.prepare(ctx.settings));
    }
    std::vector<std::unique_ptr<Env>> envs;
    envs.reserve(num_envs);
    for (int i = 0; i < num_envs; ++i) {
      RLT_ASSIGN_OR_RETURN(auto env, e.make(local));
      envs.push_back(std::move(env));
    }
    return envs;
  }
  return Status::InvalidArgument("unknown environment id '" + id + "'; did you mean '" +
                                 NearestName(id, ids) + "'?");
}

Result<std::vector<std::pair<std::string, std::string>>> EnvOptionValues(
    const std::string& id, const std::map<std::string, std::string>& settings) {
  std::vector<std::string> ids;
  for (const EnvEntry& e : EnvRegistry()) {
    ids.emplace_back(e.id);
    if (id == e.id && e.option_rows != nullptr) return e.option_rows(settings);
  }
  return Status::InvalidArgument("unknown environment id '" + id + "'; did you mean '" +
                                 NearestName(id, ids) + "'?");
}

Status CheckEnvSetting(const std::string& id, const std::string& key, const std::string& value,
                       const std::vector<std::string>& extra_keys) {
  for (const EnvEntry& e : EnvRegistry()) {
    if (id != e.id || e.keys == nullptr || e.check_setting == nullptr) continue;
    std::vector<std::string> keys = e.keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      keys.insert(keys.end(), extra_keys.begin(), extra_keys.end());
      return Status::InvalidArgument("unknown key '" + key + "' for environment '" + id +
                                     "'; did you mean '" + NearestName(key, keys) + "'?");
    }
    return e.check_setting(key, value);
  }
  return Status::Ok();
}

}  // namespace rlt::env
