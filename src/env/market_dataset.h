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

#include "core/status.h"
#include "features/feature_matrix.h"
#include "features/normalizer.h"
#include "market/bars.h"
#include "market/date_range.h"

namespace rlt::env {

// Date ranges live in market/date_range.h; env code names them without the prefix.
using market::DateRange;

struct MarketDataset {
  market::Bars bars;
  features::FeatureMatrix features;  // normalised; (bars.size(), cols)
  features::Normalizer normalizer;   // fitted on `fit_range`
  DateRange fit_range;
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

// Evaluation and signals: computes features for `bars` with `preset` and applies a stored
// normaliser (fitted on `fit_range` by training) instead of fitting one, so the same
// transform reaches new data. Errors: unknown preset, a feature list that differs from
// the normaliser's (naming the first mismatch).
Result<std::shared_ptr<const MarketDataset>> PrepareMarketDataset(
    market::Bars bars, const std::string& preset, const features::Normalizer& stored,
    const DateRange& fit_range);

}  // namespace rlt::env

#endif  // RLT_ENV_MARKET_DATASET_H_
