// rltrade features: helpers shared by the feature tests (not part of the library).
// Loads the TA-Lib fixture bars, makes random valid bars with sessions, perturbs bars
// after a given index, and compares series bit for bit.
#ifndef RLT_FEATURES_TEST_UTIL_H_
#define RLT_FEATURES_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "market/bars.h"

namespace rlt::features::testing {

inline std::string FixturePath(const std::string& name) {
  return std::string(RLT_SOURCE_DIR) + "/tests/fixtures/" + name;
}

// Comma-separated fields of the non-comment data lines of `path` (header skipped).
inline std::vector<std::vector<std::string>> ReadCsvRows(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool header_seen = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!header_seen) {
      header_seen = true;
      continue;
    }
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, ',')) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

// Fills the session arrays for sessions of `bars_per_session` bars (one daily session per
// bar when 1).
inline void AssignFixedSessions(market::Bars& bars, int bars_per_session) {
  const int n = static_cast<int>(bars.size());
  bars.session.assign(n, 0);
  bars.bar_in_session.assign(n, 0);
  bars.last_in_session.assign(n, 0);
  bars.sessions.clear();
  for (int i = 0; i < n; ++i) {
    bars.session[i] = i / bars_per_session;
    bars.bar_in_session[i] = i % bars_per_session;
    bars.last_in_session[i] = (i % bars_per_session == bars_per_session - 1) || i == n - 1;
    if (bars.bar_in_session[i] == 0) {
      bars.sessions.push_back({20240102 + bars.session[i], i, std::min(n, i + bars_per_session)});
    }
  }
}

// The 252 TA-Lib regression bars, one session per bar (daily data).
inline market::Bars TalibBars() {
  market::Bars bars;
  bars.symbol = "TALIB";
  for (const auto& f : ReadCsvRows(FixturePath("talib_daily_252.csv"))) {
    bars.time.push_back(86400 * static_cast<int64_t>(bars.time.size() + 19000));
    bars.utc_offset.push_back(0);
    bars.open.push_back(std::stod(f[1]));
    bars.high.push_back(std::stod(f[2]));
    bars.low.push_back(std::stod(f[3]));
    bars.close.push_back(std::stod(f[4]));
    bars.volume.push_back(std::stod(f[5]));
  }
  AssignFixedSessions(bars, 1);
  return bars;
}

// Sets bar i to a valid random bar around `reference_close` (low <= open, close <= high).
inline void RandomBar(market::Bars& bars, size_t i, double reference_close, std::mt19937_64& rng) {
  std::normal_distribution<double> step(0.0, 0.01);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double open = reference_close * std::exp(step(rng));
  const double close = open * std::exp(step(rng));
  bars.open[i] = open;
  bars.close[i] = close;
  bars.high[i] = std::max(open, close) * (1.0 + 0.005 * unit(rng));
  bars.low[i] = std::min(open, close) * (1.0 - 0.005 * unit(rng));
  bars.volume[i] = unit(rng) < 0.02 ? 0.0 : std::floor(1000.0 + 1e5 * unit(rng));
}

// A random walk of `n` valid one-minute bars in sessions of `bars_per_session`.
inline market::Bars RandomBars(size_t n, int bars_per_session, uint64_t seed) {
  market::Bars bars;
  bars.symbol = "RND";
  bars.time.resize(n);
  bars.utc_offset.assign(n, 0);
  bars.open.resize(n);
  bars.high.resize(n);
  bars.low.resize(n);
  bars.close.resize(n);
  bars.volume.resize(n);
  std::mt19937_64 rng(seed);
  double close = 100.0;
  for (size_t i = 0; i < n; ++i) {
    bars.time[i] = 1700000000 + 60 * static_cast<int64_t>(i);
    RandomBar(bars, i, close, rng);
    close = bars.close[i];
  }
  AssignFixedSessions(bars, bars_per_session);
  return bars;
}

// Replaces every bar after t by a random valid bar (all of O, H, L, C, V change).
inline market::Bars PerturbAfter(const market::Bars& bars, size_t t, uint64_t seed) {
  market::Bars out = bars;
  std::mt19937_64 rng(seed);
  for (size_t i = t + 1; i < out.size(); ++i) RandomBar(out, i, out.close[i] * 1.03, rng);
  return out;
}

// True when a and b agree bit for bit (so NaN == NaN) on [0, end).
template <typename T>
bool BitIdenticalPrefix(const std::vector<T>& a, const std::vector<T>& b, size_t end) {
  if (a.size() < end || b.size() < end) return false;
  return std::memcmp(a.data(), b.data(), end * sizeof(T)) == 0;
}

}  // namespace rlt::features::testing

#endif  // RLT_FEATURES_TEST_UTIL_H_
