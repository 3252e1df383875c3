#include "market/option_chain_synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/civil_time.h"
#include "core/rng.h"

namespace rlt::market {

namespace {

double AutoIncrement(double spot) {
  const double target = 0.01 * spot;
  double best = 0.01;
  for (int k = -2; k <= 6; ++k) {
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      const double c = m * std::pow(10.0, k);
      if (c <= target) best = std::max(best, c);
    }
  }
  return best;
}

// The listing rules (expiries and strikes per day, see the header), shared by the
// generator and the counter.
class Lister {
 public:
  explicit Lister(const ChainSynthOptions& o) : o_(o) {}
  struct Listing {
    double increment = 1;     // fixed when the expiry is first listed
    std::set<int64_t> index;  // strikes index * increment
  };
  // Lists day `day` (after the previous days) at spot `s`.
  void ListDay(int32_t day, double s) {
    for (auto it = listed_.begin(); it != listed_.end();) {
      it = it->first < day ? listed_.erase(it) : std::next(it);
    }
    std::set<int32_t> expiries;
    const CivilDate cd = CivilFromDays(day);
    int y = cd.year, mo = cd.month;
    for (int count = 0; count < o_.monthly_expiries;) {
      const int32_t f = ThirdFriday(y, mo);
      if (f >= day) {
        expiries.insert(f);
        ++count;
      }
      if (++mo > 12) {
        mo = 1;
        ++y;
      }
    }
    const int32_t first_friday = day + (5 - Weekday(day) + 7) % 7;
    for (int32_t f = first_friday; f <= day + o_.weekly_horizon_days; f += 7) expiries.insert(f);
    for (int32_t e : expiries) {
      auto [it, added] = listed_.try_emplace(e);
      Listing& l = it->second;
      if (added) l.increment = o_.strike_increment > 0 ? o_.strike_increment : AutoIncrement(s);
      for (double m = o_.moneyness_min; m <= o_.moneyness_max + 1e-9; m += o_.moneyness_step) {
        l.index.insert(std::max<int64_t>(1, std::llround(s * m / l.increment)));
      }
    }
  }
  // Contracts quoted on the day listed last (a call and a put per listed strike).
  int64_t Contracts() const {
    int64_t n = 0;
    for (const auto& [e, l] : listed_) n += 2 * static_cast<int64_t>(l.index.size());
    return n;
  }
  const std::map<int32_t, Listing>& listed() const { return listed_; }

 private:
  const ChainSynthOptions& o_;
  std::map<int32_t, Listing> listed_;  // by expiry
};

Status CheckSeries(const std::vector<int32_t>& dates, const std::vector<double>& closes) {
  if (dates.size() != closes.size()) {
    return Status::InvalidArgument(
        fmt::format("{} dates but {} closes", dates.size(), closes.size()));
  }
  for (size_t d = 0; d < dates.size(); ++d) {
    if (!(std::isfinite(closes[d]) && closes[d] > 0 && closes[d] < 1e9)) {
      return Status::InvalidArgument(
          fmt::format("close[{}] = {}: expected a finite price in (0, 1e9)", d, closes[d]));
    }
    if (d > 0 && dates[d] <= dates[d - 1]) {
      return Status::InvalidArgument(
          fmt::format("dates[{}] = {} is not after dates[{}]: dates must ascend", d,
                      FormatDate(DateKey(CivilFromDays(dates[d]))), d - 1));
    }
  }
  return Status::Ok();
}

}  // namespace

int32_t ThirdFriday(int year, int month) {
  const int64_t first = DaysFromCivil(year, month, 1);
  const int to_friday = (5 - Weekday(first) + 7) % 7;
  return static_cast<int32_t>(first + to_friday + 14);
}

Status ValidateChainSynthOptions(const ChainSynthOptions& o) {
  auto bad = [](const char* field, double v, const char* want) {
    return Status::InvalidArgument(fmt::format("{} = {}: expected {}", field, v, want));
  };
  if (!(o.moneyness_min > 0 && o.moneyness_min <= 1)) {
    return bad("moneyness_min", o.moneyness_min, "a value in (0, 1]");
  }
  if (!(o.moneyness_max >= 1 && o.moneyness_max <= 10)) {
    return bad("moneyness_max", o.moneyness_max, "a value in [1, 10]");
  }
  if (!(o.moneyness_step > 0 && (o.moneyness_max - o.moneyness_min) / o.moneyness_step <= 1000)) {
    return bad("moneyness_step", o.moneyness_step, "> 0, at most 1000 steps in the grid");
  }
  if (!(o.strike_increment >= 0 && std::isfinite(o.strike_increment))) {
    return bad("strike_increment", o.strike_increment, ">= 0 (0: auto)");
  }
  if (o.monthly_expiries < 0 || o.monthly_expiries > 60) {
    return bad("monthly_expiries", o.monthly_expiries, "an integer in [0, 60]");
  }
  if (o.weekly_horizon_days < 0 || o.weekly_horizon_days > 366) {
    return bad("weekly_horizon_days", o.weekly_horizon_days, "an integer in [0, 366]");
  }
  if (o.monthly_expiries == 0 && o.weekly_horizon_days < 7) {
    return Status::InvalidArgument(
        "monthly_expiries = 0 and weekly_horizon_days < 7: no expiry would be listed");
  }
  if (o.rv_window < 2 || o.rv_window > 10000) {
    return bad("rv_window", o.rv_window, "an integer in [2, 10000]");
  }
  if (!(o.min_vol >= 1e-4 && o.max_vol <= 10 && o.min_vol <= o.max_vol)) {
    return Status::InvalidArgument(
        fmt::format("min_vol = {}, max_vol = {}: expected 1e-4 <= min_vol <= max_vol <= 10",
                    o.min_vol, o.max_vol));
  }
  for (auto [name, v] :
       {std::pair{"initial_vol", o.initial_vol}, std::pair{"vol_multiplier", o.vol_multiplier}}) {
    if (!(v > 0 && v <= 10)) return bad(name, v, "a value in (0, 10]");
  }
  for (auto [name, v] : {std::pair{"term_slope", o.term_slope}, std::pair{"skew", o.skew},
                         std::pair{"smile", o.smile}, std::pair{"iv_noise", o.iv_noise}}) {
    if (!(std::isfinite(v) && std::abs(v) <= 10)) return bad(name, v, "|value| <= 10");
  }
  if (o.iv_noise < 0) return bad("iv_noise", o.iv_noise, ">= 0");
  for (auto [name, v] : {std::pair{"rate", o.rate}, std::pair{"dividend", o.dividend}}) {
    if (!(std::isfinite(v) && std::abs(v) <= 1)) return bad(name, v, "|value| <= 1");
  }
  if (!(o.spread_fraction >= 0 && o.spread_fraction <= 2)) {
    return bad("spread_fraction", o.spread_fraction, "a value in [0, 2]");
  }
  if (!(o.tick > 0 && o.tick <= 100)) return bad("tick", o.tick, "a value in (0, 100]");
  if (!(o.min_spread >= 0 && std::isfinite(o.min_spread))) {
    return bad("min_spread", o.min_spread, ">= 0");
  }
  if (!(o.oi_scale >= 0 && o.oi_scale <= 1e9)) return bad("oi_scale", o.oi_scale, "[0, 1e9]");
  return Status::Ok();
}

Result<ChainSize> CountOptionChainContracts(const std::vector<int32_t>& dates,
                                            const std::vector<double>& closes,
                                            const ChainSynthOptions& o, int64_t stop_above) {
  RLT_RETURN_IF_ERROR(ValidateChainSynthOptions(o));
  RLT_RETURN_IF_ERROR(CheckSeries(dates, closes));
  ChainSize size;
  Lister lister(o);
  for (size_t d = 0; d < dates.size() && size.contracts <= stop_above; ++d) {
    lister.ListDay(dates[d], closes[d]);
    size.contracts += lister.Contracts();
    size.days = static_cast<int64_t>(d) + 1;
  }
  return size;
}

Result<OptionChain> GenerateOptionChain(const std::vector<int32_t>& dates,
                                        const std::vector<double>& closes,
                                        const ChainSynthOptions& o, const std::string& underlying) {
  RLT_RETURN_IF_ERROR(ValidateChainSynthOptions(o));
  RLT_RETURN_IF_ERROR(CheckSeries(dates, closes));
  OptionChain chain;
  chain.underlying = underlying;
  if (dates.empty()) {
    chain.day_begin.push_back(0);
    return chain;
  }
  Rng rng(o.seed);
  Lister lister(o);
  for (size_t d = 0; d < dates.size(); ++d) {
    const int32_t day = dates[d];
    const double s = closes[d];
    // Realised vol from closes[0..d].
    double level = o.initial_vol;
    const size_t returns = d;  // returns available up to day d
    if (returns >= 2) {
      const size_t m = std::min<size_t>(returns, static_cast<size_t>(o.rv_window));
      double mean = 0, sq = 0;
      for (size_t j = d + 1 - m; j <= d; ++j) mean += std::log(closes[j] / closes[j - 1]);
      mean /= m;
      for (size_t j = d + 1 - m; j <= d; ++j) {
        const double r = std::log(closes[j] / closes[j - 1]) - mean;
        sq += r * r;
      }
      level = o.vol_multiplier * std::sqrt(sq / (m - 1) * 252.0);
    }
    if (o.iv_noise > 0) level *= std::exp(o.iv_noise * rng.Normal());
    level = std::clamp(level, o.min_vol, o.max_vol);

    lister.ListDay(day, s);
    chain.dates.push_back(day);
    chain.underlying_price.push_back(s);
    chain.day_begin.push_back(static_cast<int64_t>(chain.size()));
    for (const auto& [e, l] : lister.listed()) {
      const double t = (e - day) / 365.0;
      const double te = std::max(t, 1.0 / 365);
      const double fwd = s * std::exp((o.rate - o.dividend) * t);
      const double atm = level * std::max(0.1, 1 + o.term_slope * std::log(te / (30.0 / 365)));
      for (OptionType type : {OptionType::kCall, OptionType::kPut}) {
        for (int64_t k : l.index) {
          const double strike = k * l.increment;
          const double x = std::log(strike / fwd) / std::sqrt(te);
          const double iv = std::clamp(atm * std::max(0.1, 1 + o.skew * x + o.smile * x * x),
                                       o.min_vol, o.max_vol);
          const size_t i = chain.AddContract(e, strike, type, 0, 0);
          chain.implied_vol[i] = iv;
          const double oi =
              std::round(o.oi_scale * std::exp(-0.5 * x * x) * std::exp(0.5 * rng.Normal()));
          chain.open_interest[i] = oi;
          chain.volume[i] = std::round(oi * 0.1 * std::exp(0.5 * rng.Normal()));
        }
      }
    }
  }
  chain.day_begin.push_back(static_cast<int64_t>(chain.size()));

  // Marks in one batch, then quotes.
  const size_t n = chain.size();
  std::vector<double> spot(n), rate(n, o.rate), dividend(n, o.dividend), time(n);
  for (size_t d = 0; d < chain.num_days(); ++d) {
    for (int64_t i = chain.day_begin[d]; i < chain.day_begin[d + 1]; ++i) {
      spot[i] = chain.underlying_price[d];
      time[i] = (chain.expiry[i] - chain.dates[d]) / 365.0;
    }
  }
  const pricing::OptionBatch<double> in = ChainBatch(
      chain, spot.data(), rate.data(), dividend.data(), chain.implied_vol.data(), time.data());
  RLT_RETURN_IF_ERROR(pricing::BsmPriceBatch(in, chain.mark.data()));
  for (size_t i = 0; i < n; ++i) {
    const double mark = chain.mark[i];
    const double spread = std::max(o.spread_fraction * mark, o.min_spread);
    const double bid = std::floor((mark - 0.5 * spread) / o.tick + 1e-9);
    const double ask = std::ceil((mark + 0.5 * spread) / o.tick - 1e-9);
    // A bid floored at 0 would narrow the spread: the ask keeps min_spread above the bid.
    const double bid_ticks = std::max(0.0, bid);
    const double min_ticks = std::max(1.0, std::ceil(o.min_spread / o.tick - 1e-9));
    chain.bid[i] = bid_ticks * o.tick;
    chain.ask[i] = std::max(ask, bid_ticks + min_ticks) * o.tick;
  }
  return chain;
}

}  // namespace rlt::market
