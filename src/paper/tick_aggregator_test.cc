// Tests of the tick aggregation (paper/tick_aggregator.h): a worked example with local
// alignment and a gap; and a property test over random streams with gaps, late and bad
// ticks and timer flushes — every bar equals the aggregate of the ticks accepted into its
// interval (computed here directly), bars come out in strictly increasing order, never
// before their interval is over, and every tick is accepted, late or bad.
#include "paper/tick_aggregator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

namespace rlt::paper {
namespace {

TEST(TickAggregator, BuildsLocallyAlignedBarsAndLeavesGapsEmpty) {
  // 5-minute bars in UTC+05:30: local 09:15 is 03:45 UTC.
  const int64_t t0 = 1672631100;  // 2023-01-02T03:45:00Z = 09:15 local
  TickAggregator agg(300, 19800);
  EXPECT_FALSE(agg.Add({(t0 + 10) * 1000, 100.0, 10}));
  EXPECT_FALSE(agg.Add({(t0 + 100) * 1000, 102.0, 30}));
  EXPECT_FALSE(agg.Add({(t0 + 299) * 1000 + 999, 99.0, 0}));
  // A tick 12 minutes later closes 09:15-09:20; 09:20-09:25 had no tick: no bar for it.
  const auto bar = agg.Add({(t0 + 720) * 1000, 101.0, 5});
  ASSERT_TRUE(bar);
  EXPECT_EQ(bar->start, t0);
  EXPECT_EQ(bar->open, 100.0);
  EXPECT_EQ(bar->high, 102.0);
  EXPECT_EQ(bar->low, 99.0);
  EXPECT_EQ(bar->close, 99.0);
  EXPECT_EQ(bar->volume, 40.0);
  EXPECT_DOUBLE_EQ(bar->vwap, (100.0 * 10 + 102.0 * 30) / 40.0);
  EXPECT_EQ(bar->ticks, 3);
  // A late tick of the emitted bar is dropped and counted; the bar is not reopened.
  EXPECT_FALSE(agg.Add({(t0 + 200) * 1000, 150.0, 1}));
  EXPECT_EQ(agg.late_ticks(), 1);
  // The timer: the open bar (09:25-09:30) is emitted once 09:30 + grace has passed.
  EXPECT_FALSE(agg.Flush((t0 + 900) * 1000 + 499, 500));
  const auto flushed = agg.Flush((t0 + 900) * 1000 + 500, 500);
  ASSERT_TRUE(flushed);
  EXPECT_EQ(flushed->start, t0 + 600);
  EXPECT_EQ(flushed->vwap, 101.0);
  EXPECT_FALSE(agg.Flush((t0 + 2000) * 1000, 0));        // nothing open
  EXPECT_FALSE(agg.Add({(t0 + 899) * 1000, 101.0, 1}));  // its interval was emitted
  EXPECT_EQ(agg.late_ticks(), 2);
  EXPECT_FALSE(agg.Add({(t0 + 1000) * 1000, std::nan(""), 1}));
  EXPECT_FALSE(agg.Add({(t0 + 1000) * 1000, -1.0, 1}));
  EXPECT_EQ(agg.bad_ticks(), 2);
  EXPECT_EQ(agg.bars_emitted(), 2);
}

struct Reference {
  double open = 0, high = -1e300, low = 1e300, close = 0, volume = 0, value = 0;
  int64_t ticks = 0;
};

TEST(TickAggregator, RandomStreamsGiveExactlyTheAggregatesOfTheirAcceptedTicks) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    const int64_t bar_s = std::vector<int64_t>{1, 60, 300, 3600}[seed % 4];
    const int32_t offset = static_cast<int32_t>(seed % 3) * 3600 - 3600;
    TickAggregator agg(bar_s, offset);
    auto interval = [&](int64_t ms) {
      const long double local = static_cast<long double>(ms + int64_t{offset} * 1000);
      return static_cast<int64_t>(std::floor(local / (bar_s * 1000.0L)));
    };
    std::map<int64_t, Reference> accepted;  // interval -> the ticks it accepted
    std::vector<AggregatedBar> bars;
    int64_t time_ms = 1700000000000 + static_cast<int64_t>(rng() % 100000);
    double price = 100;
    int64_t total = 0, late_before = 0, bad_before = 0;
    for (int i = 0; i < 3000; ++i) {
      const int kind = static_cast<int>(rng() % 100);
      Tick t;
      if (kind < 3) {  // a late tick, up to three bars back
        t.time_ms = time_ms - static_cast<int64_t>(rng() % (3 * bar_s * 1000 + 1));
      } else {
        // Mostly small steps, sometimes a gap of several bars.
        time_ms += kind < 8 ? static_cast<int64_t>(rng() % (5 * bar_s * 1000 + 1))
                            : static_cast<int64_t>(rng() % (bar_s * 300 + 1));
        t.time_ms = time_ms;
      }
      price *= std::exp(0.001 * (static_cast<double>(rng() % 2001) / 1000.0 - 1.0));
      t.price = kind == 99 ? std::numeric_limits<double>::infinity() : price;
      t.size = static_cast<double>(rng() % 50);
      ++total;
      const auto bar = agg.Add(t);
      if (bar) {
        EXPECT_LT(interval(bar->start * 1000), interval(t.time_ms)) << "a bar before its end";
        bars.push_back(*bar);
      }
      const bool late = agg.late_ticks() > late_before, bad = agg.bad_ticks() > bad_before;
      late_before = agg.late_ticks();
      bad_before = agg.bad_ticks();
      if (!late && !bad) {
        Reference& r = accepted[interval(t.time_ms)];
        if (r.ticks == 0) r.open = t.price;
        r.high = std::max(r.high, t.price);
        r.low = std::min(r.low, t.price);
        r.close = t.price;
        r.volume += t.size;
        r.value += t.price * t.size;
        ++r.ticks;
        for (const AggregatedBar& b : bars) {
          EXPECT_NE(interval(b.start * 1000), interval(t.time_ms)) << "a closed bar reopened";
        }
      }
      if (rng() % 50 == 0) {  // the live timer
        const int64_t now = time_ms + static_cast<int64_t>(rng() % (2 * bar_s * 1000));
        if (const auto f = agg.Flush(now, 250)) {
          EXPECT_GE(now,
                    (interval(f->start * 1000) + 1) * bar_s * 1000 - int64_t{offset} * 1000 + 250);
          bars.push_back(*f);
        }
      }
    }
    if (const auto f = agg.Flush(time_ms + 10 * bar_s * 1000, 0)) bars.push_back(*f);
    // Every accepted interval became exactly one bar, in order, equal to its ticks.
    ASSERT_EQ(bars.size(), accepted.size()) << "seed " << seed;
    size_t k = 0;
    for (const auto& [iv, r] : accepted) {
      const AggregatedBar& b = bars[k++];
      ASSERT_EQ(interval(b.start * 1000), iv) << "seed " << seed;
      EXPECT_EQ(b.open, r.open);
      EXPECT_EQ(b.high, r.high);
      EXPECT_EQ(b.low, r.low);
      EXPECT_EQ(b.close, r.close);
      EXPECT_EQ(b.volume, r.volume);
      EXPECT_EQ(b.ticks, r.ticks);
      EXPECT_EQ(b.vwap, r.volume > 0 ? r.value / r.volume : r.close);
    }
    EXPECT_GT(agg.late_ticks(), 0) << "seed " << seed;
    EXPECT_EQ(agg.bars_emitted(), static_cast<int64_t>(bars.size()));
  }
}

}  // namespace
}  // namespace rlt::paper
