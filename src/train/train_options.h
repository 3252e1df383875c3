// rltrade train: the option structs of a training config and how [data], [split],
// [features] and [env] become environments. LibTorch-free (shared with evaluation).
#ifndef RLT_TRAIN_TRAIN_OPTIONS_H_
#define RLT_TRAIN_TRAIN_OPTIONS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "env/market_dataset.h"
#include "env/registry.h"
#include "features/normalizer.h"
#include "market/calendar.h"
#include "market/csv.h"
#include "market/date_range.h"
#include "train/data_record.h"

namespace rlt::train {

// [run]
struct RunOptions {
  int64_t total_steps = 100000;  // env steps to train for
  uint64_t seed = 0;             // env i is seeded seed + i; weights from seed
  int threads = 0;  // env workers = LibTorch = OpenBLAS threads; 0 = cores given (see below)
  std::string device = "cpu";    // "cpu", or "auto": measure each available device, pick
                                 // the fastest (this build: cpu only)
  int64_t checkpoint_every = 0;  // env steps between checkpoints; 0 = only final/
  int64_t eval_every = 0;        // env steps between evaluations; 0 = off (see EvalEnvSetup)
  int eval_episodes = 10;        // episodes per evaluation (episodic envs; market envs: 1)
  // Selection (train/selection.h): the metric of each evaluation that picks RUN/best/, and
  // how many evaluations without improvement stop training (0 = never).
  std::string select_metric = "sharpe_ratio";
  int patience = 0;
  int seeds = 1;  // seeds seed .. seed + seeds - 1, each a run of its own (train/seeds.h)
  // Under mpirun: seconds a rank waits for the others in one collective before it ends the
  // job (a rank died or hangs; dist::WorldCollective).
  double rank_timeout_seconds = 30;
  template <typename V>
  void VisitFields(V& v) {
    v("total_steps", &total_steps, "env steps to train for");
    v("seed", &seed, "random seed");
    v("threads", &threads,
      "threads for env workers and OpenBLAS (0 = 1 or the cores this process may use, whichever "
      "a short trial measures faster; the run's config.toml records the resolved count)");
    v("device", &device, "compute device (auto = measured trial)", {"cpu", "auto"});
    v("checkpoint_every", &checkpoint_every, "env steps between checkpoints (0 = final only)");
    v("eval_every", &eval_every, "env steps between evaluations (0 = off)");
    v("eval_episodes", &eval_episodes, "episodes per evaluation (episodic envs)");
    v("select_metric", &select_metric,
      "the evaluation's metric that selects the checkpoint best/ (higher is better; "
      "max_drawdown is signed, <= 0); market envs: computed on [split] validation's sessions; "
      "episodic envs: episode_return (the default there)",
      {"sharpe_ratio", "sortino_ratio", "total_return", "annual_return", "calmar_ratio",
       "max_drawdown", "episode_return"});
    v("patience", &patience,
      "evaluations in a row without a better select_metric before training stops early (0 = "
      "never); final/ is still written");
    v("seeds", &seeds,
      "train this many seeds (run.seed, run.seed + 1, ...) into RUN/seed_<seed>/ (1 = one run)");
    v("rank_timeout_seconds", &rank_timeout_seconds,
      "under mpirun: seconds to wait for the other ranks in one exchange before ending the job");
  }
};

// [data] — market data for market environments.
struct DataOptions {
  std::string source = "synthetic";  // "synthetic" (built-in generator) or "file"
  FilePath file;                     // bar CSV when source = "file"
  std::string timezone = "UTC";      // IANA zone of naive timestamps in `file`
  std::string symbol;                // symbol to use from a multi-symbol file
  // Several symbols, one policy: symbols of `file`'s symbol column ({"all"}: every one);
  // empty = one symbol (`symbol`).
  std::vector<std::string> symbols;
  // Several symbols from one file each (instead of `file`): symbols[i], when given, names
  // files[i]'s bars.
  FilePaths files;
  std::string on_bad_rows = "fail";  // "fail" or "drop"
  std::string session;               // "HH:MM-HH:MM": keep bars starting in these local
                                     // hours, [open, close) (market/csv.h); "" = all;
                                     // "24h": a market that never closes
  // "none", "XNYS", "XNSE" or a calendar file (market/calendar.h): each day's own hours.
  std::string calendar = "none";
  std::string day_boundary = "00:00";  // session = "24h": local time a trading day begins
  int days = 250;                      // synthetic: sessions
  int bar_minutes = 5;                 // synthetic: bar length
  uint64_t seed = 7;                   // synthetic: generator seed
  double signal_to_noise = 0.0;        // synthetic: predictable component (0 = none)
  template <typename V>
  void VisitFields(V& v) {
    v("source", &source, "where bars come from", {"synthetic", "file"});
    v("file", &file, "bar CSV file (source = file)");
    v("timezone", &timezone, "IANA time zone of naive timestamps");
    v("symbol", &symbol,
      "symbol to use from a file with a symbol column; for a file without one, the symbol its "
      "bars are (the identity eval, signal and paper check bars against)");
    v("symbols", &symbols,
      "several symbols, one policy: the symbols of the file's symbol column to train on, e.g. "
      "[\"BPCL\", \"HDFCLIFE\"], or \"all\" (the run's config.toml lists them); with `files`, "
      "the symbol of each file in order; each episode draws a (symbol, session) of the "
      "training range; empty = one symbol (`symbol`)");
    v("files", &files,
      "several symbols, one file each (instead of `file`), e.g. [\"bpcl.csv\", "
      "\"hdfclife.csv\"]: each file's symbol is its symbol column's, else symbols[i], else "
      "the file's name");
    v("on_bad_rows", &on_bad_rows, "bad input rows", {"fail", "drop"});
    v("session", &session,
      "file: keep bars starting in these local hours HH:MM-HH:MM, open inclusive, close "
      "exclusive (e.g. 09:30-16:00); empty = all hours, one session per local date; \"24h\" "
      "= a market that never closes: sessions are days cut at day_boundary (with [env] "
      "flatten_at_close = false, positions are carried across them)");
    v("calendar", &calendar,
      "exchange calendar: \"XNYS\" (NYSE) or \"XNSE\" (NSE India), 2010-2026, with holidays, "
      "early closes and special sessions; or a calendar CSV file (date,open,close; see "
      "docs/data.md); bars outside each day's session are dropped and counted; \"none\" = "
      "every date with bars is a session (use session for the hours)");
    v("day_boundary", &day_boundary,
      "session = \"24h\": local time HH:MM at which one trading day ends and the next begins "
      "(a day cut at 17:00 takes the date it ends on)");
    v("days", &days, "synthetic: number of sessions");
    v("bar_minutes", &bar_minutes, "synthetic: bar length in minutes");
    v("seed", &seed, "synthetic: generator seed");
    v("signal_to_noise", &signal_to_noise, "synthetic: predictable momentum (0 = none)");
  }
};

// [features]
struct FeatureOptions {
  // "scaled", "fast22", "full184" (the signal library, features/library.h) or a preset file
  // (TOML, e.g. written by `rltrade mine`) naming library signals; a run's config.toml
  // records a file's list as preset = "full184" with `signals`.
  FilePath preset = "scaled";
  std::vector<std::string> signals;   // preset = "full184": the library signals to use
  int quantiles = 101;                // normalizer = "quantile": edges per feature
  int quantiles_binary = 0;           // ... for the library's regime flags (0 = quantiles)
  std::string normalizer = "zscore";  // "zscore", "quantile", "rolling_zscore", "none"
  double clip = 5.0;                  // clip normalised values to +-clip (<= 0: off)
  // Several symbols ([data] symbols): one normaliser per symbol, each fitted on its own
  // training sessions ("symbol"), or one over all of them ("pooled").
  std::string normalize_by = "symbol";
  bool symbol_id = false;  // several symbols: add a one-hot of the symbol to each row
  template <typename V>
  void VisitFields(V& v) {
    v("preset", &preset,
      "feature preset: \"scaled\", \"fast22\", \"full184\" (the 184-signal library, see "
      "docs/data.md) or a preset file (TOML with signals = [...], e.g. the preset.toml of "
      "rltrade mine)",
      {"scaled", "fast22", "full184"});
    v("signals", &signals,
      "preset = \"full184\": the library signals to use, by name (e.g. [\"dv\", \"qco\"]); "
      "empty = all 184");
    v("normalizer", &normalizer, "normalisation fitted on [split] train",
      {"zscore", "quantile", "rolling_zscore", "none"});
    v("quantiles", &quantiles,
      "normalizer = \"quantile\": number of quantile edges per feature fitted on [split] train "
      "(>= 2; the replaced intraday system used 5)");
    v("quantiles_binary", &quantiles_binary,
      "normalizer = \"quantile\": edges for the library's regime flags (>= 2; 0 = quantiles; "
      "the replaced system used 3)");
    v("clip", &clip, "clip normalised features to +-clip");
    v("normalize_by", &normalize_by,
      "several symbols: one normaliser per symbol fitted on its own training sessions, or one "
      "pooled over every symbol's",
      {"symbol", "pooled"});
    v("symbol_id", &symbol_id,
      "several symbols: append a one-hot of the symbol (one column per symbol of [data] "
      "symbols, not normalised) to each feature row");
  }
};

// The feature set a FeatureOptions names, as features::ComputeFeatures and
// features::IncrementalFeatures take it: the preset, or "full184:a,b,c" for a selection of
// library signals.
std::string FeatureKey(const FeatureOptions& f);

// The environments a config asks for.
struct EnvSetup {
  std::string id;
  int num_envs = 1;
  env::EnvContext context;  // [env] settings (minus id/num_envs) and the dataset, if any
  std::map<std::string, market::DateRange> split;  // [split] named ranges
  DataOptions data;
  FeatureOptions features;
  bool symbol_column = false;  // the [data] file has a symbol column (market/csv.h)
  // Several symbols, one policy ([data] symbols): the run's symbols in order (resolved:
  // "all" listed); empty for one symbol. With EnvSetupOverrides::symbol, the dataset is
  // that one symbol's (`symbol`).
  std::vector<std::string> symbols;
  std::string symbol;
  // Several symbols: the file each symbol's bars came from and whether it has a symbol
  // column (for the data record), in `symbols` order.
  std::vector<std::pair<std::string, bool>> symbol_files;
};

// Evaluation and signals rebuild a run's environments with these replacements.
struct EnvSetupOverrides {
  // Apply this normaliser (the run's normalizer.json) instead of fitting one on train.
  const features::Normalizer* normalizer = nullptr;
  // A bar CSV that replaces the run's [data] bars (read with its timezone, symbol and
  // on_bad_rows settings); "" keeps [data].
  std::string data_file;
  // The run's data record (RUN_DIR/data.json; nullptr: none, as for a run trained before
  // runs recorded their data): the bars read are checked against it (CheckAgainstRecord,
  // data_record.h), notes of what an allow flag accepted printed on stderr.
  const DataRecord* record = nullptr;
  RecordCheck record_check;
  // A run of several symbols is evaluated, signalled and paper-traded one symbol at a time:
  // the symbol (one of its [data] symbols) whose bars, normaliser (`normalizer` must be
  // that symbol's) and one-hot id the setup uses. Required for such a run; ignored for a
  // run of one symbol.
  std::string symbol;
};

// The symbols of a run's config ([data] symbols, as its config.toml lists them); empty for
// a run of one symbol.
std::vector<std::string> RunSymbols(const config::Config& config);

// A run directory's setup files, covered by RUN_DIR/MANIFEST and checked against it by
// every command that reads a run (metrics and status grow while training and are not):
// config.toml, normalizer.json, training_ranges.json, data.json.
std::vector<std::string> RunSetupFiles();

// Makes the path keys of a training config absolute (config::Config::ResolvePaths): the
// FilePath keys of [data] and [features], and those of the [env] id's options (e.g. the
// options environment's `underlying`). Call it once the file is read and the `--set`
// overrides applied, before the config is bound, written or copied.
void ResolveConfigPaths(config::Config& config);

// Reads a training config, applies `overrides` (`--set section.key=value`, in order) and
// resolves its paths (ResolveConfigPaths).
Result<config::Config> LoadConfig(const std::string& path,
                                  const std::vector<std::string>& overrides = {});

// Reads [env], [split], [data], [features]; for market environments loads the bars
// (or generates them), computes features and fits the normaliser on [split] train
// (or applies overrides.normalizer). Training envs default to range = [split] train.
Result<EnvSetup> BuildEnvSetup(const config::Config& config,
                               const EnvSetupOverrides& overrides = {});

// The bars of a config's [data] (read with its timezone, symbol, on_bad_rows and session,
// or generated), exactly as BuildEnvSetup loads them, without features; `data_file`
// replaces [data] file as EnvSetupOverrides::data_file does. The reader's report (naive
// times, UTC offsets written in the file) goes to *report for a file.
// A config of several symbols ([data] symbols) reads the one `symbol` names (required).
// How [data] session, calendar and day_boundary read a bar file: the reader's rules and
// the zone the bars are read in (the calendar's when [data] timezone is not set).
struct ReadRules {
  market::SessionHours hours;                                // [data] session (HH:MM-HH:MM)
  std::shared_ptr<const market::ExchangeCalendar> calendar;  // [data] calendar, or null
  bool around_the_clock = false;                             // [data] session = "24h"
  int day_boundary_minute = 0;                               // [data] day_boundary
  std::string timezone;                                      // the zone bars are read in
  std::string calendar_spec;  // "none", a built-in name, or the calendar file's absolute path
  // The reader's options for `d` (timezone, symbol, bad rows and the rules above).
  market::CsvReadOptions CsvOptions(const DataOptions& d) const;
  // What the rules keep, for messages: "09:30-16:00", "calendar XNYS", "24h", "all hours".
  std::string Describe() const;
};
// Reads and checks the rules of `d` (errors name the config's file:line and key).
Result<ReadRules> ReadRulesOf(const config::Config& config, const DataOptions& d);

Result<market::Bars> LoadDataBars(const config::Config& config, const std::string& data_file = "",
                                  market::DataReport* report = nullptr,
                                  const std::string& symbol = "");

// [split]'s named ranges, checked as BuildEnvSetup checks them (train and test disjoint,
// train before test, validation outside both); errors name the config's file:line.
Result<std::map<std::string, market::DateRange>> ReadSplitOf(const config::Config& config);

// Every symbol's bars of a config's [data] (one Bars for one symbol; [data] symbols/files:
// one per symbol, in their order), read exactly as BuildEnvSetup reads them, without
// features.
Result<std::vector<market::Bars>> LoadConfigBars(const config::Config& config);

// The session dates (yyyymmdd, in order) of a config's market data, from the bars built
// exactly as BuildEnvSetup builds them ([data] read or generated; no features). Errors: the
// [env] id has no market data, bad [data] settings, unreadable bars, no sessions.
Result<std::vector<int32_t>> SessionDates(const config::Config& config);

// Periodic evaluation (run.eval_every > 0, Stable-Baselines3's EvalCallback): a separate
// VecEnv built from the same [env] settings, run deterministically after every eval_every
// env steps.
//  - Episodic envs (cartpole, pendulum, example): min(eval_episodes, num_envs) envs seeded
//    run.seed + kEvalSeedOffset + i (never a training env's seed), eval_episodes episodes.
//  - Market envs: one env that walks [split] validation once (sequential = true,
//    range = validation), one episode; [split] test is never touched. Without a
//    validation range this is an error that says how to add one.
constexpr uint64_t kEvalSeedOffset = 1000000;
struct EvalEnvSetup {
  env::EnvContext context;  // the training context with the evaluation overrides
  int num_envs = 1;
  int episodes = 1;
  uint64_t seed = 0;  // run.seed + kEvalSeedOffset
  bool market = false;
};
// REQUIRES: run.eval_every > 0. Checks run.eval_episodes >= 1.
Result<EvalEnvSetup> BuildEvalEnvSetup(const EnvSetup& setup, const RunOptions& run);

// Intraday env: refuses (Status::Refused) a training setup whose initial capital cannot
// buy one lot (lot_size shares, with costs) at the highest close of the training range:
// the agent could never trade then, and training would be meaningless (reward 0
// throughout). The message names env.initial_capital and env.lot_size and what would work.
// Other envs: Ok.
Status CheckCapitalBuysOneLot(const EnvSetup& setup);

// Writes the resolved [data], [features], [split], [env] sections back into `config`.
void ResolveEnvSection(config::Config& config, const EnvSetup& setup);

}  // namespace rlt::train

#endif  // RLT_TRAIN_TRAIN_OPTIONS_H_
