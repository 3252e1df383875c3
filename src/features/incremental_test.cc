// Tests for incremental.h: every streaming indicator, the streaming session features, every
// preset and every normaliser kind equal their batch versions BIT FOR BIT (NaN == NaN by
// bits) on random bar series built to hit the corner cases (volatility regimes, flat
// stretches where high == low and close does not move, zero volume, sessions of random length
// with gaps between them, NaN inputs); a stream stopped and continued (or copied) loses no
// state; and pushing bars allocates nothing (bounded state, work independent of history).
#include "features/incremental.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "core/status_test_util.h"
#include "features/indicators.h"
#include "features/presets.h"
#include "features/session_features.h"
#include "features/test_util.h"

// Counts heap allocations in this test binary, so a test can assert that a code path
// allocates nothing. The plain, nothrow and array forms are all replaced (aligned ones are
// not used by the code under test).
// (noinline: inlined into callers, g++ would see malloc/free under new/delete and warn.)
namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace
[[gnu::noinline]] void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
[[gnu::noinline]] void* operator new[](std::size_t size) { return operator new(size); }
[[gnu::noinline]] void* operator new[](std::size_t size, const std::nothrow_t& t) noexcept {
  return operator new(size, t);
}
// Every delete that pairs with the forms above frees with free(). (Under AddressSanitizer,
// a form left unreplaced would allocate with the sanitizer's operator new and be freed
// here: an alloc-dealloc mismatch.)
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace rlt::features {
namespace {

using Outputs = std::vector<std::vector<double>>;

// ---- Test data ----------------------------------------------------------------------------

// Random bars exercising every corner: regimes of very different volatility, flat stretches
// (open == high == low == close, no volume), isolated zero-volume bars, sessions of 1 to 150
// bars with an overnight gap before each, and a random price level.
market::Bars StressBars(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  const double levels[] = {0.37, 100.0, 25000.0};
  const double vols[] = {1e-5, 1e-3, 1e-2, 5e-2};
  market::Bars b;
  b.symbol = "STRESS";
  double close = levels[seed % 3] * std::exp(0.1 * normal(rng));
  double vol = vols[1];
  int regime_left = 0, flat_left = 0, session_left = 0;
  int32_t session = -1, in_session = 0;
  int64_t time = 1700000000;
  for (size_t i = 0; i < n; ++i) {
    if (regime_left-- <= 0) vol = vols[rng() % 4], regime_left = 20 + rng() % 300;
    if (flat_left <= 0 && unit(rng) < 0.01) flat_left = 5 + rng() % 200;
    bool new_session = session_left-- <= 0;
    if (new_session) {
      session_left = static_cast<int>(rng() % 150);
      ++session;
      in_session = 0;
      time += 16 * 3600;
      if (flat_left <= 0) close *= std::exp(0.02 * normal(rng));  // overnight gap
    }
    double open = close, high = close, low = close, volume = 0.0;
    if (flat_left-- <= 0) {
      open = close * std::exp(0.3 * vol * normal(rng));
      close = open * std::exp(vol * normal(rng));
      high = std::max(open, close) * (1.0 + vol * unit(rng));
      low = std::min(open, close) * (1.0 - vol * unit(rng));
      if (unit(rng) < 0.1) high = std::max(open, close);  // ties for the rolling extremes
      volume = unit(rng) < 0.05 ? 0.0 : std::floor(1e5 * unit(rng));
    }
    time += 60;
    b.time.push_back(time);
    b.utc_offset.push_back(0);
    b.open.push_back(open);
    b.high.push_back(high);
    b.low.push_back(low);
    b.close.push_back(close);
    b.volume.push_back(volume);
    b.session.push_back(session);
    b.bar_in_session.push_back(in_session++);
    if (new_session) b.sessions.push_back({20240102 + session, static_cast<int32_t>(i), 0});
  }
  for (size_t i = 0; i < n; ++i) {
    b.last_in_session.push_back(i + 1 == n || b.bar_in_session[i + 1] == 0);
  }
  for (market::Session& s : b.sessions) s.end = s.begin;
  for (size_t i = 0; i < n; ++i) ++b.sessions[b.session[i]].end;
  return b;
}

constexpr uint64_t kSeeds = 32;

// Seed s's bars: 2000 stress bars, and every fourth seed the plain random walk of
// test_util.h (sessions of 390 bars).
market::Bars BarsForSeed(uint64_t seed) {
  return seed % 4 == 3 ? testing::RandomBars(1200, 390, seed) : StressBars(seed, 2000);
}

// The same for a preset: the library (full184) warms up for 1,875 bars (its long ranks), so
// its series are longer, to compare rows after the warm-up too.
market::Bars BarsForSeed(const std::string& preset, uint64_t seed) {
  if (preset != "full184") return BarsForSeed(seed);
  return seed % 4 == 3 ? testing::RandomBars(2400, 390, seed) : StressBars(seed, 2600);
}

// The stress data reaches the corners the property tests are meant to cover (else they
// could pass without ever comparing them).
TEST(Incremental, StressBarsReachTheZeroBandsAndSessionGaps) {
  const market::Bars b = StressBars(0, 2000);
  auto count = [](const std::vector<double>& x, double v) {
    return std::count(x.begin(), x.end(), v);
  };
  EXPECT_GT(count(Stddev(b.close, {20, 1.0}), 0.0), 0);             // variance in the zero band
  EXPECT_GT(count(Bbands(b.close, {20, 2, 2}).percent_b, 0.5), 0);  // bands meet
  EXPECT_GT(count(Willr(b.high, b.low, b.close, {14}), 0.0), 0);    // high == low window
  EXPECT_GT(count(Rsi(b.close, {14}), 0.0), 0);                     // no gain, no loss
  EXPECT_GT(count(Cci(b.high, b.low, b.close, {14}), 0.0), 0);      // zero mean deviation
  EXPECT_GT(count(VolumeRatio(b.volume, {20}), 1.0), 0);            // window without volume
  EXPECT_GT(count(b.volume, 0.0), 0);
  EXPECT_GT(b.sessions.size(), 20u);
  int gaps = 0;
  for (size_t t = 1; t < b.size(); ++t)
    gaps += b.bar_in_session[t] == 0 && b.open[t] != b.close[t - 1];
  EXPECT_GT(gaps, 10);
}

// ---- Bit comparison -------------------------------------------------------------------------

template <typename T>
auto Bits(T v) {
  if constexpr (sizeof(T) == 8) {
    return std::bit_cast<uint64_t>(v);
  } else {
    return std::bit_cast<uint32_t>(v);
  }
}

// Empty when equal bit for bit, else a description of the first difference.
template <typename T>
std::string FirstDifference(const std::vector<T>& batch, const std::vector<T>& stream) {
  if (batch.size() != stream.size()) return "sizes differ";
  for (size_t t = 0; t < batch.size(); ++t) {
    if (Bits(batch[t]) != Bits(stream[t])) {
      return "first difference at " + std::to_string(t) + ": batch " + std::to_string(batch[t]) +
             " stream " + std::to_string(stream[t]);
    }
  }
  return "";
}

// ---- Indicators -----------------------------------------------------------------------------

// One indicator (with its parameters) evaluated over a whole series by the batch function or
// by pushing the bars one at a time through the stream.
struct Case {
  std::string name;
  std::function<Outputs(const market::Bars&)> batch, stream;
};

// Runs a single-input stream over x; update returns the outputs of one step.
template <typename Stream, typename Update>
Outputs RunSeries(Stream stream, std::span<const double> x, size_t outputs, Update update) {
  Outputs out(outputs, std::vector<double>(x.size()));
  for (size_t t = 0; t < x.size(); ++t) {
    const std::vector<double> v = update(stream, x[t]);
    for (size_t k = 0; k < outputs; ++k) out[k][t] = v[k];
  }
  return out;
}

template <typename Stream, typename Update>
Outputs RunBars(Stream stream, const market::Bars& b, size_t outputs, Update update) {
  Outputs out(outputs, std::vector<double>(b.size()));
  for (size_t t = 0; t < b.size(); ++t) {
    const std::vector<double> v = update(stream, b.high[t], b.low[t], b.close[t]);
    for (size_t k = 0; k < outputs; ++k) out[k][t] = v[k];
  }
  return out;
}

// Single-input cases over input(b): the close, the close's log returns (a NaN first value:
// the leading-NaN skip), or the close with a NaN hole and a flat run.
void AddSeriesCases(std::vector<Case>& c, const std::string& input_name,
                    std::function<std::vector<double>(const market::Bars&)> input) {
  auto add = [&](const std::string& name, auto batch, auto stream) {
    c.push_back({name + "(" + input_name + ")",
                 [=](const market::Bars& b) { return batch(input(b)); },
                 [=](const market::Bars& b) { return stream(input(b)); }});
  };
  using V = std::vector<double>;
  for (int n : {1, 2, 5, 30}) {
    add(
        "sma" + std::to_string(n), [n](const V& x) { return Outputs{Sma(x, {n})}; },
        [n](const V& x) {
          return RunSeries(SmaStream(n), x, 1, [](auto& s, double v) { return V{s.Update(v)}; });
        });
  }
  for (int n : {1, 3, 10, 30}) {
    add(
        "ema" + std::to_string(n), [n](const V& x) { return Outputs{Ema(x, {n})}; },
        [n](const V& x) {
          return RunSeries(EmaStream(n), x, 1, [](auto& s, double v) { return V{s.Update(v)}; });
        });
  }
  for (MacdParams p :
       {MacdParams{}, MacdParams{20, 5, 4}, MacdParams{3, 3, 1}, MacdParams{1, 2, 1}}) {
    add(
        "macd" + std::to_string(p.fast) + "-" + std::to_string(p.slow) + "-" +
            std::to_string(p.signal),
        [p](const V& x) {
          MacdOutput m = Macd(x, p);
          return Outputs{m.macd, m.signal, m.hist};
        },
        [p](const V& x) {
          return RunSeries(MacdStream(p), x, 3, [](auto& s, double v) {
            const MacdValue m = s.Update(v);
            return V{m.macd, m.signal, m.hist};
          });
        });
  }
  for (int n : {1, 2, 14}) {
    add(
        "rsi" + std::to_string(n), [n](const V& x) { return Outputs{Rsi(x, {n})}; },
        [n](const V& x) {
          return RunSeries(RsiStream(n), x, 1, [](auto& s, double v) { return V{s.Update(v)}; });
        });
  }
  for (StddevParams p : {StddevParams{1, 1.0}, StddevParams{5, 1.0}, StddevParams{20, 1.5}}) {
    add(
        "stddev" + std::to_string(p.period), [p](const V& x) { return Outputs{Stddev(x, p)}; },
        [p](const V& x) {
          return RunSeries(StddevStream(p), x, 1, [](auto& s, double v) { return V{s.Update(v)}; });
        });
  }
  for (BbandsParams p : {BbandsParams{}, BbandsParams{20, 2.0, 1.5}, BbandsParams{1, 1.0, 1.0}}) {
    add(
        "bbands" + std::to_string(p.period),
        [p](const V& x) {
          BbandsOutput o = Bbands(x, p);
          return Outputs{o.upper, o.middle, o.lower, o.width, o.percent_b};
        },
        [p](const V& x) {
          return RunSeries(BbandsStream(p), x, 5, [](auto& s, double v) {
            const BbandsValue o = s.Update(v);
            return V{o.upper, o.middle, o.lower, o.width, o.percent_b};
          });
        });
  }
  for (int lag : {1, 3, 20}) {
    add(
        "lret" + std::to_string(lag), [lag](const V& x) { return Outputs{LogReturn(x, {lag})}; },
        [lag](const V& x) {
          return RunSeries(LogReturnStream(lag), x, 1,
                           [](auto& s, double v) { return V{s.Update(v)}; });
        });
  }
  for (int n : {1, 10, 50}) {
    add(
        "price_vs_sma" + std::to_string(n), [n](const V& x) { return Outputs{PriceVsSma(x, {n})}; },
        [n](const V& x) {
          return RunSeries(PriceVsSmaStream(n), x, 1,
                           [](auto& s, double v) { return V{s.Update(v)}; });
        });
  }
}

std::vector<Case> Cases() {
  using V = std::vector<double>;
  std::vector<Case> c;
  AddSeriesCases(c, "close", [](const market::Bars& b) { return b.close; });
  AddSeriesCases(c, "lret1", [](const market::Bars& b) { return LogReturn(b.close, {1}); });
  AddSeriesCases(c, "close_with_nan", [](const market::Bars& b) {
    V x = b.close;
    for (size_t t = 0; t < x.size(); ++t) {
      if (t % 500 == 123) x[t] = std::nan("");
      if (t % 500 >= 300 && t % 500 < 340) x[t] = 42.0;
    }
    return x;
  });
  for (int n : {1, 20}) {
    c.push_back({"volume_ratio" + std::to_string(n),
                 [n](const market::Bars& b) { return Outputs{VolumeRatio(b.volume, {n})}; },
                 [n](const market::Bars& b) {
                   return RunSeries(VolumeRatioStream(n), b.volume, 1,
                                    [](auto& s, double v) { return V{s.Update(v)}; });
                 }});
  }
  c.push_back(
      {"trange", [](const market::Bars& b) { return Outputs{TrueRange(b.high, b.low, b.close)}; },
       [](const market::Bars& b) {
         return RunBars(TrueRangeStream(), b, 1,
                        [](auto& s, double h, double l, double x) { return V{s.Update(h, l, x)}; });
       }});
  for (int n : {1, 2, 14}) {
    const std::string p = std::to_string(n);
    c.push_back({"atr" + p,
                 [n](const market::Bars& b) { return Outputs{Atr(b.high, b.low, b.close, {n})}; },
                 [n](const market::Bars& b) {
                   return RunBars(AtrStream(n), b, 1, [](auto& s, double h, double l, double x) {
                     return V{s.Update(h, l, x)};
                   });
                 }});
    c.push_back({"natr" + p,
                 [n](const market::Bars& b) { return Outputs{Natr(b.high, b.low, b.close, {n})}; },
                 [n](const market::Bars& b) {
                   return RunBars(NatrStream(n), b, 1, [](auto& s, double h, double l, double x) {
                     return V{s.Update(h, l, x)};
                   });
                 }});
    c.push_back({"willr" + p,
                 [n](const market::Bars& b) { return Outputs{Willr(b.high, b.low, b.close, {n})}; },
                 [n](const market::Bars& b) {
                   return RunBars(WillrStream(n), b, 1, [](auto& s, double h, double l, double x) {
                     return V{s.Update(h, l, x)};
                   });
                 }});
    c.push_back({"cci" + p,
                 [n](const market::Bars& b) { return Outputs{Cci(b.high, b.low, b.close, {n})}; },
                 [n](const market::Bars& b) {
                   return RunBars(CciStream(n), b, 1, [](auto& s, double h, double l, double x) {
                     return V{s.Update(h, l, x)};
                   });
                 }});
  }
  for (int n : {1, 2, 5, 14}) {
    c.push_back({"dmi" + std::to_string(n),
                 [n](const market::Bars& b) {
                   const auto h = b.high, l = b.low, x = b.close;
                   return Outputs{PlusDi(h, l, x, {n}), MinusDi(h, l, x, {n}), Dx(h, l, x, {n}),
                                  Adx(h, l, x, {n}), Adxr(h, l, x, {n})};
                 },
                 [n](const market::Bars& b) {
                   return RunBars(DmiStream(n), b, 5, [](auto& s, double h, double l, double x) {
                     const DmiValue d = s.Update(h, l, x);
                     return V{d.plus_di, d.minus_di, d.dx, d.adx, d.adxr};
                   });
                 }});
  }
  for (StochParams p : {StochParams{}, StochParams{1, 1, 1}, StochParams{14, 3, 5}}) {
    c.push_back({"stoch" + std::to_string(p.fastk) + "-" + std::to_string(p.slowd),
                 [p](const market::Bars& b) {
                   StochOutput s = Stoch(b.high, b.low, b.close, p);
                   return Outputs{s.slowk, s.slowd};
                 },
                 [p](const market::Bars& b) {
                   return RunBars(StochStream(p), b, 2, [](auto& s, double h, double l, double x) {
                     const StochValue v = s.Update(h, l, x);
                     return V{v.slowk, v.slowd};
                   });
                 }});
  }
  return c;
}

TEST(Incremental, EveryIndicatorStreamEqualsItsBatchFunctionBitForBit) {
  const std::vector<Case> cases = Cases();
  ASSERT_GT(cases.size(), 100u);
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const market::Bars bars = BarsForSeed(seed);
    for (const Case& c : cases) {
      const Outputs batch = c.batch(bars), stream = c.stream(bars);
      ASSERT_EQ(batch.size(), stream.size()) << c.name;
      for (size_t k = 0; k < batch.size(); ++k) {
        ASSERT_EQ(FirstDifference(batch[k], stream[k]), "")
            << c.name << " output " << k << ", seed " << seed;
      }
    }
  }
}

// A failing comparison must be possible: a stream with other parameters differs.
TEST(Incremental, TheBitComparisonDetectsADifferentStream) {
  const market::Bars bars = BarsForSeed(1);
  std::vector<double> stream(bars.size());
  RsiStream rsi(13);
  for (size_t t = 0; t < bars.size(); ++t) stream[t] = rsi.Update(bars.close[t]);
  EXPECT_NE(FirstDifference(Rsi(bars.close, {14}), stream), "");
}

TEST(Incremental, SessionFeaturesStreamEqualsBatchAndRestartsEverySession) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const market::Bars b = BarsForSeed(seed);
    ASSERT_GE(b.sessions.size(), 3u);
    const SessionFeatures batch = ComputeSessionFeatures(b);
    SessionFeaturesStream stream;
    SessionFeatures streamed{std::vector<double>(b.size()), std::vector<double>(b.size()),
                             std::vector<double>(b.size())};
    for (size_t t = 0; t < b.size(); ++t) {
      const SessionFeatureValue v = stream.Update(b.open[t], b.high[t], b.low[t], b.close[t],
                                                  b.volume[t], b.bar_in_session[t]);
      streamed.return_since_open[t] = v.return_since_open;
      streamed.bars_since_open[t] = v.bars_since_open;
      streamed.vwap_distance[t] = v.vwap_distance;
    }
    EXPECT_EQ(FirstDifference(batch.return_since_open, streamed.return_since_open), "") << seed;
    EXPECT_EQ(FirstDifference(batch.bars_since_open, streamed.bars_since_open), "") << seed;
    EXPECT_EQ(FirstDifference(batch.vwap_distance, streamed.vwap_distance), "") << seed;
  }
}

// ---- Presets and normalisers ----------------------------------------------------------------

// Pushes bars [begin, end) and appends each row to *rows; stops at the first error.
Status PushRange(IncrementalFeatures& stream, const market::Bars& bars, size_t begin, size_t end,
                 std::vector<float>* rows) {
  for (size_t t = begin; t < end; ++t) {
    Result<std::span<const float>> row = stream.Push(StreamBarAt(bars, t));
    if (!row.ok()) return row.status();
    rows->insert(rows->end(), row->begin(), row->end());
  }
  return Status::Ok();
}

TEST(Incremental, EveryPresetStreamEqualsComputeFeaturesBitForBit) {
  for (const std::string& preset : PresetNames()) {
    for (uint64_t seed = 0; seed < kSeeds; ++seed) {
      const market::Bars bars = BarsForSeed(preset, seed);
      Result<FeatureMatrix> batch = ComputeFeatures(bars, preset);
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      Result<IncrementalFeatures> stream = IncrementalFeatures::Create(preset);
      ASSERT_TRUE(stream.ok()) << stream.status().ToString();
      EXPECT_EQ(stream->names(), batch->names);
      std::vector<float> rows;
      ASSERT_TRUE(PushRange(*stream, bars, 0, bars.size(), &rows).ok());
      ASSERT_LT(batch->first_valid, batch->rows) << preset << " seed " << seed;
      EXPECT_EQ(stream->first_valid(), batch->first_valid) << preset << " seed " << seed;
      EXPECT_EQ(FirstDifference(batch->values, rows), "") << preset << " seed " << seed;
    }
  }
}

std::vector<NormalizerOptions> NormalizerKinds() {
  std::vector<NormalizerOptions> kinds(6);
  kinds[0].kind = NormalizerKind::kZScore;
  kinds[1].kind = NormalizerKind::kZScore, kinds[1].clip = 0.0;
  kinds[2].kind = NormalizerKind::kQuantile, kinds[2].quantiles = 11;
  kinds[3].kind = NormalizerKind::kNone, kinds[3].clip = 0.5;
  kinds[4].kind = NormalizerKind::kRollingZScore;  // window 390
  kinds[5].kind = NormalizerKind::kRollingZScore, kinds[5].window = 37;
  return kinds;
}

TEST(Incremental, StreamWithAStoredNormalizerEqualsBatchApplyBitForBit) {
  for (const std::string& preset : PresetNames()) {
    for (uint64_t seed = 0; seed < 6; ++seed) {
      const market::Bars bars = BarsForSeed(preset, seed);
      Result<FeatureMatrix> raw = ComputeFeatures(bars, preset);
      ASSERT_TRUE(raw.ok());
      for (const NormalizerOptions& options : NormalizerKinds()) {
        const int64_t fit_end = raw->first_valid + (raw->rows - raw->first_valid) / 2;
        Result<Normalizer> fitted = Normalizer::Fit(*raw, raw->first_valid, fit_end, options);
        ASSERT_TRUE(fitted.ok()) << fitted.status().ToString();
        // Through JSON, as a live trader loads it from the run directory.
        Result<Normalizer> stored = Normalizer::FromJson(fitted->ToJson(), raw->names);
        ASSERT_TRUE(stored.ok());
        FeatureMatrix batch = *raw;
        stored->Apply(batch);
        Result<IncrementalFeatures> stream = IncrementalFeatures::Create(preset, &*stored);
        ASSERT_TRUE(stream.ok());
        std::vector<float> rows;
        ASSERT_TRUE(PushRange(*stream, bars, 0, bars.size(), &rows).ok());
        EXPECT_EQ(FirstDifference(batch.values, rows), "")
            << preset << " " << NormalizerKindName(options.kind) << " seed " << seed;
      }
    }
  }
}

TEST(Incremental, AStreamStoppedAfterKBarsAndContinuedLosesNoState) {
  NormalizerOptions rolling;
  rolling.kind = NormalizerKind::kRollingZScore;
  rolling.window = 50;
  for (const std::string& preset : PresetNames()) {
    const market::Bars bars = BarsForSeed(preset, 2);
    Result<FeatureMatrix> all = ComputeFeatures(bars, preset);
    ASSERT_TRUE(all.ok());
    Result<Normalizer> norm = Normalizer::Fit(*all, 0, all->rows, rolling);
    ASSERT_TRUE(norm.ok());
    FeatureMatrix expected = *all;
    norm->Apply(expected);
    for (size_t k : {1u, 30u, 49u, 50u, 400u, 1499u, 1950u}) {
      Result<IncrementalFeatures> stream = IncrementalFeatures::Create(preset, &*norm);
      ASSERT_TRUE(stream.ok());
      std::vector<float> rows;
      ASSERT_TRUE(PushRange(*stream, bars, 0, k, &rows).ok());
      // The first k rows are those of the batch over the first k bars alone.
      market::Bars prefix = bars;
      for (auto* col : {&prefix.open, &prefix.high, &prefix.low, &prefix.close, &prefix.volume}) {
        col->resize(k);
      }
      prefix.time.resize(k), prefix.bar_in_session.resize(k);
      Result<FeatureMatrix> head = ComputeFeatures(prefix, preset);
      ASSERT_TRUE(head.ok());
      norm->Apply(*head);
      EXPECT_EQ(FirstDifference(head->values, rows), "") << preset << " k=" << k;
      // A copy continues from the same state; so does the original.
      IncrementalFeatures copy = *stream;
      std::vector<float> copy_rows = rows;
      ASSERT_TRUE(PushRange(*stream, bars, k, bars.size(), &rows).ok());
      ASSERT_TRUE(PushRange(copy, bars, k, bars.size(), &copy_rows).ok());
      EXPECT_EQ(FirstDifference(expected.values, rows), "") << preset << " k=" << k;
      EXPECT_EQ(FirstDifference(expected.values, copy_rows), "") << preset << " copy k=" << k;
    }
  }
}

// Bounded state: after Create, pushing bars never allocates, so no state can grow with the
// history (and the per-bar work, loops over fixed windows, cannot either). The same holds for
// every indicator stream on its own.
TEST(Incremental, PushingBarsAllocatesNothing) {
  const market::Bars bars = StressBars(7, 20000);
  NormalizerOptions rolling;
  rolling.kind = NormalizerKind::kRollingZScore;
  for (const std::string& preset : PresetNames()) {
    Result<FeatureMatrix> m = ComputeFeatures(bars, preset);
    ASSERT_TRUE(m.ok());
    Result<Normalizer> norm = Normalizer::Fit(*m, 0, m->rows, rolling);
    ASSERT_TRUE(norm.ok());
    Result<IncrementalFeatures> stream = IncrementalFeatures::Create(preset, &*norm);
    ASSERT_TRUE(stream.ok());
    const int64_t before = g_allocations.load();
    bool all_ok = true;
    for (size_t t = 0; t < bars.size(); ++t)
      all_ok = all_ok && stream->Push(StreamBarAt(bars, t)).ok();
    EXPECT_EQ(g_allocations.load() - before, 0) << preset;
    EXPECT_TRUE(all_ok);
    EXPECT_TRUE(stream->warmed_up());
  }
  CciStream cci(20);
  DmiStream dmi(14);
  StochStream stoch({14, 3, 3});
  MacdStream macd({});
  BbandsStream bbands({20, 2.0, 2.0});
  const int64_t before = g_allocations.load();
  double last = 0.0;
  for (size_t t = 0; t < bars.size(); ++t) {
    const double h = bars.high[t], l = bars.low[t], x = bars.close[t];
    last = cci.Update(h, l, x) + dmi.Update(h, l, x).adxr + stoch.Update(h, l, x).slowd +
           macd.Update(x).hist + bbands.Update(x).width;
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_TRUE(std::isfinite(last));
}

// The allocation counter works (else the test above could not fail).
std::vector<double>* volatile g_escape = nullptr;
TEST(Incremental, TheAllocationCounterSeesAllocations) {
  const int64_t before = g_allocations.load();
  g_escape = new std::vector<double>(100);
  EXPECT_GE(g_allocations.load() - before, 2);
  delete g_escape;
}

TEST(Incremental, ErrorsMatchTheBatchOnes) {
  Result<IncrementalFeatures> unknown = IncrementalFeatures::Create("fast2");
  ASSERT_TRUE(IsError(unknown, Status::Code::kNotFound, "unknown feature preset 'fast2'"));
  EXPECT_EQ(unknown.status().message(),
            ComputeFeatures(BarsForSeed(0), "fast2").status().message());
  // A normaliser of the other preset.
  const market::Bars bars = BarsForSeed(0);
  Result<FeatureMatrix> fast = ComputeFeatures(bars, "fast22");
  ASSERT_TRUE(fast.ok());
  Result<Normalizer> norm = Normalizer::Fit(*fast, fast->first_valid, fast->rows, {});
  ASSERT_TRUE(norm.ok());
  EXPECT_TRUE(IsError(IncrementalFeatures::Create("scaled", &*norm), Status::Code::kInvalidArgument,
                      "normalizer feature 0 is 'hl' but the data's is 'lret1'"));
  // A zero close after warm-up: the batch fails, and the stream fails at that bar with the
  // same message.
  market::Bars bad = bars;
  bad.close[700] = 0.0;
  Result<FeatureMatrix> batch = ComputeFeatures(bad, "scaled");
  ASSERT_TRUE(IsError(batch, Status::Code::kDataError, "is not finite at bar 700"));
  Result<IncrementalFeatures> stream = IncrementalFeatures::Create("scaled");
  ASSERT_TRUE(stream.ok());
  std::vector<float> rows;
  const Status status = PushRange(*stream, bad, 0, bad.size(), &rows);
  EXPECT_EQ(status.code(), batch.status().code());
  EXPECT_EQ(status.message(), batch.status().message());
  EXPECT_EQ(stream->bars_pushed(), 701);
}

}  // namespace
}  // namespace rlt::features
