// Benchmarks for the features subsystem: ComputeFeatures on 100k synthetic minute bars, and
// the streaming presets (incremental.h): the time to push one bar; the 184 library signals
// (library.h) on 18,000 five-minute bars (240 sessions of 75), batch and one streamed bar.
#include <benchmark/benchmark.h>

#include "features/features.h"
#include "features/incremental.h"
#include "features/library.h"
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

// One Push per iteration through a stream that keeps running over the 100k bars (wrapping
// around at the end): the latency of one live bar, warm-up and normaliser excluded.
void BM_IncrementalPush(benchmark::State& state, const char* preset) {
  const market::Bars bars = testing::RandomBars(100000, 390, 1);
  std::vector<StreamBar> stream_bars;
  for (size_t t = 0; t < bars.size(); ++t) stream_bars.push_back(StreamBarAt(bars, t));
  Result<IncrementalFeatures> stream = IncrementalFeatures::Create(preset);
  for (size_t t = 0; t < 1000; ++t) (void)stream->Push(stream_bars[t]);
  size_t t = 1000;
  for (auto _ : state) {
    Result<std::span<const float>> row = stream->Push(stream_bars[t]);
    benchmark::DoNotOptimize(row.value().data());
    t = t + 1 == stream_bars.size() ? 0 : t + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_IncrementalPush, fast22, "fast22");
BENCHMARK_CAPTURE(BM_IncrementalPush, scaled, "scaled");

// All 184 library signals over 18,000 bars (a year of 5-minute bars of one symbol).
void BM_ComputeLibrary(benchmark::State& state) {
  const market::Bars bars = testing::RandomBars(18000, 75, 1);
  for (auto _ : state) {
    Result<LibraryColumns> columns = ComputeLibrary(bars);
    benchmark::DoNotOptimize(columns.value().values.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(bars.size()));
}
BENCHMARK(BM_ComputeLibrary)->Unit(benchmark::kMillisecond);

// One live bar through the streaming library, all 184 signals.
void BM_StreamingLibraryPush(benchmark::State& state) {
  const market::Bars bars = testing::RandomBars(18000, 75, 1);
  Result<StreamingLibrary> stream = StreamingLibrary::Create();
  for (size_t t = 0; t < 2000; ++t) (void)stream->Push(StreamBarAt(bars, t));
  size_t t = 2000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(stream->Push(StreamBarAt(bars, t)).data());
    t = t + 1 == bars.size() ? 0 : t + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StreamingLibraryPush);

}  // namespace
}  // namespace rlt::features

BENCHMARK_MAIN();
