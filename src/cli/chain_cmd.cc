// rltrade cli: `rltrade chain check` and `rltrade chain synth`.
//
// check: reads an end-of-day option chain CSV (market/option_chain_csv.h), prints the
//   quote dates, contracts per day, expiries, strike range, how the batch pricing of the
//   whole chain went (implied vols solved from the quotes, read from the file, filled),
//   and every problem found, grouped by rule. Like `data check` it reads with drop
//   semantics so the summary prints even for a broken file; the exit code is 1 when
//   problems were found under --on-bad-rows fail (the default), else 0.
// synth: writes a synthetic chain (market/option_chain_synth.h) for the daily closes of a
//   bar file (--underlying) or of a synthetic GBM series (--synthetic DAYS).
// This file only parses flags and formats output; the work is in market/.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
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

int RunCheck(const CheckFlags& f) {
  if (f.on_bad_rows != "fail" && f.on_bad_rows != "drop") {
    return ReportError(Status::InvalidArgument("unknown --on-bad-rows '" + f.on_bad_rows +
                                               "'; valid values: fail, drop"));
  }
  if (f.max_problems < 0) {
    return ReportError(Status::InvalidArgument("--max-problems must be >= 0"));
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
  Result<market::ChainPricing> priced = c.size() > 0
                                            ? market::PriceChain(c, po)
                                            : Result<market::ChainPricing>(market::ChainPricing{});
  const std::string dropped_text =
      f.on_bad_rows == "drop" ? "dropped" : "would be dropped with --on-bad-rows drop";

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
    if (priced.ok()) {
      j["iv_solved"] = priced->solved;
      j["iv_from_file"] = priced->from_file;
      j["iv_filled"] = priced->filled;
    } else {
      j["pricing_error"] = priced.status().message();
    }
    AddProblemsJson(j, report, f.max_problems);
    j["ok"] = report.problems.empty() || f.on_bad_rows == "drop";
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
    if (report.problems.empty()) {
      fmt::print("no problems found\n");
    } else {
      fmt::print("{}", ProblemsText(report, f.max_problems, dropped_text));
    }
  }
  return !report.problems.empty() && f.on_bad_rows == "fail" ? 1 : 0;
}

struct SynthFlags {
  std::string underlying, out, timezone = "UTC";
  int synthetic_days = 0;
  std::vector<std::string> set;
};

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
      ->capture_default_str();
  check->add_option("--div", cf->dividend, "dividend yield for the batch pricing")
      ->capture_default_str();
  check->add_option("--max-problems", cf->max_problems, "problems listed per rule (0 = all)")
      ->capture_default_str();
  check->add_flag("--json", cf->json, "print the summary as JSON");
  check->callback([cf, action] { *action = [cf] { return RunCheck(*cf); }; });

  auto sf = std::make_shared<SynthFlags>();
  CLI::App* synth =
      chain->add_subcommand("synth", "Write a synthetic option chain for a daily close series");
  synth->add_option("--underlying", sf->underlying, "CSV bar file of the underlying (one symbol)");
  synth->add_option("--timezone", sf->timezone, "IANA zone of the underlying's timestamps")
      ->capture_default_str();
  synth->add_option("--synthetic", sf->synthetic_days,
                    "use a synthetic daily GBM series of this many weekdays instead");
  synth->add_option("--set", sf->set,
                    "generator setting key=value (market/option_chain_synth.h), repeatable");
  synth->add_option("--out", sf->out, "output CSV file")->required();
  synth->callback([sf, action] { *action = [sf] { return RunSynth(*sf); }; });
}

}  // namespace rlt::cli
