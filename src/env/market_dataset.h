// rltrade env: the prepared, read-only market data that market environments step over.
//
// A MarketDataset is built once per dataset before any stepping: one symbol's bars, its
// feature matrix (computed causally, then normalised with statistics fitted on the
// training date range only), and the normaliser that was fitted, so that evaluation
// and signals reapply exactly the same transform. Environments share it read-only
// through a shared_ptr; it is never modified after preparation.
#ifndef RLT_ENV_MARKET_DATASET_H_
#define RLT_ENV_MARKET_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "features/feature_matrix.h"
#include "features/normalizer.h"
#include "market/bars.h"
#include "market/date_range.h"

namespace rlt::env {

// Date ranges live in market/date_range.h; env code names them without the prefix.
using market::DateRange;

// Several symbols, one policy: a dataset of several symbols holds their bars one after
// the other (each symbol's bars in time order, symbol after symbol; `time` is increasing
// within a part only), each part's features computed on its own bars and normalised
// with its own normaliser (or a pooled one). Sessions never span two parts.
struct SymbolPart {
  std::string symbol;
  int32_t first_session = 0, end_session = 0;  // [first, end) indices into bars.sessions
  int64_t first_bar = 0, end_bar = 0;          // [first, end) bar indices
  int64_t first_valid = 0;                     // first bar (absolute) whose features are defined
};

struct MarketDataset {
  market::Bars bars;
  features::FeatureMatrix features;  // normalised; (bars.size(), cols)
  features::Normalizer normalizer;   // fitted on `fit_range` (several symbols: the first's
                                     // or the pooled one; see normalizers)
  DateRange fit_range;
  // Several symbols: one part per symbol, in [data] symbols order, and the normalisers
  // (one per part when normalize_by = "symbol", one when "pooled"). Empty: one symbol.
  std::vector<SymbolPart> parts;
  std::vector<features::Normalizer> normalizers;
  std::string normalize_by;  // several symbols: "symbol" or "pooled"

  // The part holding session `s` (0 for a one-symbol dataset).
  int32_t PartOfSession(int32_t s) const;
  // The first bar with defined features of the part holding session `s`.
  int64_t FirstValidOfSession(int32_t s) const;
  // The symbol of session `s`.
  const std::string& SymbolOfSession(int32_t s) const;
  // RUN_DIR/normalizer.json: the normaliser, or for several symbols every symbol's
  // (features::SymbolNormalizersJson).
  nlohmann::json NormalizerJson() const;
};

struct DatasetOptions {
  std::string preset = "scaled";           // feature preset (features/presets.h)
  features::NormalizerOptions normalizer;  // default: z-score, clip 5
};

// Computes features for `bars`, fits the normaliser on the sessions in `train` (rows
// from features.first_valid on), applies it to every row. Errors: no training rows,
// unknown preset.
Result<std::shared_ptr<const MarketDataset>> PrepareMarketDataset(market::Bars bars,
                                                                  const DatasetOptions& options,
                                                                  const DateRange& train);

// Several symbols, one policy: features for each symbol's bars (`symbols`, in order),
// normalisers fitted on each symbol's sessions in `train` (by_symbol) or on all of them
// together, and, when `symbol_id`, a one-hot column per symbol ("symbol=<name>", 0 or 1,
// not normalised) after the features. Errors: fewer than two symbols, a symbol without
// training rows (named), unknown preset.
Result<std::shared_ptr<const MarketDataset>> PrepareSymbolsDataset(
    std::vector<market::Bars> symbols, const DatasetOptions& options, const DateRange& train,
    bool by_symbol, bool symbol_id);

// Appends the one-hot symbol columns of symbol `index` of `count` to a prepared one-symbol
// dataset (evaluation, signals and paper trading of one symbol of a several-symbol run).
std::shared_ptr<const MarketDataset> WithSymbolId(std::shared_ptr<const MarketDataset> data,
                                                  const std::vector<std::string>& symbols,
                                                  size_t index);

// Evaluation and signals: computes features for `bars` with `preset` and applies a stored
// normaliser (fitted on `fit_range` by training) instead of fitting one, so the same
// transform reaches new data. Errors: unknown preset, a feature list that differs from
// the normaliser's (naming the first mismatch).
Result<std::shared_ptr<const MarketDataset>> PrepareMarketDataset(
    market::Bars bars, const std::string& preset, const features::Normalizer& stored,
    const DateRange& fit_range);

}  // namespace rlt::env

#endif  // RLT_ENV_MARKET_DATASET_H_
