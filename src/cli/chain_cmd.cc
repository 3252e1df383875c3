// rltrade cli: `rltrade chain check` and `rltrade chain synth`.
//
// check: reads an end-of-day option chain CSV (market/option_chain_csv.h), prints the
//   quote dates, contracts per day, expiries, strike range, where r, q and the exercise
//   style come from (--rate/--div/--style override the file's columns; without either,
//   r = q = 0 and European, with a note), the rows without a quote (zero bid or ask:
//   counted, never a problem), the implied vols solved per quote with each contract's
//   style (market::SolveQuotes) and why the others have none, how the batch pricing of the
//   whole chain went (as the environments price it), warnings for quotes whose mid has no
//   implied vol (kept, never failing the check), and every problem found, grouped by rule.
//   --out writes every row with its inputs, implied vol, Greeks and reason (atomically,
//   only when the check passes). Like `data check` it reads with drop semantics
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
#include "core/file_io.h"
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
  std::string file, on_bad_rows = "fail", style, out;
  double rate = 0, dividend = 0;
  bool rate_given = false, dividend_given = false;  // --rate / --div on the command line
  int max_problems = 10;
  bool json = false;
};

// Quoted contracts whose mid has no implied vol (market::QuoteReason other than ok,
// no-quote, no-underlying-price and expires-today): stale or bad quotes, kept in the chain
// and listed as warnings (and in --out with their reason). They never fail the check.
struct IvWarning {
  int64_t line = 0;
  market::QuoteReason reason = market::QuoteReason::kOk;
  std::string detail;
};

// `batch`: the batch pricing (nullptr when it failed), whose vol for the row is named.
std::vector<IvWarning> IvWarnings(const market::OptionChain& c, const market::QuoteSolution& q,
                                  const market::ChainPricing* batch) {
  std::vector<IvWarning> out;
  for (size_t d = 0; d < c.num_days(); ++d) {
    for (int64_t i = c.day_begin[d]; i < c.day_begin[d + 1]; ++i) {
      const market::QuoteReason r = q.reason[i];
      if (r == market::QuoteReason::kOk || r == market::QuoteReason::kNoQuote ||
          r == market::QuoteReason::kNoUnderlying || r == market::QuoteReason::kExpired) {
        continue;
      }
      const std::string what = fmt::format(
          "{} {:g} expiring {} quoted {} (spot {:g}, {}, {}): mid {:g}",
          pricing::OptionTypeName(c.right[i]), c.strike[i], Date(c.expiry[i]), Date(c.dates[d]),
          c.underlying_price[d], market::ExerciseStyleName(q.style[i]),
          pricing::ModelName(q.model[i]), q.mid[i]);
      std::string detail;
      if (r == market::QuoteReason::kBelowLowerBound) {
        detail = fmt::format("{} <= lower bound {:.6g}; no implied vol", what, q.lower_bound[i]);
      } else if (r == market::QuoteReason::kAboveUpperBound) {
        detail = fmt::format("{} >= upper bound {:.6g}; no implied vol", what, q.upper_bound[i]);
      } else {
        detail = fmt::format("{}; no implied vol: {}", what, q.detail[i]);
      }
      if (batch != nullptr) {
        detail +=
            fmt::format("; batch pricing: {} {:.4g}",
                        batch->iv_source[i] == market::IvSource::kFile ? "read from the file:"
                                                                       : "filled with the median:",
                        batch->iv[i]);
      }
      out.push_back({c.line[i], r, std::move(detail)});
    }
  }
  return out;
}

// Where r, q or the style came from, for the summary: "file", "flag" or "default".
std::string InputSource(bool flag, int64_t fallback_rows, size_t rows) {
  if (flag) return "flag";
  if (fallback_rows == 0 && rows > 0) return "file";
  return fallback_rows == static_cast<int64_t>(rows) ? "default" : "file+default";
}

// `chain check --out`: every row of the chain in file order (by source line) with the
// inputs used and the implied vol, Greeks and reason of market::SolveQuotes.
Status WriteQuoteSolution(const std::string& path, const market::OptionChain& c,
                          const market::QuoteSolution& q) {
  std::vector<size_t> order(c.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return c.line[a] < c.line[b]; });
  std::string out =
      "line,quote_date,expiration,strike,type,style,bid,ask,mid,underlying_price,rate,"
      "dividend_yield,time,model,implied_vol,price,delta,gamma,vega,theta,reason\n";
  // The shortest decimal that reads back as the same double.
  auto num = [&](double v) {
    if (std::isfinite(v)) out += fmt::format("{}", v);
    out += ',';
  };
  for (size_t i : order) {
    const size_t d = c.DayOf(i);
    out += fmt::format("{},{},{},", c.line[i], Date(c.dates[d]), Date(c.expiry[i]));
    num(c.strike[i]);
    out += c.right[i] == pricing::OptionType::kCall ? "C," : "P,";
    out += q.style[i] == market::ExerciseStyle::kAmerican ? "A," : "E,";
    for (double v :
         {c.bid[i], c.ask[i], q.mid[i], q.spot[i], q.rate[i], q.dividend[i], q.time[i]}) {
      num(v);
    }
    out += pricing::ModelName(q.model[i]);
    out += ',';
    for (double v : {q.iv[i], q.price[i], q.delta[i], q.gamma[i], q.vega[i], q.theta[i]}) num(v);
    out += market::QuoteReasonName(q.reason[i]);
    out += '\n';
  }
  return WriteFileAtomic(path, out);
}

// One line saying where r, q and the exercise style come from.
std::string InputsText(const CheckFlags& f, const std::string& rate_source,
                       const std::string& div_source, const std::string& style_source) {
  auto one = [](const char* name, const char* flag, double value, const std::string& source) {
    if (source == "flag") return fmt::format("{} = {:g} from {}", name, value, flag);
    if (source == "file") return fmt::format("{} from the file's column", name);
    if (source == "default") {
      return fmt::format("{} = 0 (note: no {} column and no {}; 0 assumed)", name, name, flag);
    }
    return fmt::format("{} from the file's column, 0 where it is empty (note)", name);
  };
  std::string style;
  if (style_source == "flag") {
    style = "style " + f.style + " from --style";
  } else if (style_source == "file") {
    style = "style from the file's column";
  } else if (style_source == "default") {
    style =
        "style european (note: no style column and no --style; pass --style american for "
        "American exercise)";
  } else {
    style = "style from the file's column, european where it is empty (note)";
  }
  return fmt::format("inputs: {}; {}; {}", one("r", "--rate", f.rate, rate_source),
                     one("q", "--div", f.dividend, div_source), style);
}

// Flag values CLI11 cannot check itself; the error, or Ok.
Status CheckCheckFlags(const CheckFlags& f) {
  if (f.on_bad_rows != "fail" && f.on_bad_rows != "drop") {
    return Status::InvalidArgument("unknown --on-bad-rows '" + f.on_bad_rows +
                                   "'; valid values: fail, drop");
  }
  if (f.max_problems < 0) return Status::InvalidArgument("--max-problems must be >= 0");
  if (!f.style.empty() && f.style != "american" && f.style != "european") {
    return Status::InvalidArgument("unknown --style '" + f.style +
                                   "'; valid values: american, european");
  }
  for (auto [flag, v] : {std::pair{"--rate", f.rate}, std::pair{"--div", f.dividend}}) {
    if (!(std::isfinite(v) && std::abs(v) <= pricing::kMaxRate)) {
      return Status::InvalidArgument(
          fmt::format("{} {}: expected a continuously compounded rate per year in [-{:g}, {:g}] "
                      "(0.05 = 5%)",
                      flag, v, pricing::kMaxRate, pricing::kMaxRate));
    }
  }
  return Status::Ok();
}

// Everything `chain check` prints, computed once.
struct CheckSummary {
  market::DataReport report;
  market::OptionChain chain;
  std::vector<int64_t> per_day;  // contracts per quote date, sorted
  std::set<int32_t> expiries;
  double kmin = 0, kmax = 0;
  Result<market::ChainPricing> priced = market::ChainPricing{};
  market::QuoteSolution quotes;
  std::map<std::string, int64_t> failure_counts;  // reason -> quoted rows without an iv
  std::string rate_source, div_source, style_source;
  std::vector<IvWarning> warnings;
  std::vector<std::pair<std::string, std::vector<const IvWarning*>>> warning_groups;
  int exit_code = 0;
};

// Reads, prices and solves the chain of f.file into *s (an error only when the file
// cannot be read at all or a quote is outside the pricing domain).
Status Summarise(const CheckFlags& f, CheckSummary* s) {
  market::ChainReadOptions options;
  options.on_bad_rows = market::BadRowPolicy::kDrop;  // summary even for a broken file
  RLT_ASSIGN_OR_RETURN(s->chain, market::ReadOptionChainCsv(f.file, options, &s->report));
  const market::OptionChain& c = s->chain;
  for (size_t d = 0; d < c.num_days(); ++d) {
    s->per_day.push_back(c.day_begin[d + 1] - c.day_begin[d]);
  }
  std::sort(s->per_day.begin(), s->per_day.end());
  s->expiries = std::set<int32_t>(c.expiry.begin(), c.expiry.end());
  if (c.size() > 0) {
    const auto [lo, hi] = std::minmax_element(c.strike.begin(), c.strike.end());
    s->kmin = *lo;
    s->kmax = *hi;
  }
  // The whole chain priced once, in batch (needs an underlying price per day), as the
  // options environments price it: BSM, vols filled where the mid has none. r and q: the
  // flags when given, else the file's columns, else 0.
  market::ChainPricingOptions po;
  po.rate = f.rate;
  po.dividend = f.dividend;
  po.override_rate = f.rate_given;
  po.override_dividend = f.dividend_given;
  po.source = f.file;
  if (c.size() > 0) s->priced = market::PriceChain(c, po);
  // Every quote on its own, with its exercise style: the implied vols, Greeks and reasons
  // of --out and the warnings.
  market::QuoteSolveOptions qo;
  qo.rate = f.rate;
  qo.dividend = f.dividend;
  qo.override_rate = f.rate_given;
  qo.override_dividend = f.dividend_given;
  qo.style =
      f.style == "american" ? market::ExerciseStyle::kAmerican : market::ExerciseStyle::kEuropean;
  qo.override_style = !f.style.empty();
  qo.source = f.file;
  RLT_ASSIGN_OR_RETURN(s->quotes, market::SolveQuotes(c, qo));
  const market::QuoteSolution& q = s->quotes;
  for (size_t i = 0; i < c.size(); ++i) {
    if (q.reason[i] != market::QuoteReason::kOk && q.reason[i] != market::QuoteReason::kNoQuote) {
      ++s->failure_counts[market::QuoteReasonName(q.reason[i])];
    }
  }
  s->rate_source = InputSource(f.rate_given, q.rate_fallback, c.size());
  s->div_source = InputSource(f.dividend_given, q.dividend_fallback, c.size());
  s->style_source = InputSource(!f.style.empty(), q.style_fallback, c.size());
  s->warnings = IvWarnings(c, q, s->priced.ok() ? &*s->priced : nullptr);
  for (const IvWarning& w : s->warnings) {
    const std::string rule = market::QuoteReasonName(w.reason);
    auto it = std::find_if(s->warning_groups.begin(), s->warning_groups.end(),
                           [&](const auto& g) { return g.first == rule; });
    if (it == s->warning_groups.end()) {
      it = s->warning_groups.insert(s->warning_groups.end(), {rule, {}});
    }
    it->second.push_back(&w);
  }
  const bool problems_fail = !s->report.problems.empty() && f.on_bad_rows == "fail";
  s->exit_code = problems_fail || !s->priced.ok() ? 1 : 0;
  return Status::Ok();
}

void PrintCheckJson(const CheckFlags& f, const CheckSummary& s) {
  const market::OptionChain& c = s.chain;
  const market::QuoteSolution& q = s.quotes;
  const std::vector<int64_t>& per_day = s.per_day;
  nlohmann::json j;
  j["file"] = f.file;
  j["underlying"] = c.underlying;
  j["rows_read"] = s.report.rows_read;
  j["rows_dropped"] = s.report.rows_dropped;
  j["contracts"] = c.size();
  j["quote_dates"] = c.num_days();
  j["first_date"] = c.num_days() ? Date(c.dates.front()) : "";
  j["last_date"] = c.num_days() ? Date(c.dates.back()) : "";
  j["contracts_per_day"] = {{"min", per_day.empty() ? 0 : per_day.front()},
                            {"median", per_day.empty() ? 0 : per_day[per_day.size() / 2]},
                            {"max", per_day.empty() ? 0 : per_day.back()}};
  j["expiries"] = s.expiries.size();
  j["first_expiry"] = s.expiries.empty() ? "" : Date(*s.expiries.begin());
  j["last_expiry"] = s.expiries.empty() ? "" : Date(*s.expiries.rbegin());
  j["strike_min"] = s.kmin;
  j["strike_max"] = s.kmax;
  // The iv_* keys are always present: counts when the chain was priced, null when not
  // (pricing_error says why).
  const Result<market::ChainPricing>& priced = s.priced;
  j["iv_solved"] = priced.ok() ? nlohmann::json(priced->solved) : nlohmann::json(nullptr);
  j["iv_from_file"] = priced.ok() ? nlohmann::json(priced->from_file) : nlohmann::json(nullptr);
  j["iv_filled"] = priced.ok() ? nlohmann::json(priced->filled) : nlohmann::json(nullptr);
  if (!priced.ok()) j["pricing_error"] = priced.status().message();
  j["no_quote_rows"] = q.no_quote;
  j["no_bid_rows"] = q.no_bid;
  j["no_ask_rows"] = q.no_ask;
  j["iv_computed"] = q.solved;
  j["iv_failure_counts"] = nlohmann::json::object();
  for (const auto& [reason, count] : s.failure_counts) j["iv_failure_counts"][reason] = count;
  j["rate_source"] = s.rate_source;
  j["dividend_source"] = s.div_source;
  j["style_source"] = s.style_source;
  if (!f.out.empty()) j["out"] = s.exit_code == 0 ? nlohmann::json(f.out) : nlohmann::json(nullptr);
  AddProblemsJson(j, s.report, f.max_problems);
  j["warning_counts"] = nlohmann::json::object();
  j["warnings"] = nlohmann::json::array();
  for (const auto& [rule, list] : s.warning_groups) {
    j["warning_counts"][rule] = list.size();
    const size_t shown = ProblemsShown(f.max_problems, list.size());
    for (size_t i = 0; i < shown; ++i) {
      j["warnings"].push_back(
          {{"file", f.file}, {"line", list[i]->line}, {"rule", rule}, {"detail", list[i]->detail}});
    }
  }
  j["ok"] = s.exit_code == 0;
  fmt::print("{}\n", JsonText(j, 2));
}

void PrintCheckText(const CheckFlags& f, const CheckSummary& s) {
  const market::OptionChain& c = s.chain;
  const market::QuoteSolution& q = s.quotes;
  const std::vector<int64_t>& per_day = s.per_day;
  fmt::print("{}: underlying {}, {} rows read, {} contracts\n", f.file, c.underlying,
             s.report.rows_read, c.size());
  if (c.num_days() > 0) {
    fmt::print("quote dates: {} ({}..{}); contracts per day min/median/max {}/{}/{}\n",
               c.num_days(), Date(c.dates.front()), Date(c.dates.back()), per_day.front(),
               per_day[per_day.size() / 2], per_day.back());
    fmt::print("expiries: {} ({}..{}); strikes {:g}..{:g}\n", s.expiries.size(),
               Date(*s.expiries.begin()), Date(*s.expiries.rbegin()), s.kmin, s.kmax);
  }
  fmt::print("{}\n", InputsText(f, s.rate_source, s.div_source, s.style_source));
  fmt::print(
      "no quote (zero bid or zero ask; kept, no implied vol): {} rows ({} without a bid, {} "
      "without an ask)\n",
      q.no_quote, q.no_bid, q.no_ask);
  fmt::print("implied vol from the mid, with each contract's style: {} of {} rows", q.solved,
             c.size());
  if (!s.failure_counts.empty()) {
    std::string list;
    for (const auto& [reason, count] : s.failure_counts) {
      list += fmt::format("{}{} {}", list.empty() ? "" : ", ", count, reason);
    }
    fmt::print("; quoted rows without one: {}", list);
  }
  fmt::print("\n");
  if (s.priced.ok()) {
    fmt::print(
        "priced in batch as the options environments do (BSM, vols filled where the mid "
        "has none): implied vol solved from the mid for {}, read from the file for {}, filled "
        "for {}\n",
        s.priced->solved, s.priced->from_file, s.priced->filled);
  } else {
    fmt::print("not priced: {}\n", s.priced.status().message());
  }
  if (!s.warnings.empty()) {
    fmt::print(
        "{} warning(s): quotes whose mid has no implied vol (stale or bad quotes; kept, with "
        "their reason in --out; they do not fail the check):\n",
        s.warnings.size());
    for (const auto& [rule, list] : s.warning_groups) {
      fmt::print("  {:>7} x {}\n", list.size(), rule);
    }
    for (const auto& [rule, list] : s.warning_groups) {
      const size_t shown = ProblemsShown(f.max_problems, list.size());
      fmt::print("{} ({} of {}):\n", rule, shown, list.size());
      for (size_t i = 0; i < shown; ++i) {
        fmt::print("  {}:{}: {}\n", f.file, list[i]->line, list[i]->detail);
      }
    }
  }
  const std::string dropped_text =
      f.on_bad_rows == "drop" ? "dropped" : "would be dropped with --on-bad-rows drop";
  if (!s.report.problems.empty()) {
    fmt::print("{}", ProblemsText(s.report, f.max_problems, dropped_text));
  } else if (s.priced.ok()) {
    fmt::print("no problems found\n");
  }
  if (!f.out.empty()) {
    if (s.exit_code == 0) {
      fmt::print("wrote {}: {} rows\n", f.out, c.size());
    } else {
      fmt::print("{} not written: the check failed\n", f.out);
    }
  }
}

int RunCheck(const CheckFlags& f) {
  if (Status st = CheckCheckFlags(f); !st.ok()) return ReportError(st);
  CheckSummary s;
  if (Status st = Summarise(f, &s); !st.ok()) return ReportError(st);
  // --out only for a file that passes: never a file of a chain with errors.
  if (!f.out.empty() && s.exit_code == 0) {
    if (Status st = WriteQuoteSolution(f.out, s.chain, s.quotes); !st.ok()) return ReportError(st);
  }
  if (f.json) {
    PrintCheckJson(f, s);
  } else {
    PrintCheckText(f, s);
  }
  if (!s.priced.ok()) {
    return ReportError(Status::DataError(
        fmt::format("{}: the chain could not be priced: {}", f.file, s.priced.status().message())));
  }
  return s.exit_code;
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
  CLI::Option* rate_opt =
      check
          ->add_option("--rate", cf->rate,
                       "risk-free rate r (continuously compounded annual decimal, 0.05 = 5%); "
                       "overrides the file's rate column (r, rate, risk_free_rate, "
                       "interest_rate). With neither, r = 0 and a note is printed")
          ->check(DecimalNumber());
  CLI::Option* div_opt =
      check
          ->add_option("--div", cf->dividend,
                       "dividend yield q (continuous annual decimal); overrides the file's "
                       "dividend column (q, div, dividend_yield, dividend). With neither, q = 0 "
                       "and a note is printed")
          ->check(DecimalNumber());
  check->add_option("--style", cf->style,
                    "exercise style american|european for every contract; overrides the file's "
                    "style column (E/A). With neither, european (BSM) and a note. American: "
                    "Barone-Adesi-Whaley (binomial tree where it fails)");
  check->add_option("--out", cf->out,
                    "write every row (file order) with the r, q, T, style used, the implied vol "
                    "from the mid (bid+ask)/2, price, delta, gamma, vega, theta and a reason "
                    "where there is none; only when the check passes (atomic write)");
  check
      ->add_option("--max-problems", cf->max_problems,
                   "problems (and warnings) listed per rule (0 = all)")
      ->check(DecimalInteger())
      ->capture_default_str();
  check->add_flag("--json", cf->json, "print the summary as JSON");
  check->callback([cf, action, rate_opt, div_opt] {
    cf->rate_given = rate_opt->count() > 0;
    cf->dividend_given = div_opt->count() > 0;
    *action = [cf] { return RunCheck(*cf); };
  });

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
