// rltrade features: the signal library (see library.h): the catalogue of the 184 signals
// and the fast per-bar state machine that both ComputeLibrary(kFast) and StreamingLibrary
// run, so that the two agree bit for bit by construction.
#include "features/library.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "features/incremental.h"
#include "features/internal.h"
#include "features/registry.h"

namespace rlt::features {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Signal indices in library order. A..E are contiguous (the 80 signals with a q-variant);
// q<name> of signal i is at kQFirst + i.
enum Sig : int {
  // A. bar ratios
  kCo,
  kDv,
  kHl,
  kScco,
  kVscco,
  kDvscco,
  kVhl,
  kCodv,
  // B. technical
  kMacd,
  kMacdSignal,
  kMacdHist,
  kBbMiddle,
  kBbUpper,
  kBbLower,
  kBbWidth,
  kBbPosition,
  kBbWidth10,
  kBbPosition10,
  kRsi7,
  kRsi14,
  kRsi21,
  kStochK,
  kStochD,
  kAtr7,
  kAtr14,
  kAtr21,
  kWillr7,
  kWillr14,
  kWillr21,
  kSma5,
  kSma10,
  kSma20,
  kSma50,
  kPriceVsSma5,
  kPriceVsSma10,
  kPriceVsSma20,
  kPriceVsSma50,
  kVolumeSma5,
  kVolumeSma20,
  kVolumeRatio5,
  kVolumeRatio20,
  kPriceVolume,
  kMomentum5,
  kMomentum10,
  kMomentum20,
  kRoc5,
  kRoc10,
  kRoc20,
  kVolatility5,
  kVolatility10,
  kVolatility20,
  kVolatility50,
  // C. swings
  kSwingHighDist,
  kSwingLowDist,
  kBarsSinceSwingHigh,
  kBarsSinceSwingLow,
  // D. per-day
  kOpc,
  kDvwap,
  kD2vwap,
  kDdv,
  kD2dv,
  kDhigh,
  kDlow,
  kH5co,
  kH5dv,
  kH5scco,
  kH5vscco,
  kH5dvscco,
  kH5hl,
  kH5vhl,
  kH5codv,
  // E. lags
  kLret1,
  kLret2,
  kLret3,
  kLret5,
  kLret7,
  kLret13,
  kLret17,
  kLret19,
  kLret23,
  // F. q-variants
  kQFirst,
  // G. regime flags
  kRsiOverbought = kQFirst + 80,
  kRsiOversold,
  kVolSpike,
  kBull,
  kBear,
  kExtremeHigh,
  kExtremeLow,
  kSqueeze,
  kExpansion,
  kHigherHighs,
  kLowerLows,
  kSupportBreak,
  kResistanceBreak,
  kHammer,
  kMorningStar,
  kVolumeDivergence,
  kVolumeConfirmation,
  kTrendAlignment,
  kGreed,
  kFear,
  kPivotHigh,
  kPivotLow,
  // H. long ranks
  kNdv,
  kNmomentum,
  kCount
};
static_assert(kQFirst == 80 && kCount == kLibrarySize);

constexpr int kBaseCount = kQFirst;  // signals with a q-variant
constexpr int kQWindow = 5;          // q<name> = ts_rank(name, 5)
constexpr int kLongWindow = 1875;    // ndv, nmomentum
constexpr int kPercentileWindow = 100;
// Nearest-rank (lower) percentiles of a 100-value window: floor(0.2 * 99), ceil(0.8 * 99).
constexpr int kSqueezeRank = 19;
constexpr int kExpansionRank = 80;
constexpr int kLags[] = {1, 2, 3, 5, 7, 13, 17, 19, 23};

std::vector<LibrarySignal> BuildSignals() {
  std::vector<LibrarySignal> s;
  auto add = [&s](const char* name, const char* family, SignalKind kind, std::string def) {
    s.push_back({name, family, kind, std::move(def)});
  };
  const SignalKind c = SignalKind::kContinuous;
  // A
  add("co", "bar_ratio", c, "c/o - 1");
  add("dv", "bar_ratio", c, "c/vw - 1, vw = (2l + 2h + 3c + 3o)/10");
  add("hl", "bar_ratio", c, "h/l - 1");
  add("scco", "bar_ratio", c, "(c - o)/(h - l); 0 when h == l");
  add("vscco", "bar_ratio", c, "scco * vr20, vr20 = v/SMA(v,20) (1 when the SMA is 0)");
  add("dvscco", "bar_ratio", c, "dv * scco");
  add("vhl", "bar_ratio", c, "hl * vr20");
  add("codv", "bar_ratio", c, "co - dv");
  // B
  add("macd", "technical", c, "MACD(12,26,9) line / c");
  add("macd_signal", "technical", c, "MACD(12,26,9) signal / c");
  add("macd_hist", "technical", c, "MACD(12,26,9) histogram / c");
  add("bb_middle", "technical", c, "c / BBANDS(20,2,2) middle - 1");
  add("bb_upper", "technical", c, "c / BBANDS(20,2,2) upper - 1");
  add("bb_lower", "technical", c, "c / BBANDS(20,2,2) lower - 1");
  add("bb_width", "technical", c, "(upper - lower)/middle of BBANDS(20,2,2)");
  add("bb_position", "technical", c, "%b of BBANDS(20,2,2); 0.5 when the bands meet");
  add("bb_width10", "technical", c, "(upper - lower)/middle of BBANDS(10,2,2)");
  add("bb_position10", "technical", c, "%b of BBANDS(10,2,2); 0.5 when the bands meet");
  for (int n : {7, 14, 21}) {
    const std::string ns = std::to_string(n);
    s.push_back(
        {"rsi" + ns, "technical", c,
         "Cutler RSI: 100 G/(G+L), G, L = SMA" + ns + " of gains, losses of c; 50 when G+L == 0"});
  }
  add("stoch_k", "technical", c, "STOCH(14,3,3) slow %K");
  add("stoch_d", "technical", c, "STOCH(14,3,3) slow %D");
  for (int n : {7, 14, 21}) {
    s.push_back(
        {"atr" + std::to_string(n), "technical", c, "Wilder ATR(" + std::to_string(n) + ") / c"});
  }
  for (int n : {7, 14, 21}) {
    s.push_back(
        {"willr" + std::to_string(n), "technical", c, "Williams %R(" + std::to_string(n) + ")"});
  }
  for (int n : {5, 10, 20, 50}) {
    s.push_back({"sma" + std::to_string(n), "technical", c,
                 "ln(SMA_t/SMA_{t-1}), SMA(c," + std::to_string(n) + ")"});
  }
  for (int n : {5, 10, 20, 50}) {
    s.push_back({"price_vs_sma" + std::to_string(n), "technical", c,
                 "c/SMA(c," + std::to_string(n) + ") - 1"});
  }
  for (int n : {5, 20}) {
    s.push_back({"volume_sma" + std::to_string(n), "technical", c,
                 "ln(1 + SMA(v," + std::to_string(n) + "))"});
  }
  for (int n : {5, 20}) {
    s.push_back({"volume_ratio" + std::to_string(n), "technical", c,
                 "v/SMA(v," + std::to_string(n) + "); 1 when the SMA is 0"});
  }
  add("price_volume", "technical", c, "ln(c_t/c_{t-1}) * vr20");
  for (int n : {5, 10, 20}) {
    s.push_back({"momentum" + std::to_string(n), "technical", c,
                 "(c_t - c_{t-" + std::to_string(n) + "})/ATR14; 0 when ATR14 is 0"});
  }
  for (int n : {5, 10, 20}) {
    s.push_back({"roc" + std::to_string(n), "technical", c,
                 "100 (c_t/c_{t-" + std::to_string(n) + "} - 1)"});
  }
  for (int n : {5, 10, 20, 50}) {
    s.push_back({"volatility" + std::to_string(n), "technical", c,
                 "population stddev of ln(c_t/c_{t-1}) over " + std::to_string(n) + " bars"});
  }
  // C
  add("swing_high_dist", "swing", c, "c / (h of the last confirmed pivot high) - 1");
  add("swing_low_dist", "swing", c, "c / (l of the last confirmed pivot low) - 1");
  add("bars_since_swing_high", "swing", c, "t - (bar of the last confirmed pivot high)");
  add("bars_since_swing_low", "swing", c, "t - (bar of the last confirmed pivot low)");
  // D
  add("opc", "per_day", c, "c / (open of the session's first bar) - 1");
  add("dvwap", "per_day", c, "c/SV - 1, SV = session sum(vw v)/sum(v) (mean vw at volume 0)");
  add("d2vwap", "per_day", c, "dvwap_t - dvwap_{t-1}; 0 on the session's first bar");
  add("ddv", "per_day", c, "mean of dv over the session so far");
  add("d2dv", "per_day", c, "ddv_t - ddv_{t-1}; 0 on the session's first bar");
  add("dhigh", "per_day", c, "c / (session high so far) - 1");
  add("dlow", "per_day", c, "c / (session low so far) - 1");
  for (const char* r : {"co", "dv", "scco", "vscco", "dvscco", "hl", "vhl", "codv"}) {
    s.push_back(
        {std::string("h5") + r, "per_day", c,
         std::string("mean of ") + r + " over the session's last min(5, bars so far) bars"});
  }
  // E
  for (int k : kLags) {
    s.push_back(
        {"lret" + std::to_string(k), "lag", SignalKind::kLag,
         "ln(c_t/c_{t-" + std::to_string(k) + "}), the session's first open before its first bar"});
  }
  // F
  for (int i = 0; i < kBaseCount; ++i) {
    s.push_back({"q" + s[i].name, "q", s[i].kind, "ts_rank(" + s[i].name + ", 5)"});
  }
  // G
  const SignalKind g = SignalKind::kRegime;
  add("rsi_overbought", "regime", g, "rsi14 > 70");
  add("rsi_oversold", "regime", g, "rsi14 < 30");
  add("vol_spike", "regime", g, "volatility20 > 1.5 SMA(volatility20, 50)");
  add("bull", "regime", g, "SMA(c,20) > SMA(c,50)");
  add("bear", "regime", g, "SMA(c,20) < SMA(c,50)");
  add("extreme_high", "regime", g, "c > BBANDS(20,2,2) upper");
  add("extreme_low", "regime", g, "c < BBANDS(20,2,2) lower");
  add("squeeze", "regime", g, "bb_width <= its 20th percentile over the last 100 bars");
  add("expansion", "regime", g, "bb_width >= its 80th percentile over the last 100 bars");
  add("higher_highs", "regime", g, "h_t > h_{t-1} > h_{t-2}");
  add("lower_lows", "regime", g, "l_t < l_{t-1} < l_{t-2}");
  add("support_break", "regime", g, "c_t < min l over [t-20, t-1]");
  add("resistance_break", "regime", g, "c_t > max h over [t-20, t-1]");
  add("hammer", "regime", g, "h > l, lower shadow >= 2 body, upper shadow <= body");
  add("morning_star", "regime", g, "bearish long bar, small bar below its close, bullish bar");
  add("volume_divergence", "regime", g, "sign(c_t - c_{t-5}) != sign(dSMA(v,5) over 5), both != 0");
  add("volume_confirmation", "regime", g, "sign(c_t - c_{t-5}) == sign(dSMA(v,5) over 5) != 0");
  add("trend_alignment", "regime", g, "+1: c > SMA5 > SMA20 > SMA50; -1: reversed; else 0");
  add("greed", "regime", g,
      "bull + rsi_overbought + extreme_high + higher_highs + resistance_break");
  add("fear", "regime", g, "bear + rsi_oversold + extreme_low + lower_lows + support_break");
  add("pivot_high", "regime", g, "1 when h_{t-2} >= every h over [t-4, t] (confirmed pivot)");
  add("pivot_low", "regime", g, "1 when l_{t-2} <= every l over [t-4, t] (confirmed pivot)");
  // H
  add("ndv", "rank", SignalKind::kRank, "ts_rank(dv, 1875)");
  add("nmomentum", "rank", SignalKind::kRank, "ts_rank(momentum10, 1875)");
  RLT_CHECK(static_cast<int>(s.size()) == kLibrarySize);
  return s;
}

// The last 64 values of a series, newest at Ago(0). 64 exceeds every window used here
// (50 bars, and 50 + 1 for the SMA slopes).
class History {
 public:
  void Push(double x) {
    head_ = (head_ + 1) & kMask;
    data_[head_] = x;
    ++count_;
  }
  // The value k bars back (0 = the newest); NaN when the series is shorter.
  double Ago(int k) const {
    return static_cast<uint64_t>(k) < count_ ? data_[(head_ - k) & kMask] : kNaN;
  }
  // Mean of the newest n values, summed oldest first; NaN when fewer than n (or one is NaN).
  double Mean(int n) const {
    if (count_ < static_cast<uint64_t>(n)) return kNaN;
    double sum = 0.0;
    for (int k = n - 1; k >= 0; --k) sum += data_[(head_ - k) & kMask];
    return sum / n;
  }
  // Population standard deviation of the newest n values (two passes).
  double PopStddev(int n) const {
    const double mean = Mean(n);
    if (std::isnan(mean)) return kNaN;
    double ss = 0.0;
    for (int k = n - 1; k >= 0; --k) {
      const double d = data_[(head_ - k) & kMask] - mean;
      ss += d * d;
    }
    return std::sqrt(ss / n);
  }

 private:
  static constexpr size_t kSize = 64, kMask = kSize - 1;
  std::array<double, kSize> data_{};
  size_t head_ = 0;
  uint64_t count_ = 0;
};

// ts_rank over a window of n values: (#less + 0.5 #other equal) / (n - 1), NaN unless the
// window is full of finite values.
double RankInWindow(const double* window, int n, double x) {
  int less = 0, equal = 0;
  bool any_nan = false;
  for (int i = 0; i < n; ++i) {  // branch-free: the result is decided after the loop
    const double w = window[i];
    any_nan |= std::isnan(w);
    less += w < x;
    equal += w == x;
  }
  if (any_nan) return kNaN;
  return (less + 0.5 * (equal - 1)) / (n - 1);
}

// A ring of n values for a long ts_rank: O(n) per bar, a branch-free count (the number of
// NaN in the window is kept aside, so the loop over the window only compares).
class LongRank {
 public:
  explicit LongRank(int n) : values_(static_cast<size_t>(n), 0.0) {}
  double Update(double x) {
    if (count_ == values_.size()) nan_count_ -= std::isnan(values_[head_]);
    values_[head_] = x;
    nan_count_ += std::isnan(x);
    head_ = head_ + 1 == values_.size() ? 0 : head_ + 1;
    if (count_ < values_.size()) ++count_;
    if (count_ < values_.size() || nan_count_ > 0) return kNaN;
    int64_t less = 0, equal = 0;
    const double* w = values_.data();
    const size_t n = values_.size();
    for (size_t i = 0; i < n; ++i) {
      less += w[i] < x;
      equal += w[i] == x;
    }
    return (static_cast<double>(less) + 0.5 * static_cast<double>(equal - 1)) /
           static_cast<double>(n - 1);
  }

 private:
  std::vector<double> values_;
  size_t head_ = 0, count_ = 0;
  int64_t nan_count_ = 0;
};

double Flag(bool defined, bool condition) {
  if (!defined) return kNaN;
  return condition ? 1.0 : 0.0;
}
double Sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }
// a / b - 1, 0 when b is 0 (NaN stays NaN).
double RatioLess1(double a, double b) { return b == 0.0 ? 0.0 : a / b - 1.0; }
// v / sma, 1 when sma is 0 (NaN stays NaN).
double VolumeRatioOf(double v, double sma) { return sma == 0.0 ? 1.0 : v / sma; }
bool AnyNaN(std::initializer_list<double> xs) {
  for (double x : xs) {
    if (std::isnan(x)) return true;
  }
  return false;
}

}  // namespace

// The per-bar state machine: every signal's value at the newest bar.
struct StreamingLibrary::State {
  explicit State(bool long_ranks)
      : long_ranks(long_ranks),
        ndv(long_ranks ? kLongWindow : 1),
        nmomentum(long_ranks ? kLongWindow : 1) {
    values.fill(kNaN);
    for (auto& ring : q) ring.fill(kNaN);
    bb_width_window.fill(kNaN);
  }
  void Push(const StreamBar& bar);  // bar ratios (A), then the steps below
  void Technical();                 // B
  void Swings();                    // C and the pivot flags
  void PerDay();                    // D
  void Lags();                      // E
  void QVariants();                 // F
  void Regime();                    // G
  void LongRanks();                 // H

  bool long_ranks;
  int64_t t = -1;  // index of the newest bar
  // The newest bar and the intermediates the steps share.
  double o = 0.0, h = 0.0, l = 0.0, c = 0.0, v = 0.0, vw = 0.0, vr20 = 0.0, lr1 = 0.0;
  double atr14_raw = 0.0, vsma5 = 0.0, pivot_high_flag = 0.0, pivot_low_flag = 0.0;
  bool new_session = true;
  BbandsValue b20{};
  std::array<double, 4> sma{};  // SMA of the close over 5, 10, 20, 50
  std::array<double, kLibrarySize> values;
  History open, high, low, close, volume, lret1, gain, loss, vol20, volume_sma5;
  std::array<History, 8> ratios;  // co, dv, scco, vscco, dvscco, hl, vhl, codv (h5 order)
  MacdStream macd{MacdParams{12, 26, 9}};
  BbandsStream bb20{BbandsParams{20, 2.0, 2.0}}, bb10{BbandsParams{10, 2.0, 2.0}};
  StochStream stoch{StochParams{14, 3, 3}};
  AtrStream atr7{7}, atr14{14}, atr21{21};
  WillrStream willr7{7}, willr14{14}, willr21{21};
  std::array<double, 4> previous_sma{kNaN, kNaN, kNaN, kNaN};  // SMA 5, 10, 20, 50 at t-1
  // Swings: the last confirmed pivots (NaN before the first) and their bars.
  double pivot_high = kNaN, pivot_low = kNaN;
  int64_t pivot_high_at = 0, pivot_low_at = 0;
  // The session so far.
  int64_t in_session = 0;  // bars since the session's first bar
  double session_open = 0.0, sum_vwv = 0.0, sum_v = 0.0, sum_vw = 0.0, sum_dv = 0.0;
  double session_high = 0.0, session_low = 0.0, previous_dvwap = 0.0, previous_ddv = 0.0;
  // q-variants: the last 5 values of each of the 80 base signals (one shared head).
  std::array<std::array<double, kQWindow>, kBaseCount> q;
  int q_head = 0;
  std::array<double, kPercentileWindow> bb_width_window;
  int bb_width_head = 0;
  LongRank ndv, nmomentum;
};

void StreamingLibrary::State::Push(const StreamBar& bar) {
  ++t;
  o = bar.open;
  h = bar.high;
  l = bar.low;
  c = bar.close;
  v = bar.volume;
  new_session = t == 0 || bar.bar_in_session == 0;
  const double previous_close = close.Ago(0);
  open.Push(o);
  high.Push(h);
  low.Push(l);
  close.Push(c);
  volume.Push(v);
  lr1 = std::log(c / previous_close);  // NaN on the first bar
  lret1.Push(lr1);
  const double dc = c - previous_close;
  gain.Push(t == 0 ? kNaN : (dc > 0 ? dc : 0.0));
  loss.Push(t == 0 ? kNaN : (dc < 0 ? -dc : 0.0));
  double* x = values.data();

  // A. bar ratios
  vw = (2 * l + 2 * h + 3 * c + 3 * o) / 10;
  vr20 = VolumeRatioOf(v, volume.Mean(20));
  x[kCo] = c / o - 1;
  x[kDv] = c / vw - 1;
  x[kHl] = h / l - 1;
  x[kScco] = h == l ? 0.0 : (c - o) / (h - l);
  x[kVscco] = x[kScco] * vr20;
  x[kDvscco] = x[kDv] * x[kScco];
  x[kVhl] = x[kHl] * vr20;
  x[kCodv] = x[kCo] - x[kDv];
  Technical();
  Swings();
  PerDay();
  Lags();
  QVariants();
  Regime();
  LongRanks();
}

void StreamingLibrary::State::Technical() {
  double* x = values.data();
  // B. technical
  const MacdValue m = macd.Update(c);
  x[kMacd] = m.macd / c;
  x[kMacdSignal] = m.signal / c;
  x[kMacdHist] = m.hist / c;
  b20 = bb20.Update(c);
  x[kBbMiddle] = RatioLess1(c, b20.middle);
  x[kBbUpper] = RatioLess1(c, b20.upper);
  x[kBbLower] = RatioLess1(c, b20.lower);
  x[kBbWidth] = b20.width;
  x[kBbPosition] = b20.percent_b;
  const BbandsValue b10 = bb10.Update(c);
  x[kBbWidth10] = b10.width;
  x[kBbPosition10] = b10.percent_b;
  {
    const int periods[] = {7, 14, 21};
    for (int i = 0; i < 3; ++i) {
      const double g = gain.Mean(periods[i]), lo = loss.Mean(periods[i]);
      x[kRsi7 + i] = std::isnan(g) ? kNaN : (g + lo == 0.0 ? 50.0 : 100.0 * g / (g + lo));
    }
  }
  const StochValue st = stoch.Update(h, l, c);
  x[kStochK] = st.slowk;
  x[kStochD] = st.slowd;
  atr14_raw = atr14.Update(h, l, c);
  x[kAtr7] = atr7.Update(h, l, c) / c;
  x[kAtr14] = atr14_raw / c;
  x[kAtr21] = atr21.Update(h, l, c) / c;
  x[kWillr7] = willr7.Update(h, l, c);
  x[kWillr14] = willr14.Update(h, l, c);
  x[kWillr21] = willr21.Update(h, l, c);
  {
    const int periods[] = {5, 10, 20, 50};
    for (int i = 0; i < 4; ++i) {
      sma[i] = close.Mean(periods[i]);
      x[kSma5 + i] = std::log(sma[i] / previous_sma[i]);
      x[kPriceVsSma5 + i] = RatioLess1(c, sma[i]);
      previous_sma[i] = sma[i];
    }
  }
  vsma5 = volume.Mean(5);
  const double vsma20 = volume.Mean(20);
  x[kVolumeSma5] = std::log1p(vsma5);
  x[kVolumeSma20] = std::log1p(vsma20);
  x[kVolumeRatio5] = VolumeRatioOf(v, vsma5);
  x[kVolumeRatio20] = vr20;
  x[kPriceVolume] = lr1 * vr20;
  {
    const int periods[] = {5, 10, 20};
    for (int i = 0; i < 3; ++i) {
      const double past = close.Ago(periods[i]);
      x[kMomentum5 + i] =
          AnyNaN({past, atr14_raw}) ? kNaN : (atr14_raw == 0.0 ? 0.0 : (c - past) / atr14_raw);
      x[kRoc5 + i] = 100 * (c / past - 1);
    }
  }
  {
    const int periods[] = {5, 10, 20, 50};
    for (int i = 0; i < 4; ++i) x[kVolatility5 + i] = lret1.PopStddev(periods[i]);
  }
}

void StreamingLibrary::State::Swings() {
  double* x = values.data();
  // C. swings (and the pivot flags of G)
  pivot_high_flag = kNaN;
  pivot_low_flag = kNaN;
  if (t >= 4) {
    const double hp = high.Ago(2), lp = low.Ago(2);
    bool is_high = true, is_low = true;
    for (int k = 0; k <= 4; ++k) {
      is_high = is_high && hp >= high.Ago(k);
      is_low = is_low && lp <= low.Ago(k);
    }
    if (is_high) {
      pivot_high = hp;
      pivot_high_at = t - 2;
    }
    if (is_low) {
      pivot_low = lp;
      pivot_low_at = t - 2;
    }
    pivot_high_flag = is_high ? 1.0 : 0.0;
    pivot_low_flag = is_low ? 1.0 : 0.0;
  }
  x[kSwingHighDist] = c / pivot_high - 1;
  x[kSwingLowDist] = c / pivot_low - 1;
  x[kBarsSinceSwingHigh] = std::isnan(pivot_high) ? kNaN : static_cast<double>(t - pivot_high_at);
  x[kBarsSinceSwingLow] = std::isnan(pivot_low) ? kNaN : static_cast<double>(t - pivot_low_at);
}

void StreamingLibrary::State::PerDay() {
  double* x = values.data();
  // D. per-day
  if (new_session) {
    in_session = 0;
    session_open = o;
    sum_vwv = sum_v = sum_vw = sum_dv = 0.0;
    session_high = h;
    session_low = l;
  } else {
    ++in_session;
    session_high = std::max(session_high, h);
    session_low = std::min(session_low, l);
  }
  sum_vwv += vw * v;
  sum_v += v;
  sum_vw += vw;
  sum_dv += x[kDv];
  const double n_session = static_cast<double>(in_session + 1);
  const double sv = sum_v == 0.0 ? sum_vw / n_session : sum_vwv / sum_v;
  x[kOpc] = c / session_open - 1;
  x[kDvwap] = c / sv - 1;
  x[kD2vwap] = in_session == 0 ? 0.0 : x[kDvwap] - previous_dvwap;
  previous_dvwap = x[kDvwap];
  x[kDdv] = sum_dv / n_session;
  x[kD2dv] = in_session == 0 ? 0.0 : x[kDdv] - previous_ddv;
  previous_ddv = x[kDdv];
  x[kDhigh] = c / session_high - 1;
  x[kDlow] = c / session_low - 1;
  {
    const int ratio_sig[] = {kCo, kDv, kScco, kVscco, kDvscco, kHl, kVhl, kCodv};
    const int m5 = static_cast<int>(std::min<int64_t>(5, in_session + 1));
    for (int i = 0; i < 8; ++i) {
      ratios[i].Push(x[ratio_sig[i]]);
      x[kH5co + i] = ratios[i].Mean(m5);
    }
  }
}

void StreamingLibrary::State::Lags() {
  double* x = values.data();
  // E. lags
  for (int i = 0; i < 9; ++i) {
    const int k = kLags[i];
    const double base = in_session >= k ? close.Ago(k) : session_open;
    x[kLret1 + i] = std::log(c / base);
  }
}

void StreamingLibrary::State::QVariants() {
  double* x = values.data();
  // F. q-variants
  for (int i = 0; i < kBaseCount; ++i) {
    q[i][q_head] = x[i];
    x[kQFirst + i] = std::isnan(x[i]) ? kNaN : RankInWindow(q[i].data(), kQWindow, x[i]);
  }
  q_head = q_head + 1 == kQWindow ? 0 : q_head + 1;
}

void StreamingLibrary::State::Regime() {
  double* x = values.data();
  // G. regime flags
  const double rsi14 = x[kRsi14];
  x[kRsiOverbought] = Flag(!std::isnan(rsi14), rsi14 > 70);
  x[kRsiOversold] = Flag(!std::isnan(rsi14), rsi14 < 30);
  const double v20 = x[kVolatility20];
  vol20.Push(v20);
  const double v20_sma = vol20.Mean(50);
  x[kVolSpike] = Flag(!AnyNaN({v20, v20_sma}), v20 > 1.5 * v20_sma);
  const bool smas_defined = !AnyNaN({sma[2], sma[3]});
  x[kBull] = Flag(smas_defined, sma[2] > sma[3]);
  x[kBear] = Flag(smas_defined, sma[2] < sma[3]);
  x[kExtremeHigh] = Flag(!std::isnan(b20.upper), c > b20.upper);
  x[kExtremeLow] = Flag(!std::isnan(b20.lower), c < b20.lower);
  {
    const double w = x[kBbWidth];
    bb_width_window[bb_width_head] = w;
    bb_width_head = bb_width_head + 1 == kPercentileWindow ? 0 : bb_width_head + 1;
    bool any_nan = std::isnan(w);
    int less = 0, less_equal = 0;
    for (int i = 0; i < kPercentileWindow; ++i) {
      const double u = bb_width_window[i];
      any_nan |= std::isnan(u);
      less += u < w;
      less_equal += u <= w;
    }
    const bool defined = !any_nan;
    // w <= sorted[k] exactly when fewer than k + 1 values are below w; w >= sorted[k]
    // exactly when at least k + 1 values are <= w.
    x[kSqueeze] = Flag(defined, less <= kSqueezeRank);
    x[kExpansion] = Flag(defined, less_equal >= kExpansionRank + 1);
  }
  x[kHigherHighs] = Flag(t >= 2, h > high.Ago(1) && high.Ago(1) > high.Ago(2));
  x[kLowerLows] = Flag(t >= 2, l < low.Ago(1) && low.Ago(1) < low.Ago(2));
  {
    double lowest = kNaN, highest = kNaN;
    if (t >= 20) {
      lowest = low.Ago(1);
      highest = high.Ago(1);
      for (int k = 2; k <= 20; ++k) {
        lowest = std::min(lowest, low.Ago(k));
        highest = std::max(highest, high.Ago(k));
      }
    }
    x[kSupportBreak] = Flag(t >= 20, c < lowest);
    x[kResistanceBreak] = Flag(t >= 20, c > highest);
  }
  {
    const double body = std::fabs(c - o);
    x[kHammer] = Flag(true, h > l && std::min(o, c) - l >= 2 * body && h - std::max(o, c) <= body);
  }
  if (t >= 2) {
    const double o2 = open.Ago(2), c2 = close.Ago(2), h2 = high.Ago(2), l2 = low.Ago(2);
    const double o1 = open.Ago(1), c1 = close.Ago(1), h1 = high.Ago(1), l1 = low.Ago(1);
    const bool first = c2 < o2 && std::fabs(c2 - o2) >= 0.6 * (h2 - l2);
    const bool second = std::fabs(c1 - o1) <= 0.3 * (h1 - l1) && std::max(o1, c1) < c2;
    const bool third = c > o && c > (o2 + c2) / 2;
    x[kMorningStar] = Flag(true, first && second && third);
  } else {
    x[kMorningStar] = kNaN;
  }
  volume_sma5.Push(vsma5);
  {
    const double past = close.Ago(5), vsma5_past = volume_sma5.Ago(5);
    const bool defined = !AnyNaN({past, vsma5, vsma5_past});
    const double dc5 = Sign(c - past), dv5 = Sign(vsma5 - vsma5_past);
    x[kVolumeDivergence] = Flag(defined, dc5 != 0 && dv5 != 0 && dc5 != dv5);
    x[kVolumeConfirmation] = Flag(defined, dc5 != 0 && dv5 != 0 && dc5 == dv5);
  }
  if (AnyNaN({sma[0], sma[2], sma[3]})) {
    x[kTrendAlignment] = kNaN;
  } else if (c > sma[0] && sma[0] > sma[2] && sma[2] > sma[3]) {
    x[kTrendAlignment] = 1.0;
  } else if (c < sma[0] && sma[0] < sma[2] && sma[2] < sma[3]) {
    x[kTrendAlignment] = -1.0;
  } else {
    x[kTrendAlignment] = 0.0;
  }
  x[kGreed] =
      x[kBull] + x[kRsiOverbought] + x[kExtremeHigh] + x[kHigherHighs] + x[kResistanceBreak];
  x[kFear] = x[kBear] + x[kRsiOversold] + x[kExtremeLow] + x[kLowerLows] + x[kSupportBreak];
  x[kPivotHigh] = pivot_high_flag;
  x[kPivotLow] = pivot_low_flag;
}

void StreamingLibrary::State::LongRanks() {
  double* x = values.data();
  // H. long ranks
  if (long_ranks) {
    x[kNdv] = ndv.Update(x[kDv]);
    x[kNmomentum] = nmomentum.Update(x[kMomentum10]);
  }
}

const std::vector<LibrarySignal>& LibrarySignals() {
  static const std::vector<LibrarySignal> signals = BuildSignals();
  return signals;
}

std::vector<std::string> LibrarySignalNames() {
  std::vector<std::string> names;
  for (const LibrarySignal& s : LibrarySignals()) names.push_back(s.name);
  return names;
}

bool IsRegimeSignal(const std::string& name) {
  for (const LibrarySignal& s : LibrarySignals()) {
    if (s.name == name) return s.kind == SignalKind::kRegime;
  }
  return false;
}

Result<std::vector<int>> ResolveLibrarySignals(const std::vector<std::string>& names) {
  static const std::unordered_map<std::string, int> index = [] {
    std::unordered_map<std::string, int> m;
    const std::vector<LibrarySignal>& s = LibrarySignals();
    for (int i = 0; i < static_cast<int>(s.size()); ++i) m.emplace(s[i].name, i);
    return m;
  }();
  std::vector<int> out;
  std::vector<bool> seen(kLibrarySize, false);
  for (const std::string& name : names) {
    const auto it = index.find(name);
    if (it == index.end()) {
      return Status::NotFound("unknown library signal '" + name + "'" +
                              NearestNameHint(name, LibrarySignalNames()) +
                              "; the 184 names are listed in docs/data.md, \"The signal library\"");
    }
    if (seen[it->second]) {
      return Status::InvalidArgument("library signal '" + name +
                                     "' is selected twice: list each signal once");
    }
    seen[it->second] = true;
    out.push_back(it->second);
  }
  return out;
}

namespace {

// `which` with every index checked; all 184 when empty.
Result<std::vector<int>> Selection(std::span<const int> which) {
  std::vector<int> out;
  if (which.empty()) {
    for (int i = 0; i < kLibrarySize; ++i) out.push_back(i);
    return out;
  }
  for (int i : which) {
    if (i < 0 || i >= kLibrarySize) {
      return Status::InvalidArgument("library signal index " + std::to_string(i) +
                                     " is outside [0, 184): resolve names with "
                                     "ResolveLibrarySignals");
    }
    out.push_back(i);
  }
  return out;
}

bool NeedsLongRanks(const std::vector<int>& which) {
  return std::any_of(which.begin(), which.end(), [](int i) { return i >= kNdv; });
}

}  // namespace

Result<LibraryColumns> ComputeLibrary(const market::Bars& bars, std::span<const int> which,
                                      Implementation impl) {
  RLT_RETURN_IF_ERROR(internal::CheckBars(bars));
  RLT_ASSIGN_OR_RETURN(std::vector<int> selected, Selection(which));
  LibraryColumns out;
  const std::vector<LibrarySignal>& signals = LibrarySignals();
  for (int i : selected) out.names.push_back(signals[i].name);
  const size_t n = bars.size();
  if (impl == Implementation::kReference) {
    std::vector<std::vector<double>> all = reference::ComputeLibrary(bars);
    for (int i : selected) out.values.push_back(all[i]);
    return out;
  }
  out.values.assign(selected.size(), std::vector<double>(n));
  auto state = std::make_unique<StreamingLibrary::State>(NeedsLongRanks(selected));
  for (size_t t = 0; t < n; ++t) {
    state->Push(StreamBarAt(bars, t));
    for (size_t k = 0; k < selected.size(); ++k) out.values[k][t] = state->values[selected[k]];
  }
  return out;
}

// ---- StreamingLibrary ---------------------------------------------------------------------

StreamingLibrary::StreamingLibrary(std::unique_ptr<State> state, std::vector<int> which)
    : state_(std::move(state)), which_(std::move(which)), out_(which_.size(), kNaN) {
  const std::vector<LibrarySignal>& signals = LibrarySignals();
  for (int i : which_) names_.push_back(signals[i].name);
}

Result<StreamingLibrary> StreamingLibrary::Create(std::span<const int> which) {
  RLT_ASSIGN_OR_RETURN(std::vector<int> selected, Selection(which));
  auto state = std::make_unique<State>(NeedsLongRanks(selected));
  return StreamingLibrary(std::move(state), std::move(selected));
}

StreamingLibrary::StreamingLibrary(const StreamingLibrary& other)
    : state_(std::make_unique<State>(*other.state_)),
      which_(other.which_),
      names_(other.names_),
      out_(other.out_) {}

StreamingLibrary& StreamingLibrary::operator=(const StreamingLibrary& other) {
  if (this != &other) {
    state_ = std::make_unique<State>(*other.state_);
    which_ = other.which_;
    names_ = other.names_;
    out_ = other.out_;
  }
  return *this;
}

StreamingLibrary::StreamingLibrary(StreamingLibrary&&) noexcept = default;
StreamingLibrary& StreamingLibrary::operator=(StreamingLibrary&&) noexcept = default;
StreamingLibrary::~StreamingLibrary() = default;

std::span<const double> StreamingLibrary::Push(const StreamBar& bar) {
  state_->Push(bar);
  for (size_t k = 0; k < which_.size(); ++k) out_[k] = state_->values[which_[k]];
  return out_;
}

const std::vector<std::string>& StreamingLibrary::names() const { return names_; }

int64_t StreamingLibrary::bars_pushed() const { return state_->t + 1; }

}  // namespace rlt::features
