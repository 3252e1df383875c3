// rltrade cli: `rltrade mine` — rank candidate signals on the training range (mine/mine.h).
//
//   rltrade mine CONFIG [--train RANGE] [--validation RANGE] [--cost RATE] [options]
//   rltrade mine --input FILE --train RANGE --cost RATE [--validation RANGE]
//                [--timezone TZ] [--session HH:MM-HH:MM] [options]
//   options: --out DIR (default mine), --signals a,b,..., --metric mean|sharpe, --folds K,
//            --embargo N, --lower-q Q, --upper-q Q, --max-corr R, --dsr-threshold P, --json
// With CONFIG: [data] (every symbol of [data] symbols/files), [split] train (required unless
// --train), validation (optional), test (never read: its sessions are dropped before any
// candidate is computed; a training or validation range overlapping it is refused), and
// [env] cost_rate (unless --cost). Every session after the last training/validation date
// is dropped too. Outputs go to DIR through a staging directory (mine/outputs.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/input_bars.h"
#include "cli/numeric_flags.h"
#include "core/options.h"
#include "core/thread_pool.h"
#include "env/envs/intraday.h"
#include "features/library.h"
#include "mine/mine.h"
#include "mine/outputs.h"
#include "train/train_options.h"

namespace rlt::cli {
namespace {

struct MineArgs {
  std::string config, input, train, validation, out = "mine", signals;
  std::string timezone = "UTC", session, on_bad_rows = "fail";
  bool timezone_given = false, json = false;
  int threads = 0;  // --threads (0 = the cores available)
  std::optional<double> cost;
  mine::MineOptions options;
};

// The candidates of one symbol: names, which are regime flags, values[signal][bar].
struct Candidates {
  std::vector<std::string> names;
  std::vector<uint8_t> regime;
  std::vector<std::vector<double>> values;
};

// The one place candidates come from: the signal library (features/library.h), the
// signals `which` (empty: all 184), its regime flags marked.
Result<Candidates> CandidateColumns(const market::Bars& bars, const std::vector<int>& which) {
  RLT_ASSIGN_OR_RETURN(features::LibraryColumns lib, features::ComputeLibrary(bars, which));
  Candidates c;
  c.regime.reserve(lib.names.size());
  for (const std::string& n : lib.names) c.regime.push_back(features::IsRegimeSignal(n) ? 1 : 0);
  c.names = std::move(lib.names);
  c.values = std::move(lib.values);
  return c;
}
constexpr const char* kCandidatesSource = "the signal library (features/library.h, 184 signals)";

// `bars` with only the sessions whose date passes `keep` (bars and session indices renumbered).
market::Bars KeepSessions(const market::Bars& b, const market::DateRange& test, bool has_test,
                          int32_t last_needed) {
  market::Bars out;
  out.symbol = b.symbol;
  out.timezone = b.timezone;
  out.day_boundary = b.day_boundary;
  out.around_the_clock = b.around_the_clock;
  for (const market::Session& s : b.sessions) {
    if ((has_test && test.Contains(s.date)) || (last_needed != 0 && s.date > last_needed)) continue;
    market::Session n{s.date, static_cast<int32_t>(out.size()), 0};
    for (int32_t t = s.begin; t < s.end; ++t) {
      out.time.push_back(b.time[t]);
      if (!b.utc_offset.empty()) out.utc_offset.push_back(b.utc_offset[t]);
      out.open.push_back(b.open[t]);
      out.high.push_back(b.high[t]);
      out.low.push_back(b.low[t]);
      out.close.push_back(b.close[t]);
      out.volume.push_back(b.volume[t]);
      out.session.push_back(static_cast<int32_t>(out.sessions.size()));
      out.bar_in_session.push_back(t - s.begin);
      out.last_in_session.push_back(t + 1 == s.end ? 1 : 0);
    }
    n.end = static_cast<int32_t>(out.size());
    out.sessions.push_back(n);
  }
  return out;
}

Result<double> ParseCost(const config::ConfigValue& v) {
  std::istringstream in(v.text);
  double x = 0;
  in >> x;
  if (!in || !in.eof() || !std::isfinite(x) || x < 0) {
    return Status::InvalidArgument(config::MessagePlace(v.source) + ": [env] cost_rate = " +
                                   v.text + ": expected a number >= 0 (e.g. 0.0005)");
  }
  return x;
}

struct Loaded {
  std::vector<market::Bars> bars;
  std::string source;
};

// Reads the bars and the ranges; drops the test range and what follows the last needed date.
Result<Loaded> LoadAndTrim(MineArgs& a) {
  Loaded out;
  market::DateRange test;
  bool has_test = false;
  if (!a.config.empty()) {
    RLT_ASSIGN_OR_RETURN(config::Config config, train::LoadConfig(a.config));
    RLT_ASSIGN_OR_RETURN(auto split, train::ReadSplitOf(config));
    if (a.train.empty()) {
      if (!split.count("train")) {
        return Status::InvalidArgument(a.config +
                                       ": [split] train is required (e.g. train = "
                                       "\"2023-07-03:2024-02-29\"), or pass --train RANGE");
      }
      a.options.train = split["train"];
    }
    if (a.validation.empty() && split.count("validation")) {
      a.options.has_validation = true;
      a.options.validation = split["validation"];
    }
    if (split.count("test")) {
      test = split["test"];
      has_test = true;
    }
    if (!a.cost) {
      const config::ConfigValue* v = config.Get("env", "cost_rate");
      if (v != nullptr) {
        RLT_ASSIGN_OR_RETURN(a.options.cost_rate, ParseCost(*v));
      } else {
        a.options.cost_rate = env::IntradayOptions().cost_rate;  // the environment's default
      }
    }
    RLT_ASSIGN_OR_RETURN(out.bars, train::LoadConfigBars(config));
    out.source = a.config;
  } else {
    RLT_ASSIGN_OR_RETURN(
        market::MarketData data,
        ReadInputBars(a.input, a.timezone, a.timezone_given, "", a.on_bad_rows, a.session));
    out.bars = std::move(data.symbols);
    out.source = a.input;
  }
  if (has_test) {
    for (const auto& [name, range] :
         {std::pair<std::string, market::DateRange>{"training", a.options.train},
          {"validation", a.options.validation}}) {
      if (name == "validation" && !a.options.has_validation) continue;
      if (range.Overlaps(test)) {
        return Status::Refused(fmt::format(
            "the {} range {} overlaps [split] test {} of {}: mining never reads the test range; "
            "choose {} dates outside it",
            name, range.ToString(), test.ToString(), a.config, name));
      }
    }
  }
  int32_t last_needed = a.options.train.last;
  if (a.options.has_validation) {
    last_needed = a.options.validation.last == 0 || last_needed == 0
                      ? 0
                      : std::max(last_needed, a.options.validation.last);
  }
  for (market::Bars& b : out.bars) b = KeepSessions(b, test, has_test, last_needed);
  return out;
}

int RunMine(MineArgs& a) {
  if (a.config.empty() == a.input.empty()) {
    return ReportError(Status::InvalidArgument(
        "give either CONFIG or --input FILE (with --train RANGE and --cost RATE)"));
  }
  if (!a.input.empty() && (a.train.empty() || !a.cost)) {
    return ReportError(Status::InvalidArgument(
        "--input needs --train RANGE (e.g. 2023-07-03:2024-02-29) and --cost RATE (e.g. "
        "0.0005)"));
  }
  for (const auto& [flag, text, range] : {std::tuple<const char*, std::string*, market::DateRange*>{
                                              "--train", &a.train, &a.options.train},
                                          {"--validation", &a.validation, &a.options.validation}}) {
    if (text->empty()) continue;
    Result<market::DateRange> r = market::DateRange::Parse(*text);
    if (!r.ok()) return ReportError(Status::InvalidArgument(flag + (": " + r.status().message())));
    *range = *r;
  }
  a.options.has_validation = !a.validation.empty();
  if (a.cost) a.options.cost_rate = *a.cost;
  a.options.key_names = {{"lower_q", "--lower-q"},
                         {"upper_q", "--upper-q"},
                         {"cost_rate", "--cost"},
                         {"folds", "--folds"},
                         {"embargo", "--embargo"},
                         {"metric", "--metric"},
                         {"max_corr", "--max-corr"},
                         {"tune_top", "--tune-top"},
                         {"tune_iterations", "--tune-iterations"},
                         {"dsr_threshold", "--dsr-threshold"},
                         {"validation", "--validation"}};
  Result<Loaded> loaded = LoadAndTrim(a);
  if (!loaded.ok()) return ReportError(loaded.status());
  if (Status s = mine::ValidateMineOptions(a.options); !s.ok()) return ReportError(s);

  // Candidates per symbol; a symbol whose candidates cannot be computed is skipped (noted).
  std::vector<int> which;  // empty: the whole library
  if (!a.signals.empty()) {
    std::vector<std::string> names;
    std::stringstream list(a.signals);
    for (std::string name; std::getline(list, name, ',');) names.push_back(name);
    Result<std::vector<int>> resolved = features::ResolveLibrarySignals(names);
    if (!resolved.ok()) {
      return ReportError(Status::InvalidArgument("--signals: " + resolved.status().message()));
    }
    which = std::move(*resolved);
  }
  // The symbols' candidates are independent: computed on the threads, symbol k on thread
  // k mod T (the values do not depend on the thread count).
  mine::MineOptions options = a.options;
  options.threads = ResolveThreads(a.threads);
  std::vector<std::optional<Result<Candidates>>> computed(loaded->bars.size());
  {
    WorkerPool pool(std::max(1, std::min<int>(options.threads, static_cast<int>(computed.size()))));
    pool.set_inline_below_seconds(0);
    pool.Run([&](int w) {
      for (size_t k = static_cast<size_t>(w); k < computed.size();
           k += static_cast<size_t>(pool.num_workers())) {
        computed[k].emplace(CandidateColumns(loaded->bars[k], which));
      }
    });
  }
  std::vector<market::Bars> bars;
  std::vector<Candidates> cands;
  for (size_t k = 0; k < computed.size(); ++k) {
    market::Bars& b = loaded->bars[k];
    Result<Candidates>& c = *computed[k];
    if (!c.ok()) {
      if (loaded->bars.size() == 1) return ReportError(c.status());
      fmt::print(stderr, "note: symbol {} skipped: {}\n", b.symbol, c.status().message());
      continue;
    }
    bars.push_back(std::move(b));
    cands.push_back(std::move(*c));
  }
  if (bars.empty()) {
    return ReportError(Status::DataError("no symbol of " + loaded->source +
                                         " gave candidate signals (see the notes above)"));
  }
  mine::MineInput in;
  in.named = !a.signals.empty();
  in.names = cands[0].names;
  in.regime = cands[0].regime;
  for (size_t k = 0; k < bars.size(); ++k) {
    mine::SymbolColumns sc;
    sc.bars = &bars[k];
    sc.values = std::move(cands[k].values);
    in.symbols.push_back(std::move(sc));
  }
  Result<mine::MineResult> result = mine::Mine(in, options);
  if (!result.ok()) return ReportError(result.status());
  mine::Provenance p;
  p.command = fmt::format(
      "rltrade mine {}{} --train {}{} --cost {} --folds {} --embargo {} --metric {} --lower-q {} "
      "--upper-q {} --max-corr {} --dsr-threshold {}{}{}",
      a.config.empty() ? "--input " : "", loaded->source, a.options.train.ToString(),
      a.options.has_validation ? " --validation " + a.options.validation.ToString() : "",
      a.options.cost_rate, a.options.folds, a.options.embargo, a.options.metric, a.options.lower_q,
      a.options.upper_q, a.options.max_corr, a.options.dsr_threshold,
      a.signals.empty() ? "" : " --signals " + a.signals,
      a.options.tune_top == 0
          ? std::string()
          : fmt::format(" --tune-top {} --tune-iterations {} --tune-seed {}", a.options.tune_top,
                        a.options.tune_iterations, a.options.tune_seed));
  p.source = loaded->source;
  p.candidates = kCandidatesSource;
  for (const market::Bars& b : bars) p.symbols.push_back(b.symbol);
  if (Status s = mine::WriteMineDir(a.out, *result, a.options, p); !s.ok()) return ReportError(s);
  if (a.json) {
    std::cout << mine::SummaryJson(*result, a.options, p);
    return 0;
  }
  fmt::print(
      "mined {} candidate(s) on {} ({} training dates, {} units): {} kept, {} with DSR "
      ">= {} (expected false discoveries <= {:.2f}); wrote {}/\n",
      result->ranked.size(), a.options.train.ToString(), result->train_dates, result->train_units,
      result->kept.size(), result->survivors, a.options.dsr_threshold, result->expected_false,
      a.out);
  for (int i : result->kept) {
    const mine::SignalResult& r = result->signals[i];
    fmt::print("  {:>3}  {:<24} {:+d}  cv {:+.3e}  dsr {:.3f}\n", r.rank, r.name, r.sign,
               r.cv_score, r.dsr);
  }
  return 0;
}

}  // namespace

void RegisterMineCommand(CLI::App& app, Action* action) {
  auto a = std::make_shared<MineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mine",
      "Rank candidate signals on the training range by purged k-fold cross-validation of a "
      "quantile rule, filter correlated ones, deflate the Sharpe ratios (docs/mining.md)");
  cmd->add_option("config", a->config,
                  "CONFIG.toml: [data], [split] train/validation ([split] test is never read), "
                  "[env] cost_rate");
  cmd->add_option("--input", a->input, "bars CSV file (instead of CONFIG)");
  cmd->add_option("--train", a->train,
                  "training range YYYY-MM-DD:YYYY-MM-DD (required with --input; overrides "
                  "[split] train, must not overlap [split] test)");
  cmd->add_option("--validation", a->validation,
                  "validation range for out-of-sample P&L of the chosen rules (overrides "
                  "[split] validation)");
  cmd->add_option("--cost", a->cost,
                  "proportional cost per unit of position change (required with --input; "
                  "overrides [env] cost_rate)")
      ->check(DecimalNumber());
  cmd->add_option("--out", a->out,
                  "output directory, written atomically (replaces an earlier mining output "
                  "only)");
  cmd->add_option("--signals", a->signals,
                  "comma-separated candidate names to mine (default: every candidate; a "
                  "constant one is then an error)");
  cmd->add_option("--metric", a->options.metric,
                  "fold score: mean daily P&L or per-day Sharpe ratio")
      ->check(CLI::IsMember({"mean", "sharpe"}));
  cmd->add_option("--folds", a->options.folds, "contiguous blocks of training dates (>= 2)")
      ->check(DecimalInteger(false));
  cmd->add_option("--embargo", a->options.embargo,
                  "training dates right after a fold left out of its fit (>= 0)")
      ->check(DecimalInteger(false));
  cmd->add_option("--lower-q", a->options.lower_q,
                  "quantile of the long threshold: long when the signal is at or below it")
      ->check(DecimalNumber());
  cmd->add_option("--upper-q", a->options.upper_q,
                  "quantile of the short threshold: short when the signal is at or above it")
      ->check(DecimalNumber());
  cmd->add_option("--max-corr", a->options.max_corr,
                  "drop a signal whose |correlation| with a better-ranked kept one exceeds this")
      ->check(DecimalNumber());
  cmd->add_option("--dsr-threshold", a->options.dsr_threshold,
                  "a kept signal survives when its Deflated Sharpe Ratio is at least this")
      ->check(DecimalNumber());
  cmd->add_option("--tune-top", a->options.tune_top,
                  "tune the rule (quantiles, smoothing, strength) of the N best kept signals by "
                  "simulated annealing on the training folds (0 = off); each evaluation counts "
                  "as a trial in the deflated Sharpe ratio")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tune-iterations", a->options.tune_iterations,
                  "annealing steps per tuned signal (>= 1)");
  cmd->add_option("--tune-seed", a->options.tune_seed, "the annealing's random seed");
  cmd->add_option("--threads", a->threads,
                  "threads for the candidates and their scoring (0 = the cores available); the "
                  "results do not depend on it")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--json", a->json, "print summary.json on stdout instead of the table");
  CLI::Option* tz =
      cmd->add_option("--timezone", a->timezone, "--input: IANA time zone of naive timestamps");
  cmd->add_option("--session", a->session,
                  "--input: keep bars starting in these local hours HH:MM-HH:MM, open "
                  "inclusive, close exclusive (e.g. 09:15-15:30 for NSE)");
  cmd->add_option("--on-bad-rows", a->on_bad_rows, "--input: fail (default) or drop bad rows")
      ->check(CLI::IsMember({"fail", "drop"}));
  cmd->callback([a, tz, action] {
    a->timezone_given = tz->count() > 0;
    *action = [a] { return RunMine(*a); };
  });
}

}  // namespace rlt::cli
