// rltrade features: streaming (incremental) versions of the indicators, the session
// features, the presets and the normalisers, one bar at a time.
//
// What it is. A live trader receives one bar at a time and must observe exactly the row
// that training saw for that bar: ComputeFeatures(bars, preset) (presets.h) followed by the
// stored Normalizer (normalizer.h). The classes here produce that row bar by bar, BIT FOR
// BIT equal to the batch result for the same bars (incremental_test.cc checks every
// indicator, the session features, every preset and every normaliser kind on random
// series with flat stretches, zero volume and session gaps). Any difference would be
// train/serve skew.
//
// How bit identity is kept. Each stream mirrors the arithmetic of its batch kernel
// (indicators.h), operation for operation and in the same order: the same seeds, the same
// Wilder and EMA recursions, the same exact window re-sums every `period` bars (SMA, rolling
// mean/variance) and the same TA-Lib zero bands; the formulas both sides share (RSI, DI, DX,
// stddev) live in internal.h, and the causal rolling z-score is one class (RollingZScore,
// normalizer.h) used by Normalizer::Apply and by StreamingNormalizer alike. rlt_features is
// compiled with -ffp-contract=off, so the compiler never fuses a multiply-add differently in
// the two copies of an expression (see src/features/CMakeLists.txt).
//
// Cost. Every Update is O(1) per bar (amortised: rolling extremes use a monotone deque,
// and a window mean/variance is re-summed exactly once every `period` bars, as the batch
// kernel does), except CCI which is O(period) like its batch version. State is fixed at
// construction (ring buffers of one window); Push allocates nothing.
//
// Warm-up. An Update returns NaN exactly where the batch function gives NaN. Single-input
// streams skip a leading run of non-finite inputs, as the batch kernels do (indicators.h).
//
// Thread safety: a stream is a value type with no shared state; use one per thread.
//
// Typical use (paper trading):
//   RLT_ASSIGN_OR_RETURN(features::Normalizer norm, features::Normalizer::LoadFile(path));
//   RLT_ASSIGN_OR_RETURN(features::IncrementalFeatures stream,
//                        features::IncrementalFeatures::Create("scaled", &norm));
//   for each new bar:
//     RLT_ASSIGN_OR_RETURN(std::span<const float> row, stream.Push(bar));
//     if (stream.warmed_up()) act on row;
#ifndef RLT_FEATURES_INCREMENTAL_H_
#define RLT_FEATURES_INCREMENTAL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "features/indicators.h"
#include "features/normalizer.h"
#include "market/bars.h"

namespace rlt::features {

// ---- Fixed-size state -------------------------------------------------------------------

// The last `capacity` values pushed, oldest first. Never allocates after construction.
class RingWindow {
 public:
  explicit RingWindow(size_t capacity);

  size_t size() const { return size_; }
  bool full() const { return size_ == values_.size(); }
  // The oldest value held. REQUIRES: size() > 0.
  double oldest() const { return values_[head_]; }
  // Appends v, dropping the oldest value when full.
  void Push(double v);
  // Calls f(v) for every value held, oldest first.
  template <typename F>
  void ForEachOldestFirst(F f) const {
    const size_t first_run = std::min(size_, values_.size() - head_);
    for (size_t i = 0; i < first_run; ++i) f(values_[head_ + i]);
    for (size_t i = 0; i < size_ - first_run; ++i) f(values_[i]);
  }
  size_t capacity() const { return values_.size(); }

 private:
  std::vector<double> values_;
  size_t head_ = 0;  // index of the oldest value
  size_t size_ = 0;
};

// Rolling maximum or minimum of the last `period` values: the monotone deque of the batch
// kernel (oscillators.cc), so ties and NaN resolve identically.
class RollingExtremeStream {
 public:
  RollingExtremeStream(int period, bool maximum);
  double Update(double x);  // NaN for the first period - 1 values

 private:
  bool Better(double a, double b) const { return maximum_ ? a > b : a < b; }
  size_t period_;
  bool maximum_;
  size_t t_ = 0;
  // Circular deque of (bar index, value); at most period + 1 entries.
  std::vector<size_t> index_;
  std::vector<double> value_;
  size_t front_ = 0, count_ = 0;
};

// ---- Single-series streams (x is usually the close) ---------------------------------------

class SmaStream {
 public:
  explicit SmaStream(int period);
  double Update(double x);

 private:
  int period_;
  bool started_ = false;  // a finite input has been seen
  size_t count_ = 0;      // inputs since (and including) the first finite one
  double sum_ = 0.0;
  RingWindow window_;
};

class EmaStream {
 public:
  explicit EmaStream(int period);
  double Update(double x);

 private:
  int period_;
  double k_;
  bool started_ = false;
  size_t count_ = 0;
  double sum_ = 0.0, ema_ = 0.0;
};

struct MacdValue {
  double macd, signal, hist;
};
class MacdStream {
 public:
  explicit MacdStream(const MacdParams& p);
  MacdValue Update(double x);

 private:
  int fast_, slow_, signal_;
  double k_fast_, k_slow_, k_signal_;
  bool started_ = false;
  size_t count_ = 0;      // inputs since the first finite one
  RingWindow last_fast_;  // the fast EMA's seed window
  double slow_sum_ = 0.0, signal_sum_ = 0.0;
  double fast_ema_ = 0.0, slow_ema_ = 0.0, signal_ema_ = 0.0;
};

class RsiStream {
 public:
  explicit RsiStream(int period);
  double Update(double x);

 private:
  int period_;
  bool started_ = false;
  size_t count_ = 0;  // inputs since the first finite one, that one excluded
  double previous_ = 0.0, gain_ = 0.0, loss_ = 0.0;
};

// Rolling mean and population variance (internal::RollingMeanVar): sliding Welford
// updates, re-summed exactly (two passes) every `period` inputs.
struct MeanVar {
  double mean, var;
};
class MeanVarStream {
 public:
  explicit MeanVarStream(int period);
  MeanVar Update(double x);

 private:
  void Resum();
  int period_;
  bool started_ = false;
  size_t count_ = 0;
  double mean_ = 0.0, m2_ = 0.0;
  RingWindow window_;
};

class StddevStream {
 public:
  explicit StddevStream(const StddevParams& p);
  double Update(double x);

 private:
  double nbdev_;
  MeanVarStream moments_;
};

struct BbandsValue {
  double upper, middle, lower, width, percent_b;
};
class BbandsStream {
 public:
  explicit BbandsStream(const BbandsParams& p);
  BbandsValue Update(double x);

 private:
  double nbdevup_, nbdevdn_;
  MeanVarStream moments_;
};

class LogReturnStream {
 public:
  explicit LogReturnStream(int lag);
  double Update(double x);

 private:
  RingWindow previous_;  // the last `lag` inputs
};

class PriceVsSmaStream {
 public:
  explicit PriceVsSmaStream(int period) : sma_(period) {}
  double Update(double x);

 private:
  SmaStream sma_;
};

class VolumeRatioStream {
 public:
  explicit VolumeRatioStream(int period) : sma_(period) {}
  double Update(double volume);

 private:
  SmaStream sma_;
};

// ---- Bar streams (high, low, close) ----------------------------------------------------------

class TrueRangeStream {
 public:
  double Update(double high, double low, double close);

 private:
  bool has_previous_ = false;
  double previous_close_ = 0.0;
};

class AtrStream {
 public:
  explicit AtrStream(int period);
  double Update(double high, double low, double close);

 private:
  int period_;
  size_t t_ = 0;
  double atr_ = 0.0;
  TrueRangeStream true_range_;
};

class NatrStream {
 public:
  explicit NatrStream(int period) : atr_(period) {}
  double Update(double high, double low, double close);

 private:
  AtrStream atr_;
};

struct StochValue {
  double slowk, slowd;
};
class StochStream {
 public:
  explicit StochStream(const StochParams& p);
  StochValue Update(double high, double low, double close);

 private:
  int fastk_period_;
  size_t lookback_;
  size_t t_ = 0;
  RollingExtremeStream highest_, lowest_;
  SmaStream slowk_, slowd_;
};

class WillrStream {
 public:
  explicit WillrStream(int period);
  double Update(double high, double low, double close);

 private:
  int period_;
  size_t t_ = 0;
  RollingExtremeStream highest_, lowest_;
};

// O(period) per bar, like the batch CCI (the mean absolute deviation has no O(1) update).
class CciStream {
 public:
  explicit CciStream(int period);
  double Update(double high, double low, double close);

 private:
  int period_;
  size_t t_ = 0;
  SmaStream mean_;
  RingWindow typical_;  // the last `period` typical prices
};

// All five of Wilder's directional indicators from one set of Wilder sums.
struct DmiValue {
  double plus_di, minus_di, dx, adx, adxr;
};
class DmiStream {
 public:
  explicit DmiStream(int period);
  DmiValue Update(double high, double low, double close);

 private:
  int period_;
  size_t t_ = 0;
  double previous_high_ = 0.0, previous_low_ = 0.0, previous_close_ = 0.0;
  double plus_ = 0.0, minus_ = 0.0, tr_ = 0.0;  // Wilder sums
  double dx_ = 0.0, adx_ = 0.0;
  RingWindow adx_history_;  // the last `period` ADX values
};

// ---- Session features ----------------------------------------------------------------------

struct SessionFeatureValue {
  double return_since_open, bars_since_open, vwap_distance;
};
// session_features.h, one bar at a time. A session restarts at the stream's first bar and
// wherever bar_in_session == 0, as ComputeSessionFeatures decides.
class SessionFeaturesStream {
 public:
  SessionFeatureValue Update(double open, double high, double low, double close, double volume,
                             int32_t bar_in_session);

 private:
  bool first_bar_ = true;
  double session_open_ = 0.0, pv_ = 0.0, volume_ = 0.0, tp_sum_ = 0.0, count_ = 0.0;
};

// ---- Normaliser and presets ----------------------------------------------------------------

// Applies a stored Normalizer to rows one at a time exactly as Normalizer::Apply does to
// the same rows of a FeatureMatrix. kRollingZScore keeps O(window) state per column and
// starts at the first row without NaN (the matrix's first_valid); the other kinds are
// stateless.
class StreamingNormalizer {
 public:
  // Errors: the normaliser's feature names differ from `names` (names the first mismatch).
  static Result<StreamingNormalizer> Create(const Normalizer& normalizer,
                                            const std::vector<std::string>& names);
  // Normalises one row in place (the next row of the stream). REQUIRES: row.size() ==
  // names.size().
  void Apply(std::span<float> row);

 private:
  explicit StreamingNormalizer(const Normalizer& normalizer) : normalizer_(normalizer) {}
  Normalizer normalizer_;
  bool started_ = false;                // kRollingZScore: a complete row has been seen
  std::vector<RollingZScore> columns_;  // kRollingZScore only, (cols)
};

// One bar as a live feed delivers it, with its place in its session (0 on a session's first
// bar, numbered as market::AssignSessions numbers bars).
struct StreamBar {
  double open = 0.0, high = 0.0, low = 0.0, close = 0.0, volume = 0.0;
  int32_t bar_in_session = 0;
};
// Bar t of a series (REQUIRES: sessions assigned, t < bars.size()).
StreamBar StreamBarAt(const market::Bars& bars, size_t t);

// A feature preset (presets.h), one bar at a time: Push(bar t) returns row t of
// ComputeFeatures(bars, preset), normalised by the stored normaliser when one was given, bit
// for bit. Copyable (a copy continues independently from the same state); not thread-safe.
class IncrementalFeatures {
 public:
  // Errors: unknown preset (NotFound, as ComputeFeatures); a normaliser fitted on other
  // features (InvalidArgument naming the first mismatch). `normalizer` is copied.
  static Result<IncrementalFeatures> Create(const std::string& preset,
                                            const Normalizer* normalizer = nullptr);
  IncrementalFeatures(const IncrementalFeatures& other);
  IncrementalFeatures& operator=(const IncrementalFeatures& other);
  IncrementalFeatures(IncrementalFeatures&&) noexcept;
  IncrementalFeatures& operator=(IncrementalFeatures&&) noexcept;
  ~IncrementalFeatures();

  // Consumes the next bar and returns its row (cols floats, valid until the next Push): all
  // NaN during warm-up (before the first row where every feature is finite), normalised
  // when a normaliser was given. Errors: a non-finite feature after warm-up (DataError, as
  // ComputeFeatures fails on such data; the state has consumed the bar).
  Result<std::span<const float>> Push(const StreamBar& bar);

  const std::vector<std::string>& names() const;
  int64_t cols() const;
  int64_t bars_pushed() const;
  bool warmed_up() const;                  // the last row pushed was past the warm-up
  int64_t first_valid() const;             // row where warm-up ended; -1 while still warming up
  std::span<const float> raw_row() const;  // the last row before normalisation

 private:
  struct Impl;
  explicit IncrementalFeatures(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlt::features

#endif  // RLT_FEATURES_INCREMENTAL_H_
