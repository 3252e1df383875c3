// The signal library (library.h): the catalogue, fast against the plain-loop reference,
// hand-computed values on crafted bars, streaming against batch bit for bit, and name
// resolution errors. Look-ahead is checked in leakage_test.cc.
#include "features/library.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "features/test_util.h"

namespace rlt::features {
namespace {

int Index(const std::string& name) {
  Result<std::vector<int>> r = ResolveLibrarySignals({name});
  RLT_CHECK(r.ok());
  return r->front();
}

// Random bars in sessions of `per_session`, with flat bars (h == l == o == c, zero volume)
// every 13th bar and a 30-bar flat, volume-free stretch from bar 300 (zero ranges, zero
// price changes and an all-zero volume window exercise every division guard).
market::Bars TestBars(size_t n, int per_session, uint64_t seed) {
  market::Bars b = testing::RandomBars(n, per_session, seed);
  for (size_t t = 1; t < n; ++t) {
    const bool flat = t % 13 == 0 || (t >= 300 && t < 330);
    if (!flat) continue;
    b.open[t] = b.high[t] = b.low[t] = b.close[t] = b.close[t - 1];
    b.volume[t] = 0.0;
  }
  return b;
}

TEST(Library, CatalogueHas184UniqueNamesInSpecOrder) {
  const std::vector<LibrarySignal>& s = LibrarySignals();
  ASSERT_EQ(s.size(), 184u);
  const std::vector<std::string> names = LibrarySignalNames();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 184u);
  const std::vector<std::pair<int, std::string>> spots = {{0, "co"},
                                                          {7, "codv"},
                                                          {8, "macd"},
                                                          {13, "bb_lower"},
                                                          {18, "rsi7"},
                                                          {23, "atr7"},
                                                          {29, "sma5"},
                                                          {41, "price_volume"},
                                                          {51, "volatility50"},
                                                          {52, "swing_high_dist"},
                                                          {56, "opc"},
                                                          {63, "h5co"},
                                                          {70, "h5codv"},
                                                          {71, "lret1"},
                                                          {79, "lret23"},
                                                          {80, "qco"},
                                                          {159, "qlret23"},
                                                          {160, "rsi_overbought"},
                                                          {167, "squeeze"},
                                                          {177, "trend_alignment"},
                                                          {180, "pivot_high"},
                                                          {181, "pivot_low"},
                                                          {182, "ndv"},
                                                          {183, "nmomentum"}};
  for (const auto& spot : spots) EXPECT_EQ(names[spot.first], spot.second) << spot.first;
  for (int i = 0; i < 80; ++i) {
    EXPECT_EQ(names[80 + i], "q" + names[i]);
    EXPECT_EQ(s[80 + i].kind, s[i].kind);
    EXPECT_EQ(s[i].kind, i >= 71 ? SignalKind::kLag : SignalKind::kContinuous) << names[i];
  }
  for (int i = 160; i < 182; ++i) EXPECT_EQ(s[i].kind, SignalKind::kRegime) << names[i];
  EXPECT_EQ(s[182].kind, SignalKind::kRank);
  for (const LibrarySignal& x : s) EXPECT_FALSE(x.definition.empty()) << x.name;
}

TEST(Library, ResolveNamesAndErrors) {
  Result<std::vector<int>> ok = ResolveLibrarySignals({"qdv", "co", "nmomentum"});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, (std::vector<int>{81, 0, 183}));
  Result<std::vector<int>> unknown = ResolveLibrarySignals({"co", "rsi15"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Status::Code::kNotFound);
  EXPECT_NE(unknown.status().message().find("'rsi15'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("did you mean"), std::string::npos);
  Result<std::vector<int>> twice = ResolveLibrarySignals({"co", "dv", "co"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(twice.status().message().find("'co'"), std::string::npos);
}

TEST(Library, RejectsBadInput) {
  market::Bars no_sessions = testing::RandomBars(50, 10, 3);
  no_sessions.bar_in_session.clear();
  Result<LibraryColumns> r = ComputeLibrary(no_sessions);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("AssignSessions"), std::string::npos);
  const std::vector<int> bad = {0, 184};
  EXPECT_FALSE(ComputeLibrary(testing::RandomBars(50, 10, 3), bad).ok());
  EXPECT_FALSE(StreamingLibrary::Create(bad).ok());
}

// Hand-made bars, sessions of 5 bars: 0..4, 5..9, 10.
market::Bars HandBars() {
  const double rows[][5] = {
      {100, 102, 99, 101, 10},          // 0
      {101, 101, 101, 101, 0},          // 1 flat
      {101, 104, 100, 103, 20},         // 2 the pivot high (confirmed at 4)
      {103, 103.5, 102, 102.5, 5},      // 3
      {102.5, 102.5, 102.5, 102.5, 0},  // 4 flat
      {110, 111.5, 109.5, 111, 30},     // 5 session 2 opens
      {111, 112.5, 110.5, 112, 10},     // 6
      {105, 105.5, 99.5, 100, 10},      // 7 long bearish bar
      {99, 99.5, 98.5, 99.2, 10},       // 8 small bar below 7's close
      {99.5, 103.5, 99.4, 103, 10},     // 9 bullish, above 7's midpoint: morning star
      {100, 100.6, 98, 100.5, 0},       // 10 session 3, a hammer, no volume
  };
  market::Bars b;
  b.symbol = "HAND";
  for (const auto& r : rows) {
    b.time.push_back(1700000000 + 60 * static_cast<int64_t>(b.time.size()));
    b.utc_offset.push_back(0);
    b.open.push_back(r[0]);
    b.high.push_back(r[1]);
    b.low.push_back(r[2]);
    b.close.push_back(r[3]);
    b.volume.push_back(r[4]);
  }
  testing::AssignFixedSessions(b, 5);
  return b;
}

TEST(Library, HandComputedValues) {
  const market::Bars b = HandBars();
  for (Implementation impl : {Implementation::kFast, Implementation::kReference}) {
    Result<LibraryColumns> r = ComputeLibrary(b, {}, impl);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto at = [&](const std::string& name, size_t t) { return r->values[Index(name)][t]; };
    const double tol = 1e-12;
    EXPECT_NEAR(at("co", 0), 101.0 / 100.0 - 1, tol);
    const double vw0 = (2 * 99 + 2 * 102 + 3 * 101 + 3 * 100) / 10.0;  // 100.5
    EXPECT_NEAR(at("dv", 0), 101.0 / vw0 - 1, tol);
    EXPECT_NEAR(at("hl", 0), 102.0 / 99.0 - 1, tol);
    EXPECT_NEAR(at("scco", 0), 1.0 / 3.0, tol);
    EXPECT_EQ(at("scco", 1), 0.0);  // h == l
    EXPECT_EQ(at("scco", 4), 0.0);
    // ts_rank with ties: scco over bars 0..4 = {1/3, 0, 0.75, -1/3, 0}; at bar 4 one value is
    // below 0 and one other equals it: (1 + 0.5) / 4.
    EXPECT_TRUE(std::isnan(at("qscco", 3)));
    EXPECT_DOUBLE_EQ(at("qscco", 4), 0.375);
    // Session 2 opens at bar 5 (o = 110): closes before it are replaced by that open.
    EXPECT_NEAR(at("lret1", 5), std::log(111.0 / 110.0), tol);
    EXPECT_NEAR(at("lret2", 5), std::log(111.0 / 110.0), tol);
    EXPECT_NEAR(at("lret23", 5), std::log(111.0 / 110.0), tol);
    EXPECT_NEAR(at("lret1", 6), std::log(112.0 / 111.0), tol);
    EXPECT_NEAR(at("lret2", 6), std::log(112.0 / 110.0), tol);
    EXPECT_NEAR(at("lret3", 6), std::log(112.0 / 110.0), tol);
    EXPECT_NEAR(at("lret1", 1), std::log(101.0 / 101.0), tol);
    EXPECT_NEAR(at("lret1", 0), std::log(101.0 / 100.0), tol);
    EXPECT_NEAR(at("opc", 6), 112.0 / 110.0 - 1, tol);
    EXPECT_NEAR(at("opc", 4), 102.5 / 100.0 - 1, tol);
    // Session VWAP with vw weights; a session without volume uses the mean vw.
    const double vw5 = (2 * 109.5 + 2 * 111.5 + 3 * 111 + 3 * 110) / 10.0;
    const double vw6 = (2 * 110.5 + 2 * 112.5 + 3 * 112 + 3 * 111) / 10.0;
    const double sv6 = (vw5 * 30 + vw6 * 10) / 40;
    EXPECT_NEAR(at("dvwap", 6), 112.0 / sv6 - 1, tol);
    EXPECT_NEAR(at("d2vwap", 6), (112.0 / sv6 - 1) - (111.0 / vw5 - 1), tol);
    EXPECT_EQ(at("d2vwap", 5), 0.0);
    EXPECT_NEAR(at("dvwap", 10), at("dv", 10), tol);
    EXPECT_NEAR(at("dhigh", 6), 112.0 / 112.5 - 1, tol);
    EXPECT_NEAR(at("dlow", 6), 112.0 / 109.5 - 1, tol);
    EXPECT_NEAR(at("h5co", 6), ((111.0 / 110 - 1) + (112.0 / 111 - 1)) / 2, tol);
    // The pivot high at bar 2 is known at bar 4, not before.
    for (size_t t = 0; t < 4; ++t) {
      EXPECT_TRUE(std::isnan(at("pivot_high", t))) << t;
      EXPECT_TRUE(std::isnan(at("swing_high_dist", t))) << t;
    }
    EXPECT_EQ(at("pivot_high", 4), 1.0);
    EXPECT_EQ(at("pivot_low", 4), 0.0);
    EXPECT_EQ(at("bars_since_swing_high", 4), 2.0);
    EXPECT_NEAR(at("swing_high_dist", 4), 102.5 / 104.0 - 1, tol);
    EXPECT_EQ(at("bars_since_swing_high", 5), 3.0);
    EXPECT_EQ(at("morning_star", 9), 1.0);
    EXPECT_EQ(at("morning_star", 8), 0.0);
    EXPECT_TRUE(std::isnan(at("morning_star", 1)));
    EXPECT_EQ(at("hammer", 10), 1.0);
    EXPECT_EQ(at("hammer", 9), 0.0);
    EXPECT_EQ(at("higher_highs", 6), 1.0);  // 112.5 > 111.5 > 102.5
    EXPECT_EQ(at("lower_lows", 8), 1.0);    // 98.5 < 99.5 < 110.5
    // Warm-ups: vr20 needs 20 bars, so vscco is undefined here.
    EXPECT_TRUE(std::isnan(at("vscco", 10)));
    EXPECT_TRUE(std::isnan(at("rsi7", 6)));
    // dc over bars 1..7 = {0, 2, -0.5, 0, 8.5, 1, -12}: gains 11.5, losses 12.5.
    EXPECT_NEAR(at("rsi7", 7), 100.0 * 11.5 / 24.0, 1e-9);
  }
}

// |a - b| <= 1e-9 max(1, |a|, |b|), NaN only together. Every continuous signal is a ratio,
// log return or oscillator of order 1..100; the fast side re-sums windows in another order or
// uses recursions where the reference uses closed forms, so they differ by rounding only.
bool Close(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// A rank may legitimately differ where its input window holds a value within rounding of
// x_t (the two implementations may order such a near-tie differently).
bool NearTie(const std::vector<double>& x, size_t t, int n) {
  for (size_t i = t + 1 - n; i <= t; ++i) {
    if (i != t && Close(x[i], x[t])) return true;
  }
  return false;
}

// c > upper band (extreme_high, greed) and c < lower band (extreme_low, fear) may flip where
// c equals the band up to rounding: in a flat window (zero stddev) the band is the window
// mean, which the fast side keeps as a running mean (as indicators.h Bbands does) and which
// can differ from c by an ulp until its next exact re-sum.
bool BandTie(const LibraryColumns& ref, const std::string& name, size_t t) {
  const bool high = name == "extreme_high" || name == "greed";
  const bool low = name == "extreme_low" || name == "fear";
  if (!high && !low) return false;
  const double distance = ref.values[Index(high ? "bb_upper" : "bb_lower")][t];
  return std::fabs(distance) <= 1e-9;
}

TEST(Library, FastMatchesReference) {
  // Sessions of 75 (the long ranks need 1,875 bars) and of 7 (frequent session resets).
  for (int per_session : {75, 7}) {
    const size_t n = per_session == 75 ? 2100 : 400;
    const market::Bars b = TestBars(n, per_session, 20 + per_session);
    Result<LibraryColumns> fast = ComputeLibrary(b);
    Result<LibraryColumns> ref = ComputeLibrary(b, {}, Implementation::kReference);
    ASSERT_TRUE(fast.ok() && ref.ok());
    const std::vector<LibrarySignal>& s = LibrarySignals();
    for (int i = 0; i < kLibrarySize; ++i) {
      const bool rank = (i >= 80 && i < 160) || i >= 182;
      const int window = i >= 182 ? 1875 : 5;
      const std::vector<double>& input = i < 160    ? ref->values[i - 80 >= 0 ? i - 80 : i]
                                         : i == 182 ? ref->values[1]
                                                    : ref->values[Index("momentum10")];
      int failures = 0, defined = 0;
      for (size_t t = 0; t < n; ++t) {
        const double a = fast->values[i][t], r = ref->values[i][t];
        defined += !std::isnan(r);
        bool ok;
        if (s[i].kind == SignalKind::kRegime) {
          ok = (std::isnan(a) ? std::isnan(r) : a == r) || BandTie(*ref, s[i].name, t);
        } else if (rank) {
          ok = (std::isnan(a) && std::isnan(r)) || a == r ||
               (!std::isnan(a) && !std::isnan(r) && NearTie(input, t, window));
        } else {
          ok = Close(a, r);
        }
        if (!ok && failures++ < 3) {
          ADD_FAILURE() << s[i].name << " at bar " << t << " (sessions of " << per_session
                        << "): fast " << a << " reference " << r;
        }
      }
      // Every signal must be defined somewhere, or the comparison checks nothing.
      if (i < 182 || per_session == 75) {
        EXPECT_GT(defined, 0) << s[i].name;
      }
    }
  }
}

TEST(Library, StreamingEqualsBatchBitForBit) {
  const market::Bars b = TestBars(2000, 75, 5);
  Result<LibraryColumns> batch = ComputeLibrary(b);
  ASSERT_TRUE(batch.ok());
  Result<StreamingLibrary> stream = StreamingLibrary::Create();
  ASSERT_TRUE(stream.ok());
  EXPECT_EQ(stream->names(), batch->names);
  std::vector<std::vector<double>> streamed(kLibrarySize, std::vector<double>(b.size()));
  std::optional<StreamingLibrary> copy;
  std::vector<double> copy_row;
  for (size_t t = 0; t < b.size(); ++t) {
    const std::span<const double> row = stream->Push(StreamBarAt(b, t));
    ASSERT_EQ(row.size(), 184u);
    for (int i = 0; i < kLibrarySize; ++i) streamed[i][t] = row[i];
    if (t == 1000) copy.emplace(*stream);  // a copy continues from the same state
    if (t == 1001) {
      const std::span<const double> c = copy->Push(StreamBarAt(b, t));
      copy_row.assign(c.begin(), c.end());
    }
  }
  for (int i = 0; i < kLibrarySize; ++i) {
    EXPECT_TRUE(testing::BitIdenticalPrefix(streamed[i], batch->values[i], b.size()))
        << batch->names[i];
    EXPECT_EQ(std::memcmp(&copy_row[i], &batch->values[i][1001], sizeof(double)), 0)
        << batch->names[i];
  }
  EXPECT_EQ(stream->bars_pushed(), 2000);
  // A selection gives the same columns, in the selection's order.
  const std::vector<int> which = {183, 0, 167, 81};
  Result<LibraryColumns> some = ComputeLibrary(b, which);
  Result<StreamingLibrary> some_stream = StreamingLibrary::Create(which);
  ASSERT_TRUE(some.ok() && some_stream.ok());
  ASSERT_EQ(some->names, (std::vector<std::string>{"nmomentum", "co", "squeeze", "qdv"}));
  for (size_t k = 0; k < which.size(); ++k) {
    EXPECT_TRUE(testing::BitIdenticalPrefix(some->values[k], batch->values[which[k]], b.size()));
  }
  for (size_t t = 0; t < b.size(); ++t) {
    const std::span<const double> row = some_stream->Push(StreamBarAt(b, t));
    for (size_t k = 0; k < which.size(); ++k) {
      ASSERT_EQ(std::memcmp(&row[k], &batch->values[which[k]][t], sizeof(double)), 0);
    }
  }
}

TEST(Library, FiniteAfterWarmUp) {
  const market::Bars b = TestBars(2000, 75, 9);
  Result<LibraryColumns> r = ComputeLibrary(b);
  ASSERT_TRUE(r.ok());
  for (int i = 0; i < kLibrarySize; ++i) {
    const std::vector<double>& x = r->values[i];
    const auto first = std::find_if(x.begin(), x.end(), [](double v) { return !std::isnan(v); });
    ASSERT_NE(first, x.end()) << r->names[i];
    for (auto it = first; it != x.end(); ++it) {
      ASSERT_TRUE(std::isfinite(*it)) << r->names[i] << " at bar " << (it - x.begin());
    }
  }
}

}  // namespace
}  // namespace rlt::features
