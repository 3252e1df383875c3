// rltrade cli: `rltrade hedge` — Monte Carlo delta hedging of a short European call:
// the option's Black-Scholes price, and the mean and standard deviation of
// the present value of the cost of hedging it, over N simulated paths.
//
// The simulation is env::SimulateHedging on the "hedging" environment
// (env/envs/delta_hedging.h) with the command's parameters: one env step per
// rebalancing interval (--rebalance-weeks; the last interval is shorter when it does not
// divide --maturity-weeks), GBM paths with the real-world drift --drift, cash earning
// --rate, proportional costs --cost on every trade and on the final sale, one option sold
// (quantity 1: every figure is per option).
// The policy is the Black-Scholes delta (`bs-delta`) or a trained run's policy (RUN_DIR,
// trained on env id "hedging"; its other [env] settings are kept, the command's
// parameters replace theirs), run deterministically through learn::PolicyRunner.
//
// With --chain FILE --contract ID|all|list the command hedges listed contracts of an option
// chain along their real quoted lives instead (env/envs/chain_hedging.h): the contract,
// the underlying's path and the vols come from the file, so --spot, --strike, --drift,
// --vol, --maturity-weeks, --rebalance-weeks, --paths and --seed are refused with it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/numeric_flags.h"
#include "config/config.h"
#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "env/envs/chain_hedging.h"
#include "env/envs/delta_hedging.h"
#include "learn/inference.h"
#include "market/option_chain_csv.h"
#include "pricing/pricing.h"
#include "train/train_options.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;

// The most environment steps (paths x rebalancing steps) one `hedge` run may take, and
// the measured speed of the bs-delta simulation on one core (Release build).
constexpr double kMaxHedgeEnvSteps = 1e9;
constexpr double kHedgeStepsPerSecond = 5e6;

struct HedgeFlags {
  double spot = 0, strike = 0, rate = 0, drift = 0, vol = 0;
  double maturity_weeks = 0, rebalance_weeks = 0;
  int64_t paths = 0;
  std::string policy;
  double cost = 0;
  uint64_t seed = 1;
  bool json = false;
  // --chain mode.
  std::string chain, contract, out, on_bad_rows = "fail";
  int64_t min_days = 5;
  // The flags given on the command line (long names), filled after parsing.
  std::set<std::string> given;
};

// The simulation's flags that --chain replaces (the file gives the contract and the path).
const char* const kReplacedByChain[] = {
    "--spot",           "--strike",          "--drift", "--vol",
    "--maturity-weeks", "--rebalance-weeks", "--paths", "--seed"};
// The simulation's required flags (without --chain).
const char* const kSimulationRequired[] = {
    "--spot",           "--strike",          "--rate",  "--drift", "--vol",
    "--maturity-weeks", "--rebalance-weeks", "--paths", "--policy"};
// The flags of --chain mode only.
const char* const kChainOnly[] = {"--contract", "--min-days", "--out", "--on-bad-rows"};

Status CheckFlags(const HedgeFlags& f) {
  auto positive = [](const char* flag, double v, const char* what) -> Status {
    if (std::isfinite(v) && v > 0) return Status::Ok();
    return Status::InvalidArgument(
        fmt::format("{} {}: expected {} > 0 (a finite number)", flag, v, what));
  };
  auto finite = [](const char* flag, double v, const char* what) -> Status {
    if (std::isfinite(v)) return Status::Ok();
    return Status::InvalidArgument(
        fmt::format("{} {}: expected {} (a finite number)", flag, v, what));
  };
  RLT_RETURN_IF_ERROR(positive("--spot", f.spot, "the underlying's price"));
  RLT_RETURN_IF_ERROR(positive("--strike", f.strike, "the strike"));
  RLT_RETURN_IF_ERROR(positive("--vol", f.vol, "a volatility per sqrt(year), e.g. 0.2"));
  RLT_RETURN_IF_ERROR(finite("--rate", f.rate, "a rate per year, e.g. 0.05"));
  RLT_RETURN_IF_ERROR(finite("--drift", f.drift, "a drift per year, e.g. 0.13"));
  RLT_RETURN_IF_ERROR(positive("--maturity-weeks", f.maturity_weeks, "weeks to maturity"));
  if (!(f.rebalance_weeks > 0 && f.rebalance_weeks <= f.maturity_weeks)) {
    return Status::InvalidArgument(
        fmt::format("--rebalance-weeks {}: expected 0 < D <= --maturity-weeks ({})",
                    f.rebalance_weeks, f.maturity_weeks));
  }
  if (f.paths < 1 || f.paths > env::kMaxHedgePaths) {
    return Status::InvalidArgument(
        fmt::format("--paths {}: expected 1 to {}", f.paths, env::kMaxHedgePaths));
  }
  if (!(f.cost >= 0 && f.cost < 1)) {
    return Status::InvalidArgument(fmt::format(
        "--cost {}: expected a proportional cost in [0, 1) (0.001 = 0.1% of traded value)",
        f.cost));
  }
  if (f.policy.empty()) {
    return Status::InvalidArgument("--policy: expected bs-delta or a run directory");
  }
  return Status::Ok();
}

// The run's [env] settings (minus id and num_envs) after checking it trained "hedging".
Result<std::map<std::string, std::string>> RunEnvSettings(const std::string& run_dir) {
  const fs::path config_path = fs::path(run_dir) / "config.toml";
  if (!fs::exists(config_path)) {
    return Status::NotFound(fmt::format(
        "--policy {}: neither bs-delta nor a run directory (no config.toml); pass bs-delta or "
        "a directory written by `rltrade train` (for multi-seed runs, RUN/seed_<N>)",
        run_dir));
  }
  RLT_ASSIGN_OR_RETURN(config::Config config, train::LoadConfig(config_path.string()));
  const config::ConfigValue* id = config.Get("env", "id");
  if (id == nullptr || id->text != "hedging") {
    return Status::InvalidArgument(fmt::format(
        "--policy {}: rltrade hedge needs a run trained on the hedging environment ([env] id = "
        "\"hedging\"), but {} has {}",
        run_dir, config_path.string(),
        id == nullptr ? std::string("no [env] id") : "[env] id = \"" + id->text + "\""));
  }
  std::map<std::string, std::string> settings;
  if (const config::Section* s = config.Find("env")) {
    for (const auto& [key, value] : s->entries) {
      if (key != "id" && key != "num_envs") settings[key] = value.text;
    }
  }
  return settings;
}

Result<env::HedgingOptions> MakeOptions(const HedgeFlags& f,
                                        const std::map<std::string, std::string>& base) {
  env::HedgingOptions o;
  RLT_RETURN_IF_ERROR(SetOptions(o, base, "[env]"));
  o.option_type = "call";
  o.spot = f.spot;
  o.strike = f.strike;
  o.rate = f.rate;
  o.drift = f.drift;
  o.vol = f.vol;
  o.maturity_weeks = f.maturity_weeks;
  o.step_weeks = f.rebalance_weeks;
  o.rebalance_every = 1;
  o.cost = f.cost;
  o.paths = "gbm";
  o.quantity = 1;
  return o;
}

// ---------------------------------------------------------------------------------------
// --chain: listed contracts along their quoted lives.

std::string Day(int32_t days) { return FormatDate(DateKey(CivilFromDays(days))); }

const char* TypeName(pricing::OptionType t) {
  return t == pricing::OptionType::kCall ? "call" : "put";
}

// A JSON number, null when not finite.
nlohmann::json Num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

struct Hedged {
  const env::ChainContract* contract;
  env::ChainHedgeResult result;
};

nlohmann::json ResultJson(const env::ChainContract& c, const env::ChainHedgeResult& r) {
  nlohmann::json j = {{"contract", c.id},
                      {"occ", c.occ},
                      {"type", TypeName(c.right)},
                      {"strike", c.strike},
                      {"expiry", Day(c.expiry)},
                      {"first_date", Day(r.first_date)},
                      {"hedge_days", r.hedge_days},
                      {"quoted_days", r.quoted_days},
                      {"iv_days",
                       {{"file", r.file_iv_days},
                        {"solved", r.solved_iv_days},
                        {"carried", r.carried_iv_days},
                        {"none", r.no_iv_days}}},
                      {"spot0", r.spot0},
                      {"iv0", Num(r.iv0)},
                      {"premium", r.premium},
                      {"half_spread0", r.half_spread0},
                      {"spot_expiry", r.spot_expiry},
                      {"payoff", r.payoff},
                      {"costs", r.costs},
                      {"interest", r.interest},
                      {"pnl", r.pnl},
                      {"pnl_over_premium", Num(r.pnl_over_premium)}};
  return j;
}

std::string CsvNum(double v) { return std::isfinite(v) ? fmt::format("{:.17g}", v) : ""; }

// One row per hedged contract, written atomically.
Status WriteResultsCsv(const std::string& path, const std::vector<Hedged>& rows) {
  std::string text =
      "contract,occ,type,strike,expiry,first_date,hedge_days,quoted_days,file_iv_days,"
      "solved_iv_days,carried_iv_days,no_iv_days,spot0,iv0,premium,half_spread0,spot_expiry,"
      "payoff,costs,interest,pnl,pnl_over_premium\n";
  for (const Hedged& h : rows) {
    const env::ChainContract& c = *h.contract;
    const env::ChainHedgeResult& r = h.result;
    text += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", c.id,
                        c.occ, TypeName(c.right), CsvNum(c.strike), Day(c.expiry),
                        Day(r.first_date), r.hedge_days, r.quoted_days, r.file_iv_days,
                        r.solved_iv_days, r.carried_iv_days, r.no_iv_days, CsvNum(r.spot0),
                        CsvNum(r.iv0), CsvNum(r.premium), CsvNum(r.half_spread0),
                        CsvNum(r.spot_expiry), CsvNum(r.payoff), CsvNum(r.costs),
                        CsvNum(r.interest), CsvNum(r.pnl), CsvNum(r.pnl_over_premium));
  }
  Status s = WriteFileAtomic(path, text);
  if (!s.ok()) return Status::IoError("--out " + path + ": " + s.message());
  return Status::Ok();
}

struct Distribution {
  double mean = 0, sd = 0, q[5] = {0, 0, 0, 0, 0};
};
constexpr double kQuantiles[5] = {0.05, 0.25, 0.5, 0.75, 0.95};
constexpr const char* kQuantileKeys[5] = {"q05", "q25", "q50", "q75", "q95"};

Distribution Describe(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - d.mean) * (x - d.mean);
  d.sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  for (int i = 0; i < 5; ++i) d.q[i] = env::SortedQuantile(v, kQuantiles[i]);
  return d;
}

nlohmann::json DistributionJson(const Distribution& d) {
  nlohmann::json j = {{"mean", d.mean}, {"sd", d.sd}};
  for (int i = 0; i < 5; ++i) j[kQuantileKeys[i]] = d.q[i];
  return j;
}

// The flags of --chain mode, before the file is read.
Status CheckChainFlags(const HedgeFlags& f) {
  std::vector<std::string> conflicting;
  for (const char* flag : kReplacedByChain) {
    if (f.given.count(flag) > 0) conflicting.push_back(flag);
  }
  if (!conflicting.empty()) {
    return (Status::Refused(fmt::format(
        "hedge --chain: {} cannot be given with --chain: the contract (strike, expiry, "
        "call/put), the underlying's path and the vols come from the chain file, and every "
        "quote date is a rebalancing date. Fix: drop {}, or drop --chain to simulate paths",
        fmt::join(conflicting, ", "), conflicting.size() == 1 ? "it" : "them")));
  }
  if (f.contract.empty()) {
    return (Status::Refused(
        "hedge --chain: --contract is required: an id EXPIRY:C|P:STRIKE (e.g. "
        "2018-01-31:C:2700) or OCC symbol (e.g. SPXW180131C02700000), `all`, or `list` to "
        "print the chain's contracts"));
  }
  if (f.given.count("--policy") > 0 && f.policy != "bs-delta") {
    return (Status::InvalidArgument(
        "--policy " + f.policy +
        ": with --chain only bs-delta (the Black-Scholes delta at the day's implied vol) is "
        "supported; a trained policy hedges simulated paths (drop --chain)"));
  }
  if (!(std::isfinite(f.rate) && std::abs(f.rate) <= pricing::kMaxRate)) {
    return (Status::InvalidArgument(
        fmt::format("--rate {}: expected a continuously compounded rate per year in [-{:g}, "
                    "{:g}] (0.05 = 5%)",
                    f.rate, pricing::kMaxRate, pricing::kMaxRate)));
  }
  if (!(f.cost >= 0 && f.cost < 1)) {
    return (Status::InvalidArgument(fmt::format(
        "--cost {}: expected a proportional cost in [0, 1) (0.001 = 0.1% of traded value)",
        f.cost)));
  }
  if (f.min_days < 1 || f.min_days > 100000) {
    return (Status::InvalidArgument(fmt::format(
        "--min-days {}: expected 1 to 100000 hedge days (quote dates from the sale to the day "
        "before expiry)",
        f.min_days)));
  }
  if (f.on_bad_rows != "fail" && f.on_bad_rows != "drop") {
    return (Status::InvalidArgument("--on-bad-rows " + f.on_bad_rows + ": expected fail or drop"));
  }
  return Status::Ok();
}

// --contract ID: one contract's hedge.
int HedgeOneContract(const HedgeFlags& f, const market::OptionChain& c,
                     const std::vector<env::ChainContract>& contracts,
                     const env::ChainHedgeOptions& options, int64_t dropped) {
  if (f.given.count("--min-days") > 0) {
    return ReportError(
        Status::Refused("hedge --chain: --min-days applies to --contract all and list only"));
  }
  const int64_t index = env::FindChainContract(contracts, f.contract);
  if (index < 0) {
    return ReportError(Status::NotFound(fmt::format(
        "--contract {}: no such contract in {} ({} contracts). Expected EXPIRY:C|P:STRIKE "
        "(e.g. {}){}, `all` or `list`; `rltrade hedge --chain {} --contract list` prints "
        "them",
        f.contract, f.chain, contracts.size(), contracts.front().id,
        contracts.front().occ.empty() ? ""
                                      : " or an OCC symbol (e.g. " + contracts.front().occ + ")",
        f.chain)));
  }
  const env::ChainContract& contract = contracts[static_cast<size_t>(index)];
  Result<env::ChainHedgeResult> r = env::HedgeChainContract(c, contract, options);
  if (!r.ok()) return ReportError(r.status());
  if (r->skip != env::HedgeSkip::kNone) {
    return ReportError(Status::DataError(fmt::format(
        "--contract {}: cannot be hedged along its life in {}: {} ({}){}", contract.id, f.chain,
        r->why, env::HedgeSkipName(r->skip),
        r->skip == env::HedgeSkip::kNoUnderlying
            ? ". The chain needs an underlying price column (underlying_last, "
              "underlying_price, S, ...) on every quote date; a separate bar file of the "
              "underlying is not supported"
            : "")));
  }
  if (!f.out.empty()) {
    Status w = WriteResultsCsv(f.out, {Hedged{&contract, *r}});
    if (!w.ok()) return ReportError(w);
  }
  if (f.json) {
    nlohmann::json j = ResultJson(contract, *r);
    j["rate"] = options.rate;
    j["cost"] = f.cost;
    j["rows_dropped"] = dropped;
    fmt::print("{}\n", JsonText(j, 2));
    return 0;
  }
  fmt::print(
      "short 1 {} {} strike {} expiring {}, sold {} at the mid {:.6f} (half spread "
      "{:.6f}), S={}\n",
      contract.id, TypeName(contract.right), contract.strike, Day(contract.expiry),
      Day(r->first_date), r->premium, r->half_spread0, r->spot0);
  fmt::print(
      "hedged with the Black-Scholes delta on {} quote dates ({} quoted; vol from the "
      "file {}, solved from the mid {}, carried {}, none yet {}), rate {}, cost {}\n",
      r->hedge_days, r->quoted_days, r->file_iv_days, r->solved_iv_days, r->carried_iv_days,
      r->no_iv_days, options.rate, f.cost);
  fmt::print("settled at S={} : payoff {:.6f}\n", r->spot_expiry, r->payoff);
  fmt::print("costs            {:.6f}\n", r->costs);
  fmt::print("interest         {:.6f}\n", r->interest);
  fmt::print("pnl              {:.6f}   (hedging error at expiry; > 0: the seller kept money)\n",
             r->pnl);
  fmt::print("pnl_over_premium {:.4f}\n", r->pnl_over_premium);
  if (dropped > 0) fmt::print("({} bad rows of {} dropped)\n", dropped, f.chain);
  return 0;
}

// --contract all (and list): every contract.
int HedgeAllContracts(const HedgeFlags& f, const market::OptionChain& c,
                      const std::vector<env::ChainContract>& contracts,
                      const env::ChainHedgeOptions& options, int64_t dropped, bool list) {
  std::vector<Hedged> hedged;
  std::map<std::string, int64_t> skipped;
  std::map<std::string, std::string> skip_example;
  std::vector<std::pair<const env::ChainContract*, env::ChainHedgeResult>> listed;
  for (const env::ChainContract& contract : contracts) {
    Result<env::ChainHedgeResult> r = env::HedgeChainContract(c, contract, options);
    if (!r.ok()) return ReportError(r.status());
    if (list) listed.emplace_back(&contract, *r);
    if (r->skip == env::HedgeSkip::kNone) {
      hedged.push_back(Hedged{&contract, *r});
    } else {
      const std::string name = env::HedgeSkipName(r->skip);
      if (skipped[name]++ == 0) skip_example[name] = contract.id + ": " + r->why;
    }
  }
  if (list) {
    if (f.json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& entry : listed) {
        arr.push_back({{"contract", entry.first->id},
                       {"occ", entry.first->occ},
                       {"hedge_days", entry.second.hedge_days},
                       {"skip", env::HedgeSkipName(entry.second.skip)},
                       {"why", entry.second.why}});
      }
      fmt::print("{}\n", JsonText(arr, 2));
      return 0;
    }
    fmt::print("{:<22} {:<22} {:>10}  {}\n", "contract", "occ", "hedge_days", "status");
    for (const auto& entry : listed) {
      fmt::print("{:<22} {:<22} {:>10}  {}\n", entry.first->id, entry.first->occ,
                 entry.second.hedge_days,
                 entry.second.skip == env::HedgeSkip::kNone ? std::string("ok") : entry.second.why);
    }
    return 0;
  }
  if (hedged.empty()) {
    std::string why;
    for (const auto& [name, n] : skipped) {
      why += fmt::format("; {} {} (e.g. {})", n, name, skip_example[name]);
    }
    return ReportError(Status::DataError(fmt::format(
        "hedge --chain {} --contract all: none of its {} contracts can be hedged along its "
        "life{}. Fix: a lower --min-days, a chain that covers the contracts' expiries, or one "
        "with an underlying price column (underlying_last, underlying_price, S, ...)",
        f.chain, contracts.size(), why)));
  }
  std::vector<double> pnl, ratio;
  for (const Hedged& h : hedged) {
    pnl.push_back(h.result.pnl);
    if (std::isfinite(h.result.pnl_over_premium)) ratio.push_back(h.result.pnl_over_premium);
  }
  const Distribution dp = Describe(pnl), dr = Describe(ratio);
  if (!f.out.empty()) {
    Status w = WriteResultsCsv(f.out, hedged);
    if (!w.ok()) return ReportError(w);
  }
  if (f.json) {
    nlohmann::json skips = nlohmann::json::object();
    for (const auto& [name, n] : skipped) skips[name] = n;
    const nlohmann::json j = {{"chain", f.chain},
                              {"contracts", contracts.size()},
                              {"hedged", hedged.size()},
                              {"skipped", skips},
                              {"min_days", f.min_days},
                              {"rate", options.rate},
                              {"cost", f.cost},
                              {"rows_dropped", dropped},
                              {"pnl", DistributionJson(dp)},
                              {"pnl_over_premium", DistributionJson(dr)}};
    fmt::print("{}\n", JsonText(j, 2));
    return 0;
  }
  fmt::print(
      "{} contracts in {}: {} hedged along their lives (short 1 at the first mid, "
      "Black-Scholes delta every quote date, rate {}, cost {}), {} skipped\n",
      contracts.size(), f.chain, hedged.size(), options.rate, f.cost,
      contracts.size() - hedged.size());
  for (const auto& [name, n] : skipped) {
    fmt::print("  skipped {:>6} {:<24} e.g. {}\n", n, name, skip_example[name]);
  }
  fmt::print("{:<18} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "hedging error", "mean",
             "sd", "5%", "25%", "50%", "75%", "95%");
  fmt::print("{:<18} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f}\n",
             "pnl", dp.mean, dp.sd, dp.q[0], dp.q[1], dp.q[2], dp.q[3], dp.q[4]);
  fmt::print("{:<18} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f}\n",
             "pnl_over_premium", dr.mean, dr.sd, dr.q[0], dr.q[1], dr.q[2], dr.q[3], dr.q[4]);
  if (dropped > 0) fmt::print("({} bad rows of {} dropped)\n", dropped, f.chain);
  return 0;
}

int RunChainHedge(const HedgeFlags& f) {
  Status flags = CheckChainFlags(f);
  if (!flags.ok()) return ReportError(flags);
  market::ChainReadOptions read;
  read.on_bad_rows =
      f.on_bad_rows == "drop" ? market::BadRowPolicy::kDrop : market::BadRowPolicy::kFail;
  market::DataReport report;
  Result<market::OptionChain> chain = market::ReadOptionChainCsv(f.chain, read, &report);
  if (!chain.ok()) return ReportError(chain.status());
  const market::OptionChain& c = *chain;
  if (c.size() == 0) {
    return ReportError(Status::DataError("--chain " + f.chain + ": no option rows"));
  }
  const std::vector<env::ChainContract> contracts = env::ListChainContracts(c);
  env::ChainHedgeOptions options;
  options.rate = f.rate;
  // Without --rate, the file's own rate column (its first value) when it has one.
  if (f.given.count("--rate") == 0) {
    for (double r : c.rate) {
      if (std::isfinite(r)) {
        options.rate = r;
        fmt::print(stderr, "note: rate {} from the file's rate column (--rate overrides it)\n", r);
        break;
      }
    }
  }
  options.cost = f.cost;
  const bool all = f.contract == "all", list = f.contract == "list";
  options.min_days = all || list ? static_cast<int>(f.min_days) : 1;
  const int64_t dropped = static_cast<int64_t>(report.problems.size());

  if (!all && !list) return HedgeOneContract(f, c, contracts, options, dropped);
  return HedgeAllContracts(f, c, contracts, options, dropped, list);
}

int RunHedge(const HedgeFlags& f) {
  if (!f.chain.empty() || f.given.count("--chain") > 0) {
    if (f.chain.empty()) {
      return ReportError(Status::Refused("--chain: expected an option chain CSV file"));
    }
    return RunChainHedge(f);
  }
  std::vector<std::string> wrong;
  for (const char* flag : kChainOnly) {
    if (f.given.count(flag) > 0) wrong.push_back(flag);
  }
  if (!wrong.empty()) {
    return ReportError(Status::Refused(
        fmt::format("hedge: {} need{} --chain FILE (hedging listed contracts of an option chain)",
                    fmt::join(wrong, ", "), wrong.size() == 1 ? "s" : "")));
  }
  std::vector<std::string> missing;
  for (const char* flag : kSimulationRequired) {
    if (f.given.count(flag) == 0) missing.push_back(flag);
  }
  if (!missing.empty()) {
    return ReportError(Status::Refused(fmt::format(
        "hedge: {} {} required to simulate paths (or hedge listed contracts with --chain FILE "
        "--contract ID|all)",
        fmt::join(missing, ", "), missing.size() == 1 ? "is" : "are")));
  }
  Status ok = CheckFlags(f);
  if (!ok.ok()) return ReportError(ok);
  const bool baseline = f.policy == "bs-delta";
  std::map<std::string, std::string> settings;
  if (!baseline) {
    Result<std::map<std::string, std::string>> s = RunEnvSettings(f.policy);
    if (!s.ok()) return ReportError(s.status());
    settings = *s;
  }
  Result<env::HedgingOptions> options = MakeOptions(f, settings);
  if (!options.ok()) return ReportError(options.status());
  // Options the command's flags map onto: an env error names the [env] key; say the flag.
  Result<std::unique_ptr<env::DeltaHedgingEnv>> probe = env::DeltaHedgingEnv::Create(*options);
  if (!probe.ok()) {
    return ReportError(Status::InvalidArgument(
        probe.status().message() +
        " (spot, strike, rate, drift, vol, maturity_weeks, step_weeks and cost come from "
        "--spot, --strike, --rate, --drift, --vol, --maturity-weeks, --rebalance-weeks and "
        "--cost)"));
  }
  // The work is paths x steps per path env steps: refuse what would not finish in minutes.
  const double env_steps = static_cast<double>(f.paths) * (*probe)->num_steps();
  if (env_steps > kMaxHedgeEnvSteps) {
    const int64_t paths_fitting =
        std::max<int64_t>(1, static_cast<int64_t>(kMaxHedgeEnvSteps / (*probe)->num_steps()));
    return ReportError(Status::InvalidArgument(fmt::format(
        "hedge: --paths {} x {} rebalancing steps (--maturity-weeks {} / --rebalance-weeks {}) "
        "= {:.3g} environment steps, ~{:.0f} s with bs-delta on one core (~{:.0f} million steps "
        "a second; a trained policy is slower). The limit is {:.0e} steps (~{:.0f} s). Fix: "
        "lower --paths to at most {} or rebalance less often (a larger --rebalance-weeks)",
        f.paths, (*probe)->num_steps(), f.maturity_weeks, f.rebalance_weeks, env_steps,
        env_steps / kHedgeStepsPerSecond, kHedgeStepsPerSecond / 1e6, kMaxHedgeEnvSteps,
        kMaxHedgeEnvSteps / kHedgeStepsPerSecond, paths_fitting)));
  }
  env::HedgePolicy policy = env::BsDeltaPolicy;
  std::shared_ptr<learn::PolicyRunner> runner;
  if (!baseline) {
    const env::EnvSpec& spec = (*probe)->spec();
    Result<std::unique_ptr<learn::PolicyRunner>> loaded = learn::PolicyRunner::Load(
        (fs::path(f.policy) / "final").string(), spec.obs_dim, spec.action);
    if (!loaded.ok()) return ReportError(loaded.status());
    runner = std::move(loaded).value();
    policy = [runner](const float* obs, int n, float* actions, bool first_step) {
      if (first_step) runner->ResetState();
      runner->Act(obs, n, actions, nullptr);
    };
  }
  Result<env::HedgeSimulation> sim =
      env::SimulateHedging(*options, static_cast<int>(f.paths), f.seed, policy);
  if (!sim.ok()) return ReportError(sim.status());
  if (f.json) {
    const nlohmann::json j = {{"bs_price", sim->bs_price},
                              {"mean_cost", sim->mean_cost},
                              {"sd_cost", sim->sd_cost},
                              {"sd_over_price", sim->sd_over_price}};
    fmt::print("{}\n", JsonText(j, 2));
    return 0;
  }
  fmt::print(
      "short call S={} K={} r={} mu={} vol={} T={} weeks, rebalanced every {} weeks, cost {}, "
      "{} paths, policy {}\n",
      f.spot, f.strike, f.rate, f.drift, f.vol, f.maturity_weeks, f.rebalance_weeks, f.cost,
      f.paths, f.policy);
  fmt::print("bs_price       {:.6f}\n", sim->bs_price);
  fmt::print("mean_cost      {:.6f}   (PV of the cost of hedging, premium not included)\n",
             sim->mean_cost);
  fmt::print("sd_cost        {:.6f}   (standard error of the mean {:.6f})\n", sim->sd_cost,
             sim->sd_cost / std::sqrt(static_cast<double>(f.paths)));
  fmt::print("sd_over_price  {:.4f}\n", sim->sd_over_price);
  if (baseline && f.cost == 0) {
    // Derman-Kamal / Hull: SD ~ sqrt(pi/4) vega sigma sqrt(dt/T), for comparison.
    pricing::OptionInputs in;
    in.spot = f.spot;
    in.strike = f.strike;
    in.rate = f.rate;
    in.vol = f.vol;
    in.time = f.maturity_weeks / 52;
    Result<pricing::Greeks> g = pricing::BsmGreeks(in);
    if (g.ok()) {
      const double theory =
          std::sqrt(M_PI / 4) * g->vega * f.vol * std::sqrt(f.rebalance_weeks / f.maturity_weeks);
      fmt::print("theory sd      {:.6f}   (sqrt(pi/4) vega sigma sqrt(dt/T); ratio {:.4f})\n",
                 theory, theory / sim->bs_price);
    }
  }
  return 0;
}

}  // namespace

void RegisterHedgeCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<HedgeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "hedge",
      "Delta hedging of a short option: Monte Carlo paths (BS price, mean and SD of the PV of "
      "the hedging cost) or listed contracts along a chain's quotes (--chain)");
  cmd->footer(
      "Without --chain, --spot --strike --rate --drift --vol --maturity-weeks "
      "--rebalance-weeks --paths --policy are required. With --chain FILE --contract ID|all, "
      "the contract, the underlying's path (the file's underlying price per quote date) and "
      "the vols come from the file and the hedge is rebalanced every quote date: --spot "
      "--strike --drift --vol --maturity-weeks --rebalance-weeks --paths --seed are refused; "
      "--rate (default 0) and --cost still apply.");
  std::vector<CLI::Option*> options;
  options.push_back(
      cmd->add_option("--spot", f->spot,
                      "price of the underlying S (required without --chain, refused with it)")
          ->check(DecimalNumber()));
  options.push_back(
      cmd->add_option("--strike", f->strike, "strike K (required without --chain, refused with it)")
          ->check(DecimalNumber()));
  options.push_back(
      cmd->add_option(
             "--rate", f->rate,
             "risk-free rate r per year, continuous (0.05 = 5%); required without --chain; with it "
             "optional (financing and the delta): the file's rate column's first value when it "
             "has one, else 0")
          ->check(DecimalNumber()));
  options.push_back(cmd->add_option("--drift", f->drift,
                                    "real-world drift mu of the underlying per year "
                                    "(required without --chain, refused with it)")
                        ->check(DecimalNumber()));
  options.push_back(cmd->add_option("--vol", f->vol,
                                    "volatility sigma per sqrt(year) (0.2 = 20%; required "
                                    "without --chain, refused with it)")
                        ->check(DecimalNumber()));
  options.push_back(
      cmd->add_option("--maturity-weeks", f->maturity_weeks,
                      "weeks to maturity W (52 a year; required without --chain, refused with it)")
          ->check(DecimalNumber()));
  options.push_back(cmd->add_option("--rebalance-weeks", f->rebalance_weeks,
                                    "weeks between rebalancings D (required without --chain, "
                                    "refused with it: every quote date rebalances)")
                        ->check(DecimalNumber()));
  options.push_back(cmd->add_option("--paths", f->paths,
                                    "simulated paths N (required without --chain, refused with it)")
                        ->check(DecimalInteger()));
  options.push_back(cmd->add_option(
      "--policy", f->policy,
      "bs-delta (Black-Scholes delta) or RUN_DIR (a run trained "
      "on env hedging; required without --chain; with it only bs-delta, the default)"));
  options.push_back(
      cmd->add_option("--cost", f->cost, "proportional transaction cost (0.001 = 0.1%)")
          ->check(DecimalNumber())
          ->capture_default_str());
  options.push_back(cmd->add_option("--seed", f->seed, "seed (path i uses seed + i)")
                        ->check(DecimalInteger(/*allow_sign=*/false))
                        ->capture_default_str());
  options.push_back(cmd->add_option("--chain", f->chain,
                                    "option chain CSV (market/option_chain_csv.h): hedge "
                                    "listed contracts along their quoted lives"));
  options.push_back(cmd->add_option(
      "--contract", f->contract,
      "with --chain: EXPIRY:C|P:STRIKE (e.g. 2018-01-31:C:2700) or the OCC symbol (e.g. "
      "SPXW180131C02700000); all: every contract living --min-days, the distribution of "
      "the hedging error; list: the contracts and whether they can be hedged"));
  options.push_back(cmd->add_option("--min-days", f->min_days,
                                    "with --contract all|list: the fewest hedge days (quote "
                                    "dates from the sale to the day before expiry)")
                        ->check(DecimalInteger(/*allow_sign=*/false))
                        ->capture_default_str());
  options.push_back(cmd->add_option("--out", f->out,
                                    "with --chain: CSV file, one row per hedged contract "
                                    "(written atomically)"));
  options.push_back(cmd->add_option("--on-bad-rows", f->on_bad_rows,
                                    "with --chain: fail on a bad row of the chain, or drop it")
                        ->capture_default_str());
  cmd->add_flag("--json", f->json,
                "print JSON: bs_price, mean_cost, sd_cost, sd_over_price; with --chain the "
                "contract's result or the distribution (docs/pricing.md)");
  cmd->callback([f, action, options] {
    f->given.clear();
    for (const CLI::Option* o : options) {
      if (o->count() > 0) f->given.insert(o->get_name());
    }
    *action = [f] { return RunHedge(*f); };
  });
}

}  // namespace rlt::cli
