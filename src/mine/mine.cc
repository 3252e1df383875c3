#include "mine/mine.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <span>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "mine/dsr.h"

namespace rlt::mine {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One (symbol, session) unit.
struct Unit {
  int32_t date;
  int32_t symbol;
  int32_t begin, end;  // bars [begin, end) of that symbol
  int32_t date_index;  // index into the sorted training dates (-1 outside training)
};

std::string Fmt(double v) { return fmt::format("{}", v); }

// Per-unit score of a fold: mean or Sharpe of the P&L values.
double Score(std::span<const double> pnl, bool sharpe) {
  if (pnl.empty()) return 0;
  if (sharpe) return UnitSharpe(pnl);
  double s = 0;
  for (double v : pnl) s += v;
  return s / static_cast<double>(pnl.size());
}

}  // namespace

Status ValidateMineOptions(const MineOptions& o) {
  auto bad = [&](const std::string& key, const std::string& what) {
    return Status::InvalidArgument(o.Key(key) + ": " + what);
  };
  if (o.tune_top < 0)
    return bad("tune_top", "must be >= 0 (0 = no tuning), got " + std::to_string(o.tune_top));
  if (o.tune_iterations < 1) {
    return bad("tune_iterations", "must be >= 1, got " + std::to_string(o.tune_iterations));
  }
  if (!(o.lower_q > 0 && o.lower_q < 1)) {
    return bad("lower_q", "must be in (0, 1), got " + Fmt(o.lower_q) + " (e.g. 0.3)");
  }
  if (!(o.upper_q > 0 && o.upper_q < 1)) {
    return bad("upper_q", "must be in (0, 1), got " + Fmt(o.upper_q) + " (e.g. 0.7)");
  }
  if (!(o.lower_q < o.upper_q)) {
    return bad("lower_q", "must be below " + o.Key("upper_q") + " (got " + Fmt(o.lower_q) +
                              " and " + Fmt(o.upper_q) + "); e.g. 0.3 and 0.7");
  }
  if (!(o.cost_rate >= 0) || !std::isfinite(o.cost_rate)) {
    return bad("cost_rate", "must be a finite number >= 0, got " + Fmt(o.cost_rate));
  }
  if (o.folds < 2) return bad("folds", "must be >= 2, got " + std::to_string(o.folds));
  if (o.embargo < 0) return bad("embargo", "must be >= 0, got " + std::to_string(o.embargo));
  if (o.metric != "mean" && o.metric != "sharpe") {
    return bad("metric", "must be \"mean\" or \"sharpe\", got \"" + o.metric + "\"");
  }
  if (!(o.max_corr > 0 && o.max_corr <= 1)) {
    return bad("max_corr", "must be in (0, 1], got " + Fmt(o.max_corr));
  }
  if (!(o.dsr_threshold > 0 && o.dsr_threshold < 1)) {
    return bad("dsr_threshold", "must be in (0, 1), got " + Fmt(o.dsr_threshold));
  }
  if (o.has_validation && o.validation.Overlaps(o.train)) {
    return bad("validation", o.validation.ToString() + " overlaps the training range " +
                                 o.train.ToString() + "; choose dates outside it");
  }
  return Status::Ok();
}

int64_t FoldBegin(int64_t n_dates, int folds, int f) {
  return static_cast<int64_t>(f) * n_dates / folds;
}

bool FitsOn(int64_t d, int64_t n_dates, int folds, int f, int embargo) {
  const int64_t b = FoldBegin(n_dates, folds, f), e = FoldBegin(n_dates, folds, f + 1);
  return d < b || d >= e + embargo;
}

double Quantile(double* values, int64_t n, double q) {
  if (n <= 0) return kNaN;
  const double pos = q * static_cast<double>(n - 1);
  const int64_t k = static_cast<int64_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(k);
  std::nth_element(values, values + k, values + n);
  const double lo = values[k];
  if (frac == 0 || k + 1 >= n) return lo;
  const double hi = *std::min_element(values + k + 1, values + n);
  return lo + frac * (hi - lo);
}

void Quantiles(double* values, int64_t n, double q_lo, double q_hi, double* lo, double* hi) {
  if (n <= 0) {
    *lo = *hi = kNaN;
    return;
  }
  // The upper one first; the lower one then only searches the values below it.
  const double pos_hi = q_hi * static_cast<double>(n - 1);
  const int64_t k_hi = static_cast<int64_t>(std::floor(pos_hi));
  *hi = Quantile(values, n, q_hi);
  const double pos_lo = q_lo * static_cast<double>(n - 1);
  const int64_t k_lo = static_cast<int64_t>(std::floor(pos_lo));
  if (k_lo + 1 <= k_hi) {
    // Order statistics k_lo and k_lo + 1 are both in values[0, k_hi]: values[k_hi] is the
    // k_hi-th and everything before it is not larger.
    const double frac = pos_lo - static_cast<double>(k_lo);
    std::nth_element(values, values + k_lo, values + k_hi + 1);
    const double a = values[k_lo];
    *lo = frac == 0 ? a : a + frac * (*std::min_element(values + k_lo + 1, values + k_hi + 1) - a);
  } else {
    *lo = Quantile(values, n, q_lo);
  }
}

namespace {

inline int Raw(double x, double q_lo, double q_hi) {
  // NaN compares false both ways: 0.
  const bool lo = x <= q_lo, hi = x >= q_hi;
  return lo == hi ? 0 : (lo ? 1 : -1);
}

// The bar returns a position held over bar j earns (0 on a session's first bar).
std::vector<double> BarReturns(const market::Bars& b) {
  std::vector<double> r(b.size(), 0.0);
  for (const market::Session& s : b.sessions) {
    for (int32_t j = s.begin + 1; j < s.end; ++j) {
      r[j] = (j + 1 < s.end ? b.open[j + 1] : b.close[j]) / b.open[j] - 1;
    }
  }
  return r;
}

UnitPnl PnlWithReturns(const double* ret, const double* x, int32_t begin, int32_t end, double q_lo,
                       double q_hi, double cost_rate) {
  UnitPnl u;
  int prev = 0;  // position over bar j-1 (flat on the first bar)
  int64_t turnover = 0;
  for (int32_t j = begin + 1; j < end; ++j) {
    const int p = Raw(x[j - 1], q_lo, q_hi);
    u.gross += p * ret[j];
    turnover += std::abs(p - prev);
    prev = p;
  }
  turnover += std::abs(prev);  // flat at the close
  u.cost = cost_rate * static_cast<double>(turnover);
  return u;
}

// PnlWithReturns with tuning's strength: a side needs `strength` bars in a row beyond its
// threshold within the session (strength 1 is PnlWithReturns).
UnitPnl RulePnlWithReturns(const double* ret, const double* x, int32_t begin, int32_t end,
                           double q_lo, double q_hi, int strength, double cost_rate) {
  UnitPnl u;
  int prev = 0;
  int64_t turnover = 0;
  int run_lo = 0, run_hi = 0;  // bars in a row at or beyond each threshold, up to bar j-1
  for (int32_t j = begin + 1; j < end; ++j) {
    const int raw = Raw(x[j - 1], q_lo, q_hi);
    run_lo = raw > 0 ? run_lo + 1 : 0;
    run_hi = raw < 0 ? run_hi + 1 : 0;
    const int p = run_lo >= strength ? 1 : (run_hi >= strength ? -1 : 0);
    u.gross += p * ret[j];
    turnover += std::abs(p - prev);
    prev = p;
  }
  turnover += std::abs(prev);
  u.cost = cost_rate * static_cast<double>(turnover);
  return u;
}

}  // namespace

std::vector<double> SmoothSignal(const std::vector<double>& x, int span) {
  if (span <= 1) return x;
  const double alpha = 2.0 / (span + 1.0);
  std::vector<double> out(x.size(), kNaN);
  double ema = kNaN;
  for (size_t t = 0; t < x.size(); ++t) {
    if (std::isfinite(x[t])) ema = std::isnan(ema) ? x[t] : ema + alpha * (x[t] - ema);
    out[t] = std::isfinite(x[t]) ? ema : kNaN;
  }
  return out;
}

UnitPnl RuleSessionPnl(const market::Bars& bars, const double* x, int32_t begin, int32_t end,
                       double q_lo, double q_hi, int strength, double cost_rate) {
  std::vector<double> ret(bars.size(), 0.0);
  for (int32_t j = begin + 1; j < end; ++j) {
    ret[j] = (j + 1 < end ? bars.open[j + 1] : bars.close[j]) / bars.open[j] - 1;
  }
  return RulePnlWithReturns(ret.data(), x, begin, end, q_lo, q_hi, strength, cost_rate);
}

UnitPnl SessionPnl(const market::Bars& bars, const double* x, int32_t begin, int32_t end,
                   double q_lo, double q_hi, double cost_rate) {
  std::vector<double> ret(bars.size(), 0.0);
  for (int32_t j = begin + 1; j < end; ++j) {
    ret[j] = (j + 1 < end ? bars.open[j + 1] : bars.close[j]) / bars.open[j] - 1;
  }
  return PnlWithReturns(ret.data(), x, begin, end, q_lo, q_hi, cost_rate);
}

double PairwiseCorrelation(const double* x, const double* y, int64_t n) {
  double c = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = x[i], b = y[i];
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    c += 1;
    sx += a;
    sy += b;
    sxx += a * a;
    syy += b * b;
    sxy += a * b;
  }
  if (c < 2) return kNaN;
  const double vx = sxx - sx * sx / c, vy = syy - sy * sy / c;
  if (!(vx > 0) || !(vy > 0)) return kNaN;
  return (sxy - sx * sy / c) / std::sqrt(vx * vy);
}

namespace {

// The Pearson correlations of R columns over the bars where both of a pair are finite,
// all pairs at once. Each column is centred by the mean of its finite values and zeroed
// where it is NaN; then, over every bar t,
//   G_ij = Σ z_i z_j        (a product is 0 unless both are finite),
// accumulated block by block of bars (a row-major (bar, column) block Z, G += Zᵀ Z by
// BLAS dsyrk). The other sums a pair needs over its both-finite bars follow from
// each column's totals minus its values at the other's NaN bars (sparse: warm-ups):
//   n_ij = N − |NaN_i ∪ NaN_j|,  S_i|j = S_i − Σ_{t ∈ NaN_j} z_i(t),  Q_i|j likewise with z²,
//   corr = (G_ij − S_i|j S_j|i / n_ij) / √((Q_i|j − S_i|j² / n_ij)(Q_j|i − S_j|i² / n_ij)).
// O(N·R²/2) multiply-adds plus O(R·Σ|NaN|); NaN for fewer than 2 common bars or no spread.
std::vector<std::vector<double>> CorrelationMatrix(
    const std::vector<std::vector<const double*>>& pieces,  // [column][unit] begin pointers
    const std::vector<int32_t>& lengths) {                  // [unit] bars
  const size_t r = pieces.size();
  int64_t n = 0;
  for (int32_t len : lengths) n += len;
  std::vector<std::vector<int64_t>> nan(r);
  std::vector<double> mean(r, 0.0), total(r, 0.0), total_sq(r, 0.0);
  for (size_t i = 0; i < r; ++i) {
    int64_t t = 0, finite = 0;
    for (size_t u = 0; u < lengths.size(); ++u) {
      for (int32_t j = 0; j < lengths[u]; ++j, ++t) {
        const double v = pieces[i][u][j];
        if (std::isfinite(v)) {
          mean[i] += v;
          ++finite;
        } else {
          nan[i].push_back(t);
        }
      }
    }
    mean[i] = finite > 0 ? mean[i] / static_cast<double>(finite) : 0.0;
  }
  // Z in blocks of bars, row-major; G upper triangle (row i, columns j >= i).
  constexpr int64_t kBlock = 1024;
  std::vector<double> z(static_cast<size_t>(kBlock) * r);
  std::vector<double> g(r * r, 0.0);
  std::vector<std::vector<double>> column_z(r);  // z_i at the other columns' NaN bars
  size_t unit = 0;
  int32_t offset = 0;
  for (int64_t t0 = 0; t0 < n; t0 += kBlock) {
    const int64_t rows = std::min(kBlock, n - t0);
    for (int64_t k = 0; k < rows; ++k) {
      while (offset >= lengths[unit]) {
        ++unit;
        offset = 0;
      }
      for (size_t i = 0; i < r; ++i) {
        const double v = pieces[i][unit][offset];
        const double c = std::isfinite(v) ? v - mean[i] : 0.0;
        z[k * r + i] = c;
        total[i] += c;
        total_sq[i] += c * c;
      }
      ++offset;
    }
    // G += Zᵀ Z for this block (upper triangle), by BLAS.
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, static_cast<int>(r), static_cast<int>(rows),
                1.0, z.data(), static_cast<int>(r), 1.0, g.data(), static_cast<int>(r));
  }
  // Values of every column at every NaN bar of any column (sparse).
  std::vector<int64_t> all_nan;
  for (const auto& v : nan) all_nan.insert(all_nan.end(), v.begin(), v.end());
  std::sort(all_nan.begin(), all_nan.end());
  all_nan.erase(std::unique(all_nan.begin(), all_nan.end()), all_nan.end());
  std::vector<std::vector<double>> at_nan(r, std::vector<double>(all_nan.size(), 0.0));
  {
    size_t u = 0;
    int64_t unit_start = 0;
    for (size_t k = 0; k < all_nan.size(); ++k) {
      while (all_nan[k] >= unit_start + lengths[u]) unit_start += lengths[u++];
      for (size_t i = 0; i < r; ++i) {
        const double v = pieces[i][u][all_nan[k] - unit_start];
        at_nan[i][k] = std::isfinite(v) ? v - mean[i] : 0.0;
      }
    }
  }
  std::vector<std::vector<size_t>> nan_pos(r);  // positions of nan[i] in all_nan
  for (size_t i = 0; i < r; ++i) {
    for (int64_t t : nan[i]) {
      nan_pos[i].push_back(static_cast<size_t>(std::lower_bound(all_nan.begin(), all_nan.end(), t) -
                                               all_nan.begin()));
    }
  }
  std::vector<std::vector<double>> corr(r, std::vector<double>(r, kNaN));
  for (size_t i = 0; i < r; ++i) {
    for (size_t j = i; j < r; ++j) {
      // |NaN_i ∪ NaN_j| and the sums over the bars where both are finite.
      size_t a = 0, b = 0, uni = 0;
      while (a < nan_pos[i].size() || b < nan_pos[j].size()) {
        if (b == nan_pos[j].size() || (a < nan_pos[i].size() && nan_pos[i][a] < nan_pos[j][b])) {
          ++a;
        } else if (a == nan_pos[i].size() || nan_pos[j][b] < nan_pos[i][a]) {
          ++b;
        } else {
          ++a;
          ++b;
        }
        ++uni;
      }
      const double count = static_cast<double>(n - static_cast<int64_t>(uni));
      if (count < 2) continue;
      double si = total[i], qi = total_sq[i], sj = total[j], qj = total_sq[j];
      for (size_t p : nan_pos[j]) {
        si -= at_nan[i][p];
        qi -= at_nan[i][p] * at_nan[i][p];
      }
      for (size_t p : nan_pos[i]) {
        sj -= at_nan[j][p];
        qj -= at_nan[j][p] * at_nan[j][p];
      }
      const double vi = qi - si * si / count, vj = qj - sj * sj / count;
      if (!(vi > 0) || !(vj > 0)) continue;
      const double c = (g[i * r + j] - si * sj / count) / std::sqrt(vi * vj);
      corr[i][j] = corr[j][i] = std::clamp(c, -1.0, 1.0);
    }
  }
  return corr;
}

}  // namespace

namespace {

// What every signal's scoring shares: the units, the folds, the bar returns.
struct Setup {
  std::vector<Unit> train_units, val_units;  // sorted by (date, symbol)
  int64_t n_dates = 0;                       // distinct training dates
  std::vector<size_t> fold_unit_begin;       // fold f's units: [begin[f], begin[f + 1])
  std::vector<std::vector<double>> returns;  // per symbol: BarReturns
  int64_t train_bars = 0;
};

Result<Setup> BuildSetup(const MineInput& input, const MineOptions& options, MineResult& result) {
  Setup s;
  std::vector<int32_t> dates;
  for (size_t k = 0; k < input.symbols.size(); ++k) {
    for (const market::Session& session : input.symbols[k].bars->sessions) {
      const Unit u{session.date, static_cast<int32_t>(k), session.begin, session.end, -1};
      if (options.train.Contains(session.date)) {
        s.train_units.push_back(u);
        dates.push_back(session.date);
      } else if (options.has_validation && options.validation.Contains(session.date)) {
        s.val_units.push_back(u);
      }
    }
  }
  std::sort(dates.begin(), dates.end());
  dates.erase(std::unique(dates.begin(), dates.end()), dates.end());
  s.n_dates = static_cast<int64_t>(dates.size());
  const int folds = options.folds;
  bool enough = s.n_dates >= 2 * folds;
  for (int f = 0; f < folds && enough; ++f) {
    int64_t fitted = 0;
    for (int64_t d = 0; d < s.n_dates; ++d)
      fitted += FitsOn(d, s.n_dates, folds, f, options.embargo);
    enough = fitted >= 1;
  }
  if (!enough) {
    return Status::InvalidArgument(fmt::format(
        "the training range {} holds {} session date(s); {} = {} needs at least {} (two per "
        "fold) and {} = {} must leave every fold sessions to fit on: widen the training range "
        "or lower {}",
        options.train.ToString(), s.n_dates, options.Key("folds"), folds, 2 * folds,
        options.Key("embargo"), options.embargo, options.Key("folds")));
  }
  auto sort_units = [](std::vector<Unit>& units) {
    std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) {
      return a.date != b.date ? a.date < b.date : a.symbol < b.symbol;
    });
  };
  sort_units(s.train_units);
  sort_units(s.val_units);
  for (Unit& u : s.train_units) {
    u.date_index =
        static_cast<int32_t>(std::lower_bound(dates.begin(), dates.end(), u.date) - dates.begin());
    s.train_bars += u.end - u.begin;
  }
  // train_units is date-sorted, so each fold's units are a contiguous run.
  s.fold_unit_begin.assign(folds + 1, s.train_units.size());
  for (int f = 0; f < folds; ++f) {
    const int64_t first = FoldBegin(s.n_dates, folds, f);
    const int64_t end = FoldBegin(s.n_dates, folds, f + 1);
    result.fold_first.push_back(dates[first]);
    result.fold_last.push_back(dates[end - 1]);
    s.fold_unit_begin[f] =
        static_cast<size_t>(std::find_if(s.train_units.begin(), s.train_units.end(),
                                         [&](const Unit& u) { return u.date_index >= first; }) -
                            s.train_units.begin());
  }
  result.train_dates = s.n_dates;
  result.train_units = static_cast<int64_t>(s.train_units.size());
  result.validation_units = static_cast<int64_t>(s.val_units.size());
  for (const SymbolColumns& c : input.symbols) s.returns.push_back(BarReturns(*c.bars));
  return s;
}

// Whether the signal varies over the training units; *first is its first finite value.
bool Varies(const MineInput& input, const Setup& s, size_t sig, double* first) {
  *first = kNaN;
  for (const Unit& u : s.train_units) {
    const double* x = input.symbols[u.symbol].values[sig].data();
    for (int32_t t = u.begin; t < u.end; ++t) {
      if (!std::isfinite(x[t])) continue;
      if (std::isnan(*first)) {
        *first = x[t];
      } else if (x[t] != *first) {
        return true;
      }
    }
  }
  return false;
}

// The values a signal takes on the training range when they are few (at most kMaxDistinct),
// with their counts per training date.
constexpr size_t kMaxDistinct = 16;
struct DistinctCounts {
  bool ok = false;
  std::vector<double> values;   // sorted
  std::vector<int64_t> counts;  // (dates, values)
  // Quantiles' order statistics over the dates passing `use`.
  template <typename Use>
  void Quantiles(Use&& use, double q_lo, double q_hi, double* lo, double* hi) const {
    const size_t m = values.size();
    std::array<int64_t, kMaxDistinct> total{};
    int64_t n = 0;
    const size_t dates = counts.size() / m;
    for (size_t d = 0; d < dates; ++d) {
      if (!use(static_cast<int32_t>(d))) continue;
      for (size_t k = 0; k < m; ++k) total[k] += counts[d * m + k];
    }
    for (size_t k = 0; k < m; ++k) n += total[k];
    auto statistic = [&](int64_t j) {  // the j-th smallest (0-based)
      int64_t below = 0;
      for (size_t k = 0; k < m; ++k) {
        below += total[k];
        if (j < below) return values[k];
      }
      return values[m - 1];
    };
    auto quantile = [&](double q) {
      if (n <= 0) return kNaN;
      const double pos = q * static_cast<double>(n - 1);
      const int64_t k = static_cast<int64_t>(std::floor(pos));
      const double frac = pos - static_cast<double>(k);
      const double a = statistic(k);
      if (frac == 0 || k + 1 >= n) return a;
      return a + frac * (statistic(k + 1) - a);
    };
    *lo = quantile(q_lo);
    *hi = quantile(q_hi);
  }
};

DistinctCounts CountDistinct(const MineInput& input, const Setup& s, size_t sig) {
  DistinctCounts c;
  for (const Unit& u : s.train_units) {
    const double* x = input.symbols[u.symbol].values[sig].data();
    for (int32_t t = u.begin; t < u.end; ++t) {
      if (!std::isfinite(x[t])) continue;
      const auto it = std::lower_bound(c.values.begin(), c.values.end(), x[t]);
      if (it != c.values.end() && *it == x[t]) continue;
      if (c.values.size() == kMaxDistinct) return c;  // too many: not ok
      c.values.insert(it, x[t]);
    }
  }
  if (c.values.empty()) return c;
  const size_t m = c.values.size();
  c.counts.assign(static_cast<size_t>(s.n_dates) * m, 0);
  for (const Unit& u : s.train_units) {
    const double* x = input.symbols[u.symbol].values[sig].data();
    int64_t* row = c.counts.data() + static_cast<size_t>(u.date_index) * m;
    for (int32_t t = u.begin; t < u.end; ++t) {
      if (!std::isfinite(x[t])) continue;
      ++row[std::lower_bound(c.values.begin(), c.values.end(), x[t]) - c.values.begin()];
    }
  }
  c.ok = true;
  return c;
}

// Scores one non-constant signal: CV over the folds for both signs, the better sign, the
// final thresholds, the training P&L (*chosen_pnl) and both signs' Sharpe (*sharpes), the
// validation P&L.
void ScoreSignal(const MineInput& input, const MineOptions& options, const Setup& s, size_t sig,
                 std::vector<double>& buffer, SignalResult& r, std::vector<double>* chosen_pnl,
                 std::vector<double>* sharpes) {
  const bool sharpe = options.metric == "sharpe";
  const int folds = options.folds;
  // A signal with few distinct values on the training range (a q-variant, a flag) has its
  // quantiles counted instead of selected: per training date, how often each value occurs;
  // a fit sums the dates it uses. The same order statistics as Quantiles(), in O(dates).
  const DistinctCounts few = CountDistinct(input, s, sig);
  // Fits the quantiles on the training units whose date index passes `use`.
  auto fit = [&](auto&& use, double* q_lo, double* q_hi) {
    if (few.ok) {
      few.Quantiles(use, options.lower_q, options.upper_q, q_lo, q_hi);
      return;
    }
    int64_t n = 0;
    for (const Unit& u : s.train_units) {
      if (!use(u.date_index)) continue;
      const double* x = input.symbols[u.symbol].values[sig].data();
      for (int32_t t = u.begin; t < u.end; ++t) {
        if (std::isfinite(x[t])) buffer[n++] = x[t];
      }
    }
    Quantiles(buffer.data(), n, options.lower_q, options.upper_q, q_lo, q_hi);
  };
  auto unit_pnl = [&](const Unit& u, double q_lo, double q_hi) {
    return PnlWithReturns(s.returns[u.symbol].data(), input.symbols[u.symbol].values[sig].data(),
                          u.begin, u.end, q_lo, q_hi, options.cost_rate);
  };
  std::vector<double> plus, minus;
  r.fold_scores.assign(folds, 0.0);
  std::vector<double> other_scores(folds, 0.0);
  for (int f = 0; f < folds; ++f) {
    double q_lo, q_hi;
    fit([&](int32_t d) { return FitsOn(d, s.n_dates, folds, f, options.embargo); }, &q_lo, &q_hi);
    plus.clear();
    minus.clear();
    for (size_t i = s.fold_unit_begin[f]; i < s.fold_unit_begin[f + 1]; ++i) {
      const UnitPnl p = unit_pnl(s.train_units[i], q_lo, q_hi);
      plus.push_back(p.gross - p.cost);
      minus.push_back(-p.gross - p.cost);
    }
    r.fold_scores[f] = Score(plus, sharpe);
    other_scores[f] = Score(minus, sharpe);
  }
  double cv_plus = 0, cv_minus = 0;
  for (int f = 0; f < folds; ++f) {
    cv_plus += r.fold_scores[f] / folds;
    cv_minus += other_scores[f] / folds;
  }
  r.sign = cv_minus > cv_plus ? -1 : 1;
  if (r.sign < 0) r.fold_scores.swap(other_scores);
  r.cv_score = r.sign > 0 ? cv_plus : cv_minus;
  r.cv_score_other = r.sign > 0 ? cv_minus : cv_plus;
  // Final thresholds and the training P&L of both signs.
  fit([](int32_t) { return true; }, &r.q_lo, &r.q_hi);
  plus.clear();
  minus.clear();
  for (const Unit& u : s.train_units) {
    const UnitPnl p = unit_pnl(u, r.q_lo, r.q_hi);
    plus.push_back(p.gross - p.cost);
    minus.push_back(-p.gross - p.cost);
  }
  sharpes->push_back(UnitSharpe(plus));
  sharpes->push_back(UnitSharpe(minus));
  *chosen_pnl = r.sign > 0 ? plus : minus;
  r.train_mean = Score(*chosen_pnl, false);
  r.train_sharpe = UnitSharpe(*chosen_pnl);
  r.val_mean = r.val_sharpe = r.val_total = kNaN;
  if (options.has_validation) {
    std::vector<double> v;
    for (const Unit& u : s.val_units) {
      const UnitPnl p = unit_pnl(u, r.q_lo, r.q_hi);
      v.push_back(r.sign * p.gross - p.cost);
    }
    r.val_units = static_cast<int64_t>(v.size());
    r.val_total = 0;
    for (double x : v) r.val_total += x;
    if (!v.empty()) {
      r.val_mean = Score(v, false);
      r.val_sharpe = UnitSharpe(v);
    }
  }
}

// The greedy filter over the ranked list, on the correlations of every ranked pair.
void FilterCorrelated(const MineInput& input, const MineOptions& options, const Setup& s,
                      MineResult& result) {
  std::vector<std::vector<const double*>> pieces;
  std::vector<int32_t> lengths;
  for (const Unit& u : s.train_units) lengths.push_back(u.end - u.begin);
  for (int sig : result.ranked) {
    std::vector<const double*> p;
    for (const Unit& u : s.train_units) {
      p.push_back(input.symbols[u.symbol].values[sig].data() + u.begin);
    }
    pieces.push_back(std::move(p));
  }
  const std::vector<std::vector<double>> corr = CorrelationMatrix(pieces, lengths);
  std::vector<size_t> kept_rank;  // positions in result.ranked
  for (size_t a = 0; a < result.ranked.size(); ++a) {
    SignalResult& r = result.signals[result.ranked[a]];
    for (size_t k = 0; k < kept_rank.size() && !r.kept; ++k) {
      const double rho = corr[a][kept_rank[k]];
      if (std::isfinite(rho) && std::fabs(rho) > options.max_corr) {
        r.cluster = result.signals[result.kept[k]].name;
        r.cluster_corr = std::fabs(rho);
        break;
      }
    }
    if (!r.cluster.empty()) continue;
    r.kept = true;
    kept_rank.push_back(a);
    result.kept.push_back(result.ranked[a]);
  }
  result.kept_corr.assign(kept_rank.size(), std::vector<double>(kept_rank.size()));
  for (size_t a = 0; a < kept_rank.size(); ++a) {
    for (size_t b = 0; b < kept_rank.size(); ++b) {
      result.kept_corr[a][b] = a == b ? 1.0 : corr[kept_rank[a]][kept_rank[b]];
    }
  }
}

// One signal's rule with parameters `p` and sign `sign` on smoothed values xs[symbol]: the
// CV score over the training folds (thresholds fitted on each fold's fitting dates), and
// with `train_pnl` the training P&L per unit with thresholds fitted on the whole range.
double RuleCv(const MineOptions& options, const Setup& s,
              const std::vector<std::vector<double>>& xs, int sign, const RuleParams& p,
              std::vector<double>& buffer, std::vector<double>* train_pnl = nullptr) {
  const bool sharpe = options.metric == "sharpe";
  auto fit = [&](auto&& use, double* q_lo, double* q_hi) {
    int64_t n = 0;
    for (const Unit& u : s.train_units) {
      if (!use(u.date_index)) continue;
      const double* x = xs[u.symbol].data();
      for (int32_t t = u.begin; t < u.end; ++t) {
        if (std::isfinite(x[t])) buffer[n++] = x[t];
      }
    }
    Quantiles(buffer.data(), n, p.lower_q, p.upper_q, q_lo, q_hi);
  };
  auto unit = [&](const Unit& u, double q_lo, double q_hi) {
    const UnitPnl r = RulePnlWithReturns(s.returns[u.symbol].data(), xs[u.symbol].data(), u.begin,
                                         u.end, q_lo, q_hi, p.strength, options.cost_rate);
    return sign * r.gross - r.cost;
  };
  if (train_pnl != nullptr) {
    double q_lo, q_hi;
    fit([](int32_t) { return true; }, &q_lo, &q_hi);
    train_pnl->clear();
    for (const Unit& u : s.train_units) train_pnl->push_back(unit(u, q_lo, q_hi));
    return 0;
  }
  double cv = 0;
  std::vector<double> pnl;
  for (int f = 0; f < options.folds; ++f) {
    double q_lo, q_hi;
    fit([&](int32_t d) { return FitsOn(d, s.n_dates, options.folds, f, options.embargo); }, &q_lo,
        &q_hi);
    pnl.clear();
    for (size_t i = s.fold_unit_begin[f]; i < s.fold_unit_begin[f + 1]; ++i) {
      pnl.push_back(unit(s.train_units[i], q_lo, q_hi));
    }
    cv += Score(pnl, sharpe) / options.folds;
  }
  return cv;
}

// Simulated annealing over one signal's rule parameters (docs/mining.md "Tuning"), from the
// untuned rule, maximising the CV score on the training folds; its own random stream
// (tune_seed, signal index), so results do not depend on the threads. Fills r.tuned_* and
// *train_pnl (the training P&L with the best parameters).
void TuneSignal(const MineInput& input, const MineOptions& options, const Setup& s, size_t sig,
                std::vector<double>& buffer, SignalResult& r, std::vector<double>* train_pnl) {
  Rng rng(options.tune_seed * 1000003ULL + sig);
  std::map<int, std::vector<std::vector<double>>> smoothed;  // by span
  auto xs = [&](int span) -> const std::vector<std::vector<double>>& {
    auto it = smoothed.find(span);
    if (it != smoothed.end()) return it->second;
    std::vector<std::vector<double>> v;
    for (const SymbolColumns& c : input.symbols) v.push_back(SmoothSignal(c.values[sig], span));
    return smoothed.emplace(span, std::move(v)).first->second;
  };
  RuleParams cur{options.lower_q, options.upper_q, 1, 1};
  double cur_score = RuleCv(options, s, xs(1), r.sign, cur, buffer);
  RuleParams best = cur;
  double best_score = cur_score;
  // The temperature starts at the spread of the untuned fold scores over √k (the score's
  // noise) and falls linearly to 0.
  double spread = 0;
  for (double f : r.fold_scores) spread += (f - r.cv_score) * (f - r.cv_score);
  const double t0 = std::max(
      1e-12, std::sqrt(spread / std::max(1, options.folds - 1)) / std::sqrt(options.folds));
  int64_t evaluations = 1;
  for (int k = 0; k < options.tune_iterations; ++k) {
    RuleParams next = cur;
    switch (rng.UniformInt(4)) {
      case 0:
        next.lower_q = std::clamp(cur.lower_q + rng.Normal(0, 0.05), 0.02, cur.upper_q - 0.05);
        break;
      case 1:
        next.upper_q = std::clamp(cur.upper_q + rng.Normal(0, 0.05), cur.lower_q + 0.05, 0.98);
        break;
      case 2:
        next.smoothing = std::clamp(
            cur.smoothing + (rng.UniformInt(2) ? 1 : -1) * static_cast<int>(1 + rng.UniformInt(3)),
            1, 30);
        break;
      default:
        next.strength = std::clamp(cur.strength + (rng.UniformInt(2) ? 1 : -1), 1, 6);
    }
    const double score = RuleCv(options, s, xs(next.smoothing), r.sign, next, buffer);
    ++evaluations;
    const double temperature = t0 * (1.0 - static_cast<double>(k) / options.tune_iterations);
    if (score >= cur_score || rng.Uniform() < std::exp((score - cur_score) / temperature)) {
      cur = next;
      cur_score = score;
    }
    if (score > best_score) {
      best = next;
      best_score = score;
    }
  }
  r.tuned = true;
  r.tuned_lower_q = best.lower_q;
  r.tuned_upper_q = best.upper_q;
  r.tuned_smoothing = best.smoothing;
  r.tuned_strength = best.strength;
  r.tuned_cv_score = best_score;
  r.tune_evaluations = evaluations;
  RuleCv(options, s, xs(best.smoothing), r.sign, best, buffer, train_pnl);
  r.tuned_train_sharpe = UnitSharpe(*train_pnl);
}

// N, V, SR0, every ranked signal's DSR, the survivors among the kept ones.
void Deflate(const MineOptions& options, const std::vector<double>& sharpes,
             const std::vector<std::vector<double>>& chosen_pnl,
             const std::vector<std::vector<double>>& tuned_pnl, int64_t tune_evaluations,
             MineResult& result) {
  result.trials = static_cast<int64_t>(sharpes.size()) + tune_evaluations;
  double mean = 0;
  for (double v : sharpes) mean += v;
  mean /= static_cast<double>(sharpes.size());
  double ss = 0;
  for (double v : sharpes) ss += (v - mean) * (v - mean);
  result.sharpe_variance = sharpes.size() > 1 ? ss / static_cast<double>(sharpes.size() - 1) : 0;
  // The benchmark is the best of N skill-less trials: their Sharpe estimates vary by
  // sampling alone (dsr.h, NullSharpeVariance). The cross-section's variance above, which
  // skill and the candidates' correlation widen, is reported but not used.
  result.null_sharpe_variance = NullSharpeVariance(result.train_units);
  const double n = static_cast<double>(result.trials);
  result.sr0 = ExpectedMaxSharpe(n, result.null_sharpe_variance);
  for (int sig : result.ranked) {
    SignalResult& r = result.signals[sig];
    const Dsr d = DeflatedSharpe(chosen_pnl[sig], n, result.null_sharpe_variance);
    r.dsr = d.dsr;
    r.sr0 = d.sr0;
    if (r.kept && d.dsr >= options.dsr_threshold) ++result.survivors;
    if (r.tuned) {
      r.tuned_dsr = DeflatedSharpe(tuned_pnl[sig], n, result.null_sharpe_variance).dsr;
    }
  }
  result.expected_false =
      ExpectedFalseDiscoveries(static_cast<int64_t>(result.kept.size()), options.dsr_threshold,
                               result.sr0, result.train_units);
}

}  // namespace

Result<MineResult> Mine(const MineInput& input, const MineOptions& options) {
  RLT_RETURN_IF_ERROR(ValidateMineOptions(options));
  const size_t n_signals = input.names.size();
  RLT_CHECK(input.regime.size() == n_signals);
  if (n_signals == 0) return Status::InvalidArgument("no candidate signals to mine");
  if (input.symbols.empty()) return Status::InvalidArgument("no bars to mine");
  for (const SymbolColumns& c : input.symbols) {
    RLT_CHECK(c.bars != nullptr && c.values.size() == n_signals);
    for (const auto& col : c.values) RLT_CHECK(col.size() == c.bars->size());
  }
  MineResult result;
  RLT_ASSIGN_OR_RETURN(Setup s, BuildSetup(input, options, result));
  result.signals.resize(n_signals);
  std::vector<std::vector<double>> chosen_pnl(n_signals);
  std::vector<uint8_t> varies(n_signals, 0);
  for (size_t sig = 0; sig < n_signals; ++sig) {
    SignalResult& r = result.signals[sig];
    r.name = input.names[sig];
    r.regime = input.regime[sig] != 0;
    double first;
    if (!Varies(input, s, sig, &first)) {
      r.constant = true;
      if (input.named) {
        return Status::InvalidArgument(
            "signal '" + r.name + "' is " +
            (std::isnan(first) ? std::string("never defined") : "constant (" + Fmt(first) + ")") +
            " on the training range " + options.train.ToString() +
            ": it cannot be ranked; leave it out of the signal list");
      }
      continue;
    }
    varies[sig] = 1;
    result.ranked.push_back(static_cast<int>(sig));
  }
  // Signals are scored independently: spread over the threads (signal i on thread i mod T),
  // each with its own buffer; the results land in per-signal slots, so they do not depend
  // on the thread count.
  std::vector<std::array<double, 2>> pair_sharpes(n_signals);
  WorkerPool pool(std::max(1, std::min<int>(options.threads, static_cast<int>(n_signals))));
  pool.set_inline_below_seconds(0);
  pool.Run([&](int w) {
    std::vector<double> buffer(static_cast<size_t>(s.train_bars));
    std::vector<double> two;
    for (size_t sig = static_cast<size_t>(w); sig < n_signals;
         sig += static_cast<size_t>(pool.num_workers())) {
      if (!varies[sig]) continue;
      two.clear();
      ScoreSignal(input, options, s, sig, buffer, result.signals[sig], &chosen_pnl[sig], &two);
      pair_sharpes[sig] = {two[0], two[1]};
    }
  });
  std::vector<double> sharpes;  // of every (signal, sign) pair tried, in signal order
  for (size_t sig = 0; sig < n_signals; ++sig) {
    if (varies[sig])
      sharpes.insert(sharpes.end(), pair_sharpes[sig].begin(), pair_sharpes[sig].end());
  }
  if (result.ranked.empty()) {
    return Status::InvalidArgument("every candidate signal is constant on the training range " +
                                   options.train.ToString() + ": nothing to rank");
  }
  std::stable_sort(result.ranked.begin(), result.ranked.end(), [&](int a, int b) {
    return result.signals[a].cv_score > result.signals[b].cv_score;
  });
  for (size_t i = 0; i < result.ranked.size(); ++i) {
    result.signals[result.ranked[i]].rank = static_cast<int>(i + 1);
  }
  FilterCorrelated(input, options, s, result);
  // Tuning the best kept signals, one per thread at a time.
  std::vector<std::vector<double>> tuned_pnl(n_signals);
  const size_t tune =
      std::min(result.kept.size(), static_cast<size_t>(std::max(0, options.tune_top)));
  pool.Run([&](int w) {
    std::vector<double> buffer(static_cast<size_t>(s.train_bars));
    for (size_t i = static_cast<size_t>(w); i < tune;
         i += static_cast<size_t>(pool.num_workers())) {
      const size_t sig = static_cast<size_t>(result.kept[i]);
      TuneSignal(input, options, s, sig, buffer, result.signals[sig], &tuned_pnl[sig]);
    }
  });
  int64_t tune_evaluations = 0;
  for (const SignalResult& r : result.signals) tune_evaluations += r.tune_evaluations;
  Deflate(options, sharpes, chosen_pnl, tuned_pnl, tune_evaluations, result);
  return result;
}

}  // namespace rlt::mine
