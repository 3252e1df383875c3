// rltrade features: the feature presets (see presets.h for every column's definition).
#include "features/presets.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "features/indicators.h"
#include "features/internal.h"
#include "features/library.h"
#include "features/registry.h"
#include "features/session_features.h"

namespace rlt::features {
namespace {

using Column = std::pair<std::string, std::vector<double>>;
using Series = std::vector<double>;

// Element-wise f(a_t) keeping NaN where a is NaN.
template <typename F>
Series Map(const Series& a, F f) {
  Series out(a.size());
  for (size_t t = 0; t < a.size(); ++t) out[t] = std::isnan(a[t]) ? a[t] : f(a[t], t);
  return out;
}

std::vector<Column> Fast22(const market::Bars& b) {
  std::vector<Column> c;
  c.emplace_back("hl", Map(b.high, [&](double h, size_t t) { return h - b.low[t]; }));
  c.emplace_back("co", Map(b.close, [&](double x, size_t t) { return x - b.open[t]; }));
  c.emplace_back("volume", b.volume);
  for (int n : {5, 10, 20}) {
    c.emplace_back("sma" + std::to_string(n), Sma(b.close, {n}));
    c.emplace_back("price_vs_sma" + std::to_string(n), PriceVsSma(b.close, {n}));
  }
  c.emplace_back("rsi14", Rsi(b.close, {14}));
  for (int k : {1, 2, 3, 5, 7}) c.emplace_back("lret" + std::to_string(k), LogReturn(b.close, {k}));
  c.emplace_back("volatility20", Stddev(b.close, {20, 1.0}));
  c.emplace_back("volume_sma20", Sma(b.volume, {20}));
  c.emplace_back("volume_ratio", VolumeRatio(b.volume, {20}));
  BbandsOutput bb = Bbands(b.close, {20, 2.0, 2.0});
  c.emplace_back("bb_upper", std::move(bb.upper));
  c.emplace_back("bb_lower", std::move(bb.lower));
  c.emplace_back("bb_middle", std::move(bb.middle));
  c.emplace_back("bb_position", std::move(bb.percent_b));
  return c;
}

void AddScaledPriceColumns(const market::Bars& b, std::vector<Column>& c) {
  for (int k : {1, 2, 3, 5, 10, 20}) {
    c.emplace_back("lret" + std::to_string(k), LogReturn(b.close, {k}));
  }
  for (int n : {5, 10, 20, 50}) {
    c.emplace_back("close_vs_sma" + std::to_string(n), PriceVsSma(b.close, {n}));
  }
  c.emplace_back("hl_over_close",
                 Map(b.high, [&](double h, size_t t) { return (h - b.low[t]) / b.close[t]; }));
  c.emplace_back("co_over_close",
                 Map(b.close, [&](double x, size_t t) { return (x - b.open[t]) / x; }));
  c.emplace_back("rsi14_centered",
                 Map(Rsi(b.close, {14}), [](double r, size_t) { return r / 100.0 - 0.5; }));
  const Series sma20 = Sma(b.close, {20});
  const Series sd20 = Stddev(b.close, {20, 1.0});
  c.emplace_back("zscore20", Map(sd20, [&](double sd, size_t t) {
                   return sd == 0.0 ? 0.0 : (b.close[t] - sma20[t]) / sd;
                 }));
  c.emplace_back("bb_width20", Bbands(b.close, {20, 2.0, 2.0}).width);
  const Series vsma20 = Sma(b.volume, {20});
  c.emplace_back("log_volume_ratio20", Map(vsma20, [&](double v, size_t t) {
                   return std::log1p(b.volume[t]) - std::log1p(v);
                 }));
}

void AddScaledIndicatorColumns(const market::Bars& b, std::vector<Column>& c) {
  c.emplace_back("natr14_fraction", Map(Natr(b.high, b.low, b.close, {14}),
                                        [](double v, size_t) { return v / 100.0; }));
  c.emplace_back("macd_hist_over_close",
                 Map(Macd(b.close, {}).hist, [&](double h, size_t t) { return h / b.close[t]; }));
  c.emplace_back("adx14_fraction", Map(Adx(b.high, b.low, b.close, {14}),
                                       [](double v, size_t) { return v / 100.0; }));
  c.emplace_back("stoch_k_centered", Map(Stoch(b.high, b.low, b.close, {}).slowk,
                                         [](double k, size_t) { return k / 100.0 - 0.5; }));
  Series mean, var;
  internal::RollingMeanVar(LogReturn(b.close, {1}), 20, &mean, &var);
  c.emplace_back("realized_vol20", Map(var, [](double v, size_t) { return std::sqrt(v); }));
  SessionFeatures s = ComputeSessionFeatures(b);
  c.emplace_back("session_return", std::move(s.return_since_open));
  c.emplace_back("log_bars_since_open",
                 Map(s.bars_since_open, [](double n, size_t) { return std::log1p(n); }));
  c.emplace_back("vwap_distance", std::move(s.vwap_distance));
}

std::vector<Column> Scaled(const market::Bars& b) {
  std::vector<Column> c;
  AddScaledPriceColumns(b, c);
  AddScaledIndicatorColumns(b, c);
  return c;
}

// Packs columns into a FeatureMatrix, blanks the warm-up rows and checks finiteness.
Result<FeatureMatrix> Pack(const std::vector<Column>& columns, int64_t rows) {
  FeatureMatrix m;
  m.rows = rows;
  m.cols = static_cast<int64_t>(columns.size());
  for (const Column& c : columns) m.names.push_back(c.first);
  m.values.resize(static_cast<size_t>(m.rows * m.cols));
  m.first_valid = rows;
  for (int64_t t = 0; t < rows; ++t) {
    bool all_finite = true;
    for (int64_t j = 0; j < m.cols; ++j) {
      const float v = static_cast<float>(columns[j].second[t]);
      m.values[t * m.cols + j] = v;
      all_finite = all_finite && std::isfinite(v);
    }
    if (all_finite && m.first_valid == rows) m.first_valid = t;
    if (!all_finite && m.first_valid < rows) {
      for (int64_t j = 0; j < m.cols; ++j) {
        if (!std::isfinite(m.values[t * m.cols + j])) {
          return Status::DataError("feature '" + m.names[j] + "' is not finite at bar " +
                                   std::to_string(t) + " (after warm-up ended at bar " +
                                   std::to_string(m.first_valid) +
                                   "): check the bars for non-positive prices");
        }
      }
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::fill(m.values.begin(), m.values.begin() + m.first_valid * m.cols, nan);
  return m;
}

}  // namespace

std::vector<std::string> PresetNames() { return {"fast22", "scaled", "full184"}; }

Result<std::vector<int>> LibrarySelection(const std::string& key) {
  if (key == "full184") return std::vector<int>{};
  if (key.rfind("full184:", 0) != 0) {
    return Status::NotFound("'" + key + "' is not a selection of the signal library");
  }
  std::vector<std::string> names;
  size_t start = 8;
  while (start <= key.size()) {
    const size_t comma = std::min(key.find(',', start), key.size());
    names.push_back(key.substr(start, comma - start));
    start = comma + 1;
  }
  return ResolveLibrarySignals(names);
}

Result<std::vector<std::string>> PresetColumns(const std::string& preset) {
  market::Bars empty;
  RLT_ASSIGN_OR_RETURN(FeatureMatrix m, ComputeFeatures(empty, preset));
  return m.names;
}

Result<FeatureMatrix> ComputeFeatures(const market::Bars& bars, const std::string& preset) {
  if (preset == "full184" || preset.rfind("full184:", 0) == 0) {
    RLT_ASSIGN_OR_RETURN(const std::vector<int> which, LibrarySelection(preset));
    RLT_ASSIGN_OR_RETURN(LibraryColumns lib, ComputeLibrary(bars, which));
    std::vector<Column> columns;
    columns.reserve(lib.names.size());
    for (size_t j = 0; j < lib.names.size(); ++j) {
      columns.emplace_back(std::move(lib.names[j]), std::move(lib.values[j]));
    }
    return Pack(columns, static_cast<int64_t>(bars.size()));
  }
  if (preset != "fast22" && preset != "scaled") {
    return Status::NotFound("unknown feature preset '" + preset + "'" +
                            NearestNameHint(preset, PresetNames()) +
                            "; valid presets: fast22, scaled, full184");
  }
  RLT_RETURN_IF_ERROR(internal::CheckBars(bars));
  const std::vector<Column> columns = preset == "fast22" ? Fast22(bars) : Scaled(bars);
  return Pack(columns, static_cast<int64_t>(bars.size()));
}

}  // namespace rlt::features
