// rltrade features: the manual of the features subsystem.
//
// What it is. Everything an agent observes about the market, computed ONCE per dataset
// (one symbol's bars, market/bars.h) before any environment steps: a dense
// FeatureMatrix (feature_matrix.h), float (rows = bars, cols = features), NaN in warm-up
// rows, every value finite from first_valid on. Environments read rows by index; nothing
// here runs inside Step().
//
// What it is not. No I/O (the CLI reads CSV files through market/csv.h), no LibTorch, no
// learned state beyond normaliser statistics.
//
// The invariant. Causality: row t depends on bars <= t only. leakage_test.cc perturbs
// every bar after t (open, high, low, close, volume) and asserts every output at rows <= t
// is bit-identical, for every indicator, the session features, every preset and the
// signal library.
//
// The parts, bottom up:
//   indicators.h       TA-Lib-convention indicators over double arrays (SMA, EMA, MACD,
//                      RSI, BBANDS, STDDEV, ATR, NATR, STOCH, WILLR, CCI, +DI, -DI, DX,
//                      ADX, ADXR, log returns, price/volume ratios), fast O(n) kernels.
//   reference.h        a plain-loop reference for each (recomputed from the definition);
//                      indicators_test.cc checks fast == reference (1e-9 relative) and both
//                      against every TA-Lib regression value in tests/fixtures/.
//   session_features.h return since the session open, bars since open, distance from the
//                      session VWAP; restart at each session's first bar.
//   registry.h         indicators by lowercase TA-Lib name with key=value parameters and
//                      named outputs (used by `rltrade indicator`).
//   presets.h          ComputeFeatures(bars, "fast22" | "scaled") -> FeatureMatrix; every
//                      column is documented there.
//   normalizer.h       z-score / quantile normalisers fitted on training rows only, a causal
//                      rolling z-score, JSON save/load checked against feature names.
//   incremental.h      the same indicators, session features, presets and normalisers one
//                      bar at a time (live trading), bit-identical to the batch results.
//   library.h          the signal library: 184 named causal candidate signals (bar ratios,
//                      technicals, confirmed swings, per-day, session lags, their 5-bar
//                      ranks, regime flags, 1,875-bar ranks), batch and streaming from one
//                      state machine, with a plain-loop reference (library_reference.cc).
//
// Typical use:
//   RLT_ASSIGN_OR_RETURN(features::FeatureMatrix m, features::ComputeFeatures(bars, "scaled"));
//   RLT_ASSIGN_OR_RETURN(features::Normalizer norm,
//                        features::Normalizer::Fit(m, m.first_valid, train_end_row, {}));
//   norm.Apply(m);  // and save norm.ToJson() with the checkpoint
//
// Errors: user-facing problems (unknown names, bad parameters, bad JSON, non-finite data)
// are Status/Result values with actionable messages; violated preconditions abort through
// RLT_CHECK. Thread safety: all functions are pure; Normalizer is immutable after Fit.
#ifndef RLT_FEATURES_FEATURES_H_
#define RLT_FEATURES_FEATURES_H_

#include "features/feature_matrix.h"    // IWYU pragma: export
#include "features/incremental.h"       // IWYU pragma: export
#include "features/indicators.h"        // IWYU pragma: export
#include "features/library.h"           // IWYU pragma: export
#include "features/normalizer.h"        // IWYU pragma: export
#include "features/presets.h"           // IWYU pragma: export
#include "features/reference.h"         // IWYU pragma: export
#include "features/registry.h"          // IWYU pragma: export
#include "features/session_features.h"  // IWYU pragma: export

#endif  // RLT_FEATURES_FEATURES_H_
