// Tests for market/synth: layout facts, validity under the reader, determinism, and
// broad statistical properties of the model (documented in synth.h).
#include "market/synth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/civil_time.h"
#include "core/status_test_util.h"

namespace rlt::market {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double Correlation(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i] / x.size(), my += y[i] / y.size();
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

// corr(r_t, r_{t-1} + ... + r_{t-5}) over all bars of one symbol.
double LagSumCorrelation(const Bars& b) {
  std::vector<double> r, trailing;
  for (size_t t = 6; t < b.size(); ++t) {
    r.push_back(std::log(b.close[t] / b.close[t - 1]));
    trailing.push_back(std::log(b.close[t - 1] / b.close[t - 6]));
  }
  return Correlation(r, trailing);
}

TEST(Synth, DefaultIntradayHas75KolkataBarsPerWeekdayFrom0915) {
  SynthOptions o;
  o.num_days = 5;
  Result<MarketData> data = GenerateSynthetic(o);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Bars& b = data->symbols[0];
  EXPECT_EQ(b.symbol, "SYN0");
  EXPECT_EQ(b.timezone, "Asia/Kolkata");
  ASSERT_EQ(b.sessions.size(), 5u);
  // 2023-01-02 is a Monday: Mon..Fri.
  EXPECT_EQ(b.sessions[0].date, 20230102);
  EXPECT_EQ(b.sessions[4].date, 20230106);
  for (const Session& s : b.sessions) EXPECT_EQ(s.size(), 75);
  // 09:15 IST = 03:45 UTC.
  EXPECT_EQ(b.time[0], DaysFromCivil(2023, 1, 2) * 86400 + 3 * 3600 + 45 * 60);
  EXPECT_EQ(b.time[74] - b.time[0], 74 * 300);
  EXPECT_EQ(b.utc_offset[0], 19800);
}

TEST(Synth, BarsAreConsistentPositiveAndPassTheReader) {
  SynthOptions o;
  o.num_symbols = 3;
  o.num_days = 30;
  o.seed = 7;
  Result<MarketData> data = GenerateSynthetic(o);
  ASSERT_TRUE(data.ok());
  for (const Bars& b : data->symbols) {
    for (size_t i = 0; i < b.size(); ++i) {
      ASSERT_GT(b.low[i], 0);
      ASSERT_GE(b.high[i], std::max(b.open[i], b.close[i]));
      ASSERT_LE(b.low[i], std::min(b.open[i], b.close[i]));
      ASSERT_EQ(b.volume[i], std::round(b.volume[i]));
      ASSERT_GE(b.volume[i], 1);
    }
  }
  char dir[] = "/tmp/rlt_synth_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/syn.csv";
  ASSERT_TRUE(WriteBarsCsv(path, *data).ok());
  CsvReadOptions ro;
  ro.timezone = "Asia/Kolkata";
  DataReport report;
  Result<MarketData> back = ReadBarsCsv(path, ro, &report);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->symbols.size(), 3u);
  EXPECT_EQ(back->symbols[1].close, data->symbols[1].close);
  EXPECT_EQ(back->symbols[1].sessions.size(), 30u);
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(Synth, SameOptionsAndSeedWriteByteIdenticalFiles) {
  SynthOptions o;
  o.num_symbols = 2;
  o.num_days = 10;
  o.seed = 42;
  o.signal_to_noise = 0.1;
  char dir[] = "/tmp/rlt_synth_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string a = std::string(dir) + "/a.csv", b = std::string(dir) + "/b.csv";
  ASSERT_TRUE(WriteBarsCsv(a, *GenerateSynthetic(o)).ok());
  ASSERT_TRUE(WriteBarsCsv(b, *GenerateSynthetic(o)).ok());
  EXPECT_EQ(Slurp(a), Slurp(b));
  EXPECT_GT(Slurp(a).size(), 1000u);
  o.seed = 43;
  ASSERT_TRUE(WriteBarsCsv(b, *GenerateSynthetic(o)).ok());
  EXPECT_NE(Slurp(a), Slurp(b));
  std::remove(a.c_str());
  std::remove(b.c_str());
  rmdir(dir);
}

TEST(Synth, EachSymbolHasItsOwnStream) {
  SynthOptions o;
  o.num_symbols = 2;
  o.num_days = 2;
  const MarketData data = *GenerateSynthetic(o);
  EXPECT_NE(data.symbols[0].close, data.symbols[1].close);
  // Symbol i uses seed + i: SYN1 under seed 1 equals SYN0 under seed 2.
  o.num_symbols = 1;
  o.seed = 2;
  EXPECT_EQ(GenerateSynthetic(o)->symbols[0].close, data.symbols[1].close);
}

double AnnualisedDailyVol(const Bars& b) {
  std::vector<double> r;
  for (size_t s = 1; s < b.sessions.size(); ++s) {
    r.push_back(std::log(b.close[b.sessions[s].end - 1] / b.close[b.sessions[s - 1].end - 1]));
  }
  double m = 0, v = 0;
  for (double x : r) m += x / r.size();
  for (double x : r) v += (x - m) * (x - m) / (r.size() - 1);
  return std::sqrt(v * 252);
}

TEST(Synth, RealisedVolatilityIsNearTheTarget) {
  for (SynthKind kind : {SynthKind::kIntraday, SynthKind::kDaily}) {
    SynthOptions o;
    o.kind = kind;
    o.num_symbols = 4;
    o.num_days = 500;
    o.model = SynthModel::kGarch;
    o.annual_vol = 0.25;
    const MarketData data = *GenerateSynthetic(o);
    for (const Bars& b : data.symbols) {
      const double vol = AnnualisedDailyVol(b);
      EXPECT_GT(vol, 0.17) << b.symbol;
      EXPECT_LT(vol, 0.35) << b.symbol;
    }
  }
}

TEST(Synth, IntradayVolumeAndRangeAreHigherAtTheOpenThanAtMidday) {
  SynthOptions o;
  o.num_days = 200;
  const Bars b = GenerateSynthetic(o)->symbols[0];
  double open_vol = 0, mid_vol = 0, open_range = 0, mid_range = 0;
  for (const Session& s : b.sessions) {
    open_vol += b.volume[s.begin + 1];
    mid_vol += b.volume[s.begin + 37];
    open_range += std::log(b.high[s.begin + 1] / b.low[s.begin + 1]);
    mid_range += std::log(b.high[s.begin + 37] / b.low[s.begin + 37]);
  }
  EXPECT_GT(open_vol, 1.5 * mid_vol);
  EXPECT_GT(open_range, 1.2 * mid_range);
}

TEST(Synth, SignalToNoiseSetsTheSignOfTheLagCorrelation) {
  SynthOptions o;
  o.num_days = 400;  // 30,000 bars: standard error of a correlation ~0.006
  o.signal_to_noise = 0.3;
  const double momentum = LagSumCorrelation(GenerateSynthetic(o)->symbols[0]);
  o.signal_to_noise = -0.3;
  const double reversion = LagSumCorrelation(GenerateSynthetic(o)->symbols[0]);
  o.signal_to_noise = 0.0;
  const double none = LagSumCorrelation(GenerateSynthetic(o)->symbols[0]);
  // With returns roughly uncorrelated, corr = snr / sqrt(1 + snr^2) = +-0.29.
  EXPECT_GT(momentum, 0.15);
  EXPECT_LT(reversion, -0.15);
  EXPECT_LT(std::abs(none), 0.03);
}

TEST(Synth, DailyKindHasOneBarPerWeekdayAtTheSessionClose) {
  SynthOptions o;
  o.kind = SynthKind::kDaily;
  o.num_days = 10;
  o.timezone = "America/New_York";
  o.session_open_minute = 9 * 60 + 30;
  o.session_close_minute = 16 * 60;
  const Bars b = GenerateSynthetic(o)->symbols[0];
  ASSERT_EQ(b.size(), 10u);
  EXPECT_EQ(b.sessions.size(), 10u);
  EXPECT_EQ(b.sessions[5].date, 20230109);                              // the second Monday
  EXPECT_EQ(b.time[0], DaysFromCivil(2023, 1, 2) * 86400 + 21 * 3600);  // 16:00 EST
}

TEST(Synth, InvalidOptionsAreClearErrors) {
  SynthOptions o;
  o.timezone = "Nowhere/City";
  EXPECT_TRUE(
      IsError(GenerateSynthetic(o), Status::Code::kNotFound, "unknown time zone 'Nowhere/City'"));
  o = SynthOptions();
  o.signal_to_noise = 0.9;  // explosive with lookback 5
  EXPECT_NE(GenerateSynthetic(o).status().message().find("too large"), std::string::npos);
  o = SynthOptions();
  o.session_close_minute = o.session_open_minute;
  EXPECT_TRUE(IsError(GenerateSynthetic(o), Status::Code::kInvalidArgument,
                      "the session must hold at least one bar"));
  EXPECT_NE(ParseSynthKind("hourly").status().message().find("intraday, daily"), std::string::npos);
  EXPECT_EQ(*ParseSynthModel("garch"), SynthModel::kGarch);
}

}  // namespace
}  // namespace rlt::market
