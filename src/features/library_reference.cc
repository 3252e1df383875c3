// rltrade features: the plain-loop reference of the signal library (library.h).
//
// Every signal is recomputed for every bar from its definition: window sums re-added,
// sessions re-scanned from their first bar, pivots searched backwards, percentiles taken
// from a sorted copy of the window, ranks counted over the window. The TA-Lib-convention
// indicators (MACD, BBANDS, STOCH, ATR, WILLR) come from reference.h, the plain-loop
// references that indicators_test.cc checks against TA-Lib. Shares no code with the state
// machine in library.cc (only the catalogue of names, to place each column). Slow
// (O(bars * window), O(bars^2) for the exponential averages): for tests.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "features/library.h"
#include "features/reference.h"

namespace rlt::features::reference {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using Vec = std::vector<double>;

// Mean of x[t-p+1..t]; NaN when the window starts before 0 or holds a NaN.
double WindowMean(const Vec& x, size_t t, int p) {
  if (t + 1 < static_cast<size_t>(p)) return kNaN;
  double sum = 0.0;
  for (size_t i = t + 1 - p; i <= t; ++i) sum += x[i];
  return sum / p;
}

double WindowPopStddev(const Vec& x, size_t t, int p) {
  const double mean = WindowMean(x, t, p);
  if (std::isnan(mean)) return kNaN;
  double ss = 0.0;
  for (size_t i = t + 1 - p; i <= t; ++i) ss += (x[i] - mean) * (x[i] - mean);
  return std::sqrt(ss / p);
}

// The spec's ts_rank of x_t over x[t-n+1..t].
double TsRank(const Vec& x, size_t t, int n) {
  if (t + 1 < static_cast<size_t>(n) || std::isnan(x[t])) return kNaN;
  double less = 0, others_equal = 0;
  for (size_t i = t + 1 - n; i <= t; ++i) {
    if (std::isnan(x[i])) return kNaN;
    if (x[i] < x[t]) less += 1;
    if (i != t && x[i] == x[t]) others_equal += 1;
  }
  return (less + 0.5 * others_equal) / (n - 1);
}

double Bool(bool b) { return b ? 1.0 : 0.0; }
double OneMinus(double a, double b) { return b == 0.0 ? 0.0 : a / b - 1.0; }  // a/b - 1
double VolRatio(double v, double sma) {
  if (std::isnan(sma)) return kNaN;
  return sma == 0.0 ? 1.0 : v / sma;
}
int SignOf(double x) { return (x > 0) - (x < 0); }

bool PivotHighAt(const market::Bars& b, size_t u) {
  if (u < 4) return false;
  for (size_t i = u - 4; i <= u; ++i) {
    if (!(b.high[u - 2] >= b.high[i])) return false;
  }
  return true;
}
bool PivotLowAt(const market::Bars& b, size_t u) {
  if (u < 4) return false;
  for (size_t i = u - 4; i <= u; ++i) {
    if (!(b.low[u - 2] <= b.low[i])) return false;
  }
  return true;
}

// The bars, the output columns and the intermediate series the steps share.
struct Ref {
  explicit Ref(const market::Bars& bars)
      : b(bars),
        n(bars.size()),
        o(bars.open),
        h(bars.high),
        l(bars.low),
        c(bars.close),
        v(bars.volume),
        names(LibrarySignalNames()),
        out(names.size(), Vec(n, kNaN)),
        first(n) {
    RLT_CHECK(b.bar_in_session.size() == n);
    for (size_t i = 0; i < names.size(); ++i) index[names[i]] = i;
    for (size_t t = 0; t < n; ++t) {
      first[t] = (t == 0 || b.bar_in_session[t] == 0) ? t : first[t - 1];
    }
  }
  Vec& col(const std::string& name) { return out[index.at(name)]; }
  void BarRatios();
  void Technical();
  void Swings();
  void PerDay();
  void Lags();
  void QVariants();
  void Regime();
  void LongRanks();

  const market::Bars& b;
  const size_t n;
  const Vec &o, &h, &l, &c, &v;
  std::vector<std::string> names;
  std::vector<Vec> out;
  std::map<std::string, size_t> index;
  std::vector<size_t> first;  // each bar's session's first bar
  Vec vw, vr20, lr, gains, losses;
  BbandsOutput bb;
};

void Ref::BarRatios() {
  // A. bar ratios
  vw.assign(n, 0.0);
  vr20.assign(n, 0.0);
  for (size_t t = 0; t < n; ++t) {
    vw[t] = (2 * l[t] + 2 * h[t] + 3 * c[t] + 3 * o[t]) / 10;
    vr20[t] = VolRatio(v[t], WindowMean(v, t, 20));
    const double co = c[t] / o[t] - 1, dv = c[t] / vw[t] - 1, hl = h[t] / l[t] - 1;
    const double scco = h[t] == l[t] ? 0.0 : (c[t] - o[t]) / (h[t] - l[t]);
    col("co")[t] = co;
    col("dv")[t] = dv;
    col("hl")[t] = hl;
    col("scco")[t] = scco;
    col("vscco")[t] = scco * vr20[t];
    col("dvscco")[t] = dv * scco;
    col("vhl")[t] = hl * vr20[t];
    col("codv")[t] = co - dv;
  }
}

void Ref::Technical() {
  // B. technical
  const MacdOutput macd = Macd(c, {12, 26, 9});
  bb = Bbands(c, {20, 2.0, 2.0});
  const BbandsOutput bb10 = Bbands(c, {10, 2.0, 2.0});
  const StochOutput stoch = Stoch(h, l, c, {14, 3, 3});
  lr.assign(n, kNaN);
  gains.assign(n, kNaN);
  losses.assign(n, kNaN);
  for (size_t t = 1; t < n; ++t) {
    lr[t] = std::log(c[t] / c[t - 1]);
    gains[t] = std::max(c[t] - c[t - 1], 0.0);
    losses[t] = std::max(c[t - 1] - c[t], 0.0);
  }
  const Vec atr14 = Atr(h, l, c, {14});
  for (size_t t = 0; t < n; ++t) {
    col("macd")[t] = macd.macd[t] / c[t];
    col("macd_signal")[t] = macd.signal[t] / c[t];
    col("macd_hist")[t] = macd.hist[t] / c[t];
    col("bb_middle")[t] = OneMinus(c[t], bb.middle[t]);
    col("bb_upper")[t] = OneMinus(c[t], bb.upper[t]);
    col("bb_lower")[t] = OneMinus(c[t], bb.lower[t]);
    col("bb_width")[t] = bb.width[t];
    col("bb_position")[t] = bb.percent_b[t];
    col("bb_width10")[t] = bb10.width[t];
    col("bb_position10")[t] = bb10.percent_b[t];
    for (int p : {7, 14, 21}) {
      if (t < static_cast<size_t>(p)) continue;
      const double g = WindowMean(gains, t, p), lo = WindowMean(losses, t, p);
      col("rsi" + std::to_string(p))[t] = g + lo == 0.0 ? 50.0 : 100.0 * g / (g + lo);
    }
    col("stoch_k")[t] = stoch.slowk[t];
    col("stoch_d")[t] = stoch.slowd[t];
    for (int p : {5, 10, 20, 50}) {
      const double sma = WindowMean(c, t, p);
      const double previous = t >= 1 ? WindowMean(c, t - 1, p) : kNaN;
      col("sma" + std::to_string(p))[t] = std::log(sma / previous);
      col("price_vs_sma" + std::to_string(p))[t] = OneMinus(c[t], sma);
    }
    for (int p : {5, 20}) {
      const double sma = WindowMean(v, t, p);
      col("volume_sma" + std::to_string(p))[t] = std::log(1 + sma);
      col("volume_ratio" + std::to_string(p))[t] = VolRatio(v[t], sma);
    }
    col("price_volume")[t] = lr[t] * vr20[t];
    for (int k : {5, 10, 20}) {
      if (t < static_cast<size_t>(k)) continue;
      const double a = atr14[t];
      col("momentum" + std::to_string(k))[t] =
          std::isnan(a) ? kNaN : (a == 0.0 ? 0.0 : (c[t] - c[t - k]) / a);
      col("roc" + std::to_string(k))[t] = 100 * (c[t] / c[t - k] - 1);
    }
    for (int p : {5, 10, 20, 50}) {
      col("volatility" + std::to_string(p))[t] = WindowPopStddev(lr, t, p);
    }
  }
  for (int p : {7, 14, 21}) {
    const Vec atr = Atr(h, l, c, {p});
    const Vec willr = Willr(h, l, c, {p});
    for (size_t t = 0; t < n; ++t) {
      col("atr" + std::to_string(p))[t] = atr[t] / c[t];
      col("willr" + std::to_string(p))[t] = willr[t];
    }
  }
}

void Ref::Swings() {
  // C. swings: search backwards for the latest confirmation bar u <= t.
  for (size_t t = 0; t < n; ++t) {
    for (size_t u = t + 1; u-- > 0;) {
      if (PivotHighAt(b, u)) {
        col("swing_high_dist")[t] = c[t] / h[u - 2] - 1;
        col("bars_since_swing_high")[t] = static_cast<double>(t - (u - 2));
        break;
      }
    }
    for (size_t u = t + 1; u-- > 0;) {
      if (PivotLowAt(b, u)) {
        col("swing_low_dist")[t] = c[t] / l[u - 2] - 1;
        col("bars_since_swing_low")[t] = static_cast<double>(t - (u - 2));
        break;
      }
    }
  }
}

void Ref::PerDay() {
  // D. per-day: re-scan the session up to t.
  const Vec& dv = col("dv");
  auto dvwap_at = [&](size_t t) {
    double pv = 0, vol = 0, vw_sum = 0;
    for (size_t i = first[t]; i <= t; ++i) {
      pv += vw[i] * v[i];
      vol += v[i];
      vw_sum += vw[i];
    }
    const double sv = vol == 0 ? vw_sum / static_cast<double>(t - first[t] + 1) : pv / vol;
    return c[t] / sv - 1;
  };
  auto ddv_at = [&](size_t t) {
    double sum = 0;
    for (size_t i = first[t]; i <= t; ++i) sum += dv[i];
    return sum / static_cast<double>(t - first[t] + 1);
  };
  const char* ratio_names[] = {"co", "dv", "scco", "vscco", "dvscco", "hl", "vhl", "codv"};
  for (size_t t = 0; t < n; ++t) {
    const size_t s = first[t];
    const bool opening = s == t;
    col("opc")[t] = c[t] / o[s] - 1;
    col("dvwap")[t] = dvwap_at(t);
    col("d2vwap")[t] = opening ? 0.0 : dvwap_at(t) - dvwap_at(t - 1);
    col("ddv")[t] = ddv_at(t);
    col("d2dv")[t] = opening ? 0.0 : ddv_at(t) - ddv_at(t - 1);
    double hi = h[s], lo = l[s];
    for (size_t i = s; i <= t; ++i) {
      hi = std::max(hi, h[i]);
      lo = std::min(lo, l[i]);
    }
    col("dhigh")[t] = c[t] / hi - 1;
    col("dlow")[t] = c[t] / lo - 1;
    const size_t m = std::min<size_t>(5, t - s + 1);
    for (const char* r : ratio_names) {
      const Vec& x = col(r);
      double sum = 0;
      for (size_t i = t + 1 - m; i <= t; ++i) sum += x[i];
      col(std::string("h5") + r)[t] = sum / static_cast<double>(m);
    }
  }
}

void Ref::Lags() {
  // E. lags
  for (int k : {1, 2, 3, 5, 7, 13, 17, 19, 23}) {
    for (size_t t = 0; t < n; ++t) {
      const double base = t >= first[t] + k ? c[t - k] : o[first[t]];
      col("lret" + std::to_string(k))[t] = std::log(c[t] / base);
    }
  }
}

void Ref::QVariants() {
  // F. q-variants of the 80 signals of A..E (library order: the first 80 names).
  for (size_t i = 0; i < 80; ++i) {
    const Vec& x = out[i];
    Vec& q = col("q" + names[i]);
    for (size_t t = 0; t < n; ++t) q[t] = TsRank(x, t, 5);
  }
}

void Ref::Regime() {
  // G. regime flags
  const Vec& rsi14 = col("rsi14");
  const Vec& vol20 = col("volatility20");
  const Vec& width = col("bb_width");
  for (size_t t = 0; t < n; ++t) {
    if (!std::isnan(rsi14[t])) {
      col("rsi_overbought")[t] = Bool(rsi14[t] > 70);
      col("rsi_oversold")[t] = Bool(rsi14[t] < 30);
    }
    const double vol20_sma = WindowMean(vol20, t, 50);
    if (!std::isnan(vol20[t]) && !std::isnan(vol20_sma)) {
      col("vol_spike")[t] = Bool(vol20[t] > 1.5 * vol20_sma);
    }
    const double sma5 = WindowMean(c, t, 5), sma20 = WindowMean(c, t, 20),
                 sma50 = WindowMean(c, t, 50);
    if (t >= 49) {
      col("bull")[t] = Bool(sma20 > sma50);
      col("bear")[t] = Bool(sma20 < sma50);
      col("trend_alignment")[t] = (c[t] > sma5 && sma5 > sma20 && sma20 > sma50)   ? 1.0
                                  : (c[t] < sma5 && sma5 < sma20 && sma20 < sma50) ? -1.0
                                                                                   : 0.0;
    }
    if (!std::isnan(bb.upper[t])) {
      col("extreme_high")[t] = Bool(c[t] > bb.upper[t]);
      col("extreme_low")[t] = Bool(c[t] < bb.lower[t]);
    }
    if (t + 1 >= 100) {
      std::vector<double> window(width.begin() + (t + 1 - 100), width.begin() + (t + 1));
      if (std::none_of(window.begin(), window.end(), [](double w) { return std::isnan(w); })) {
        std::sort(window.begin(), window.end());
        const size_t low_rank = static_cast<size_t>(std::floor(0.2 * 99));
        const size_t high_rank = static_cast<size_t>(std::ceil(0.8 * 99));
        col("squeeze")[t] = Bool(width[t] <= window[low_rank]);
        col("expansion")[t] = Bool(width[t] >= window[high_rank]);
      }
    }
    if (t >= 2) {
      col("higher_highs")[t] = Bool(h[t] > h[t - 1] && h[t - 1] > h[t - 2]);
      col("lower_lows")[t] = Bool(l[t] < l[t - 1] && l[t - 1] < l[t - 2]);
    }
    if (t >= 20) {
      double lowest = l[t - 1], highest = h[t - 1];
      for (size_t i = t - 20; i < t; ++i) {
        lowest = std::min(lowest, l[i]);
        highest = std::max(highest, h[i]);
      }
      col("support_break")[t] = Bool(c[t] < lowest);
      col("resistance_break")[t] = Bool(c[t] > highest);
    }
    const double body = std::fabs(c[t] - o[t]);
    const double lower_shadow = std::min(o[t], c[t]) - l[t];
    const double upper_shadow = h[t] - std::max(o[t], c[t]);
    col("hammer")[t] = Bool(h[t] > l[t] && lower_shadow >= 2 * body && upper_shadow <= body);
    if (t >= 2) {
      const size_t a = t - 2, m = t - 1;
      const bool bearish = c[a] < o[a] && std::fabs(c[a] - o[a]) >= 0.6 * (h[a] - l[a]);
      const bool small =
          std::fabs(c[m] - o[m]) <= 0.3 * (h[m] - l[m]) && std::max(o[m], c[m]) < c[a];
      const bool bullish = c[t] > o[t] && c[t] > (o[a] + c[a]) / 2;
      col("morning_star")[t] = Bool(bearish && small && bullish);
    }
    if (t >= 9) {
      const int dc5 = SignOf(c[t] - c[t - 5]);
      const int dv5 = SignOf(WindowMean(v, t, 5) - WindowMean(v, t - 5, 5));
      col("volume_divergence")[t] = Bool(dc5 != 0 && dv5 != 0 && dc5 != dv5);
      col("volume_confirmation")[t] = Bool(dc5 != 0 && dv5 != 0 && dc5 == dv5);
    }
    if (t >= 4) {
      col("pivot_high")[t] = Bool(PivotHighAt(b, t));
      col("pivot_low")[t] = Bool(PivotLowAt(b, t));
    }
  }
  for (size_t t = 0; t < n; ++t) {
    col("greed")[t] = col("bull")[t] + col("rsi_overbought")[t] + col("extreme_high")[t] +
                      col("higher_highs")[t] + col("resistance_break")[t];
    col("fear")[t] = col("bear")[t] + col("rsi_oversold")[t] + col("extreme_low")[t] +
                     col("lower_lows")[t] + col("support_break")[t];
  }
}

void Ref::LongRanks() {
  // H. long ranks
  const Vec& dv = col("dv");
  const Vec& momentum10 = col("momentum10");
  for (size_t t = 0; t < n; ++t) {
    col("ndv")[t] = TsRank(dv, t, 1875);
    col("nmomentum")[t] = TsRank(momentum10, t, 1875);
  }
}

}  // namespace

std::vector<std::vector<double>> ComputeLibrary(const market::Bars& b) {
  Ref r(b);
  r.BarRatios();
  r.Technical();
  r.Swings();
  r.PerDay();
  r.Lags();
  r.QVariants();
  r.Regime();
  r.LongRanks();
  return std::move(r.out);
}

}  // namespace rlt::features::reference
