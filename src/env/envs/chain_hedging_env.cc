// rltrade env: ChainHedgingEnv implementation (see chain_hedging_env.h).
#include "env/envs/chain_hedging_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/civil_time.h"
#include "market/date_range.h"
#include "market/option_chain_csv.h"

namespace rlt::env {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string DateText(int32_t days) { return FormatDate(DateKey(CivilFromDays(days))); }

// Days since 1970-01-01 of a yyyymmdd key.
int32_t DaysOfKey(int32_t key) {
  return static_cast<int32_t>(DaysFromCivil(key / 10000, key / 100 % 100, key % 100));
}

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

// The path keys a chain replaces, set to other than their defaults.
std::vector<std::string> PathKeysSet(const HedgingOptions& o) {
  const HedgingOptions d;
  std::vector<std::string> keys;
  if (o.option_type != d.option_type) keys.emplace_back("option_type");
  if (o.spot != d.spot) keys.emplace_back("spot");
  if (o.strike != d.strike) keys.emplace_back("strike");
  if (o.drift != d.drift) keys.emplace_back("drift");
  if (o.vol != d.vol) keys.emplace_back("vol");
  if (o.maturity_weeks != d.maturity_weeks) keys.emplace_back("maturity_weeks");
  if (o.step_weeks != d.step_weeks) keys.emplace_back("step_weeks");
  if (o.rebalance_every != d.rebalance_every) keys.emplace_back("rebalance_every");
  if (o.paths != d.paths) keys.emplace_back("paths");
  if (o.garch_alpha != d.garch_alpha) keys.emplace_back("garch_alpha");
  if (o.garch_beta != d.garch_beta) keys.emplace_back("garch_beta");
  return keys;
}

}  // namespace

Result<std::shared_ptr<const HedgingChainData>> PrepareHedgingChain(const HedgingOptions& o) {
  const std::vector<std::string> path_keys = PathKeysSet(o);
  if (!path_keys.empty()) {
    std::string names;
    for (const std::string& k : path_keys) names += (names.empty() ? "" : ", ") + k;
    return Status::InvalidArgument(
        "[env] " + names + " cannot be given with chain_file: the contract (strike, expiry, " +
        "call/put), the underlying's path and the vols come from the chain file, and every " +
        "quote date is a rebalancing date. Fix: drop " + names +
        ", or drop chain_file to simulate paths");
  }
  if (o.min_days < 1) {
    return Status::InvalidArgument("[env] min_days = " + std::to_string(o.min_days) +
                                   ": expected at least 1 hedge day");
  }
  market::DateRange range;
  if (!o.range.empty()) {
    Result<market::DateRange> parsed = market::DateRange::Parse(o.range);
    if (!parsed.ok()) {
      return Status::InvalidArgument("[env] range = '" + o.range +
                                     "': " + parsed.status().message());
    }
    range = *parsed;
  }
  auto data = std::make_shared<HedgingChainData>();
  data->path = o.chain_file.str();
  Result<market::OptionChain> chain =
      market::ReadOptionChainCsv(data->path, market::ChainReadOptions{});
  if (!chain.ok()) {
    return Status::FromCode(static_cast<int>(chain.status().code()),
                            "[env] chain_file: " + chain.status().message());
  }
  data->chain = std::move(*chain);
  const market::OptionChain& c = data->chain;
  if (c.num_days() == 0) {
    return Status::InvalidArgument("[env] chain_file " + data->path + " has no quote dates");
  }
  // Coverage as the options environment's: a date in the range, and the range's ends within
  // a week of non-trading days of the file's first and last dates.
  if (!o.range.empty()) {
    const int32_t first = c.dates.front(), last = c.dates.back();
    bool any = false;
    for (int32_t day : c.dates) any = any || range.Contains(DateKey(CivilFromDays(day)));
    constexpr int kSlackDays = 7;
    const bool covered = any &&
                         (range.first == 0 || first <= DaysOfKey(range.first) + kSlackDays) &&
                         (range.last == 0 || last >= DaysOfKey(range.last) - kSlackDays);
    if (!covered) {
      return Status::InvalidArgument(
          "[env] chain_file " + data->path + " has quote dates " + DateText(first) + " to " +
          DateText(last) + " (" + std::to_string(c.num_days()) +
          " dates), which do not cover range " + range.ToString() +
          " (the [split] range trained or evaluated on); choose [split] ranges within those "
          "dates or a chain file that covers the range");
    }
  }
  const std::vector<ChainContract> all = ListChainContracts(c);
  ChainHedgeOptions hedge;
  hedge.rate = o.rate;
  hedge.cost = o.cost;
  hedge.min_days = o.min_days;
  const std::string listing =
      "`rltrade hedge --chain " + data->path + " --contract list` prints the file's contracts";
  std::vector<int64_t> chosen;
  const bool named = Trim(o.contracts) != "all";
  if (named) {
    size_t begin = 0;
    while (begin <= o.contracts.size()) {
      size_t end = o.contracts.find(',', begin);
      if (end == std::string::npos) end = o.contracts.size();
      const std::string id = Trim(o.contracts.substr(begin, end - begin));
      begin = end + 1;
      if (id.empty()) continue;
      const int64_t i = FindChainContract(all, id);
      if (i < 0) {
        return Status::InvalidArgument(
            "[env] contracts: '" + id + "' is not a contract of chain_file " + data->path +
            "; expected \"all\" or comma-separated ids EXPIRY:C|P:STRIKE (e.g. " +
            (all.empty() ? std::string("2018-01-31:C:2700") : all.front().id) +
            ") or OCC symbols; " + listing);
      }
      if (std::find(chosen.begin(), chosen.end(), i) == chosen.end()) chosen.push_back(i);
    }
    if (chosen.empty()) {
      return Status::InvalidArgument("[env] contracts = '" + o.contracts +
                                     "': expected \"all\" or contract ids; " + listing);
    }
    std::sort(chosen.begin(), chosen.end());
  } else {
    for (size_t i = 0; i < all.size(); ++i) chosen.push_back(static_cast<int64_t>(i));
  }
  for (int64_t i : chosen) {
    RLT_ASSIGN_OR_RETURN(ChainHedgeResult check, HedgeChainContract(c, all[i], hedge));
    if (check.skip != HedgeSkip::kNone) {
      if (named) {
        return Status::InvalidArgument("[env] contracts: " + all[i].id +
                                       " cannot be hedged along chain_file " + data->path + ": " +
                                       check.why + " (" + HedgeSkipName(check.skip) + ")");
      }
      continue;
    }
    // The whole life, first quote to expiry, inside the range: a contract sold late in the
    // training range would otherwise be marked on the test range's prices.
    if (!range.Contains(DateKey(CivilFromDays(check.first_date))) ||
        !range.Contains(DateKey(CivilFromDays(all[i].expiry)))) {
      continue;
    }
    data->contracts.push_back(all[i]);
    data->checks.push_back(std::move(check));
  }
  if (data->contracts.empty()) {
    return Status::InvalidArgument(
        "[env] chain_file " + data->path + ": no contract" + (named ? " of contracts" : "") +
        " lives within range " + (o.range.empty() ? "(all)" : o.range) +
        " (first quote date to expiry)" + " and at least min_days = " + std::to_string(o.min_days) +
        " hedge days before its expiry (with a quote and its expiry a quote date of the file); " +
        listing + " and `--contract all` why each is skipped");
  }
  return std::shared_ptr<const HedgingChainData>(std::move(data));
}

Result<std::unique_ptr<ChainHedgingEnv>> ChainHedgingEnv::Create(
    const HedgingOptions& o, std::shared_ptr<const HedgingChainData> data) {
  auto bad = [](const std::string& key, double value, const std::string& expected) {
    return Status::InvalidArgument(fmt::format("[env] {} = {}: expected {}", key, value, expected));
  };
  if (!(std::fabs(o.rate) <= 1)) return bad("rate", o.rate, "a rate in [-1, 1] (0.05 = 5%)");
  if (!(o.quantity > 0 && o.quantity <= 1e9)) {
    return bad("quantity", o.quantity, "a number of options in (0, 1e9]");
  }
  if (!(o.cost >= 0 && o.cost < 1)) return bad("cost", o.cost, "a fraction in [0, 1)");
  if (!(o.risk_aversion >= 0 && std::isfinite(o.risk_aversion))) {
    return bad("risk_aversion", o.risk_aversion, "a finite number >= 0");
  }
  if (data == nullptr || data->contracts.empty()) {
    return Status::InvalidArgument("[env] chain_file: no contract to hedge");
  }
  return std::unique_ptr<ChainHedgingEnv>(new ChainHedgingEnv(o, std::move(data)));
}

ChainHedgingEnv::ChainHedgingEnv(const HedgingOptions& options,
                                 std::shared_ptr<const HedgingChainData> data)
    : options_(options), data_(std::move(data)) {
  spec_.id = "hedging";
  spec_.obs_dim = kObsDim;
  spec_.action.discrete = false;
  spec_.action.dim = 1;
  spec_.action.low = {-DeltaHedgingEnv::kMaxHedge};
  spec_.action.high = {DeltaHedgingEnv::kMaxHedge};
  spec_.info_names = {"spot",  "hedge",   "cash", "option_value", "wealth",
                      "costs", "pv_cost", "date", "contract"};
}

void ChainHedgingEnv::EnterDay(size_t day) {
  const market::OptionChain& c = data_->chain;
  const ChainContract& k = data_->contracts[contract_];
  day_ = static_cast<int64_t>(day);
  spot_ = c.underlying_price[day];
  const double t = static_cast<double>(k.expiry - c.dates[day]) / 365;
  // The contract's row on this day (rows ascend by quote date).
  const auto it = std::lower_bound(k.rows.begin(), k.rows.end(), day, [&c](int64_t row, size_t d) {
    return c.DayOf(static_cast<size_t>(row)) < d;
  });
  const int64_t row = it != k.rows.end() && c.DayOf(static_cast<size_t>(*it)) == day ? *it : -1;
  ChainVolSource source = ChainVolSource::kNone;
  vol_ = ChainDayVol(c, k, row, spot_, t, options_.rate, vol_, &source);
  delta_ = ChainDelta(k.right, spot_, k.strike, options_.rate, vol_, t);
  if (row >= 0 && ChainRowQuoted(c, row)) {
    value_ = (c.bid[row] + c.ask[row]) / 2;
  } else if (std::isfinite(vol_)) {
    pricing::OptionInputs in;
    in.type = k.right;
    in.spot = spot_;
    in.strike = k.strike;
    in.rate = options_.rate;
    in.vol = vol_;
    in.time = t;
    Result<double> price = pricing::BsmPrice(in);
    value_ = price.ok() ? *price : 0.0;
  } else {
    const double phi = static_cast<double>(static_cast<int>(k.right));
    value_ = std::max(phi * (spot_ - k.strike * std::exp(-options_.rate * t)), 0.0);
  }
}

void ChainHedgingEnv::Reset(float* obs, double* info) {
  const int n = num_contracts();
  if (options_.sequential) {
    contract_ = next_ % n;
    next_ = (next_ + 1) % n;
  } else {
    contract_ = static_cast<int>(rng_.UniformInt(static_cast<uint64_t>(n)));
  }
  const market::OptionChain& c = data_->chain;
  const ChainContract& k = data_->contracts[contract_];
  const auto first =
      std::lower_bound(c.dates.begin(), c.dates.end(), data_->checks[contract_].first_date);
  const auto expiry = std::lower_bound(c.dates.begin(), c.dates.end(), k.expiry);
  start_day_ = first - c.dates.begin();
  expiry_day_ = expiry - c.dates.begin();
  premium_ = data_->checks[contract_].premium;
  shares_ = 0;
  costs_ = 0;
  settled_ = false;
  cash_ = options_.quantity * premium_;  // the premium received
  vol_ = kNaN;
  EnterDay(static_cast<size_t>(start_day_));
  value_ = premium_;  // the sale's mid (EnterDay marks the same quoted row)
  Write(obs, info);
}

StepResult ChainHedgingEnv::Step(const float* action, float* obs, double* info) {
  const HedgingOptions& o = options_;
  const market::OptionChain& c = data_->chain;
  if (settled_) {  // stepped past the end without a reset: nothing left to hedge
    StepResult done;
    done.terminated = true;
    Write(obs, info);
    return done;
  }
  const double wealth_before = cash_ + shares_ * spot_ - o.quantity * value_;
  if (std::isfinite(action[0])) {
    const double limit = DeltaHedgingEnv::kMaxHedge;
    const double ratio = std::clamp(static_cast<double>(action[0]), -limit, limit);
    const double target = ratio * o.quantity;
    const double traded = target - shares_;
    const double fee = o.cost * std::fabs(traded) * spot_;
    cash_ -= traded * spot_ + fee;
    costs_ += fee;
    shares_ = target;
  }
  const size_t next = static_cast<size_t>(day_) + 1;
  const double dt = static_cast<double>(c.dates[next] - c.dates[day_]) / 365;
  cash_ += cash_ * std::expm1(o.rate * dt);
  StepResult r;
  if (static_cast<int64_t>(next) >= expiry_day_) {  // expiry: settle, sell the hedge
    day_ = static_cast<int64_t>(next);
    spot_ = c.underlying_price[next];
    const ChainContract& k = data_->contracts[contract_];
    const double phi = static_cast<double>(static_cast<int>(k.right));
    const double payoff = std::max(phi * (spot_ - k.strike), 0.0);
    const double fee = o.cost * std::fabs(shares_) * spot_;
    cash_ += shares_ * spot_ - fee - o.quantity * payoff;
    costs_ += fee;
    shares_ = 0;
    value_ = 0;
    delta_ = 0;
    settled_ = true;
    r.terminated = true;
  } else {
    EnterDay(next);
  }
  const double pnl = cash_ + shares_ * spot_ - o.quantity * value_ - wealth_before;
  r.reward = static_cast<float>(pnl - 0.5 * o.risk_aversion * pnl * pnl);
  Write(obs, info);
  return r;
}

void ChainHedgingEnv::SaveState(StateWriter& out) const {
  Env::SaveState(out);  // rng_
  out.Put<int32_t>(next_);
  out.Put<int32_t>(contract_);
  out.Put<int64_t>(day_);
  out.PutBool(settled_);
  for (double x : {spot_, shares_, cash_, value_, delta_, vol_, costs_}) out.Put<double>(x);
}

Status ChainHedgingEnv::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(Env::LoadState(in));
  int32_t next = 0, contract = 0;
  int64_t day = 0;
  bool settled = false;
  RLT_RETURN_IF_ERROR(in.Get(&next, "hedging next contract"));
  RLT_RETURN_IF_ERROR(in.Get(&contract, "hedging contract"));
  RLT_RETURN_IF_ERROR(in.Get(&day, "hedging day"));
  uint8_t flag = 0;
  RLT_RETURN_IF_ERROR(in.Get(&flag, "hedging settled"));
  settled = flag != 0;
  double v[7];
  const char* names[7] = {"spot", "shares", "cash", "value", "delta", "vol", "costs"};
  for (int i = 0; i < 7; ++i) {
    RLT_RETURN_IF_ERROR(in.Get(&v[i], names[i]));
    if (i != 5 && !std::isfinite(v[i])) {
      return in.Error(std::string("hedging ") + names[i] + " is not finite");
    }
  }
  const int n = num_contracts();
  if (next < 0 || next >= n || contract < 0 || contract >= n) {
    return in.Error("hedging contract out of range (" + std::to_string(n) + " contracts)");
  }
  const market::OptionChain& c = data_->chain;
  const ChainContract& k = data_->contracts[contract];
  const int64_t start =
      std::lower_bound(c.dates.begin(), c.dates.end(), data_->checks[contract].first_date) -
      c.dates.begin();
  const int64_t expiry =
      std::lower_bound(c.dates.begin(), c.dates.end(), k.expiry) - c.dates.begin();
  if (day < start || day > expiry) {
    return in.Error("hedging day " + std::to_string(day) + " is outside the contract's life");
  }
  next_ = next;
  contract_ = contract;
  start_day_ = start;
  expiry_day_ = expiry;
  premium_ = data_->checks[contract].premium;
  day_ = day;
  settled_ = settled;
  spot_ = v[0];
  shares_ = v[1];
  cash_ = v[2];
  value_ = v[3];
  delta_ = v[4];
  vol_ = v[5];
  costs_ = v[6];
  return Status::Ok();
}

void ChainHedgingEnv::Write(float* obs, double* info) const {
  const HedgingOptions& o = options_;
  const market::OptionChain& c = data_->chain;
  const ChainContract& k = data_->contracts[contract_];
  const double life = static_cast<double>(k.expiry - c.dates[start_day_]);
  const double left = static_cast<double>(k.expiry - c.dates[day_]);
  obs[0] = static_cast<float>(life > 0 ? left / life : 0.0);
  obs[1] = static_cast<float>(std::log(spot_ / k.strike));
  obs[2] = static_cast<float>(shares_ / o.quantity);
  obs[3] = static_cast<float>(delta_);
  obs[4] = static_cast<float>(std::isfinite(vol_) ? vol_ : 0.0);
  obs[5] = 1.0f;
  const double wealth = cash_ + shares_ * spot_ - o.quantity * value_;
  const double years = static_cast<double>(c.dates[day_] - c.dates[start_day_]) / 365;
  info[kInfoSpot] = spot_;
  info[kInfoHedge] = shares_ / o.quantity;
  info[kInfoCash] = cash_;
  info[kInfoOptionValue] = o.quantity * value_;
  info[kInfoWealth] = wealth;
  info[kInfoCosts] = costs_;
  info[kInfoPvCost] = o.quantity * premium_ - std::exp(-o.rate * years) * wealth;
  info[kInfoDate] = c.dates[day_];
  info[kInfoContract] = contract_;
}

}  // namespace rlt::env
