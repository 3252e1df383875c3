// Micro-benchmarks of the pricing library: the vectorised BSM batch (double and float,
// price only and with all Greeks) against the scalar reference loop, and the American
// models per option. Items per second = options per second.
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "pricing/pricing.h"

namespace rlt::pricing {
namespace {

template <typename T>
struct Data {
  explicit Data(size_t n) : type(n), in(6, std::vector<T>(n)), out(8, std::vector<T>(n)) {
    Rng rng(1);
    for (size_t i = 0; i < n; ++i) {
      type[i] = rng.Bernoulli(0.5) ? OptionType::kCall : OptionType::kPut;
      in[0][i] = static_cast<T>(rng.Uniform(50, 150));                // spot
      in[1][i] = static_cast<T>(100 * std::exp(0.2 * rng.Normal()));  // strike
      in[2][i] = static_cast<T>(rng.Uniform(0, 0.08));                // rate
      in[3][i] = static_cast<T>(rng.Uniform(0, 0.04));                // div
      in[4][i] = static_cast<T>(rng.Uniform(0.1, 0.6));               // vol
      in[5][i] = static_cast<T>(rng.Uniform(1 / 365.0, 2.0));         // time
    }
  }
  OptionBatch<T> Inputs() const {
    return {type.size(),  type.data(),  in[0].data(), in[1].data(),
            in[2].data(), in[3].data(), in[4].data(), in[5].data()};
  }
  GreeksBatch<T> Outputs() {
    return {out[0].data(), out[1].data(), out[2].data(), out[3].data(),
            out[4].data(), out[5].data(), out[6].data(), out[7].data()};
  }
  std::vector<OptionType> type;
  std::vector<std::vector<T>> in, out;
};

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
