// Benchmarks for the features subsystem: ComputeFeatures on 100k synthetic minute bars.
#include <benchmark/benchmark.h>

#include "features/features.h"
#include "features/test_util.h"

namespace rlt::features {
namespace {

void BM_ComputeFeatures(benchmark::State& state, const char* preset) {
  const market::Bars bars = testing::RandomBars(100000, 390, 1);
  for (auto _ : state) {
    Result<FeatureMatrix> m = ComputeFeatures(bars, preset);
    benchmark::DoNotOptimize(m.value().values.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(bars.size()));
}
BENCHMARK_CAPTURE(BM_ComputeFeatures, fast22, "fast22")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ComputeFeatures, scaled, "scaled")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rlt::features

BENCHMARK_MAIN();
