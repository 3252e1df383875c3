// rltrade features: streaming indicators, session features, normaliser and presets (see
// incremental.h). Every Update mirrors the batch kernel named in its comment operation for
// operation; incremental_test.cc checks the two bit for bit.
#include "features/incremental.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "features/internal.h"
#include "features/library.h"
#include "features/presets.h"

namespace rlt::features {

using internal::kNaN;

namespace {
// A window length as a size, after checking the precondition (before any allocation).
size_t Period(int period) {
  RLT_CHECK_MSG(period >= 1, "periods and lags must be >= 1");
  return static_cast<size_t>(period);
}
}  // namespace

// ---- Fixed-size state ---------------------------------------------------------------------

RingWindow::RingWindow(size_t capacity) : values_(capacity) { RLT_CHECK(capacity >= 1); }

void RingWindow::Push(double v) {
  const size_t capacity = values_.size();
  if (size_ < capacity) {
    const size_t slot = head_ + size_;
    values_[slot < capacity ? slot : slot - capacity] = v;
    ++size_;
    return;
  }
  values_[head_] = v;
  head_ = head_ + 1 == capacity ? 0 : head_ + 1;
}

RollingExtremeStream::RollingExtremeStream(int period, bool maximum)
    : period_(Period(period)), maximum_(maximum), index_(period_ + 1), value_(period_ + 1) {}

// internal::RollingExtreme (oscillators.cc) with the deque in a fixed ring.
double RollingExtremeStream::Update(double x) {
  const size_t capacity = index_.size();
  auto slot = [&](size_t i) { return front_ + i < capacity ? front_ + i : front_ + i - capacity; };
  while (count_ > 0 && !Better(value_[slot(count_ - 1)], x)) --count_;
  index_[slot(count_)] = t_;
  value_[slot(count_)] = x;
  ++count_;
  if (index_[front_] + period_ <= t_) {
    front_ = front_ + 1 == capacity ? 0 : front_ + 1;
    --count_;
  }
  const size_t t = t_++;
  return t + 1 >= period_ ? value_[front_] : kNaN;
}

// ---- Single-series streams ------------------------------------------------------------------

SmaStream::SmaStream(int period) : period_(period), window_(Period(period)) {}

// internal::SmaFromFirstFinite (moving_averages.cc).
double SmaStream::Update(double x) {
  if (!started_) {
    if (!std::isfinite(x)) return kNaN;
    started_ = true;
  }
  const size_t n = static_cast<size_t>(period_);
  const size_t c = count_++;  // t - s
  if (c < n) {
    window_.Push(x);
    sum_ += x;
    return c + 1 == n ? sum_ / period_ : kNaN;
  }
  if (c % n == 0) {  // the batch kernel's exact re-sum of the window
    window_.Push(x);
    sum_ = 0.0;
    window_.ForEachOldestFirst([&](double v) { sum_ += v; });
  } else {
    sum_ += x - window_.oldest();
    window_.Push(x);
  }
  return sum_ / period_;
}

EmaStream::EmaStream(int period) : period_(period), k_(2.0 / (period + 1)) {
  RLT_CHECK(period >= 1);
}

// Ema / internal::EmaSeeded (moving_averages.cc).
double EmaStream::Update(double x) {
  if (!started_) {
    if (!std::isfinite(x)) return kNaN;
    started_ = true;
  }
  const size_t c = count_++;
  const size_t n = static_cast<size_t>(period_);
  if (c < n) {
    sum_ += x;
    if (c + 1 < n) return kNaN;
    ema_ = sum_ / period_;
    return ema_;
  }
  ema_ = (x - ema_) * k_ + ema_;
  return ema_;
}

MacdStream::MacdStream(const MacdParams& p)
    : fast_(std::min(p.fast, p.slow)),
      slow_(std::max(p.fast, p.slow)),
      signal_(p.signal),
      k_fast_(2.0 / (fast_ + 1)),
      k_slow_(2.0 / (slow_ + 1)),
      k_signal_(2.0 / (p.signal + 1)),
      last_fast_(Period(std::min(p.fast, p.slow))) {
  RLT_CHECK(p.fast >= 1 && p.slow >= 1 && p.signal >= 1);
}

// Macd (moving_averages.cc): both EMAs seeded at start = s + slow - 1, the signal EMA
// seeded at start + signal - 1 with the mean of the MACD line so far.
MacdValue MacdStream::Update(double x) {
  const MacdValue undefined{kNaN, kNaN, kNaN};
  if (!started_) {
    if (!std::isfinite(x)) return undefined;
    started_ = true;
  }
  const size_t c = count_++;
  const size_t slow = static_cast<size_t>(slow_);
  last_fast_.Push(x);
  if (c + 1 < slow) {
    slow_sum_ += x;
    return undefined;
  }
  if (c + 1 == slow) {  // start: seed both EMAs
    slow_sum_ += x;
    slow_ema_ = slow_sum_ / slow_;
    double fast_sum = 0.0;
    last_fast_.ForEachOldestFirst([&](double v) { fast_sum += v; });
    fast_ema_ = fast_sum / fast_;
  } else {
    fast_ema_ = (x - fast_ema_) * k_fast_ + fast_ema_;
    slow_ema_ = (x - slow_ema_) * k_slow_ + slow_ema_;
  }
  const double line = fast_ema_ - slow_ema_;
  const size_t since_start = c + 1 - slow;
  const size_t signal = static_cast<size_t>(signal_);
  if (since_start < signal) {
    signal_sum_ += line;
    if (since_start + 1 < signal) return undefined;
    signal_ema_ = signal_sum_ / signal_;
  } else {
    signal_ema_ = (line - signal_ema_) * k_signal_ + signal_ema_;
  }
  return {line, signal_ema_, line - signal_ema_};
}

RsiStream::RsiStream(int period) : period_(period) { RLT_CHECK(period >= 1); }

// Rsi (oscillators.cc).
double RsiStream::Update(double x) {
  if (!started_) {
    if (!std::isfinite(x)) return kNaN;
    started_ = true;
    previous_ = x;
    return kNaN;
  }
  const size_t c = ++count_;  // t - s
  const size_t n = static_cast<size_t>(period_);
  const double d = x - previous_;
  previous_ = x;
  if (c <= n) {
    (d > 0 ? gain_ : loss_) += std::fabs(d);
    if (c < n) return kNaN;
    gain_ /= period_;
    loss_ /= period_;
    return internal::RsiOf(gain_, loss_);
  }
  gain_ = (gain_ * (period_ - 1) + (d > 0 ? d : 0.0)) / period_;
  loss_ = (loss_ * (period_ - 1) + (d < 0 ? -d : 0.0)) / period_;
  return internal::RsiOf(gain_, loss_);
}

MeanVarStream::MeanVarStream(int period) : period_(period), window_(Period(period)) {}

// WindowMoments (volatility.cc): exact two-pass mean and squared deviations of the window.
void MeanVarStream::Resum() {
  double sum = 0.0;
  window_.ForEachOldestFirst([&](double v) { sum += v; });
  mean_ = sum / static_cast<double>(window_.size());
  double ss = 0.0;
  window_.ForEachOldestFirst([&](double v) { ss += (v - mean_) * (v - mean_); });
  m2_ = ss;
}

// internal::RollingMeanVar (volatility.cc).
MeanVar MeanVarStream::Update(double x) {
  if (!started_) {
    if (!std::isfinite(x)) return {kNaN, kNaN};
    started_ = true;
  }
  const size_t n = static_cast<size_t>(period_);
  const size_t c = count_++;
  if (c < n) {
    window_.Push(x);
    if (c + 1 < n) return {kNaN, kNaN};
    Resum();
  } else if (c % n == 0) {  // exact restart
    window_.Push(x);
    Resum();
  } else {  // sliding Welford update: x enters, the oldest leaves
    const double in = x, out = window_.oldest(), old_mean = mean_;
    mean_ += (in - out) / period_;
    m2_ += (in - out) * (in - mean_ + out - old_mean);
    window_.Push(x);
  }
  return {mean_, std::max(m2_ / period_, 0.0)};
}

StddevStream::StddevStream(const StddevParams& p) : nbdev_(p.nbdev), moments_(p.period) {}

// Stddev (volatility.cc).
double StddevStream::Update(double x) {
  const double var = moments_.Update(x).var;
  return std::isnan(var) ? var : internal::TaStddev(var) * nbdev_;
}

BbandsStream::BbandsStream(const BbandsParams& p)
    : nbdevup_(p.nbdevup), nbdevdn_(p.nbdevdn), moments_(p.period) {}

// Bbands (volatility.cc).
BbandsValue BbandsStream::Update(double x) {
  const MeanVar mv = moments_.Update(x);
  if (std::isnan(mv.var)) return {kNaN, kNaN, kNaN, kNaN, kNaN};
  const internal::Bands b = internal::BandsOf(mv.mean, mv.var, x, nbdevup_, nbdevdn_);
  return {b.upper, b.middle, b.lower, b.width, b.percent_b};
}

LogReturnStream::LogReturnStream(int lag) : previous_(Period(lag)) {}

// LogReturn (volatility.cc): no leading-NaN skip.
double LogReturnStream::Update(double x) {
  const double out = previous_.full() ? std::log(x / previous_.oldest()) : kNaN;
  previous_.Push(x);
  return out;
}

// PriceVsSma (moving_averages.cc).
double PriceVsSmaStream::Update(double x) {
  const double sma = sma_.Update(x);
  return std::isnan(sma) ? sma : internal::PriceVsSmaOf(x, sma);
}

// VolumeRatio (moving_averages.cc).
double VolumeRatioStream::Update(double volume) {
  const double sma = sma_.Update(volume);
  return std::isnan(sma) ? sma : internal::VolumeRatioOf(volume, sma);
}

// ---- Bar streams ----------------------------------------------------------------------------

// TrueRange (volatility.cc).
double TrueRangeStream::Update(double high, double low, double close) {
  const double out = has_previous_ ? internal::TrueRangeOf(high, low, previous_close_) : kNaN;
  has_previous_ = true;
  previous_close_ = close;
  return out;
}

AtrStream::AtrStream(int period) : period_(period) { RLT_CHECK(period >= 1); }

// Atr (volatility.cc): seed = mean TR of bars 1..n, then Wilder.
double AtrStream::Update(double high, double low, double close) {
  const double tr = true_range_.Update(high, low, close);
  const size_t t = t_++;
  const size_t n = static_cast<size_t>(period_);
  if (t == 0) return kNaN;
  if (t <= n) {
    atr_ += tr;
    if (t < n) return kNaN;
    atr_ /= period_;
    return atr_;
  }
  atr_ = (atr_ * (period_ - 1) + tr) / period_;
  return atr_;
}

// Natr (volatility.cc).
double NatrStream::Update(double high, double low, double close) {
  const double atr = atr_.Update(high, low, close);
  if (std::isnan(atr)) return atr;
  return close == 0.0 ? 0.0 : 100.0 * atr / close;
}

StochStream::StochStream(const StochParams& p)
    : fastk_period_(p.fastk),
      lookback_(static_cast<size_t>(StochLookback(p))),
      highest_(p.fastk, /*maximum=*/true),
      lowest_(p.fastk, /*maximum=*/false),
      slowk_(p.slowk),
      slowd_(p.slowd) {
  RLT_CHECK(p.fastk >= 1 && p.slowk >= 1 && p.slowd >= 1);
}

// Stoch (oscillators.cc).
StochValue StochStream::Update(double high, double low, double close) {
  const double hh = highest_.Update(high);
  const double ll = lowest_.Update(low);
  const size_t t = t_++;
  double fastk = kNaN;
  if (t + 1 >= static_cast<size_t>(fastk_period_)) {
    const double range = hh - ll;
    fastk = range == 0.0 ? 0.0 : 100.0 * (close - ll) / range;
  }
  const double slowk = slowk_.Update(fastk);
  const double slowd = slowd_.Update(slowk);
  return {t < lookback_ ? kNaN : slowk, slowd};
}

WillrStream::WillrStream(int period)
    : period_(period), highest_(period, /*maximum=*/true), lowest_(period, /*maximum=*/false) {}

// Willr (oscillators.cc).
double WillrStream::Update(double high, double low, double close) {
  const double hh = highest_.Update(high);
  const double ll = lowest_.Update(low);
  if (t_++ + 1 < static_cast<size_t>(period_)) return kNaN;
  const double range = hh - ll;
  return range == 0.0 ? 0.0 : -100.0 * (hh - close) / range;
}

CciStream::CciStream(int period) : period_(period), mean_(period), typical_(Period(period)) {}

// Cci (oscillators.cc): the mean absolute deviation re-summed over the window every bar.
double CciStream::Update(double high, double low, double close) {
  const double tp = (high + low + close) / 3.0;
  const double mean = mean_.Update(tp);
  typical_.Push(tp);
  if (t_++ + 1 < static_cast<size_t>(period_)) return kNaN;
  double dev = 0.0;
  typical_.ForEachOldestFirst([&](double v) { dev += std::fabs(v - mean); });
  dev /= period_;
  return internal::IsTaZero(dev) ? 0.0 : (tp - mean) / (0.015 * dev);
}

DmiStream::DmiStream(int period) : period_(period), adx_history_(Period(period)) {}

// internal::WilderDmSums, PlusDi, MinusDi, Dx, Adx and Adxr (directional.cc).
DmiValue DmiStream::Update(double high, double low, double close) {
  const size_t t = t_++;
  const size_t n = static_cast<size_t>(period_);
  DmiValue out{kNaN, kNaN, kNaN, kNaN, kNaN};
  if (t > 0) {
    double plus_dm, minus_dm;
    internal::DirectionalMovement(high, previous_high_, low, previous_low_, &plus_dm, &minus_dm);
    const double range = internal::TrueRangeOf(high, low, previous_close_);
    if (t < n) {
      plus_ += plus_dm;
      minus_ += minus_dm;
      tr_ += range;
    } else {
      plus_ = plus_ - plus_ / period_ + plus_dm;
      minus_ = minus_ - minus_ / period_ + minus_dm;
      tr_ = tr_ - tr_ / period_ + range;
    }
  }
  previous_high_ = high;
  previous_low_ = low;
  previous_close_ = close;
  if (t < n) return out;
  if (!std::isnan(tr_)) {  // the batch Di keeps its NaN fill where the TR sum is NaN
    out.plus_di = internal::DiOf(plus_, tr_);
    out.minus_di = internal::DiOf(minus_, tr_);
  }
  double dx;
  const bool defined = internal::DxOf(plus_, minus_, tr_, &dx);
  if (defined) dx_ = dx;
  out.dx = dx_;
  const size_t adx_first = static_cast<size_t>(AdxLookback({period_}));
  if (t <= adx_first) {  // ADX seed: mean of the first n DX, undefined ones counted as 0
    if (defined) adx_ += dx;
    if (t < adx_first) return out;
    adx_ /= period_;
  } else if (defined) {
    adx_ = (adx_ * (period_ - 1) + dx) / period_;
  }
  out.adx = adx_;
  adx_history_.Push(adx_);  // oldest = ADX at t - (period - 1) once full
  if (t >= static_cast<size_t>(AdxrLookback({period_}))) {
    out.adxr = (adx_ + adx_history_.oldest()) / 2.0;
  }
  return out;
}

// ---- Session features ---------------------------------------------------------------------

// ComputeSessionFeatures (session_features.cc).
SessionFeatureValue SessionFeaturesStream::Update(double open, double high, double low,
                                                  double close, double volume,
                                                  int32_t bar_in_session) {
  if (first_bar_ || bar_in_session == 0) {  // a new session restarts every sum
    first_bar_ = false;
    session_open_ = open;
    pv_ = volume_ = tp_sum_ = count_ = 0.0;
  }
  const double tp = (high + low + close) / 3.0;
  pv_ += tp * volume;
  volume_ += volume;
  tp_sum_ += tp;
  count_ += 1.0;
  const double vwap = volume_ > 0.0 ? pv_ / volume_ : tp_sum_ / count_;
  return {close / session_open_ - 1.0, static_cast<double>(bar_in_session), close / vwap - 1.0};
}

// ---- Normaliser -------------------------------------------------------------------------------

Result<StreamingNormalizer> StreamingNormalizer::Create(const Normalizer& normalizer,
                                                        const std::vector<std::string>& names) {
  RLT_RETURN_IF_ERROR(normalizer.CheckCompatible(names));
  StreamingNormalizer out(normalizer);
  if (normalizer.options().kind == NormalizerKind::kRollingZScore) {
    out.columns_.assign(names.size(), RollingZScore(normalizer.options().window));
  }
  return out;
}

// Normalizer::Apply / ApplyRolling (normalizer.cc) for one row.
void StreamingNormalizer::Apply(std::span<float> row) {
  RLT_CHECK(row.size() == normalizer_.names().size());
  if (normalizer_.options().kind != NormalizerKind::kRollingZScore) {
    for (size_t j = 0; j < row.size(); ++j) {
      const double v = row[j];
      if (std::isnan(v)) continue;
      row[j] = static_cast<float>(normalizer_.MapValue(j, v));
    }
    return;
  }
  if (!started_) {  // rolling starts at the matrix's first_valid: the first complete row
    started_ = std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); });
    if (!started_) return;
  }
  for (size_t j = 0; j < row.size(); ++j) {
    const double x = row[j];
    const double z = columns_[j].Update(x);
    if (!std::isnan(x)) row[j] = static_cast<float>(normalizer_.Clip(z));
  }
}

StreamBar StreamBarAt(const market::Bars& bars, size_t t) {
  RLT_CHECK(t < bars.size() && bars.bar_in_session.size() == bars.size());
  return {bars.open[t],  bars.high[t],   bars.low[t],
          bars.close[t], bars.volume[t], bars.bar_in_session[t]};
}

// ---- Presets ----------------------------------------------------------------------------------
namespace {

// presets.cc's Map: f(a), except that a NaN a is passed through.
template <typename F>
double KeepNaN(double a, F f) {
  return std::isnan(a) ? a : f(a);
}

// Preset "fast22" (presets.cc Fast22), one bar at a time.
class Fast22Stream {
 public:
  // Writes the preset's columns in PresetColumns("fast22") order (the property tests
  // check every column against ComputeFeatures).
  static constexpr size_t kColumns = 22;

  void Update(const StreamBar& b, double* out) {
    const double close = b.close;
    *out++ = KeepNaN(b.high, [&](double h) { return h - b.low; });
    *out++ = KeepNaN(close, [&](double x) { return x - b.open; });
    *out++ = b.volume;
    for (SmaStream& sma : sma_) {  // SMA and PriceVsSma share the SMA (same arithmetic)
      const double mean = sma.Update(close);
      *out++ = mean;
      *out++ = std::isnan(mean) ? mean : internal::PriceVsSmaOf(close, mean);
    }
    *out++ = rsi_.Update(close);
    for (LogReturnStream& lret : lret_) *out++ = lret.Update(close);
    // Stddev(20, 1) and Bbands(20, 2, 2) run the same RollingMeanVar.
    const MeanVar mv = moments_.Update(close);
    *out++ = std::isnan(mv.var) ? mv.var : internal::TaStddev(mv.var) * 1.0;
    const double volume_sma = volume_sma_.Update(b.volume);
    *out++ = volume_sma;
    *out++ = std::isnan(volume_sma) ? volume_sma : internal::VolumeRatioOf(b.volume, volume_sma);
    internal::Bands bands{kNaN, kNaN, kNaN, kNaN, kNaN};
    if (!std::isnan(mv.var)) bands = internal::BandsOf(mv.mean, mv.var, close, 2.0, 2.0);
    *out++ = bands.upper;
    *out++ = bands.lower;
    *out++ = bands.middle;
    *out++ = bands.percent_b;
  }

 private:
  SmaStream sma_[3] = {SmaStream(5), SmaStream(10), SmaStream(20)};
  RsiStream rsi_{14};
  LogReturnStream lret_[5] = {LogReturnStream(1), LogReturnStream(2), LogReturnStream(3),
                              LogReturnStream(5), LogReturnStream(7)};
  MeanVarStream moments_{20};
  SmaStream volume_sma_{20};
};

// Preset "scaled" (presets.cc Scaled), one bar at a time.
class ScaledStream {
 public:
  static constexpr size_t kColumns = 24;  // PresetColumns("scaled") order

  void Update(const StreamBar& b, double* out) {
    const double close = b.close;
    double lret1 = kNaN;
    for (LogReturnStream& lret : lret_) {
      *out = lret.Update(close);
      if (&lret == &lret_[0]) lret1 = *out;
      ++out;
    }
    double sma20 = kNaN;
    for (SmaStream& sma : sma_) {
      const double mean = sma.Update(close);
      if (&sma == &sma_[2]) sma20 = mean;
      *out++ = std::isnan(mean) ? mean : internal::PriceVsSmaOf(close, mean);
    }
    *out++ = KeepNaN(b.high, [&](double h) { return (h - b.low) / close; });
    *out++ = KeepNaN(close, [&](double x) { return (x - b.open) / x; });
    *out++ = KeepNaN(rsi_.Update(close), [](double r) { return r / 100.0 - 0.5; });
    // Stddev(20, 1) and Bbands(20, 2, 2) run the same RollingMeanVar.
    const MeanVar mv = moments_.Update(close);
    const double sd20 = std::isnan(mv.var) ? mv.var : internal::TaStddev(mv.var) * 1.0;
    *out++ = KeepNaN(sd20, [&](double sd) { return sd == 0.0 ? 0.0 : (close - sma20) / sd; });
    *out++ = std::isnan(mv.var) ? kNaN : internal::BandsOf(mv.mean, mv.var, close, 2.0, 2.0).width;
    *out++ = KeepNaN(volume_sma_.Update(b.volume),
                     [&](double v) { return std::log1p(b.volume) - std::log1p(v); });
    *out++ = KeepNaN(natr_.Update(b.high, b.low, close), [](double v) { return v / 100.0; });
    *out++ = KeepNaN(macd_.Update(close).hist, [&](double h) { return h / close; });
    *out++ = KeepNaN(dmi_.Update(b.high, b.low, close).adx, [](double v) { return v / 100.0; });
    *out++ = KeepNaN(stoch_.Update(b.high, b.low, close).slowk,
                     [](double k) { return k / 100.0 - 0.5; });
    *out++ = KeepNaN(realized_.Update(lret1).var, [](double v) { return std::sqrt(v); });
    const SessionFeatureValue s =
        session_.Update(b.open, b.high, b.low, close, b.volume, b.bar_in_session);
    *out++ = s.return_since_open;
    *out++ = KeepNaN(s.bars_since_open, [](double n) { return std::log1p(n); });
    *out++ = s.vwap_distance;
  }

 private:
  LogReturnStream lret_[6] = {LogReturnStream(1), LogReturnStream(2),  LogReturnStream(3),
                              LogReturnStream(5), LogReturnStream(10), LogReturnStream(20)};
  SmaStream sma_[4] = {SmaStream(5), SmaStream(10), SmaStream(20), SmaStream(50)};
  RsiStream rsi_{14};
  MeanVarStream moments_{20};
  SmaStream volume_sma_{20};
  NatrStream natr_{14};
  MacdStream macd_{MacdParams{}};
  DmiStream dmi_{14};
  StochStream stoch_{StochParams{}};
  MeanVarStream realized_{20};  // of lret1
  SessionFeaturesStream session_;
};

// Preset "full184" (or a selection of it): the signal library's own stream.
class LibraryStream {
 public:
  explicit LibraryStream(StreamingLibrary s) : stream_(std::move(s)) {}
  void Update(const StreamBar& bar, double* out) {
    const std::span<const double> v = stream_.Push(bar);
    std::copy(v.begin(), v.end(), out);
  }

 private:
  StreamingLibrary stream_;
};

}  // namespace

struct IncrementalFeatures::Impl {
  std::variant<Fast22Stream, ScaledStream, LibraryStream> stream;
  std::vector<std::string> names;
  std::optional<StreamingNormalizer> normalizer;
  std::vector<double> values;   // (cols) this bar's features before the float cast
  std::vector<float> raw, row;  // (cols) before / after normalisation
  int64_t pushed = 0;
  int64_t first_valid = -1;
};

Result<IncrementalFeatures> IncrementalFeatures::Create(const std::string& preset,
                                                        const Normalizer* normalizer) {
  RLT_ASSIGN_OR_RETURN(std::vector<std::string> names, PresetColumns(preset));
  auto impl = std::make_unique<Impl>();
  Result<std::vector<int>> library = LibrarySelection(preset);
  if (library.ok()) {
    RLT_ASSIGN_OR_RETURN(StreamingLibrary lib, StreamingLibrary::Create(*library));
    RLT_CHECK_MSG(lib.names() == names,
                  "the library's stream and ComputeFeatures disagree on the "
                  "columns of '" +
                      preset + "'");
    impl->stream.emplace<LibraryStream>(std::move(lib));
  } else {
    if (preset == "scaled") impl->stream.emplace<ScaledStream>();
    RLT_CHECK_MSG(
        names.size() == (preset == "scaled" ? ScaledStream::kColumns : Fast22Stream::kColumns),
        "the streaming preset '" + preset +
            "' writes another column count than "
            "ComputeFeatures");
  }
  if (normalizer != nullptr) {
    RLT_ASSIGN_OR_RETURN(StreamingNormalizer n, StreamingNormalizer::Create(*normalizer, names));
    impl->normalizer.emplace(std::move(n));
  }
  impl->values.assign(names.size(), kNaN);
  impl->raw.assign(names.size(), std::numeric_limits<float>::quiet_NaN());
  impl->row = impl->raw;
  impl->names = std::move(names);
  return IncrementalFeatures(std::move(impl));
}

IncrementalFeatures::IncrementalFeatures(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IncrementalFeatures::IncrementalFeatures(const IncrementalFeatures& other)
    : impl_(std::make_unique<Impl>(*other.impl_)) {}
IncrementalFeatures& IncrementalFeatures::operator=(const IncrementalFeatures& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
IncrementalFeatures::IncrementalFeatures(IncrementalFeatures&&) noexcept = default;
IncrementalFeatures& IncrementalFeatures::operator=(IncrementalFeatures&&) noexcept = default;
IncrementalFeatures::~IncrementalFeatures() = default;

// presets.cc Pack for one row: float cast, warm-up rows blank until the first row where
// every feature is finite, a non-finite feature after that is an error.
Result<std::span<const float>> IncrementalFeatures::Push(const StreamBar& bar) {
  Impl& s = *impl_;
  std::visit([&](auto& stream) { stream.Update(bar, s.values.data()); }, s.stream);
  const int64_t t = s.pushed++;
  const size_t cols = s.values.size();
  bool all_finite = true;
  for (size_t j = 0; j < cols; ++j) {
    s.raw[j] = static_cast<float>(s.values[j]);
    all_finite = all_finite && std::isfinite(s.raw[j]);
  }
  if (s.first_valid < 0 && all_finite) s.first_valid = t;
  if (s.first_valid < 0) {
    std::fill(s.raw.begin(), s.raw.end(), std::numeric_limits<float>::quiet_NaN());
  } else if (!all_finite) {
    size_t j = 0;
    while (std::isfinite(s.raw[j])) ++j;
    return Status::DataError("feature '" + s.names[j] + "' is not finite at bar " +
                             std::to_string(t) + " (after warm-up ended at bar " +
                             std::to_string(s.first_valid) +
                             "): check the bars for non-positive prices");
  }
  std::copy(s.raw.begin(), s.raw.end(), s.row.begin());
  if (s.normalizer) s.normalizer->Apply(s.row);
  return std::span<const float>(s.row);
}

const std::vector<std::string>& IncrementalFeatures::names() const { return impl_->names; }
int64_t IncrementalFeatures::cols() const { return static_cast<int64_t>(impl_->names.size()); }
int64_t IncrementalFeatures::bars_pushed() const { return impl_->pushed; }
bool IncrementalFeatures::warmed_up() const { return impl_->first_valid >= 0; }
int64_t IncrementalFeatures::first_valid() const { return impl_->first_valid; }
std::span<const float> IncrementalFeatures::raw_row() const { return impl_->raw; }

}  // namespace rlt::features
