// rltrade env: Google Benchmark micro-benchmarks of the environment engine.
// Items processed = env steps. Compare with `rltrade bench env` (whole-engine figure).
#include <benchmark/benchmark.h>

#include "core/rng.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "market/synth.h"

namespace rlt::env {
namespace {

std::shared_ptr<const MarketDataset> Dataset() {
  static std::shared_ptr<const MarketDataset> data = [] {
    market::SynthOptions so;
    so.num_days = 250;
    auto md = market::GenerateSynthetic(so);
    DatasetOptions dopt;
    dopt.preset = "fast22";
    return PrepareMarketDataset(std::move(md->symbols.front()), dopt, DateRange{}).value();
  }();
  return data;
}

void BM_IntradayVecEnvStep(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  EnvContext ctx;
  ctx.market = Dataset();
  VecEnv vec(MakeEnvs("intraday", ctx, n).value(), threads);
  vec.Reset(1);
  constexpr int kPool = 64;
  std::vector<float> actions(static_cast<size_t>(n) * 2 * kPool);
  Rng rng(1);
  for (auto& a : actions) a = static_cast<float>(rng.Uniform(-1.0, 1.0));
  int64_t i = 0;
  for (auto _ : state) {
    vec.Step(&actions[(i++ % kPool) * n * 2]);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_IntradayVecEnvStep)->Args({1, 1})->Args({256, 1})->Args({256, 2})->UseRealTime();

}  // namespace
}  // namespace rlt::env

BENCHMARK_MAIN();
