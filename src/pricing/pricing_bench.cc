// Micro-benchmarks of the pricing library: the vectorised BSM batch (double and float,
// price only and with all Greeks) against the scalar reference loop, and the American
// models per option. Items per second = options per second.
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "pricing/greeks_bench.h"
#include "pricing/pricing.h"

namespace rlt::pricing {
namespace {

template <typename T>
using Data = GreeksBatchData<T>;

template <typename T>
void BM_BsmGreeksBatch(benchmark::State& state) {
  Data<T> d(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(BsmGreeksBatch(d.Inputs(), d.Outputs()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BsmGreeksBatch<double>)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_BsmGreeksBatch<float>)->Arg(4096)->Arg(1 << 20);

void BM_BsmGreeksBatchTwoThreads(benchmark::State& state) {
  Data<double> d(state.range(0));
  WorkerPool pool(2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(BsmGreeksBatch(d.Inputs(), d.Outputs(), &pool));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BsmGreeksBatchTwoThreads)->Arg(65536)->UseRealTime();

void BM_BsmPriceBatch(benchmark::State& state) {
  Data<double> d(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(BsmPriceBatch(d.Inputs(), d.out[0].data()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BsmPriceBatch)->Arg(4096);

void BM_BsmGreeksScalarReference(benchmark::State& state) {
  Data<double> d(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(BsmGreeksBatchReference(d.Inputs(), d.Outputs()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BsmGreeksScalarReference)->Arg(4096);

void BM_AmericanModel(benchmark::State& state) {
  const Model model = static_cast<Model>(state.range(0));
  Data<double> d(256);
  ModelOptions o;
  o.binomial_steps = 200;
  for (auto _ : state) {
    benchmark::DoNotOptimize(PriceBatch(model, d.Inputs(), d.out[0].data(), o));
  }
  state.SetItemsProcessed(state.iterations() * 256);
  state.SetLabel(ModelName(model));
}
BENCHMARK(BM_AmericanModel)
    ->Arg(static_cast<int>(Model::kBinomial))
    ->Arg(static_cast<int>(Model::kBaroneAdesiWhaley))
    ->Arg(static_cast<int>(Model::kBjerksundStensland));

}  // namespace
}  // namespace rlt::pricing

BENCHMARK_MAIN();
