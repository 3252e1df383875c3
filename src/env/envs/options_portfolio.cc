// rltrade env: OptionsPortfolioEnv implementation (see options_portfolio.h).
#include "env/envs/options_portfolio.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/options.h"
#include "market/csv.h"
#include "market/date_range.h"
#include "market/option_chain_csv.h"
#include "market/option_chain_pricing.h"
#include "market/option_chain_synth.h"
#include "pricing/pricing.h"

namespace rlt::env {
namespace {

constexpr int kHistoryDays = 50;     // SMA50: the first day with every feature
constexpr int kRecentReturns = 20;   // the shaped reward's Sharpe window
constexpr double kRuinFloor = 1e-4;  // log(V'/V) of a ruin counts as log(kRuinFloor)
constexpr int kMarginHalvings = 12;
constexpr int kMaxBuckets = 256;
constexpr int kMaxDays = 200000;
constexpr double kMaxChainContracts = 1e7;  // ~2 GB of chain while preparing

Status Invalid(const std::string& key, const std::string& what) {
  return Status::InvalidArgument("[env] " + key + ": " + what);
}

// The chain the environment lists: its chain_* keys, with the environment's rate, dividend
// and seed.
market::ChainSynthOptions ChainOptions(const OptionsPortfolioOptions& o) {
  market::ChainSynthOptions c = o.chain;
  c.rate = o.rate;
  c.dividend = o.dividend;
  c.seed = o.synthetic_seed;
  return c;
}

Status Validate(const OptionsPortfolioOptions& o) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  auto nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  if (o.tenors.empty() || o.moneyness.empty()) {
    return Invalid(o.tenors.empty() ? "tenors" : "moneyness", "expected at least one value");
  }
  if (o.tenors.size() * o.moneyness.size() * 2 > kMaxBuckets) {
    return Invalid("tenors", "tenors x moneyness x 2 must be at most " +
                                 std::to_string(kMaxBuckets) + " buckets");
  }
  for (int t : o.tenors) {
    if (t < 1 || t > 3650) return Invalid("tenors", "each tenor must be 1 to 3650 days");
  }
  for (double m : o.moneyness) {
    if (!(m >= 0.2 && m <= 5)) return Invalid("moneyness", "each value must be in [0.2, 5]");
  }
  if (o.synthetic_days < kHistoryDays + 2 || o.synthetic_days > kMaxDays) {
    return Invalid("synthetic_days", "expected " + std::to_string(kHistoryDays + 2) + " to " +
                                         std::to_string(kMaxDays) + ", got " +
                                         std::to_string(o.synthetic_days));
  }
  if (!positive(o.synthetic_spot) || o.synthetic_spot > 1e9) {
    return Invalid("synthetic_spot", "expected a price in (0, 1e9]");
  }
  if (!std::isfinite(o.synthetic_drift) || std::fabs(o.synthetic_drift) > 2) {
    return Invalid("synthetic_drift", "expected a drift in [-2, 2] per year");
  }
  if (!positive(o.synthetic_vol) || o.synthetic_vol > 3) {
    return Invalid("synthetic_vol", "expected a vol in (0, 3]");
  }
  if (!nonneg(o.synthetic_alpha) || !nonneg(o.synthetic_beta) ||
      o.synthetic_alpha + o.synthetic_beta >= 1) {
    return Invalid("synthetic_alpha", "expected alpha, beta >= 0 with alpha + beta < 1");
  }
  if (!std::isfinite(o.rate) || std::fabs(o.rate) > 1) return Invalid("rate", "expected [-1, 1]");
  if (!std::isfinite(o.dividend) || std::fabs(o.dividend) > 1) {
    return Invalid("dividend", "expected [-1, 1]");
  }
  if (!(o.max_position > 0 && o.max_position <= 10)) {
    return Invalid("max_position", "expected (0, 10]");
  }
  if (!(o.multiplier >= 1 && o.multiplier <= 1e6))
    return Invalid("multiplier", "expected [1, 1e6]");
  if (!nonneg(o.fee_per_contract) || o.fee_per_contract > 1e6) {
    return Invalid("fee_per_contract", "expected [0, 1e6]");
  }
  if (!(o.stock_cost >= 0 && o.stock_cost < 0.5)) return Invalid("stock_cost", "expected [0, 0.5)");
  if (!nonneg(o.min_option_price) || o.min_option_price > 1e6) {
    return Invalid("min_option_price", "expected [0, 1e6]");
  }
  if (!positive(o.initial_cash) || o.initial_cash > 1e15) {
    return Invalid("initial_cash", "expected (0, 1e15]");
  }
  if (!(o.short_margin >= 0 && o.short_margin <= 10) ||
      !(o.min_margin >= 0 && o.min_margin <= 10) ||
      !(o.stock_margin >= 0 && o.stock_margin <= 10)) {
    return Invalid("short_margin", "short_margin, min_margin and stock_margin must be in [0, 10]");
  }
  // The chain's own checks, after rate and dividend (which it shares): its messages start
  // with the field's name, which is the key here under the chain_ prefix.
  if (Status chain = market::ValidateChainSynthOptions(ChainOptions(o)); !chain.ok()) {
    return Status::InvalidArgument("[env] chain_" + chain.message());
  }
  if (o.missing_quote != "surface" && o.missing_quote != "last") {
    return Invalid("missing_quote",
                   "expected \"surface\" or \"last\", got '" + o.missing_quote + "'");
  }
  if (o.episode_days < 1 || o.episode_days > kMaxDays) {
    return Invalid("episode_days", "expected 1 to " + std::to_string(kMaxDays));
  }
  if (!nonneg(o.drawdown_penalty) || !nonneg(o.turnover_penalty) || o.drawdown_penalty > 1e6 ||
      o.turnover_penalty > 1e6) {
    return Invalid("drawdown_penalty", "penalties must be in [0, 1e6]");
  }
  return Status::Ok();
}

// The chain's size before it is built, for `days` days: listed strikes per expiry x
// expiries x 2 rights per day (a lower bound: strikes listed earlier stay listed), ~200
// bytes per contract while preparing.
Status CheckChainSize(const OptionsPortfolioOptions& o, int days) {
  const market::ChainSynthOptions& c = o.chain;
  const double grid = (c.moneyness_max - c.moneyness_min) / c.moneyness_step + 1;
  const double per_day = grid * (c.monthly_expiries + c.weekly_horizon_days / 7.0 + 1) * 2;
  if (!(std::isfinite(grid) && grid > 0) || per_day * days <= kMaxChainContracts) {
    return Status::Ok();  // a bad grid is the chain options' own error
  }
  return Invalid("chain_moneyness_step",
                 "the chain would list at least " + std::to_string(static_cast<int64_t>(per_day)) +
                     " contracts a day over " + std::to_string(days) +
                     " days, above the limit of " +
                     std::to_string(static_cast<int64_t>(kMaxChainContracts)) +
                     " contracts; widen chain_moneyness_step, list fewer expiries "
                     "(chain_monthly_expiries, chain_weekly_horizon_days) or use fewer days "
                     "(range, synthetic_days)");
}

// Days since 1970-01-01 of a yyyymmdd key.
int32_t DaysOfKey(int32_t key) {
  return static_cast<int32_t>(DaysFromCivil(key / 10000, key / 100 % 100, key % 100));
}

struct Underlying {
  std::vector<int32_t> dates;  // yyyymmdd
  std::vector<double> close;
};

Result<Underlying> SyntheticUnderlying(const OptionsPortfolioOptions& o) {
  Result<market::DateRange> start = market::DateRange::Parse(o.synthetic_start + ":");
  if (!start.ok() || start->first == 0) {
    return Invalid("synthetic_start",
                   "expected a date YYYY-MM-DD, got '" + o.synthetic_start + "'");
  }
  Underlying u;
  Rng rng(o.synthetic_seed);
  const double dt = 1.0 / 252;
  const double long_var = o.synthetic_vol * o.synthetic_vol * dt;
  const double omega = long_var * (1 - o.synthetic_alpha - o.synthetic_beta);
  double h = long_var, s = o.synthetic_spot;
  int64_t day = DaysOfKey(start->first);
  while (static_cast<int>(u.close.size()) < o.synthetic_days) {
    if (Weekday(day) != 0 && Weekday(day) != 6) {  // Monday..Friday
      if (!u.close.empty()) {
        const double z = rng.Normal();
        const double shock = std::sqrt(h) * z;
        s *= std::exp(o.synthetic_drift * dt - h / 2 + shock);
        h = omega + o.synthetic_alpha * shock * shock + o.synthetic_beta * h;
      }
      u.dates.push_back(DateKey(CivilFromDays(day)));
      u.close.push_back(s);
    }
    ++day;
  }
  return u;
}

Result<Underlying> FileUnderlying(const std::string& path) {
  market::CsvReadOptions ro;
  RLT_ASSIGN_OR_RETURN(market::MarketData md, market::ReadBarsCsv(path, ro));
  if (md.symbols.size() != 1) {
    return Status::InvalidArgument("[env] underlying '" + path + "' holds " +
                                   std::to_string(md.symbols.size()) +
                                   " symbols; expected one (a daily close series)");
  }
  const market::Bars& bars = md.symbols.front();
  Underlying u;
  for (const market::Session& s : bars.sessions) {
    u.dates.push_back(s.date);
    u.close.push_back(bars.close[s.end - 1]);  // the day's last close
  }
  return u;
}

// Keeps the days of `range` plus kHistoryDays + 10 days of history before it; returns the
// index of the range's first day in the result.
Result<int> Restrict(Underlying* u, const std::string& range_text) {
  market::DateRange range;  // "" = every day
  if (!range_text.empty()) {
    Result<market::DateRange> parsed = market::DateRange::Parse(range_text);
    if (!parsed.ok()) return Invalid("range", parsed.status().message());
    range = *parsed;
  }
  int first = 0, last = static_cast<int>(u->dates.size());
  while (first < last && !range.Contains(u->dates[first])) ++first;
  int end = first;
  while (end < last && range.Contains(u->dates[end])) ++end;
  const int keep_from = std::max(0, first - kHistoryDays - 10);
  u->dates.assign(u->dates.begin() + keep_from, u->dates.begin() + end);
  u->close.assign(u->close.begin() + keep_from, u->close.begin() + end);
  return first - keep_from;
}

void UnderlyingFeatures(OptionsData* d) {
  const int n = d->num_days();
  const int f = OptionsData::kUnderlyingFeatures;
  d->underlying_features.assign(static_cast<size_t>(n) * f, 0.0f);
  std::vector<double> ret(n, 0.0);
  for (int t = 1; t < n; ++t) ret[t] = std::log(d->close[t] / d->close[t - 1]);
  auto vol = [&](int t, int w) {
    const int k = std::min(w, t);
    if (k < 2) return 0.0;
    double m = 0;
    for (int i = t - k + 1; i <= t; ++i) m += ret[i];
    m /= k;
    double ss = 0;
    for (int i = t - k + 1; i <= t; ++i) ss += (ret[i] - m) * (ret[i] - m);
    return std::sqrt(ss / (k - 1) * 252);
  };
  auto sma_gap = [&](int t, int w) {
    const int k = std::min(w, t + 1);
    double sum = 0;
    for (int i = t - k + 1; i <= t; ++i) sum += d->close[i];
    return d->close[t] / (sum / k) - 1;
  };
  auto momentum = [&](int t, int w) {
    return std::log(d->close[t] / d->close[std::max(0, t - w)]);
  };
  for (int t = 0; t < n; ++t) {
    float* row = &d->underlying_features[static_cast<size_t>(t) * f];
    row[0] = static_cast<float>(ret[t] * 100);
    row[1] = static_cast<float>(vol(t, 10));
    row[2] = static_cast<float>(vol(t, 20));
    row[3] = static_cast<float>(sma_gap(t, 20) * 10);
    row[4] = static_cast<float>(sma_gap(t, 50) * 10);
    row[5] = static_cast<float>(momentum(t, 5) * 10);
    row[6] = static_cast<float>(momentum(t, 20) * 10);
  }
}

using ContractKey = std::tuple<int32_t, int, double>;  // expiry (days), right, strike

ContractKey KeyOf(const market::OptionChain& chain, size_t i) {
  return {chain.expiry[i], static_cast<int>(chain.right[i]), chain.strike[i]};
}

// Bucket b's contract on day `day` of the chain: an index into the chain, or -1. Only
// offered contracts (ask > 0) are selected.
int64_t Select(const market::OptionChain& chain, size_t day, int tenor, double target_strike,
               market::OptionType right) {
  const int64_t begin = chain.day_begin[day], end = chain.day_begin[day + 1];
  const int32_t today = chain.dates[day];
  // The expiry nearest to today + tenor (ties: the later).
  int32_t best_expiry = -1;
  int64_t best_gap = 0;
  for (int64_t i = begin; i < end; ++i) {
    const int32_t e = chain.expiry[i];
    if (e <= today || e == best_expiry || !(chain.ask[i] > 0)) continue;
    const int64_t gap = std::llabs(static_cast<int64_t>(e) - (today + tenor));
    if (best_expiry < 0 || gap <= best_gap) {
      best_expiry = e;
      best_gap = gap;
    }
  }
  if (best_expiry < 0) return -1;
  int64_t best = -1;
  double best_dist = 0;
  for (int64_t i = begin; i < end; ++i) {
    if (chain.expiry[i] != best_expiry || chain.right[i] != right || !(chain.ask[i] > 0)) continue;
    const double dist = std::fabs(chain.strike[i] - target_strike);
    if (best < 0 || dist < best_dist) {
      best = i;
      best_dist = dist;
    }
  }
  return best;
}

// The chain index of `key` on day `day`, or -1.
int64_t Find(const market::OptionChain& chain, size_t day, const ContractKey& key) {
  for (int64_t i = chain.day_begin[day]; i < chain.day_begin[day + 1]; ++i) {
    if (KeyOf(chain, i) == key) return i;
  }
  return -1;
}

std::string DateText(int32_t days) { return FormatDate(DateKey(CivilFromDays(days))); }

// A chain file whose rows are American-style (a `style` or `exercise_style` column with A or
// American) is refused: the environment's implied vols, Greeks and surface marks are
// Black-Scholes-Merton, which misprices early exercise. The chain reader keeps no style, so
// the column is looked up here (plain comma-separated header and fields).
Status RefuseAmerican(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  auto norm = [](std::string_view f) {
    std::string out;
    for (char ch : f) {
      if (ch == '"' || ch == '_' || ch == ' ' || ch == '-' || ch == '/' || ch == '\r') continue;
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    return out;
  };
  auto split = [](std::string_view line) {
    std::vector<std::string_view> fields;
    size_t start = 0;
    for (size_t i = 0; i <= line.size(); ++i) {
      if (i == line.size() || line[i] == ',') {
        fields.push_back(line.substr(start, i - start));
        start = i + 1;
      }
    }
    return fields;
  };
  size_t pos = 0;
  int64_t line_no = 0;
  int column = -1;
  std::string header;
  while (pos < text.size()) {
    const size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    const std::vector<std::string_view> fields = split(line);
    if (line_no == 1) {
      for (size_t c = 0; c < fields.size(); ++c) {
        const std::string name = norm(fields[c]);
        if (name == "style" || name == "exercisestyle") {
          column = static_cast<int>(c);
          header = std::string(fields[c]);
        }
      }
      if (column < 0) return Status::Ok();  // no style column: European, as BSM assumes
      continue;
    }
    if (column >= static_cast<int>(fields.size())) continue;  // the reader reports short rows
    const std::string value = norm(fields[column]);
    if (value == "a" || value == "american") {
      return Status::InvalidArgument(
          "[env] chain_file " + path + ":" + std::to_string(line_no) + ": column '" + header +
          "' is '" + std::string(fields[column]) +
          "' (American exercise); the options environment prices European options only "
          "(Black-Scholes-Merton implied vols, Greeks and surface marks, which misprice early "
          "exercise). Use a chain of European options (index options such as SPX, SPXW)");
    }
  }
  return Status::Ok();
}

// With [env] underlying = a bar file beside chain_file: the file's close on each quote
// date replaces the chain's column, which must agree with it where it has one (within
// kUnderlyingMatch, relative: end-of-day chains quote the underlying's close, or a last
// print minutes before it); a quote date without a close in the bar file is an error.
constexpr double kUnderlyingMatch = 0.02;

Status ChainUnderlyingChecked(const OptionsPortfolioOptions& o, const market::OptionChain& chain,
                              const std::string& path, Underlying* u);

Status BarFileCloses(const OptionsPortfolioOptions& o, const market::OptionChain& chain,
                     const std::string& path, std::vector<double>* closes) {
  RLT_ASSIGN_OR_RETURN(const Underlying bars, FileUnderlying(o.underlying));
  std::map<int32_t, double> close_on;
  for (size_t i = 0; i < bars.dates.size(); ++i) close_on[bars.dates[i]] = bars.close[i];
  closes->assign(chain.num_days(), 0.0);
  for (size_t day = 0; day < chain.num_days(); ++day) {
    const int32_t date = DateKey(CivilFromDays(chain.dates[day]));
    const int64_t line =
        chain.day_begin[day] < chain.day_begin[day + 1] ? chain.line[chain.day_begin[day]] : 0;
    const auto it = close_on.find(date);
    if (it == close_on.end()) {
      return Status::InvalidArgument(fmt::format(
          "[env] chain_file {}:{}: quote date {} has no close in [env] underlying {}; give a "
          "bar file that covers the chain's quote dates",
          path, line, DateText(chain.dates[day]), o.underlying.str()));
    }
    const double listed = chain.underlying_price[day];
    if (std::isfinite(listed) && std::fabs(listed / it->second - 1.0) > kUnderlyingMatch) {
      return Status::InvalidArgument(fmt::format(
          "[env] chain_file {}:{}: field 'underlying price' = {} on {} does not match [env] "
          "underlying {}'s close {} ({:+.1f}%, more than {:g}%): the chain and the bar file "
          "are not of the same underlying (or the same dates); give the chain's own "
          "underlying's bars, or leave [env] underlying unset to use the chain's column",
          path, line, listed, DateText(chain.dates[day]), o.underlying.str(), it->second,
          100.0 * (listed / it->second - 1.0), 100.0 * kUnderlyingMatch));
    }
    (*closes)[day] = it->second;
  }
  return Status::Ok();
}

// The closes of a listed chain (its underlying column, or [env] underlying's bar file,
// which then replaces the column in *chain too) into *u, checked to cover `range`; `path`
// names the chain in messages.
Status ChainUnderlying(const OptionsPortfolioOptions& o, market::OptionChain* chain,
                       const std::string& path, Underlying* u) {
  if (chain->num_days() == 0) {
    return Status::DataError("[env] chain_file " + path + " holds no quotes");
  }
  if (o.underlying != "synthetic") {
    std::vector<double> closes;
    RLT_RETURN_IF_ERROR(BarFileCloses(o, *chain, path, &closes));
    chain->underlying_price = std::move(closes);
  }
  return ChainUnderlyingChecked(o, *chain, path, u);
}

// ChainUnderlying's checks of the closes in chain.underlying_price and of the coverage.
Status ChainUnderlyingChecked(const OptionsPortfolioOptions& o, const market::OptionChain& chain,
                              const std::string& path, Underlying* u) {
  const char* columns =
      "underlying_last, underlying_price, stock_price_close, S or spot (the underlying's close "
      "on each quote date)";
  size_t missing = 0;
  for (double s : chain.underlying_price) missing += std::isfinite(s) ? 0 : 1;
  if (missing == chain.num_days()) {
    return Status::InvalidArgument(
        "[env] chain_file " + path +
        " has no underlying price column; the options environment takes the underlying's "
        "closes from it. Expected one of the columns " +
        columns);
  }
  for (size_t day = 0; day < chain.num_days(); ++day) {
    if (!std::isfinite(chain.underlying_price[day])) {
      return Status::InvalidArgument("[env] chain_file " + path +
                                     ": the underlying price column is empty on quote date " +
                                     DateText(chain.dates[day]) + " (line " +
                                     std::to_string(chain.day_begin[day] < chain.day_begin[day + 1]
                                                        ? chain.line[chain.day_begin[day]]
                                                        : 0) +
                                     "); expected the underlying's close in " + columns);
    }
  }
  // Coverage: the range's days must lie within the file's quote dates, up to a week of
  // non-trading days at either end (a range starting on a holiday or ending on a weekend).
  if (!o.range.empty()) {
    Result<market::DateRange> parsed = market::DateRange::Parse(o.range);
    if (!parsed.ok()) return Invalid("range", parsed.status().message());
    const market::DateRange range = *parsed;
    const int32_t first = chain.dates.front(), last = chain.dates.back();
    bool any = false;
    for (int32_t day : chain.dates) any = any || range.Contains(DateKey(CivilFromDays(day)));
    constexpr int kSlackDays = 7;
    const bool covered = any &&
                         (range.first == 0 || first <= DaysOfKey(range.first) + kSlackDays) &&
                         (range.last == 0 || last >= DaysOfKey(range.last) - kSlackDays);
    if (!covered) {
      return Status::InvalidArgument(
          "[env] chain_file " + path + " has quote dates " + DateText(first) + " to " +
          DateText(last) + " (" + std::to_string(chain.num_days()) +
          " dates), which do not cover range " + range.ToString() +
          " (the [split] range trained or evaluated on); choose [split] ranges within those "
          "dates or a chain file that covers the range");
    }
  }
  for (size_t day = 0; day < chain.num_days(); ++day) {
    u->dates.push_back(DateKey(CivilFromDays(chain.dates[day])));
    u->close.push_back(chain.underlying_price[day]);
  }
  return Status::Ok();
}

// Reads chain_file: the chain and its closes, checked to be European and to cover `range`.
Result<market::OptionChain> ReadChainFile(const OptionsPortfolioOptions& o, Underlying* u) {
  RLT_ASSIGN_OR_RETURN(market::OptionChain chain,
                       market::ReadOptionChainCsv(o.chain_file, market::ChainReadOptions{}));
  RLT_RETURN_IF_ERROR(RefuseAmerican(o.chain_file));
  RLT_RETURN_IF_ERROR(ChainUnderlying(o, &chain, o.chain_file, u));
  return chain;
}

// The implied vol of strike `strike`, `time` years to expiry, on chain day `cd` from that
// day's quoted contracts (bid > 0, ask > 0, an implied vol solved from the mid): per expiry,
// at each strike the out-of-the-money right's vol (call at or above the forward, put
// below; the other right when it has none), linear in log-moneyness ln(K / F) between
// neighbouring strikes and flat beyond; across expiries, at the same ln(K / F), total
// variance iv^2 T linear in T between neighbouring expiries and the vol flat beyond.
// nullopt when the day has no such quote.
std::optional<double> SurfaceIv(const market::OptionChain& chain,
                                const market::ChainPricing& priced, size_t cd, double s,
                                double rate, double dividend, double strike, double time) {
  const int32_t today = chain.dates[cd];
  // expiry -> strike -> {call vol, put vol}
  std::map<int32_t, std::map<double, std::pair<double, double>>> points;
  for (int64_t i = chain.day_begin[cd]; i < chain.day_begin[cd + 1]; ++i) {
    if (!(chain.bid[i] > 0 && chain.ask[i] > 0) || chain.expiry[i] <= today ||
        priced.iv_source[i] != market::IvSource::kSolved) {
      continue;
    }
    auto& vols = points[chain.expiry[i]]
                     .try_emplace(chain.strike[i], std::nan(""), std::nan(""))
                     .first->second;
    (chain.right[i] == market::OptionType::kCall ? vols.first : vols.second) = priced.iv[i];
  }
  if (points.empty()) return std::nullopt;
  const double k = std::log(strike / (s * std::exp((rate - dividend) * time)));
  // The smile of one expiry at log-moneyness k.
  auto smile = [&](int32_t expiry, const std::map<double, std::pair<double, double>>& by_strike) {
    const double t = (expiry - today) / 365.0;
    const double forward = s * std::exp((rate - dividend) * t);
    double prev_k = 0, prev_iv = 0;
    bool have_prev = false;
    for (const auto& entry : by_strike) {
      const double kk = std::log(entry.first / forward);
      const double call = entry.second.first, put = entry.second.second;
      const double iv = kk >= 0 ? (std::isnan(call) ? put : call) : (std::isnan(put) ? call : put);
      if (k <= kk) {
        if (!have_prev) return iv;  // flat below the lowest strike
        return prev_iv + (iv - prev_iv) * (k - prev_k) / (kk - prev_k);
      }
      prev_k = kk;
      prev_iv = iv;
      have_prev = true;
    }
    return prev_iv;  // flat above the highest strike
  };
  int32_t below = -1, above = -1;
  double iv_below = 0, iv_above = 0;
  for (const auto& entry : points) {
    const double t = (entry.first - today) / 365.0;
    if (t <= time) {
      below = entry.first;
      iv_below = smile(entry.first, entry.second);
    } else {
      above = entry.first;
      iv_above = smile(entry.first, entry.second);
      break;
    }
  }
  if (below < 0) return iv_above;  // before the first expiry: flat
  if (above < 0) return iv_below;  // beyond the last expiry: flat
  const double t0 = (below - today) / 365.0, t1 = (above - today) / 365.0;
  const double w0 = iv_below * iv_below * t0, w1 = iv_above * iv_above * t1;
  const double w = w0 + (w1 - w0) * (time - t0) / (t1 - t0);
  return std::sqrt(std::max(w, 0.0) / time);
}

// The rows of the tracked contracts `keys` (see OptionsData): quotes and features from
// the chain (its day `offset` + d is data day d), or, on a chain file's day without a
// quote, the missing_quote mark and the surface vol's features.
Status FillRows(const OptionsPortfolioOptions& o, const market::OptionChain& chain,
                const market::ChainPricing& priced, size_t offset,
                const std::vector<ContractKey>& keys, OptionsData* data) {
  OptionsData& d = *data;
  const int n = d.num_days();
  const bool from_file = d.from_file;
  // Rows: each tracked contract from its first selection to the day before it settles.
  const size_t contracts = keys.size();
  int64_t rows = 0;
  for (size_t c = 0; c < contracts; ++c) {
    d.first_row.push_back(static_cast<int32_t>(rows));
    rows += std::min(d.expiry_day[c], n) - d.first_listed[c];
  }
  if (rows > (int64_t{1} << 31) - 1) {
    return Status::InvalidArgument("[env] range: too many option rows; use a shorter range");
  }
  d.rows.resize(rows);
  const bool surface = o.missing_quote == "surface";
  for (size_t c = 0; c < contracts; ++c) {
    const int end = std::min(d.expiry_day[c], n);
    double last_mid = 0, last_iv = 0;  // the last quote (a contract is quoted when selected)
    for (int day = d.first_listed[c]; day < end; ++day) {
      const int64_t i = Find(chain, day + offset, keys[c]);
      OptionsData::Row& row = d.rows[d.RowOf(static_cast<int32_t>(c), day)];
      const double s = d.close[day];
      float* f = row.features;
      if (i >= 0 && chain.ask[i] > 0) {
        row.bid = chain.bid[i];
        row.ask = chain.ask[i];
        row.mid = 0.5 * (chain.bid[i] + chain.ask[i]);
        // A file's zero bid is no bid (nothing to sell to); the synthetic chain's zero bid
        // is a quote of 0 (far out-of-the-money contracts), as it always was.
        row.flags = OptionsData::kQuoted | OptionsData::kCanBuy |
                    (!from_file || row.bid > 0 ? OptionsData::kCanSell : 0);
        last_mid = row.mid;
        last_iv = priced.iv[i];
        f[0] = static_cast<float>(row.mid / s * 10);
        f[1] = static_cast<float>(row.mid > 0 ? (row.ask - row.bid) / row.mid : 0);
        f[2] = static_cast<float>(priced.iv[i]);
        f[3] = static_cast<float>(priced.delta[i]);
        f[4] = static_cast<float>(priced.gamma[i] * s / 10);
        f[5] = static_cast<float>(priced.vega[i] / s * 10);
        f[6] = static_cast<float>(priced.theta[i] / s);
        f[7] = static_cast<float>(std::log(chain.strike[i] / s) * 10);
        f[8] = static_cast<float>(priced.time[i] * 4);
        continue;
      }
      if (!from_file) {
        return Status::DataError("[env] internal: a selected contract is not quoted on " +
                                 FormatDate(d.dates[day]));
      }
      // No quote (no row, or no offer): the day's surface vol (else the last quote's),
      // and the missing_quote mark. A bid without an offer can still be sold to.
      row.bid = i >= 0 ? chain.bid[i] : 0.0;
      row.ask = 0;
      row.flags = row.bid > 0 ? OptionsData::kCanSell : 0;
      pricing::OptionInputs in;
      in.type = d.phi[c] > 0 ? pricing::OptionType::kCall : pricing::OptionType::kPut;
      in.spot = s;
      in.strike = d.strike[c];
      in.rate = o.rate;
      in.dividend = o.dividend;
      in.time = (std::get<0>(keys[c]) - d.days[day]) / 365.0;
      const std::optional<double> fitted =
          SurfaceIv(chain, priced, day + offset, s, o.rate, o.dividend, in.strike, in.time);
      in.vol = std::clamp(fitted.value_or(last_iv), pricing::kMinVol, pricing::kMaxVol);
      Result<pricing::Greeks> g = pricing::BsmGreeks(in);
      if (!g.ok()) {
        return Status::DataError("[env] chain_file " + o.chain_file + ": cannot price strike " +
                                 std::to_string(in.strike) + " expiring " +
                                 DateText(std::get<0>(keys[c])) + " on " +
                                 FormatDate(d.dates[day]) + ": " + g.status().message());
      }
      row.mid = surface ? g->price : last_mid;
      f[0] = static_cast<float>(row.mid / s * 10);
      f[1] = 0;
      f[2] = static_cast<float>(in.vol);
      f[3] = static_cast<float>(g->delta);
      f[4] = static_cast<float>(g->gamma * s / 10);
      f[5] = static_cast<float>(g->vega / s * 10);
      f[6] = static_cast<float>(g->theta / s);
      f[7] = static_cast<float>(std::log(in.strike / s) * 10);
      f[8] = static_cast<float>(in.time * 4);
    }
  }
  return Status::Ok();
}

// `given`: a listed chain in place of chain_file's (PrepareOptionsDataFromChain).
Result<std::shared_ptr<const OptionsData>> Build(const OptionsPortfolioOptions& o,
                                                 const market::OptionChain* given = nullptr) {
  const bool from_file = !o.chain_file.empty() || given != nullptr;
  Underlying u;
  market::OptionChain chain;
  if (given != nullptr) {
    chain = *given;
    const std::string source =
        o.chain_file.empty() ? "'" + chain.underlying + "' (in memory)" : o.chain_file.str();
    RLT_RETURN_IF_ERROR(ChainUnderlying(o, &chain, source, &u));
  } else if (from_file) {
    RLT_ASSIGN_OR_RETURN(chain, ReadChainFile(o, &u));
  } else if (o.underlying == "synthetic") {
    RLT_ASSIGN_OR_RETURN(u, SyntheticUnderlying(o));
  } else {
    RLT_ASSIGN_OR_RETURN(u, FileUnderlying(o.underlying));
  }
  RLT_ASSIGN_OR_RETURN(const int range_first, Restrict(&u, o.range));
  auto data = std::make_shared<OptionsData>();
  OptionsData& d = *data;
  d.from_file = from_file;
  d.num_buckets = static_cast<int>(o.tenors.size() * o.moneyness.size() * 2);
  d.dates = std::move(u.dates);
  d.close = std::move(u.close);
  // A chain file is short (weeks of quotes): its features use the history it has (the
  // windows of the first days are shorter) rather than wait kHistoryDays.
  d.first_day = from_file ? range_first : std::max(kHistoryDays, range_first);
  const int n = d.num_days();
  if (n < d.first_day + 2) {
    const std::string source =
        from_file ? "chain_file '" + o.chain_file + "'" : "underlying '" + o.underlying + "'";
    return Status::InvalidArgument(
        "[env] range '" + o.range + "' of " + source + " leaves " +
        std::to_string(std::max(0, n - d.first_day)) + " trading days" +
        (from_file ? std::string()
                   : " after the " + std::to_string(kHistoryDays) + "-day feature history") +
        "; expected at least 2 (widen range or add data)");
  }
  if (!from_file) RLT_RETURN_IF_ERROR(CheckChainSize(o, n));
  for (int32_t key : d.dates) d.days.push_back(DaysOfKey(key));
  UnderlyingFeatures(&d);

  market::ChainPricingOptions po;
  po.rate = o.rate;
  po.dividend = o.dividend;
  size_t offset = 0;  // the chain's day of data day 0
  if (from_file) {
    po.mid_source = market::MidSource::kQuotes;
    // Contracts expiring on their quote date have no vol to solve (T = 0), and a day with
    // nothing else (the last expiry's day) would fail the pricing; their vol is never
    // used here (no row on an expiry day: it settles at intrinsic value), so any one does.
    for (size_t cd = 0; cd < chain.num_days(); ++cd) {
      for (int64_t i = chain.day_begin[cd]; i < chain.day_begin[cd + 1]; ++i) {
        if (chain.expiry[i] == chain.dates[cd] && !std::isfinite(chain.implied_vol[i])) {
          chain.implied_vol[i] = 0.2;
        }
      }
    }
    po.source = o.chain_file;
    offset = static_cast<size_t>(
        std::lower_bound(chain.dates.begin(), chain.dates.end(), d.days.front()) -
        chain.dates.begin());
  } else {
    RLT_ASSIGN_OR_RETURN(chain, market::GenerateOptionChain(d.days, d.close, ChainOptions(o)));
    po.mid_source = market::MidSource::kModel;
  }
  RLT_ASSIGN_OR_RETURN(market::ChainPricing priced, market::PriceChain(chain, po));

  // Selection, and the tracked contracts in order of first selection.
  const int k = d.num_buckets;
  d.roll.assign(static_cast<size_t>(n) * k, -1);
  std::map<ContractKey, int32_t> tracked;
  std::vector<ContractKey> keys;
  for (int day = d.first_day; day < n; ++day) {
    int b = 0;
    for (int tenor : o.tenors) {
      for (double m : o.moneyness) {
        for (market::OptionType right : {market::OptionType::kCall, market::OptionType::kPut}) {
          const int64_t i = Select(chain, day + offset, tenor, m * d.close[day], right);
          if (i < 0) {
            if (from_file) {  // nothing to select today: the bucket stays empty
              ++b;
              continue;
            }
            return Status::DataError("[env] the synthetic chain lists no contract expiring after " +
                                     FormatDate(d.dates[day]) +
                                     " (set chain_monthly_expiries >= 1)");
          }
          const ContractKey key = KeyOf(chain, i);
          auto [it, inserted] = tracked.emplace(key, static_cast<int32_t>(keys.size()));
          if (inserted) {
            keys.push_back(key);
            d.strike.push_back(chain.strike[i]);
            d.phi.push_back(static_cast<double>(chain.right[i]));
            d.first_listed.push_back(day);
            int32_t e = day + 1;
            while (e < n && d.days[e] < std::get<0>(key)) ++e;
            d.expiry_day.push_back(e);
          }
          d.roll[static_cast<size_t>(day) * k + b] = it->second;
          ++b;
        }
      }
    }
  }
  RLT_RETURN_IF_ERROR(FillRows(o, chain, priced, offset, keys, &d));
  return std::shared_ptr<const OptionsData>(std::move(data));
}

}  // namespace

Result<std::shared_ptr<const OptionsData>> PrepareOptionsData(
    const OptionsPortfolioOptions& options) {
  RLT_RETURN_IF_ERROR(Validate(options));
  std::string key;
  for (const auto& row : DescribeOptions(options)) key += row.key + "=" + row.value + "\n";
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<const OptionsData>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) {
    if (auto hit = it->second.lock()) return hit;
  }
  RLT_ASSIGN_OR_RETURN(std::shared_ptr<const OptionsData> data, Build(options));
  cache[key] = data;
  return data;
}

Result<std::shared_ptr<const OptionsData>> PrepareOptionsDataFromChain(
    const OptionsPortfolioOptions& options, const market::OptionChain& chain) {
  RLT_RETURN_IF_ERROR(Validate(options));
  return Build(options, &chain);
}

Status CheckSelfFinancing(const StepBooks& b, double tolerance) {
  const double lhs = b.value_after - b.value_before;
  const double rhs = b.mark_pnl + b.carry - b.costs;
  if (std::isfinite(lhs) &&
      std::fabs(lhs - rhs) <= tolerance * std::max(1.0, std::fabs(b.value_before))) {
    return Status::Ok();
  }
  return Status::DataError("not self-financing: net worth changed by " + std::to_string(lhs) +
                           " but marks moved it by " + std::to_string(b.mark_pnl) + ", carry " +
                           std::to_string(b.carry) + " and costs -" + std::to_string(b.costs) +
                           " (difference " + std::to_string(lhs - rhs) + ")");
}

Result<std::unique_ptr<OptionsPortfolioEnv>> OptionsPortfolioEnv::Create(
    const OptionsPortfolioOptions& options, std::shared_ptr<const OptionsData> data) {
  RLT_RETURN_IF_ERROR(Validate(options));
  if (!data) {
    RLT_ASSIGN_OR_RETURN(data, PrepareOptionsData(options));
  }
  return std::unique_ptr<OptionsPortfolioEnv>(new OptionsPortfolioEnv(options, std::move(data)));
}

OptionsPortfolioEnv::OptionsPortfolioEnv(const OptionsPortfolioOptions& options,
                                         std::shared_ptr<const OptionsData> data)
    : options_(options), data_(std::move(data)) {
  const int k = data_->num_buckets;
  assets_ = k + 1;
  shaped_ = options_.reward == "shaped";
  spec_.id = "options";
  spec_.obs_dim = OptionsData::kUnderlyingFeatures + OptionsData::kBucketFeatures * k + assets_ + 6;
  spec_.action.dim = assets_;
  spec_.action.low.assign(assets_, -1.0f);
  spec_.action.high.assign(assets_, 1.0f);
  spec_.info_names = {
      "net_worth",    "cash", "shares",     "costs",          "drawdown",           "margin_ratio",
      "liquidations", "date", "underlying", "gross_exposure", "missing_quote_marks"};
  units_.assign(assets_, 0.0);
  contract_.assign(k, -1);
  recent_.assign(kRecentReturns, 0.0);
  target_.assign(assets_, 0.0);
  scaled_.assign(assets_, 0.0);
  unit_value_.assign(assets_, 0.0);
  unit_cost_.assign(assets_, 0.0);
  long_margin_.assign(assets_, 0.0);
  short_margin_.assign(assets_, 0.0);
  can_buy_.assign(assets_, 1);
  can_sell_.assign(assets_, 1);
}

double OptionsPortfolioEnv::Mark(int asset) const {
  if (asset == 0) return data_->close[day_];
  if (contract_[asset - 1] < 0) return 0.0;  // an empty bucket holds nothing
  return data_->rows[data_->RowOf(contract_[asset - 1], day_)].mid * options_.multiplier;
}

double OptionsPortfolioEnv::NetWorth() const {
  double v = cash_;
  for (int a = 0; a < assets_; ++a) {
    if (units_[a] != 0) v += units_[a] * Mark(a);
  }
  return v;
}

void OptionsPortfolioEnv::PrepareDay() {
  const OptionsData& d = *data_;
  prepared_day_ = day_;
  const double s = d.close[day_];
  const double mult = options_.multiplier;
  unit_value_[0] = s;
  unit_cost_[0] = s * options_.stock_cost;
  long_margin_[0] = short_margin_[0] = options_.stock_margin * s;
  for (int b = 0; b < d.num_buckets; ++b) {
    const int32_t c = contract_[b];
    if (c < 0) {  // an empty bucket: nothing to value or trade
      unit_value_[b + 1] = unit_cost_[b + 1] = long_margin_[b + 1] = short_margin_[b + 1] = 0;
      can_buy_[b + 1] = can_sell_[b + 1] = 0;
      continue;
    }
    const OptionsData::Row& row = d.rows[d.RowOf(c, day_)];
    can_buy_[b + 1] = (row.flags & OptionsData::kCanBuy) != 0;
    can_sell_[b + 1] = (row.flags & OptionsData::kCanSell) != 0;
    const double otm = std::max(0.0, d.phi[c] * (d.strike[c] - s));
    unit_value_[b + 1] = row.mid * mult;
    unit_cost_[b + 1] = 0.5 * (row.ask - row.bid) * mult + options_.fee_per_contract;
    long_margin_[b + 1] = row.mid * mult;  // paid in full
    short_margin_[b + 1] =
        std::max(options_.short_margin * s - otm, options_.min_margin * s) * mult;
  }
}

double OptionsPortfolioEnv::Margin(const double* units) const {
  double m = 0;
  for (int a = 0; a < assets_; ++a) {
    const double u = units[a];
    m += u >= 0 ? u * long_margin_[a] : -u * short_margin_[a];
  }
  return m;
}

double OptionsPortfolioEnv::ScaledNeed(double alpha, double target_margin) const {
  const double* t = target_.data();
  const double* u = units_.data();
  const double* c = unit_cost_.data();
  double costs = 0;
#pragma omp simd reduction(+ : costs)
  for (int a = 0; a < assets_; ++a) costs += std::fabs(alpha * t[a] - u[a]) * c[a];
  return alpha * target_margin + costs;
}

double OptionsPortfolioEnv::Trade(const double* target, double* traded) {
  const OptionsData& d = *data_;
  const double s = d.close[day_];
  double costs = 0;
  const double ds = target[0] - units_[0];
  if (ds != 0) {
    const double c = std::fabs(ds) * s * options_.stock_cost;
    cash_ -= ds * s + c;
    costs += c;
    *traded += std::fabs(ds) * s;
    units_[0] = target[0];
  }
  for (int b = 0; b < d.num_buckets; ++b) {
    const double dn = target[b + 1] - units_[b + 1];
    if (dn == 0 || !(dn > 0 ? can_buy_[b + 1] : can_sell_[b + 1])) continue;  // no quote
    const OptionsData::Row& row = d.rows[d.RowOf(contract_[b], day_)];
    const double price = dn > 0 ? row.ask : row.bid;
    const double fee = std::fabs(dn) * options_.fee_per_contract;
    cash_ -= dn * price * options_.multiplier + fee;
    costs += std::fabs(dn) * std::fabs(price - row.mid) * options_.multiplier + fee;
    *traded += std::fabs(dn) * row.mid * options_.multiplier;
    units_[b + 1] = target[b + 1];
  }
  return costs;
}

void OptionsPortfolioEnv::Liquidate(double* costs, double* traded) {
  std::fill(target_.begin(), target_.end(), 0.0);
  *costs += Trade(target_.data(), traded);
  ++liquidations_;
}

void OptionsPortfolioEnv::Reset(float* obs, double* info) {
  const OptionsData& d = *data_;
  const int last_start = std::max(d.first_day, d.num_days() - 1 - options_.episode_days);
  start_day_ = d.first_day;
  if (options_.random_start && last_start > d.first_day) {
    start_day_ +=
        static_cast<int>(rng_.UniformInt(static_cast<uint64_t>(last_start - d.first_day + 1)));
  }
  day_ = start_day_;
  end_day_ = std::min(start_day_ + options_.episode_days, d.num_days() - 1);
  cash_ = options_.initial_cash;
  peak_ = cash_;
  costs_total_ = 0;
  liquidations_ = 0;
  missing_marks_ = 0;
  std::fill(units_.begin(), units_.end(), 0.0);
  for (int b = 0; b < d.num_buckets; ++b)
    contract_[b] = d.roll[static_cast<size_t>(day_) * d.num_buckets + b];
  std::fill(recent_.begin(), recent_.end(), 0.0);
  recent_count_ = recent_next_ = 0;
  books_ = StepBooks{};
  PrepareDay();
  Write(obs, info, cash_, 0.0);
}

StepResult OptionsPortfolioEnv::Step(const float* action, float* obs, double* info) {
  const OptionsData& d = *data_;
  const int k = d.num_buckets;
  if (prepared_day_ != day_) PrepareDay();  // the previous step prepared today already
  double v0 = cash_;
  for (int a = 0; a < assets_; ++a) v0 += units_[a] * unit_value_[a];
  // Targets (real-valued units) from the weights.
  for (int a = 0; a < assets_; ++a) {
    float w = action[a];
    w = std::isfinite(w) ? std::clamp(w, -1.0f, 1.0f) : 0.0f;
    const double value = static_cast<double>(w) * options_.max_position * std::max(v0, 0.0);
    target_[a] = unit_value_[a] > 0 ? value / unit_value_[a] : 0.0;
    if (a > 0 && unit_value_[a] < options_.min_option_price * options_.multiplier) {
      const double cur = units_[a];  // no new or larger position in a contract this cheap
      target_[a] = (target_[a] * cur > 0)
                       ? std::copysign(std::min(std::fabs(target_[a]), std::fabs(cur)), cur)
                       : 0.0;
    }
    // A side the quote does not offer (no ask: no purchase; no bid: no sale) keeps units.
    if (!can_buy_[a]) target_[a] = std::min(target_[a], units_[a]);
    if (!can_sell_[a]) target_[a] = std::max(target_[a], units_[a]);
  }
  // The largest alpha in [0, 1] (toward flat, to 2^-12) for which the unrounded targets'
  // requirement plus trading costs fit within the equity less one unit's cost per asset
  // with a nonzero target: rounding toward zero then never needs more (file comment).
  double target_margin = 0, slack = 0;
  for (int a = 0; a < assets_; ++a) {
    const double t = target_[a];
    target_margin += t >= 0 ? t * long_margin_[a] : -t * short_margin_[a];
    if (t != 0) slack += unit_cost_[a];  // a zero target rounds to itself
  }
  const double budget = v0 - slack;
  double alpha = 1;
  if (ScaledNeed(1, target_margin) > budget) {
    double lo = 0, hi = 1;
    for (int i = 0; i < kMarginHalvings; ++i) {
      const double mid = 0.5 * (lo + hi);
      (ScaledNeed(mid, target_margin) <= budget ? lo : hi) = mid;
    }
    alpha = lo;
  }
  for (int a = 0; a < assets_; ++a) scaled_[a] = std::trunc(alpha * target_[a]);
  double traded = 0;
  double costs = Trade(scaled_.data(), &traded);

  // The day's move: marks of the positions held after trading, carry, settlement.
  const int old_day = day_;
  const double s0 = d.close[old_day];
  const double dt = (d.days[old_day + 1] - d.days[old_day]) / 365.0;
  double mark_pnl = 0;
  const double carry =
      cash_ * std::expm1(options_.rate * dt) + units_[0] * s0 * std::expm1(options_.dividend * dt);
  day_ = old_day + 1;
  cash_ += carry;
  const double s1 = d.close[day_];
  mark_pnl += units_[0] * (s1 - s0);
  for (int b = 0; b < k; ++b) {
    const int32_t c = contract_[b];
    if (c < 0) {  // an empty bucket (holds nothing): selects again every day
      contract_[b] = d.roll[static_cast<size_t>(day_) * k + b];
      continue;
    }
    const bool expired = d.expiry_day[c] <= day_;
    if (units_[b + 1] != 0) {
      const double n = units_[b + 1];
      double new_mark;
      if (expired) {
        new_mark = std::max(0.0, d.phi[c] * (s1 - d.strike[c])) * options_.multiplier;
      } else {
        const OptionsData::Row& row = d.rows[d.RowOf(c, day_)];
        new_mark = row.mid * options_.multiplier;
        if (!(row.flags & OptionsData::kQuoted)) ++missing_marks_;
      }
      mark_pnl += n * (new_mark - unit_value_[b + 1]);
      if (expired) {
        cash_ += n * new_mark;  // cash settlement at intrinsic value
        units_[b + 1] = 0;
      }
    }
    if (expired) contract_[b] = d.roll[static_cast<size_t>(day_) * k + b];
  }
  PrepareDay();
  double v1 = cash_;
  for (int a = 0; a < assets_; ++a) v1 += units_[a] * unit_value_[a];
  double margin = Margin(units_.data());
  if (margin > v1) {  // margin call: liquidate at today's quotes
    Liquidate(&costs, &traded);
    v1 = NetWorth();
    margin = 0;
  }
  books_ = {v0, v1, mark_pnl, carry, costs};
  RLT_DCHECK(CheckSelfFinancing(books_, 1e-8).ok());
  costs_total_ += costs;
  peak_ = std::max(peak_, v1);

  StepResult result;
  result.terminated = !(v1 > 0);
  result.truncated = !result.terminated && day_ >= end_day_;
  const double ratio = v0 > 0 ? v1 / v0 : 0.0;
  const double drawdown = peak_ > 0 ? 1 - std::max(v1, 0.0) / peak_ : 0.0;
  double reward;
  if (!shaped_) {
    reward = std::log(std::max(ratio, kRuinFloor)) - options_.drawdown_penalty * drawdown -
             options_.turnover_penalty * (v0 > 0 ? traded / v0 : 0.0);
  } else {
    const double r = ratio - 1;
    recent_[recent_next_] = r;
    recent_next_ = (recent_next_ + 1) % kRecentReturns;
    recent_count_ = std::min(recent_count_ + 1, kRecentReturns);
    double sharpe = 0;
    if (recent_count_ >= 2) {
      double m = 0, ss = 0;
      for (int i = 0; i < recent_count_; ++i) m += recent_[i];
      m /= recent_count_;
      for (int i = 0; i < recent_count_; ++i) ss += (recent_[i] - m) * (recent_[i] - m);
      const double sd = std::sqrt(ss / (recent_count_ - 1));
      sharpe = sd > 0 ? m / sd : 0.0;
    }
    int active = 0;
    double largest = 0;
    for (int a = 0; a < assets_; ++a) {
      if (units_[a] == 0) continue;
      ++active;
      if (v1 > 0) largest = std::max(largest, std::fabs(units_[a] * unit_value_[a]) / v1);
    }
    reward = 100 * r + 0.3 * (10 * sharpe) + 0.2 * (-50 * drawdown) -
             100 * (v0 > 0 ? costs / v0 : 0.0) + 0.1 * (5.0 * active / 21) -
             std::max(0.0, largest - 0.3) * 20;
    reward = std::clamp(reward, -100.0, 100.0);
  }
  result.reward = static_cast<float>(reward);
  Write(obs, info, v1, margin);
  return result;
}

void OptionsPortfolioEnv::Write(float* obs, double* info, double v, double margin) const {
  const OptionsData& d = *data_;
  const int k = d.num_buckets;
  const double s = d.close[day_];
  const double inv_v = v > 0 ? 1 / v : 0.0;
  const float* uf =
      &d.underlying_features[static_cast<size_t>(day_) * OptionsData::kUnderlyingFeatures];
  for (int j = 0; j < OptionsData::kUnderlyingFeatures; ++j) obs[j] = uf[j];
  float* o = obs + OptionsData::kUnderlyingFeatures;
  double net_delta = units_[0] * s, net_gamma = 0, net_vega = 0;
  static constexpr float kNoFeatures[OptionsData::kBucketFeatures] = {};
  for (int b = 0; b < k; ++b) {
    const float* f = contract_[b] < 0 ? kNoFeatures : d.rows[d.RowOf(contract_[b], day_)].features;
    for (int j = 0; j < OptionsData::kBucketFeatures; ++j) o[j] = f[j];  // inline, not memmove
    o += OptionsData::kBucketFeatures;
    const double n = units_[b + 1] * options_.multiplier;
    if (n != 0) {  // the Greeks from the features: delta, gamma S / 10, vega / S x 10
      net_delta += n * f[3] * s;
      net_gamma += n * f[4] * 10 * s;
      net_vega += n * f[5] * s / 10;
    }
  }
  double gross = 0;
  for (int a = 0; a < assets_; ++a) {
    const double w = units_[a] * unit_value_[a] * inv_v;
    gross += std::fabs(w);
    *o++ = static_cast<float>(w);
  }
  const double drawdown = peak_ > 0 ? 1 - std::max(v, 0.0) / peak_ : 0.0;
  *o++ = static_cast<float>(cash_ * inv_v);
  *o++ = static_cast<float>(net_delta * inv_v);
  *o++ = static_cast<float>(net_gamma * inv_v);
  *o++ = static_cast<float>(net_vega * inv_v);
  *o++ = static_cast<float>(drawdown);
  *o++ = static_cast<float>(
      end_day_ > start_day_ ? double(day_ - start_day_) / (end_day_ - start_day_) : 0.0);
  info[0] = v;
  info[1] = cash_;
  info[2] = units_[0];
  info[3] = costs_total_;
  info[4] = drawdown;
  info[5] = v > 0 ? margin / v : 0.0;
  info[6] = static_cast<double>(liquidations_);
  info[7] = d.dates[day_];
  info[8] = s;
  info[9] = gross;
  info[10] = static_cast<double>(missing_marks_);
}

void OptionsPortfolioEnv::SaveState(StateWriter& out) const {
  Env::SaveState(out);
  out.Put<int32_t>(data_->num_buckets);
  out.Put<int32_t>(day_);
  out.Put<int32_t>(start_day_);
  out.Put<int32_t>(end_day_);
  out.Put(cash_);
  out.Put(peak_);
  out.Put(costs_total_);
  out.Put(liquidations_);
  out.PutArray(units_.data(), units_.size());
  out.PutArray(contract_.data(), contract_.size());
  out.PutArray(recent_.data(), recent_.size());
  out.Put<int32_t>(recent_count_);
  out.Put<int32_t>(recent_next_);
}

Status OptionsPortfolioEnv::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(Env::LoadState(in));
  const OptionsData& d = *data_;
  RLT_RETURN_IF_ERROR(in.Expect<int32_t>(d.num_buckets, "options buckets"));
  int32_t day = 0, start = 0, end = 0, count = 0, next = 0;
  double cash = 0, peak = 0, costs = 0;
  int64_t liquidations = 0;
  std::vector<double> units(assets_), recent(kRecentReturns);
  std::vector<int32_t> contract(d.num_buckets);
  RLT_RETURN_IF_ERROR(in.Get(&day, "options day"));
  RLT_RETURN_IF_ERROR(in.Get(&start, "options start day"));
  RLT_RETURN_IF_ERROR(in.Get(&end, "options end day"));
  RLT_RETURN_IF_ERROR(in.Get(&cash, "options cash"));
  RLT_RETURN_IF_ERROR(in.Get(&peak, "options peak"));
  RLT_RETURN_IF_ERROR(in.Get(&costs, "options costs"));
  RLT_RETURN_IF_ERROR(in.Get(&liquidations, "options liquidations"));
  RLT_RETURN_IF_ERROR(in.GetArray(units.data(), units.size(), "options units"));
  RLT_RETURN_IF_ERROR(in.GetArray(contract.data(), contract.size(), "options contracts"));
  RLT_RETURN_IF_ERROR(in.GetArray(recent.data(), recent.size(), "options recent returns"));
  RLT_RETURN_IF_ERROR(in.Get(&count, "options recent count"));
  RLT_RETURN_IF_ERROR(in.Get(&next, "options recent next"));
  if (!(d.first_day <= start && start <= day && day <= end && end < d.num_days())) {
    return in.Error("options days out of range for this data");
  }
  if (count < 0 || count > kRecentReturns || next < 0 || next >= kRecentReturns) {
    return in.Error("options recent-return ring out of range");
  }
  if (!std::isfinite(cash) || !std::isfinite(peak) || !std::isfinite(costs) || liquidations < 0) {
    return in.Error("options cash, peak or costs not finite");
  }
  for (double u : units) {
    if (!std::isfinite(u) || u != std::trunc(u) || std::fabs(u) > 1e15) {
      return in.Error("options units must be whole finite numbers");
    }
  }
  for (int32_t c : contract) {
    if (c == -1) continue;  // an empty bucket (a chain file's day without a selection)
    if (c < 0 || c >= static_cast<int32_t>(d.strike.size()) || d.first_listed[c] > day ||
        d.expiry_day[c] <= day) {
      return in.Error("options contract not quoted on the saved day");
    }
  }
  day_ = day;
  start_day_ = start;
  end_day_ = end;
  cash_ = cash;
  peak_ = peak;
  costs_total_ = costs;
  liquidations_ = liquidations;
  units_ = units;
  contract_ = contract;
  recent_ = recent;
  recent_count_ = count;
  recent_next_ = next;
  missing_marks_ = 0;  // a diagnostic count, not saved (older states stay loadable)
  prepared_day_ = -1;
  return Status::Ok();
}

Result<std::shared_ptr<const void>> PrepareOptionsPortfolio(
    const std::map<std::string, std::string>& settings) {
  OptionsPortfolioOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  RLT_ASSIGN_OR_RETURN(std::shared_ptr<const OptionsData> data, PrepareOptionsData(options));
  return std::shared_ptr<const void>(std::move(data));
}

Result<std::unique_ptr<Env>> MakeOptionsPortfolioEnv(
    const std::map<std::string, std::string>& settings, std::shared_ptr<const void> prepared) {
  OptionsPortfolioOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  auto data = std::static_pointer_cast<const OptionsData>(std::move(prepared));
  RLT_ASSIGN_OR_RETURN(auto env, OptionsPortfolioEnv::Create(options, std::move(data)));
  return std::unique_ptr<Env>(std::move(env));
}

}  // namespace rlt::env
