// rltrade env: the registry — one line per environment.
#include "env/registry.h"

#include "core/options.h"
#include "env/envs/cartpole.h"
#include "env/envs/example.h"
#include "env/envs/intraday.h"
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
Result<std::unique_ptr<Env>> MakeIntraday(const EnvContext& ctx) {
  return MakeIntradayEnv(ctx.settings, ctx.market);
}

}  // namespace

const std::vector<EnvEntry>& EnvRegistry() {
  static const std::vector<EnvEntry> kEntries = {
      {"example", "toy random-walk sign prediction (the template)", false, MakeExample},
      {"intraday", "intraday stock trading on one symbol's bars", true, MakeIntraday},
      {"cartpole", "Gymnasium CartPole-v1 (learner validation)", false, MakeCartPole},
      {"pendulum", "Gymnasium Pendulum-v1 (learner validation)", false, MakePendulum},
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
    std::vector<std::unique_ptr<Env>> envs;
    envs.reserve(num_envs);
    for (int i = 0; i < num_envs; ++i) {
      RLT_ASSIGN_OR_RETURN(auto env, e.make(ctx));
      envs.push_back(std::move(env));
    }
    return envs;
  }
  return Status::InvalidArgument("unknown environment id '" + id + "'; did you mean '" +
                                 NearestName(id, ids) + "'?");
}

}  // namespace rlt::env
