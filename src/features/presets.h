// rltrade features: named feature sets ("presets") computed from one symbol's bars.
//
// ComputeFeatures() runs once per dataset and returns the dense FeatureMatrix an
// environment reads. Every feature is causal (row t uses bars <= t only; tested by
// perturbing the future in presets_test.cc). Indicators run continuously across sessions;
// only the per-session features (session_features.h) restart at each session's first bar.
// Rows before first_valid (the first row where every feature is finite) are all NaN; after
// it every value is finite, or ComputeFeatures fails naming the row and feature.
//
// Preset "fast22" (raw price-scale features, exactly these 22 columns in this order):
//   hl              high - low
//   co              close - open
//   volume          volume
//   sma5, sma10, sma20              SMA of close (TA-Lib SMA)
//   price_vs_sma5/10/20             close / SMA - 1
//   rsi14           Wilder RSI(14) of close, 0..100
//   lret1, lret2, lret3, lret5, lret7   ln(close_t / close_{t-k})
//   volatility20    POPULATION standard deviation of close over 20 bars (= TA-Lib
//                   STDDEV(20, 1), the same dispersion the Bollinger bands use, so
//                   bb_upper = bb_middle + 2 * volatility20)
//   volume_sma20    SMA(volume, 20)
//   volume_ratio    volume / volume_sma20 (1 when volume_sma20 is 0)
//   bb_upper, bb_lower, bb_middle   BBANDS(20, 2, 2) of close
//   bb_position     %b = (close - bb_lower) / (bb_upper - bb_lower), 0.5 when the bands meet
// first_valid = 19 on data starting at bar 0.
//
// Preset "scaled" (scale-free: comparable across symbols and price levels; 24 columns):
//   lret1, lret2, lret3, lret5, lret10, lret20    ln(close_t / close_{t-k})
//   close_vs_sma5/10/20/50     close / SMA(close, n) - 1
//   hl_over_close              (high - low) / close
//   co_over_close              (close - open) / close
//   rsi14_centered             RSI(14) / 100 - 0.5, in [-0.5, 0.5]
//   zscore20                   (close - SMA20) / STDDEV20 (population; 0 when the stddev is 0)
//   bb_width20                 (bb_upper - bb_lower) / bb_middle of BBANDS(20, 2, 2)
//   log_volume_ratio20         ln(1 + volume) - ln(1 + SMA(volume, 20)) (finite at volume 0)
//   natr14_fraction            ATR(14) / close (= NATR / 100)
//   macd_hist_over_close       MACD(12, 26, 9) histogram / close
//   adx14_fraction             ADX(14) / 100
//   stoch_k_centered           STOCH(5, 3, 3) slow %K / 100 - 0.5
//   realized_vol20             population stddev of lret1 over 20 bars (no zero band)
//   session_return             close / session's first open - 1
//   log_bars_since_open        ln(1 + bars since the session's first bar)
//   vwap_distance              close / session VWAP - 1
// first_valid = 49 (SMA50) on data starting at bar 0.
//
// Preset "full184": the signal library (library.h), all 184 candidate signals in the
// library's order; "full184:a,b,c" selects some by name (the [features] signals key and
// preset files of `rltrade mine` resolve to this form). Warm-up: 1,875 bars (the long
// ranks ndv and nmomentum) plus their inputs' own, when they are selected.
#ifndef RLT_FEATURES_PRESETS_H_
#define RLT_FEATURES_PRESETS_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "features/feature_matrix.h"
#include "market/bars.h"

namespace rlt::features {

// "fast22", "scaled", "full184".
std::vector<std::string> PresetNames();

// The library signals (features/library.h) a feature key selects: "full184" (all: an empty
// list) or "full184:a,b,c" (those, in that order). NotFound for other keys; the library's
// errors for unknown or repeated names.
Result<std::vector<int>> LibrarySelection(const std::string& key);

// Column names of a preset, in order; NotFound (listing the presets) for unknown names.
Result<std::vector<std::string>> PresetColumns(const std::string& preset);

// Computes a preset. Errors: unknown preset (NotFound, names the valid ones and the nearest);
// bars with columns of unequal length or without sessions assigned (InvalidArgument);
// a non-finite feature after first_valid, e.g. from a non-positive price (DataError, names
// the row and the feature).
Result<FeatureMatrix> ComputeFeatures(const market::Bars& bars, const std::string& preset);

}  // namespace rlt::features

#endif  // RLT_FEATURES_PRESETS_H_
