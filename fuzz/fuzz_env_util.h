// rltrade fuzz: a small synthetic market dataset and environment helpers for the
// targets that build environments (config_fuzz, vec_env_state_fuzz).
#ifndef RLT_FUZZ_FUZZ_ENV_UTIL_H_
#define RLT_FUZZ_FUZZ_ENV_UTIL_H_

#include <cstdlib>
#include <memory>
#include <vector>

#include "env/market_dataset.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "fuzz_util.h"
#include "market/synth.h"

namespace rlt::fuzz {

// Four synthetic five-minute sessions from 2023-01-02 (built once, shared, never freed).
inline std::shared_ptr<const env::MarketDataset> SmallDataset() {
  static const std::shared_ptr<const env::MarketDataset> kData = [] {
    market::SynthOptions so;
    so.num_days = 4;
    so.seed = 3;
    auto md = market::GenerateSynthetic(so);
    FUZZ_REQUIRE(md.ok(), md.status().message());
    env::DatasetOptions dopt;
    dopt.preset = "fast22";
    auto ds = env::PrepareMarketDataset(std::move(md->symbols.front()), dopt, env::DateRange{});
    FUZZ_REQUIRE(ds.ok(), ds.status().message());
    return ds.value();
  }();
  return kData;
}

// Steps `vec` `steps` times with actions alternating between the spaces' low and high
// ends (discrete: action 0 and n - 1). What is checked is that nothing crashes.
inline void StepSome(env::VecEnv& vec, int steps) {
  const env::ActionSpace& a = vec.spec().action;
  std::vector<float> actions(static_cast<size_t>(vec.num_envs()) * a.dim);
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < vec.num_envs(); ++i) {
      for (int d = 0; d < a.dim; ++d) {
        float v = 0;
        if (a.discrete) {
          v = static_cast<float>(((t + i) % 2) * (a.n - 1));
        } else if (!a.low.empty() && !a.high.empty()) {
          v = (t + i + d) % 2 ? a.high[d] : a.low[d];
        }
        actions[static_cast<size_t>(i) * a.dim + d] = v;
      }
    }
    vec.Step(actions.data());
  }
}

}  // namespace rlt::fuzz

#endif  // RLT_FUZZ_FUZZ_ENV_UTIL_H_
