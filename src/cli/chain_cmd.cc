// rltrade cli: `rltrade chain check` and `rltrade chain synth`.
//
// check: reads an end-of-day option chain CSV (market/option_chain_csv.h), prints the
//   quote dates, contracts per day, expiries, strike range, how the batch pricing of the
//   whole chain went (implied vols solved from the quotes, read from the file, filled),
//   warnings for quotes whose mid has no implied vol (kept, never failing the check), and
//   every problem found, grouped by rule. Like `data check` it reads with drop semantics
//   so the summary prints even for a broken file; the exit code is 1 when problems were
//   found under --on-bad-rows fail (the default) or the chain could not be priced, else 0.
// synth: writes a synthetic chain (market/option_chain_synth.h) for the daily closes of a
//   bar file (--underlying) or of a synthetic GBM series (--synthetic DAYS), after counting
//   its rows: more than kMaxSynthContracts is refused before any work.
// This file only parses flags and formats output; the work is in market/.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/numeric_flags.h"
#include "cli/problems_output.h"
#include "core/civil_time.h"
#include "core/json_text.h"
#include "core/options.h"
#include "market/csv.h"
#include "market/option_chain_csv.h"
#include "market/option_chain_pricing.h"
#include "market/option_chain_synth.h"
#include "market/synth.h"

namespace rlt::cli {

namespace {

std::string Date(int32_t days) { return FormatDate(DateKey(CivilFromDays(days))); }

struct CheckFlags {
  std::string file, on_bad_rows = "fail";
  double rate = 0, dividend = 0;
  int max_problems = 10;
  bool json = false;
};

// Quotes whose mid has no implied vol (market::IvGap other than none and expires-today):
// stale or bad quotes, kept in the chain with a vol read from the file or filled, and
// listed as warnings. They never fail the check.
struct IvWarning {
  int64_t line = 0;
  market::IvGap gap = market::IvGap::kNone;
  std::string detail;
};

std::vector<IvWarning> IvWarnings(const market::OptionChain& c, const market::ChainPricing& p) {
  std::vector<IvWarning> out;
  for (size_t d = 0; d < c.num_days(); ++d) {
    for (int64_t i = c.day_begin[d]; i < c.day_begin[d + 1]; ++i) {
      const market::IvGap gap = p.iv_gap[i];
      if (gap == market::IvGap::kNone || gap == market::IvGap::kExpired) continue;
      const char* bound_name = gap == market::IvGap::kAboveUpperBound ? "upper" : "lower";
      const double bound =
          gap == market::IvGap::kAboveUpperBound ? p.upper_bound[i] : p.lower_bound[i];
      const char* relation = gap == market::IvGap::kBelowLowerBound   ? "<="
                             : gap == market::IvGap::kAboveUpperBound ? ">="
                                                                      : "vs";
      out.push_back(
          {c.line[i], gap,
           fmt::format("{} {:g} expiring {} quoted {} (spot {:g}): mid {:g} {} {} bound {:.6g}; "
                       "no implied vol, {} {:.4g}",
                       pricing::OptionTypeName(c.right[i]), c.strike[i], Date(c.expiry[i]),
                       Date(c.dates[d]), c.underlying_price[d], p.mid[i], relation, bound_name,
                       bound,
                       p.iv_source[i] == market::IvSource::kFile ? "read from the file:"
                                                                 : "filled with the median:",
                       p.iv[i])});
    }
  }
  return out;
}

int RunCheck(const CheckFlags& f) {
  if (f.on_bad_rows != "fail" && f.on_bad_rows != "drop") {
    return ReportError(Status::InvalidArgument("unknown --on-bad-rows '" + f.on_bad_rows +
                                               "'; valid values: fail, drop"));
  }
  if (f.max_problems < 0) {
    return ReportError(Status::InvalidArgument("--max-problems must be >= 0"));
  }
  for (auto [flag, v] : {std::pair{"--rate", f.rate}, std::pair{"--div", f.dividend}}) {
    if (!(std::isfinite(v) && std::abs(v) <= pricing::kMaxRate)) {
      return ReportError(Status::InvalidArgument(
          fmt::format("{} {}: expected a continuously compounded rate per year in [-{:g}, {:g}] "
                      "(0.05 = 5%)",
                      flag, v, pricing::kMaxRate, pricing::kMaxRate)));
    }
  }
  market::ChainReadOptions options;
  options.on_bad_rows = market::BadRowPolicy::kDrop;  // summary even for a broken file
  market::DataReport report;
  Result<market::OptionChain> chain = market::ReadOptionChainCsv(f.file, options, &report);
  if (!chain.ok()) return ReportError(chain.status());
  const market::OptionChain& c = *chain;

  std::vector<int64_t> per_day;
  for (size_t d = 0; d < c.num_days(); ++d) per_day.push_back(c.day_begin[d + 1] - c.day_begin[d]);
  std::sort(per_day.begin(), per_day.end());
  const std::set<int32_t> expiries(c.expiry.begin(), c.expiry.end());
  double kmin = 0, kmax = 0;
  if (c.size() > 0) {
    const auto [lo, hi] = std::minmax_element(c.strike.begin(), c.strike.end());
    kmin = *lo;
    kmax = *hi;
  }

  // The whole chain priced once, in batch (needs an underlying price per day).
  market::ChainPricingOptions po;
  po.rate = f.rate;
  po.dividend = f.dividend;
  po.source = f.file;
  Result<market::ChainPricing> priced = c.size() > 0
                                            ? market::PriceChain(c, po)
                                            : Result<market::ChainPricing>(market::ChainPricing{});
  const std::vector<IvWarning> warnings =
      priced.ok() ? IvWarnings(c, *priced) : std::vector<IvWarning>{};
  std::vector<std::pair<std::string, std::vector<const IvWarning*>>> warning_groups;
  for (const IvWarning& w : warnings) {
    const std::string rule = market::IvGapName(w.gap);
    auto it = std::find_if(warning_groups.begin(), warning_groups.end(),
                           [&](const auto& g) { return g.first == rule; });
    if (it == warning_groups.end()) it = warning_groups.insert(warning_groups.end(), {rule, {}});
    it->second.push_back(&w);
  }
  const std::string dropped_text =
      f.on_bad_rows == "drop" ? "dropped" : "would be dropped with --on-bad-rows drop";
  const bool problems_fail = !report.problems.empty() && f.on_bad_rows == "fail";
  const int exit_code = problems_fail || !priced.ok() ? 1 : 0;

  if (f.json) {
    nlohmann::json j;
    j["file"] = f.file;
    j["underlying"] = c.underlying;
    j["rows_read"] = report.rows_read;
    j["rows_dropped"] = report.rows_dropped;
    j["contracts"] = c.size();
    j["quote_dates"] = c.num_days();
    j["first_date"] = c.num_days() ? Date(c.dates.front()) : "";
    j["last_date"] = c.num_days() ? Date(c.dates.back()) : "";
    j["contracts_per_day"] = {{"min", per_day.empty() ? 0 : per_day.front()},
                              {"median", per_day.empty() ? 0 : per_day[per_day.size() / 2]},
                              {"max", per_day.empty() ? 0 : per_day.back()}};
    j["expiries"] = expiries.size();
    j["first_expiry"] = expiries.empty() ? "" : Date(*expiries.begin());
    j["last_expiry"] = expiries.empty() ? "" : Date(*expiries.rbegin());
    j["strike_min"] = kmin;
    j["strike_max"] = kmax;
    // The iv_* keys are always present: counts when the chain was priced, null when not
    // (pricing_error says why).
    j["iv_solved"] = priced.ok() ? nlohmann::json(priced->solved) : nlohmann::json(nullptr);
    j["iv_from_file"] = priced.ok() ? nlohmann::json(priced->from_file) : nlohmann::json(nullptr);
    j["iv_filled"] = priced.ok() ? nlohmann::json(priced->filled) : nlohmann::json(nullptr);
    if (!priced.ok()) j["pricing_error"] = priced.status().message();
    AddProblemsJson(j, report, f.max_problems);
    j["warning_counts"] = nlohmann::json::object();
    j["warnings"] = nlohmann::json::array();
    for (const auto& [rule, list] : warning_groups) {
      j["warning_counts"][rule] = list.size();
      const size_t shown = ProblemsShown(f.max_problems, list.size());
      for (size_t i = 0; i < shown; ++i) {
        j["warnings"].push_back({{"file", f.file},
                                 {"line", list[i]->line},
                                 {"rule", rule},
                                 {"detail", list[i]->detail}});
      }
    }
    j["ok"] = exit_code == 0;
    fmt::print("{}\n", JsonText(j, 2));
  } else {
    fmt::print("{}: underlying {}, {} rows read, {} contracts\n", f.file, c.underlying,
               report.rows_read, c.size());
    if (c.num_days() > 0) {
      fmt::print("quote dates: {} ({}..{}); contracts per day min/median/max {}/{}/{}\n",
                 c.num_days(), Date(c.dates.front()), Date(c.dates.back()), per_day.front(),
                 per_day[per_day.size() / 2], per_day.back());
      fmt::print("expiries: {} ({}..{}); strikes {:g}..{:g}\n", expiries.size(),
                 Date(*expiries.begin()), Date(*expiries.rbegin()), kmin, kmax);
    }
    if (priced.ok()) {
      fmt::print(
          "priced in batch (r={:g}, q={:g}): implied vol solved from the mid for {}, read from "
          "the file for {}, filled for {}\n",
          f.rate, f.dividend, priced->solved, priced->from_file, priced->filled);
    } else {
      fmt::print("not priced: {}\n", priced.status().message());
    }
    if (!warnings.empty()) {
      fmt::print(
          "{} warning(s): quotes whose mid has no implied vol (stale or bad quotes; kept, with "
          "the file's implied vol or the median of their expiry; they do not fail the check):\n",
          warnings.size());
      for (const auto& [rule, list] : warning_groups) {
        fmt::print("  {:>7} x {}\n", list.size(), rule);
      }
      for (const auto& [rule, list] : warning_groups) {
        const size_t shown = ProblemsShown(f.max_problems, list.size());
        fmt::print("{} ({} of {}):\n", rule, shown, list.size());
        for (size_t i = 0; i < shown; ++i) {
          fmt::print("  {}:{}: {}\n", f.file, list[i]->line, list[i]->detail);
        }
      }
    }
    if (!report.problems.empty()) {
      fmt::print("{}", ProblemsText(report, f.max_problems, dropped_text));
    } else if (priced.ok()) {
      fmt::print("no problems found\n");
    }
  }
  if (!priced.ok()) {
    return ReportError(Status::DataError(
        fmt::format("{}: the chain could not be priced: {}", f.file, priced.status().message())));
  }
  return exit_code;
}

struct SynthFlags {
  std::string underlying, out, timezone = "UTC";
  int synthetic_days = 0;
  std::vector<std::string> set;
};

// The size `chain synth` writes at most: the file must stay readable by `chain check` and
// the options environments (core/file_io.h reads at most 1 GiB), and the run must finish
// in well under a minute on a 2-core, 24 GiB machine. Measured (Release, 1,000 days of the
// defaults, 1.48 million contracts, while a build shared the machine): 136 bytes of CSV
// and 311 bytes of peak memory per contract, ~15 us of work per contract (generating and
// writing).
constexpr int64_t kMaxSynthContracts = 3000000;
constexpr double kSynthFileBytesPerContract = 136;
constexpr double kSynthMemoryBytesPerContract = 311;
constexpr double kSynthContractsPerSecond = 1 / 15e-6;

// "--synthetic 100000" or "the 2,000 days of --underlying FILE": what to lower.
std::string SizeRefusal(const SynthFlags& f, const market::ChainSynthOptions& o, int64_t total_days,
                        const market::ChainSize& counted) {
  const double per_day = static_cast<double>(counted.contracts) / static_cast<double>(counted.days);
  const double estimate = per_day * static_cast<double>(total_days);
  const int64_t days_fitting =
      std::max<int64_t>(1, static_cast<int64_t>(kMaxSynthContracts / std::max(per_day, 1.0)));
  const std::string what = f.underlying.empty() ? fmt::format("--synthetic {}", f.synthetic_days)
                                                : fmt::format("the {} days of --underlying {}",
                                                              total_days, f.underlying);
  const std::string fewer_days =
      f.underlying.empty()
          ? fmt::format("lower --synthetic to at most ~{} days", days_fitting)
          : fmt::format("use an underlying file of at most ~{} days", days_fitting);
  return fmt::format(
      "chain synth: {} would list about {:.3g} contracts ({:.0f} a day with these settings): "
      "~{:.1f} GB in memory, a ~{:.1f} GB file and ~{:.0f} s of work. The limit is {} "
      "contracts (a file of ~{:.2f} GB that `rltrade chain check` and the options "
      "environments can read back, ~{:.1f} GB of memory, ~{:.0f} s on one core of a 2-core "
      "24 GiB machine). Fix: {}, or list fewer contracts a day with --set "
      "monthly_expiries=N (now {}), --set weekly_horizon_days=N (now {}) or a coarser --set "
      "moneyness_step=X (now {:g})",
      what, estimate, per_day, estimate * kSynthMemoryBytesPerContract / 1e9,
      estimate * kSynthFileBytesPerContract / 1e9, estimate / kSynthContractsPerSecond,
      kMaxSynthContracts, kMaxSynthContracts * kSynthFileBytesPerContract / 1e9,
      kMaxSynthContracts * kSynthMemoryBytesPerContract / 1e9,
      kMaxSynthContracts / kSynthContractsPerSecond, fewer_days, o.monthly_expiries,
      o.weekly_horizon_days, o.moneyness_step);
}

int RunSynth(const SynthFlags& f) {
  if (f.underlying.empty() == (f.synthetic_days <= 0)) {
    return ReportError(Status::InvalidArgument(
        "give exactly one of --underlying FILE and --synthetic DAYS (DAYS > 0)"));
  }
  market::ChainSynthOptions options;
  for (const std::string& kv : f.set) {
    Result<std::pair<std::string, std::string>> a = SplitAssignment(kv);
    if (!a.ok()) return ReportError(a.status());
    Status st = SetOptions(options, {{a->first, a->second}}, "--set");
    if (!st.ok()) return ReportError(st);
  }
  {
    Status st = market::ValidateChainSynthOptions(options);
    if (!st.ok()) return ReportError(Status::InvalidArgument("--set: " + st.message()));
  }
  // Every day lists at least one expiry with one call and one put: refuse a series that
  // long before generating it.
  if (f.underlying.empty() && int64_t{2} * f.synthetic_days > kMaxSynthContracts) {
    return ReportError(Status::InvalidArgument(
        SizeRefusal(f, options, f.synthetic_days,
                    market::ChainSize{int64_t{2} * f.synthetic_days, f.synthetic_days})));
  }
  std::vector<int32_t> dates;
  std::vector<double> closes;
  std::string symbol = "SYN0";
  market::MarketData data;
  if (!f.underlying.empty()) {
    market::CsvReadOptions ro;
    ro.timezone = f.timezone;
    Result<market::MarketData> r = market::ReadBarsCsv(f.underlying, ro);
    if (!r.ok()) return ReportError(r.status());
    data = std::move(*r);
  } else {
    market::SynthOptions so;
    so.kind = market::SynthKind::kDaily;
    so.num_days = f.synthetic_days;
    so.seed = options.seed;
    Result<market::MarketData> r = market::GenerateSynthetic(so);
    if (!r.ok()) return ReportError(r.status());
    data = std::move(*r);
  }
  if (data.symbols.size() != 1) {
    return ReportError(Status::InvalidArgument(fmt::format(
        "{} symbols in the underlying file; a chain needs exactly one", data.symbols.size())));
  }
  const market::Bars& b = data.symbols.front();
  symbol = b.symbol;
  for (const market::Session& s : b.sessions) {
    dates.push_back(
        static_cast<int32_t>(DaysFromCivil(s.date / 10000, s.date / 100 % 100, s.date % 100)));
    closes.push_back(b.close[s.end - 1]);  // the session's last close
  }
  // Count the rows first (the listing alone, no per-contract memory) and refuse a chain
  // that could not be written, read back or finished in reasonable time.
  Result<market::ChainSize> size =
      market::CountOptionChainContracts(dates, closes, options, kMaxSynthContracts);
  if (!size.ok()) return ReportError(size.status());
  if (size->contracts > kMaxSynthContracts) {
    return ReportError(Status::InvalidArgument(
        SizeRefusal(f, options, static_cast<int64_t>(dates.size()), *size)));
  }
  Result<market::OptionChain> chain = market::GenerateOptionChain(dates, closes, options, symbol);
  if (!chain.ok()) return ReportError(chain.status());
  Status st = market::WriteOptionChainCsv(f.out, *chain);
  if (!st.ok()) return ReportError(st);
  fmt::print("wrote {}: {} contracts on {} quote dates of {}, seed {}\n", f.out, chain->size(),
             chain->num_days(), symbol, options.seed);
  return 0;
}

}  // namespace

void RegisterChainCommands(CLI::App& app, Action* action) {
  CLI::App* chain = app.add_subcommand("chain", "End-of-day option chains");
  chain->require_subcommand(1);

  auto cf = std::make_shared<CheckFlags>();
  CLI::App* check = chain->add_subcommand("check", "Validate an option chain CSV and summarise it");
  check->add_option("file", cf->file, "CSV file of option quotes")->required();
  check
      ->add_option("--on-bad-rows", cf->on_bad_rows,
                   "fail: exit 1 when problems are found; drop: report them, exit 0")
      ->capture_default_str();
  check->add_option("--rate", cf->rate, "risk-free rate for the batch pricing")
      ->check(DecimalNumber())
      ->capture_default_str();
  check->add_option("--div", cf->dividend, "dividend yield for the batch pricing")
      ->check(DecimalNumber())
      ->capture_default_str();
  check
      ->add_option("--max-problems", cf->max_problems,
                   "problems (and warnings) listed per rule (0 = all)")
      ->check(DecimalInteger())
      ->capture_default_str();
  check->add_flag("--json", cf->json, "print the summary as JSON");
  check->callback([cf, action] { *action = [cf] { return RunCheck(*cf); }; });

  auto sf = std::make_shared<SynthFlags>();
  CLI::App* synth =
      chain->add_subcommand("synth", "Write a synthetic option chain for a daily close series");
  synth->add_option("--underlying", sf->underlying, "CSV bar file of the underlying (one symbol)");
  synth->add_option("--timezone", sf->timezone, "IANA zone of the underlying's timestamps")
      ->capture_default_str();
  synth
      ->add_option("--synthetic", sf->synthetic_days,
                   "use a synthetic daily GBM series of this many weekdays instead")
      ->check(DecimalInteger());
  synth->add_option("--set", sf->set,
                    "generator setting key=value (market/option_chain_synth.h), repeatable");
  synth->add_option("--out", sf->out, "output CSV file")->required();
  synth->callback([sf, action] { *action = [sf] { return RunSynth(*sf); }; });
}

}  // namespace rlt::cli
