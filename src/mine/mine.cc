#include "mine/mine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

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

}  // namespace

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

// Correlation over centred, finite-or-NaN columns: two passes for accuracy (the mean of
// the pairwise-finite bars first), with a fast path when both columns are finite
// everywhere (then the centred columns and their norms are precomputed).
struct CorrColumn {
  std::vector<double> values;  // training bars pooled over symbols
  bool all_finite = true;
  std::vector<double> centred;  // when all_finite: values − mean
  double norm = 0;              // when all_finite: ||centred||
};

double ColumnCorrelation(const CorrColumn& a, const CorrColumn& b) {
  const int64_t n = static_cast<int64_t>(a.values.size());
  if (a.all_finite && b.all_finite) {
    if (!(a.norm > 0) || !(b.norm > 0)) return kNaN;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    const double* x = a.centred.data();
    const double* y = b.centred.data();
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      s0 += x[i] * y[i];
      s1 += x[i + 1] * y[i + 1];
      s2 += x[i + 2] * y[i + 2];
      s3 += x[i + 3] * y[i + 3];
    }
    for (; i < n; ++i) s0 += x[i] * y[i];
    return ((s0 + s1) + (s2 + s3)) / (a.norm * b.norm);
  }
  return PairwiseCorrelation(a.values.data(), b.values.data(), n);
}

}  // namespace

namespace {

// What every signal's scoring shares: the units, the folds, the bar returns, one buffer.
struct Setup {
  std::vector<Unit> train_units, val_units;  // sorted by (date, symbol)
  int64_t n_dates = 0;                       // distinct training dates
  std::vector<size_t> fold_unit_begin;       // fold f's units: [begin[f], begin[f + 1])
  std::vector<std::vector<double>> returns;  // per symbol: BarReturns
  int64_t train_bars = 0;
  std::vector<double> buffer;  // (train_bars) quantile fitting
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
  s.buffer.resize(static_cast<size_t>(s.train_bars));
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

// Scores one non-constant signal: CV over the folds for both signs, the better sign, the
// final thresholds, the training P&L (*chosen_pnl) and both signs' Sharpe (*sharpes), the
// validation P&L.
void ScoreSignal(const MineInput& input, const MineOptions& options, Setup& s, size_t sig,
                 SignalResult& r, std::vector<double>* chosen_pnl, std::vector<double>* sharpes) {
  const bool sharpe = options.metric == "sharpe";
  const int folds = options.folds;
  // Fits the quantiles on the training units whose date index passes `use`.
  auto fit = [&](auto&& use, double* q_lo, double* q_hi) {
    int64_t n = 0;
    for (const Unit& u : s.train_units) {
      if (!use(u.date_index)) continue;
      const double* x = input.symbols[u.symbol].values[sig].data();
      for (int32_t t = u.begin; t < u.end; ++t) {
        if (std::isfinite(x[t])) s.buffer[n++] = x[t];
      }
    }
    *q_lo = Quantile(s.buffer.data(), n, options.lower_q);
    *q_hi = Quantile(s.buffer.data(), n, options.upper_q);
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

// The signal's values on the training bars, pooled over the units (and, when all are
// finite, centred with their norm).
CorrColumn TrainingColumn(const MineInput& input, const Setup& s, int sig) {
  CorrColumn c;
  c.values.reserve(static_cast<size_t>(s.train_bars));
  for (const Unit& u : s.train_units) {
    const double* x = input.symbols[u.symbol].values[sig].data();
    c.values.insert(c.values.end(), x + u.begin, x + u.end);
  }
  double mean = 0;
  for (double v : c.values) {
    if (!std::isfinite(v)) {
      c.all_finite = false;
      return c;
    }
    mean += v;
  }
  if (c.values.empty()) return c;
  mean /= static_cast<double>(c.values.size());
  c.centred.resize(c.values.size());
  double ss = 0;
  for (size_t i = 0; i < c.values.size(); ++i) {
    c.centred[i] = c.values[i] - mean;
    ss += c.centred[i] * c.centred[i];
  }
  c.norm = std::sqrt(ss);
  return c;
}

// The greedy filter over the ranked list.
void FilterCorrelated(const MineInput& input, const MineOptions& options, const Setup& s,
                      MineResult& result) {
  std::vector<CorrColumn> kept_columns;
  for (int sig : result.ranked) {
    CorrColumn c = TrainingColumn(input, s, sig);
    SignalResult& r = result.signals[sig];
    std::vector<double> corr_with_kept;
    bool dropped = false;
    for (size_t k = 0; k < kept_columns.size() && !dropped; ++k) {
      const double rho = ColumnCorrelation(c, kept_columns[k]);
      corr_with_kept.push_back(rho);
      if (std::isfinite(rho) && std::fabs(rho) > options.max_corr) {
        r.cluster = result.signals[result.kept[k]].name;
        r.cluster_corr = std::fabs(rho);
        dropped = true;
      }
    }
    if (dropped) continue;
    r.kept = true;
    for (size_t k = 0; k < corr_with_kept.size(); ++k) {
      result.kept_corr[k].push_back(corr_with_kept[k]);
    }
    corr_with_kept.push_back(1.0);
    result.kept_corr.push_back(corr_with_kept);
    result.kept.push_back(sig);
    kept_columns.push_back(std::move(c));
  }
}

// N, V, SR0, every ranked signal's DSR, the survivors among the kept ones.
void Deflate(const MineOptions& options, const std::vector<double>& sharpes,
             const std::vector<std::vector<double>>& chosen_pnl, MineResult& result) {
  result.trials = static_cast<int64_t>(sharpes.size());
  double mean = 0;
  for (double v : sharpes) mean += v;
  mean /= static_cast<double>(sharpes.size());
  double ss = 0;
  for (double v : sharpes) ss += (v - mean) * (v - mean);
  result.sharpe_variance = sharpes.size() > 1 ? ss / static_cast<double>(sharpes.size() - 1) : 0;
  const double n = static_cast<double>(result.trials);
  result.sr0 = ExpectedMaxSharpe(n, result.sharpe_variance);
  for (int sig : result.ranked) {
    SignalResult& r = result.signals[sig];
    const Dsr d = DeflatedSharpe(chosen_pnl[sig], n, result.sharpe_variance);
    r.dsr = d.dsr;
    r.sr0 = d.sr0;
    if (r.kept && d.dsr >= options.dsr_threshold) ++result.survivors;
  }
  result.expected_false =
      ExpectedFalseDiscoveries(static_cast<int64_t>(result.kept.size()), options.dsr_threshold);
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
  std::vector<double> sharpes;  // of every (signal, sign) pair tried
  std::vector<std::vector<double>> chosen_pnl(n_signals);
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
    ScoreSignal(input, options, s, sig, r, &chosen_pnl[sig], &sharpes);
    result.ranked.push_back(static_cast<int>(sig));
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
  Deflate(options, sharpes, chosen_pnl, result);
  return result;
}

}  // namespace rlt::mine
