#include "env/envs/chain_hedging.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "core/civil_time.h"
#include "market/option_chain_csv.h"
#include "pricing/pricing.h"

namespace rlt::env {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string DateText(int32_t days) { return FormatDate(DateKey(CivilFromDays(days))); }

char RightLetter(pricing::OptionType right) {
  return right == pricing::OptionType::kCall ? 'C' : 'P';
}

std::string OccSymbol(const std::string& root, int32_t expiry, pricing::OptionType right,
                      double strike) {
  if (root.empty() || root.size() > 6) return "";
  for (char c : root) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return "";
  }
  const double milli = strike * 1000;
  const double rounded = std::round(milli);
  if (!(rounded >= 1 && rounded <= 99999999) || std::abs(milli - rounded) > 1e-6) return "";
  const CivilDate d = CivilFromDays(expiry);
  return fmt::format("{}{:02d}{:02d}{:02d}{}{:08d}", root, d.year % 100, d.month, d.day,
                     RightLetter(right), static_cast<int64_t>(rounded));
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The (expiry, right, strike) of an id EXPIRY:C|P:STRIKE; false when `text` is not one.
bool ParseId(std::string_view text, int32_t* expiry, pricing::OptionType* right, double* strike) {
  const size_t a = text.find(':');
  const size_t b = a == std::string_view::npos ? a : text.find(':', a + 1);
  if (b == std::string_view::npos) return false;
  Result<int32_t> date = market::ParseChainDate(text.substr(0, a));
  if (!date.ok()) return false;
  const std::string r = Upper(text.substr(a + 1, b - a - 1));
  if (r == "C" || r == "CALL") {
    *right = pricing::OptionType::kCall;
  } else if (r == "P" || r == "PUT") {
    *right = pricing::OptionType::kPut;
  } else {
    return false;
  }
  const std::string_view k = text.substr(b + 1);
  auto [p, ec] = std::from_chars(k.data(), k.data() + k.size(), *strike);
  if (ec != std::errc() || p != k.data() + k.size() || !std::isfinite(*strike)) return false;
  *expiry = *date;
  return true;
}

}  // namespace

double ChainDelta(pricing::OptionType right, double s, double k, double r, double vol, double t) {
  const double phi = static_cast<double>(static_cast<int>(right));
  if (!std::isfinite(vol) || t <= 0) {
    return phi * (s - k * std::exp(-r * std::max(t, 0.0))) > 0 ? phi : 0.0;
  }
  const double sd = vol * std::sqrt(t);
  const double d1 = (std::log(s / k) + (r + 0.5 * vol * vol) * t) / sd;
  const double nd1 = pricing::NormalCdf(d1);
  return right == pricing::OptionType::kCall ? nd1 : nd1 - 1;
}

double ChainDayVol(const market::OptionChain& chain, const ChainContract& contract, int64_t row,
                   double s, double t, double rate, double last_vol, ChainVolSource* source) {
  if (row >= 0 && ChainRowQuoted(chain, row)) {
    const double file_iv = chain.implied_vol[row];
    if (std::isfinite(file_iv) && file_iv > 0) {
      *source = ChainVolSource::kFile;
      return file_iv;
    }
    pricing::OptionInputs in;
    in.spot = s;
    in.strike = contract.strike;
    in.rate = rate;
    in.time = t;
    in.type = contract.right;
    Result<double> iv =
        pricing::ImpliedVol(pricing::Model::kBsm, in, (chain.bid[row] + chain.ask[row]) / 2);
    if (iv.ok() && std::isfinite(*iv) && *iv > 0) {
      *source = ChainVolSource::kSolved;
      return *iv;
    }
  }
  *source = std::isfinite(last_vol) ? ChainVolSource::kCarried : ChainVolSource::kNone;
  return last_vol;
}

const char* HedgeSkipName(HedgeSkip skip) {
  switch (skip) {
    case HedgeSkip::kNone:
      return "";
    case HedgeSkip::kNoQuote:
      return "no-quote";
    case HedgeSkip::kExpiresAfterFile:
      return "expires-after-file";
    case HedgeSkip::kExpiryNotQuoted:
      return "expiry-not-a-quote-date";
    case HedgeSkip::kNoUnderlying:
      return "no-underlying-price";
    case HedgeSkip::kTooShort:
      return "too-short";
  }
  return "";
}

std::vector<ChainContract> ListChainContracts(const market::OptionChain& chain) {
  // Key: (expiry, calls first, strike).
  std::map<std::tuple<int32_t, int, double>, ChainContract> by_key;
  for (size_t i = 0; i < chain.size(); ++i) {
    const int side = chain.right[i] == pricing::OptionType::kCall ? 0 : 1;
    ChainContract& c = by_key[{chain.expiry[i], side, chain.strike[i]}];
    if (c.rows.empty()) {
      c.expiry = chain.expiry[i];
      c.right = chain.right[i];
      c.strike = chain.strike[i];
    }
    c.rows.push_back(static_cast<int64_t>(i));  // rows are in quote-date order
  }
  std::vector<ChainContract> out;
  out.reserve(by_key.size());
  for (auto& entry : by_key) {
    ChainContract& c = entry.second;
    c.id = fmt::format("{}:{}:{}", DateText(c.expiry), RightLetter(c.right), c.strike);
    c.occ = OccSymbol(chain.underlying, c.expiry, c.right, c.strike);
    out.push_back(std::move(c));
  }
  return out;
}

int64_t FindChainContract(const std::vector<ChainContract>& contracts, std::string_view text) {
  int32_t expiry = 0;
  pricing::OptionType right = pricing::OptionType::kCall;
  double strike = 0;
  const bool is_id = ParseId(text, &expiry, &right, &strike);
  const std::string upper = Upper(text);
  for (size_t i = 0; i < contracts.size(); ++i) {
    const ChainContract& c = contracts[i];
    if (is_id ? (c.expiry == expiry && c.right == right && c.strike == strike)
              : (!c.occ.empty() && c.occ == upper)) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

double SortedQuantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double w = pos - static_cast<double>(lo);
  return sorted[lo] + w * (sorted[hi] - sorted[lo]);
}

Result<ChainHedgeResult> HedgeChainContract(const market::OptionChain& chain,
                                            const ChainContract& contract,
                                            const ChainHedgeOptions& options) {
  if (!(std::isfinite(options.rate) && std::abs(options.rate) <= pricing::kMaxRate)) {
    return Status::InvalidArgument(
        fmt::format("rate {}: expected a rate per year in [-{:g}, {:g}] (0.05 = 5%)", options.rate,
                    pricing::kMaxRate, pricing::kMaxRate));
  }
  if (!(options.cost >= 0 && options.cost < 1)) {
    return Status::InvalidArgument(fmt::format(
        "cost {}: expected a proportional cost in [0, 1) (0.001 = 0.1%)", options.cost));
  }
  if (options.min_days < 1) {
    return Status::InvalidArgument(
        fmt::format("min_days {}: expected at least 1", options.min_days));
  }
  ChainHedgeResult res;
  res.iv0 = kNaN;
  auto quoted = [&](int64_t row) { return ChainRowQuoted(chain, row); };
  // The start: the first row with a quote before the expiry date.
  size_t first_row = contract.rows.size();
  for (size_t j = 0; j < contract.rows.size(); ++j) {
    const int64_t row = contract.rows[j];
    if (chain.dates[chain.DayOf(row)] < contract.expiry && quoted(row)) {
      first_row = j;
      break;
    }
  }
  if (first_row == contract.rows.size()) {
    res.skip = HedgeSkip::kNoQuote;
    res.why = fmt::format("no quote (bid > 0 and ask > 0) before its expiry {}",
                          DateText(contract.expiry));
    return res;
  }
  const size_t start_day = chain.DayOf(contract.rows[first_row]);
  res.first_date = chain.dates[start_day];
  if (contract.expiry > chain.dates.back()) {
    res.skip = HedgeSkip::kExpiresAfterFile;
    res.why = fmt::format("expires {}, after the chain's last quote date {}",
                          DateText(contract.expiry), DateText(chain.dates.back()));
    return res;
  }
  const auto it = std::lower_bound(chain.dates.begin(), chain.dates.end(), contract.expiry);
  if (it == chain.dates.end() || *it != contract.expiry) {
    res.skip = HedgeSkip::kExpiryNotQuoted;
    res.why = fmt::format(
        "its expiry {} is not a quote date of the chain: no underlying price to settle at",
        DateText(contract.expiry));
    return res;
  }
  const size_t expiry_day = static_cast<size_t>(it - chain.dates.begin());
  for (size_t d = start_day; d <= expiry_day; ++d) {
    const double s = chain.underlying_price[d];
    if (!(std::isfinite(s) && s > 0)) {
      res.skip = HedgeSkip::kNoUnderlying;
      res.why = fmt::format("no underlying price on {}, a quote date of its life",
                            DateText(chain.dates[d]));
      return res;
    }
  }
  res.hedge_days = static_cast<int>(expiry_day - start_day);
  if (res.hedge_days < options.min_days) {
    res.skip = HedgeSkip::kTooShort;
    res.why = fmt::format("{} hedge day{} from {} to its expiry {}, fewer than {}", res.hedge_days,
                          res.hedge_days == 1 ? "" : "s", DateText(res.first_date),
                          DateText(contract.expiry), options.min_days);
    return res;
  }

  const double k = contract.strike, r = options.rate, c = options.cost;
  const double phi = static_cast<double>(static_cast<int>(contract.right));
  {
    const int64_t row = contract.rows[first_row];
    res.premium = (chain.bid[row] + chain.ask[row]) / 2;
    res.half_spread0 = (chain.ask[row] - chain.bid[row]) / 2;
  }
  double cash = res.premium, shares = 0, last_vol = kNaN;
  size_t j = first_row;  // the next of the contract's rows to look at
  for (size_t d = start_day; d < expiry_day; ++d) {
    const double s = chain.underlying_price[d];
    const double t = static_cast<double>(contract.expiry - chain.dates[d]) / 365;
    if (d > start_day) {
      const double dt = static_cast<double>(chain.dates[d] - chain.dates[d - 1]) / 365;
      const double interest = cash * std::expm1(r * dt);
      cash += interest;
      res.interest += interest;
    }
    while (j < contract.rows.size() && chain.DayOf(contract.rows[j]) < d) ++j;
    const int64_t row =
        j < contract.rows.size() && chain.DayOf(contract.rows[j]) == d ? contract.rows[j] : -1;
    if (row >= 0 && quoted(row)) ++res.quoted_days;
    ChainVolSource source = ChainVolSource::kNone;
    const double vol = ChainDayVol(chain, contract, row, s, t, r, last_vol, &source);
    switch (source) {
      case ChainVolSource::kFile:
        ++res.file_iv_days;
        break;
      case ChainVolSource::kSolved:
        ++res.solved_iv_days;
        break;
      case ChainVolSource::kCarried:
        ++res.carried_iv_days;
        break;
      case ChainVolSource::kNone:
        ++res.no_iv_days;
        break;
    }
    last_vol = vol;
    if (d == start_day) {
      res.spot0 = s;
      res.iv0 = vol;
    }
    const double target = ChainDelta(contract.right, s, k, r, vol, t);
    const double traded = target - shares;
    const double fee = c * std::abs(traded) * s;
    cash -= traded * s + fee;
    res.costs += fee;
    shares = target;
  }
  const double s_t = chain.underlying_price[expiry_day];
  {
    const double dt =
        static_cast<double>(chain.dates[expiry_day] - chain.dates[expiry_day - 1]) / 365;
    const double interest = cash * std::expm1(r * dt);
    cash += interest;
    res.interest += interest;
  }
  const double fee = c * std::abs(shares) * s_t;
  cash += shares * s_t - fee;
  res.costs += fee;
  res.spot_expiry = s_t;
  res.payoff = std::max(phi * (s_t - k), 0.0);
  res.pnl = cash - res.payoff;
  res.pnl_over_premium = res.premium > 0 ? res.pnl / res.premium : kNaN;
  return res;
}

}  // namespace rlt::env
