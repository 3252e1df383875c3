// rltrade features: feature normalisation fitted on training rows only.
//
// Kinds (NormalizerOptions::kind):
//   kZScore        (x - mean) / std per feature, mean and population std fitted on the rows
//                  [begin_row, end_row) of a FeatureMatrix (the training range); then clipped
//                  to +/- clip (default 5). A feature with zero spread gets std 1.
//   kQuantile      per feature, `quantiles` empirical quantile edges of the training values
//                  (`quantiles_binary` for the signal library's regime flags)
//                  (edge j at probability j / (quantiles - 1), linear interpolation between
//                  order statistics); x maps to 2u - 1 in [-1, 1] with u = its position among
//                  the edges by linear interpolation, clipped outside the first/last edge;
//                  values equal to several (tied) edges map to the middle of those edges.
//   kRollingZScore causal, nothing fitted: x_t -> (x_t - mean) / std over the last `window`
//                  rows <= t (fewer at the start, counted from first_valid; 0 while fewer than
//                  2 rows or std is 0), then clipped. Unlike kZScore it adapts to regime
//                  changes and needs no training range, but a value's scale depends on its
//                  recent past, so identical raw values can map differently in two places.
//   kNone          identity (clipping still applies when clip > 0).
// Fit ignores rows with any NaN (warm-up rows). Apply works in place and keeps NaN as NaN.
// A Normalizer is a value type, immutable after Fit/FromJson, safe to share across threads.
#ifndef RLT_FEATURES_NORMALIZER_H_
#define RLT_FEATURES_NORMALIZER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "features/feature_matrix.h"

namespace rlt::features {

enum class NormalizerKind { kNone, kZScore, kQuantile, kRollingZScore };

// "none", "zscore", "quantile", "rolling_zscore".
std::string NormalizerKindName(NormalizerKind kind);
Result<NormalizerKind> ParseNormalizerKind(const std::string& name);

struct NormalizerOptions {
  NormalizerKind kind = NormalizerKind::kZScore;
  // Clip outputs to [-clip, clip]; <= 0 disables clipping. Quantile outputs are always
  // within [-1, 1].
  double clip = 5.0;
  int quantiles = 101;  // kQuantile: number of edges (>= 2)
  // kQuantile: edges for the signal library's regime flags (features/library.h, kind
  // kRegime: 0/1 flags and small counts); 0 = `quantiles`. A flag has few distinct values,
  // so few edges describe it (the replaced intraday system used 5 and 3).
  int quantiles_binary = 0;
  int64_t window = 390;  // kRollingZScore: rows in the rolling window (>= 2)
};

class Normalizer {
 public:
  Normalizer() = default;

  // Fits on rows [begin_row, end_row) of `features`, skipping rows with any NaN.
  // Errors: an empty or out-of-bounds range, no complete row in it, bad options.
  static Result<Normalizer> Fit(const FeatureMatrix& features, int64_t begin_row, int64_t end_row,
                                const NormalizerOptions& options);

  // Normalises every row in place; NaN stays NaN. REQUIRES: features.names == names().
  void Apply(FeatureMatrix& features) const;
  // Status form of the precondition of Apply: names the first mismatching column.
  Status CheckCompatible(const std::vector<std::string>& names) const;

  nlohmann::json ToJson() const;
  // Loads a normaliser saved by ToJson. When `expected_names` is not empty, a different
  // feature list is an error naming the first mismatch.
  static Result<Normalizer> FromJson(const nlohmann::json& json,
                                     const std::vector<std::string>& expected_names = {});
  // The one reader of a saved normaliser file (a run's normalizer.json): ReadFile's rules,
  // then JSON, then FromJson. Errors name the path.
  static Result<Normalizer> LoadFile(const std::string& path);
  // The same for a run of several symbols, whose file holds one normaliser per symbol or a
  // pooled one (SymbolNormalizersJson): the one `symbol` is normalised with. A one-symbol
  // file returns its normaliser whatever `symbol` is. Errors name the path and, for a
  // symbol the file does not hold, the symbols it does.
  static Result<Normalizer> LoadFile(const std::string& path, const std::string& symbol);

  const std::vector<std::string>& names() const { return names_; }
  const NormalizerOptions& options() const { return options_; }
  const std::vector<double>& mean() const { return mean_; }                 // kZScore, (cols)
  const std::vector<double>& std() const { return std_; }                   // kZScore, (cols)
  const std::vector<std::vector<double>>& edges() const { return edges_; }  // kQuantile

  // The value Apply writes for value v of column `col` (before the cast to float); NaN
  // stays NaN. Apply and StreamingNormalizer (incremental.h) both use it.
  // REQUIRES: kind != kRollingZScore (that kind needs history: RollingZScore), col < cols.
  double MapValue(size_t col, double v) const;
  // v clipped to [-clip, clip] (unchanged when clip <= 0 or v is NaN).
  double Clip(double v) const;

 private:
  void ApplyRolling(FeatureMatrix& features) const;

  NormalizerOptions options_;
  std::vector<std::string> names_;
  std::vector<double> mean_, std_;
  std::vector<std::vector<double>> edges_;  // (cols, quantiles), non-decreasing
};

// The causal rolling z-score of one column (kRollingZScore), one value at a time, in
// O(window) state: running sums of deviations from the column's first value, re-summed
// exactly once every `window` values so that rounding never accumulates. Update(x_i) returns
// (x_i - mean) / std over the last min(i + 1, window) values, or 0 while fewer than 2 values
// or the variance is (relatively) zero; not clipped. Normalizer::Apply runs one per column
// from the matrix's first_valid row; StreamingNormalizer (incremental.h) runs the same class.
class RollingZScore {
 public:
  explicit RollingZScore(int64_t window);  // REQUIRES: window >= 1
  double Update(double x);

 private:
  int64_t window_;
  int64_t count_ = 0;
  double anchor_ = 0.0, s1_ = 0.0, s2_ = 0.0;
  std::vector<double> ring_;  // the last `window` values; ring_[count_ % window_] is oldest
};

// Maps x through quantile edges to [-1, 1] (see kQuantile). Exposed for tests.
double QuantileMap(const std::vector<double>& edges, double x);

// The normalisers of a run of several symbols, as one JSON document:
//   {"format": "rltrade.symbol_normalizers", "version": 1, "normalize_by": "symbol" | "pooled",
//    "symbols": [names], "normalizers": {name: Normalizer::ToJson(), ...}}
// with one entry per symbol (normalize_by = "symbol") or one named "pooled".
// REQUIRES: normalizers.size() == symbols.size() (by symbol) or 1 (pooled).
nlohmann::json SymbolNormalizersJson(const std::string& normalize_by,
                                     const std::vector<std::string>& symbols,
                                     const std::vector<Normalizer>& normalizers);

}  // namespace rlt::features

#endif  // RLT_FEATURES_NORMALIZER_H_
