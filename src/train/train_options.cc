// rltrade train: building environments from a config (see train_options.h).
#include "train/train_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>

#include "core/civil_time.h"
#include "core/options.h"
#include "core/printable.h"
#include "env/envs/intraday.h"
#include "features/normalizer.h"
#include "market/date_range.h"
#include "market/market.h"
#include "train/feature_selection.h"
#include "train/training_ranges.h"

namespace rlt::train {
namespace {

Result<std::map<std::string, market::DateRange>> ReadSplit(const config::Config& config) {
  std::map<std::string, market::DateRange> split;
  const config::Section* s = config.Find("split");
  if (s == nullptr) return split;
  for (const auto& [name, value] : s->entries) {
    Result<market::DateRange> r = market::DateRange::Parse(value.text);
    if (!r.ok()) {
      return Status::InvalidArgument(value.source + ": [split] " + name + ": " +
                                     r.status().message());
    }
    split[name] = *r;
  }
  if (split.count("train") && split.count("test") && split["train"].Overlaps(split["test"])) {
    return Status::InvalidArgument("[split] train " + split["train"].ToString() +
                                   " overlaps test " + split["test"].ToString() +
                                   "; evaluation dates must be outside the training dates");
  }
  if (split.count("train") && split.count("test") && split["test"].last != 0 &&
      split["train"].first > split["test"].last) {
    const config::ConfigValue* v = s->Find("train");
    return Status::InvalidArgument(
        config::MessagePlace(v->source) + ": [split] train " + split["train"].ToString() +
        " starts after test " + split["test"].ToString() +
        " ends; train on dates before the test range (walk forward in time)");
  }
  if (split.count("validation")) {
    for (const char* other : {"train", "test"}) {
      if (split.count(other) && split["validation"].Overlaps(split[other])) {
        return Status::InvalidArgument("[split] validation " + split["validation"].ToString() +
                                       " overlaps " + other + " " + split[other].ToString() +
                                       "; validation dates must be outside train and test");
      }
    }
  }
  return split;
}

// Prints `note` on stderr the first time this process sees it (a config's bars are read
// more than once: trial setups, seeds, evaluation), so a user reads it once per file.
void NoteOnce(const std::string& note) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  if (seen.insert(note).second) std::fprintf(stderr, "%s\n", PrintableText(note).c_str());
}

// The place of [data] KEY in messages: "configs/x.toml:7: [data] KEY".
std::string DataPlace(const config::Config& config, const std::string& key) {
  const config::ConfigValue* v = config.Get("data", key);
  return (v != nullptr ? config::MessagePlace(v->source) + ": " : std::string()) + "[data] " + key;
}

// A relative calendar path is read from the directory of the config file that set it (as
// path keys are), else from the working directory.
std::string CalendarPath(const config::Config& config, const std::string& spec) {
  namespace fs = std::filesystem;
  fs::path p(spec);
  if (p.is_absolute()) return spec;
  const config::ConfigValue* v = config.Get("data", "calendar");
  if (v != nullptr) {
    const size_t toml = v->source.find(".toml:");
    if (toml != std::string::npos) {
      p = fs::path(v->source.substr(0, toml + 5)).parent_path() / p;
    }
  }
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec);
  return ec ? p.string() : abs.lexically_normal().string();
}

}  // namespace

Result<ReadRules> ReadRulesOf(const config::Config& config, const DataOptions& d) {
  auto setting = [&](const std::string& key, const std::string& value) {
    return market::ReadHoursSetting{value, config.Get("data", key) != nullptr,
                                    DataPlace(config, key), "[data] " + key};
  };
  market::ReadHoursSettings rs;
  rs.session = setting("session", d.session);
  rs.day_boundary = setting("day_boundary", d.day_boundary);
  rs.calendar = setting("calendar", d.calendar);
  rs.timezone = setting("timezone", d.timezone);
  if (!d.calendar.empty() && d.calendar != "none" &&
      !market::ExchangeCalendar::IsBuiltinName(d.calendar)) {
    rs.calendar_file = CalendarPath(config, d.calendar);
  }
  RLT_ASSIGN_OR_RETURN(market::ReadHours h, market::ResolveReadHours(rs));
  ReadRules r;
  r.hours = h.hours;
  r.calendar = std::move(h.calendar);
  r.around_the_clock = h.around_the_clock;
  r.day_boundary_minute = h.day_boundary_minute;
  r.timezone = std::move(h.timezone);
  r.calendar_spec = std::move(h.calendar_spec);
  return r;
}

market::CsvReadOptions ReadRules::CsvOptions(const DataOptions& d) const {
  market::CsvReadOptions ro;
  ro.timezone = timezone;
  ro.symbol = d.symbol;
  ro.on_bad_rows =
      d.on_bad_rows == "drop" ? market::BadRowPolicy::kDrop : market::BadRowPolicy::kFail;
  ro.session = hours;
  ro.calendar = calendar;
  ro.day_boundary_minute = day_boundary_minute;
  ro.around_the_clock = around_the_clock;
  return ro;
}

std::string ReadRules::Describe() const {
  if (calendar != nullptr) return "the sessions of calendar " + calendar->name();
  if (around_the_clock) return "24h";
  if (!hours.all_hours()) return "session = \"" + hours.ToString() + "\"";
  return "all hours";
}

namespace {

// "note: FILE: calendar XNYS: 960 bars on 1 day without a session (2025-07-04), 180 bars
// after 1 early close (2025-07-03), ..." — what the calendar dropped, printed once per file.
std::string CalendarNote(const std::string& file, const ReadRules& rules,
                         const market::DataReport& report) {
  auto dates = [](const auto& list, auto date_of) {
    std::string out;
    for (size_t i = 0; i < list.size() && i < 5; ++i) {
      out += (i ? ", " : "") + FormatDate(date_of(list[i]));
    }
    if (list.size() > 5) out += fmt::format(", ... {} in all", list.size());
    return out;
  };
  int64_t early_rows = 0;
  for (const auto& e : report.early_closes) early_rows += e.second;
  std::string note = fmt::format("note: {}: calendar {}: kept the bars inside each day's session",
                                 file, rules.calendar->name());
  note += fmt::format("; dropped {} bar(s) outside them", report.rows_outside_session);
  if (!report.closed_days_with_bars.empty()) {
    note += fmt::format(" ({} on {} day(s) without a session: {})", report.rows_on_closed_days,
                        report.closed_days_with_bars.size(),
                        dates(report.closed_days_with_bars, [](const auto& p) { return p.first; }));
  }
  if (!report.early_closes.empty()) {
    note += fmt::format(
        "; {} early close(s) ({}), {} bar(s) after them dropped", report.early_closes.size(),
        dates(report.early_closes, [](const auto& p) { return p.first; }), early_rows);
  }
  if (!report.missing_sessions.empty()) {
    note += fmt::format("; {} session(s) without bars ({})", report.missing_sessions.size(),
                        dates(report.missing_sessions, [](int32_t d) { return d; }));
  }
  return note;
}

// timezone_given: [data] timezone was set (else a file without UTC offsets gets a note
// saying which zone was assumed). `symbols_place` names [data] symbols in messages. One
// Bars per symbol: [data] symbols' (in their order; "all": the file's, sorted by name), or
// the one symbol.
struct SymbolBars {
  std::vector<market::Bars> bars;
  // Per symbol: the file it was read from and whether that file has a symbol column.
  std::vector<std::pair<std::string, bool>> sources;
};

Result<SymbolBars> LoadSymbolBars(const DataOptions& d, const ReadRules& session,
                                  bool timezone_given, market::DataReport* report_out = nullptr,
                                  const std::string& symbols_place = "[data] symbols");

// [data] files: one symbol per file.
Result<SymbolBars> LoadFilesBars(const DataOptions& d, const ReadRules& session,
                                 bool timezone_given, market::DataReport* report_out,
                                 const std::string& symbols_place) {
  if (!d.file.empty() || !d.symbol.empty()) {
    return Status::InvalidArgument(
        std::string("[data] files reads one symbol per file; remove [data] ") +
        (d.file.empty() ? "symbol" : "file") + " (or files)");
  }
  if (!d.symbols.empty() && d.symbols.size() != d.files.size()) {
    return Status::InvalidArgument(fmt::format(
        "{}: {} names for {} files; with [data] files, symbols names each file's symbol in "
        "order (or leave it out: each file's symbol column, else its name)",
        symbols_place, d.symbols.size(), d.files.size()));
  }
  SymbolBars out;
  std::set<std::string> seen;
  for (size_t i = 0; i < d.files.size(); ++i) {
    DataOptions one = d;
    one.files.clear();
    one.symbols.clear();
    one.file = FilePath(d.files[i]);
    one.symbol = d.symbols.empty() ? std::string() : d.symbols[i];
    market::DataReport report;
    RLT_ASSIGN_OR_RETURN(SymbolBars bars, LoadSymbolBars(one, session, timezone_given, &report));
    if (report_out != nullptr && i == 0) *report_out = report;
    if (!seen.insert(bars.bars.front().symbol).second) {
      return Status::InvalidArgument(fmt::format(
          "[data] files: two files hold symbol '{}' (the second: {}); name each file's symbol "
          "with symbols = [...]",
          bars.bars.front().symbol, d.files[i]));
    }
    out.bars.push_back(std::move(bars.bars.front()));
    out.sources.push_back(bars.sources.front());
  }
  if (out.bars.size() < 2) {
    return Status::InvalidArgument(
        "[data] files: several symbols, one policy needs two or more files (for one, set file "
        "= \"...\")");
  }
  return out;
}

Result<SymbolBars> LoadSymbolBars(const DataOptions& d, const ReadRules& session,
                                  bool timezone_given, market::DataReport* report_out,
                                  const std::string& symbols_place) {
  if (!d.files.empty() && d.source == "file") {
    return LoadFilesBars(d, session, timezone_given, report_out, symbols_place);
  }
  const bool several = !d.symbols.empty();
  if (d.source == "synthetic") {
    if (several || !d.files.empty()) {
      return Status::InvalidArgument(
          symbols_place +
          ": several symbols are read from a file with a symbol column; set source = \"file\" "
          "and file = \"...\" (or remove symbols)");
    }
    market::SynthOptions so;
    so.num_days = d.days;
    so.bar_minutes = d.bar_minutes;
    so.seed = d.seed;
    so.signal_to_noise = d.signal_to_noise;
    RLT_ASSIGN_OR_RETURN(market::MarketData md, market::GenerateSynthetic(so));
    SymbolBars out;
    out.bars.push_back(std::move(md.symbols.front()));
    out.sources.emplace_back("", false);
    return out;
  }
  if (d.file.empty()) {
    return Status::InvalidArgument("[data] source = \"file\" needs file = \"path/to/bars.csv\"");
  }
  if (several && !d.symbol.empty()) {
    return Status::InvalidArgument(symbols_place + " and [data] symbol = \"" + d.symbol +
                                   "\" are both set: symbols trains one policy on several "
                                   "symbols, symbol picks one; remove one of them");
  }
  const market::CsvReadOptions ro = session.CsvOptions(d);
  market::DataReport report;
  RLT_ASSIGN_OR_RETURN(market::MarketData md, market::ReadBarsCsv(d.file, ro, &report));
  if (report.naive_times && !timezone_given && session.calendar == nullptr) {
    NoteOnce(market::NaiveTimesNote(d.file, ro.timezone));
  }
  if (report_out != nullptr) *report_out = report;
  if (md.symbols.empty() && report.rows_outside_session > 0) {
    return Status::InvalidArgument(fmt::format(
        "[data] {}: none of its {} rows starts inside {} (local time in {}); check [data] "
        "session, calendar and timezone",
        d.file, report.rows_read, session.Describe(), ro.timezone));
  }
  if (session.calendar != nullptr) NoteOnce(CalendarNote(d.file.str(), session, report));
  if (session.around_the_clock) {
    for (market::Bars& b : md.symbols) {
      const std::vector<int32_t> dropped = market::DropPartialEdgeSessions(b);
      if (!dropped.empty()) {
        std::string dates;
        for (int32_t date : dropped) dates += (dates.empty() ? "" : ", ") + FormatDate(date);
        NoteOnce(
            fmt::format("note: {}: {} partial trading day(s) at the file's start or end "
                        "dropped ({}): a day is a session only when its bars span it",
                        d.file, dropped.size(), dates));
      }
    }
  }
  SymbolBars out;
  if (!several) {
    if (md.symbols.size() != 1) {
      return Status::InvalidArgument(
          "[data] " + d.file + " holds " + std::to_string(md.symbols.size()) +
          " symbols; choose one with symbol = \"...\", or train one policy on several with "
          "symbols = [\"...\", \"...\"] (or \"all\")");
    }
    out.bars.push_back(std::move(md.symbols.front()));
    out.sources.emplace_back(d.file.str(), report.symbol_column);
    return out;
  }
  std::string present;
  for (const market::Bars& b : md.symbols) present += (present.empty() ? "" : ", ") + b.symbol;
  if (!report.symbol_column) {
    return Status::InvalidArgument(symbols_place + ": " + d.file +
                                   " has no symbol column, so it holds one symbol; several "
                                   "symbols come from one long file with a symbol column "
                                   "(symbol,time,open,high,low,close,volume)");
  }
  const bool all = d.symbols.size() == 1 && d.symbols.front() == "all";
  if (all) {
    out.bars = std::move(md.symbols);
  } else {
    std::set<std::string> seen;
    for (const std::string& name : d.symbols) {
      if (!seen.insert(name).second) {
        return Status::InvalidArgument(symbols_place + ": '" + name + "' is listed twice");
      }
      auto it = std::find_if(md.symbols.begin(), md.symbols.end(),
                             [&](const market::Bars& b) { return b.symbol == name; });
      if (it == md.symbols.end()) {
        return Status::InvalidArgument(symbols_place + ": " + d.file + " has no bars of '" + name +
                                       "' (it holds " + present + "); list symbols it holds");
      }
      out.bars.push_back(std::move(*it));
    }
  }
  for (size_t i = 0; i < out.bars.size(); ++i) out.sources.emplace_back(d.file.str(), true);
  if (out.bars.size() < 2) {
    return Status::InvalidArgument(symbols_place + ": " + d.file + " holds " + present +
                                   "; several symbols, one policy needs two or more (for one "
                                   "symbol, set symbol = \"...\" instead)");
  }
  return out;
}

Result<market::Bars> LoadBars(const DataOptions& d, const ReadRules& session, bool timezone_given,
                              market::DataReport* report_out = nullptr) {
  DataOptions one = d;
  one.symbols.clear();
  one.files.clear();
  RLT_ASSIGN_OR_RETURN(SymbolBars bars, LoadSymbolBars(one, session, timezone_given, report_out));
  return std::move(bars.bars.front());
}

// A run's own [data] file (no replacement given) that is no longer where the run recorded
// it: say so, and how to point at it.
Status CheckRunDataExists(const DataOptions& data, const EnvSetupOverrides& overrides) {
  if (overrides.normalizer == nullptr || !overrides.data_file.empty() || data.source != "file") {
    return Status::Ok();
  }
  std::error_code ec;
  if (std::filesystem::exists(data.file.str(), ec)) return Status::Ok();
  return Status::NotFound(fmt::format(
      "[data] file {}: the run's training data is not there (moved or deleted?); point at it "
      "with --data FILE{}",
      data.file.str(),
      overrides.record != nullptr
          ? " (checked against the run's record of it, " + overrides.record->origin + ")"
          : std::string()));
}

// The intraday env trades within sessions: daily bars (one bar per session) cannot be
// used, and saying so beats "no session starts after the warm-up".
Status CheckIntradayBars(const std::string& id, const DataOptions& d, const market::Bars& bars) {
  if (id != "intraday" || bars.sessions.empty()) return Status::Ok();
  for (const market::Session& s : bars.sessions) {
    if (s.size() > 1) return Status::Ok();
  }
  const std::string what =
      d.source == "file" ? std::string(d.file) : std::string("the [data] bars");
  return Status::InvalidArgument(fmt::format(
      "{}: each of its {} sessions has one bar (daily bars?); the intraday environment trades "
      "within sessions and needs intraday bars (e.g. 1- or 5-minute bars, several per local "
      "date){}",
      what, bars.sessions.size(),
      d.session.empty() ? "" : "; check [data] session, which keeps only the bars in its hours"));
}

// Builds one environment of a training setup, so that the checks an environment makes
// itself (e.g. "[env] nlags must be >= 0", an unknown id) fail here with the file:line of
// the [env] key they name, as the other sections' errors do.
Status ProbeEnv(const config::Section& env_section, const EnvSetup& setup) {
  Result<std::vector<std::unique_ptr<env::Env>>> probe = env::MakeEnvs(setup.id, setup.context, 1);
  if (probe.ok()) return Status::Ok();
  const Status& st = probe.status();
  const std::string& m = st.message();
  std::string key;
  if (m.rfind("unknown environment id", 0) == 0) {
    key = "id";
  } else if (m.rfind("[env] ", 0) == 0) {
    const size_t end = m.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789", 6);
    key = m.substr(6, end == std::string::npos ? std::string::npos : end - 6);
  }
  const config::ConfigValue* value = key.empty() ? nullptr : env_section.Find(key);
  if (value == nullptr || st.code() != Status::Code::kInvalidArgument) return st;
  return Status::InvalidArgument(config::MessagePlace(value->source) + ": " +
                                 (key == "id" ? "[env] " : "") + m);
}

// The feature preset and normaliser settings of [features].
Result<env::DatasetOptions> DatasetOptionsOf(const FeatureOptions& options) {
  env::DatasetOptions dopt;
  dopt.preset = FeatureKey(options);
  RLT_ASSIGN_OR_RETURN(dopt.normalizer.kind, features::ParseNormalizerKind(options.normalizer));
  dopt.normalizer.clip = options.clip;
  dopt.normalizer.quantiles = options.quantiles;
  dopt.normalizer.quantiles_binary = options.quantiles_binary;
  return dopt;
}

// Training on several symbols ([data] symbols): every symbol's bars, one dataset of them
// (env::PrepareSymbolsDataset), the training range on [split] train unless [env] range.
Result<EnvSetup> BuildSymbolsSetup(const config::Config& config, const config::Section& env_section,
                                   const ReadRules& session, EnvSetup setup) {
  market::DataReport report;
  RLT_ASSIGN_OR_RETURN(
      SymbolBars loaded,
      LoadSymbolBars(setup.data, session, config.Get("data", "timezone") != nullptr, &report,
                     config::KeyPlace(config, "data", "symbols")));
  std::vector<market::Bars> symbols = std::move(loaded.bars);
  setup.symbol_files = std::move(loaded.sources);
  setup.symbol_column = report.symbol_column;
  for (const market::Bars& b : symbols) {
    setup.symbols.push_back(b.symbol);
    RLT_RETURN_IF_ERROR(CheckIntradayBars(setup.id, setup.data, b));
  }
  setup.data.symbols = setup.symbols;  // "all" resolved: config.toml lists them
  if (!setup.features.symbol_id && setup.features.normalize_by == "pooled") {
    NoteOnce(fmt::format(
        "note: {}: several symbols pooled into one normaliser without [features] symbol_id: "
        "the policy cannot tell the symbols apart",
        config::KeyPlace(config, "features", "normalize_by")));
  }
  RLT_ASSIGN_OR_RETURN(const env::DatasetOptions dopt, DatasetOptionsOf(setup.features));
  RLT_ASSIGN_OR_RETURN(setup.context.market,
                       env::PrepareSymbolsDataset(std::move(symbols), dopt, setup.split["train"],
                                                  setup.features.normalize_by == "symbol",
                                                  setup.features.symbol_id));
  if (!setup.context.settings.count("range")) {
    setup.context.settings["range"] = setup.split["train"].ToString();
  }
  RLT_RETURN_IF_ERROR(ProbeEnv(env_section, setup));
  return setup;
}

}  // namespace

std::vector<std::string> RunSymbols(const config::Config& config) {
  DataOptions d;
  if (!config.Bind("data", d).ok()) return {};
  return d.symbols;
}

std::vector<std::string> RunSetupFiles() {
  return {"config.toml", "normalizer.json", kTrainingRangesFile, kDataRecordFile};
}

void ResolveConfigPaths(config::Config& config) {
  config.ResolvePaths("data", PathOptions(DataOptions()));
  config.ResolvePaths("features", PathOptions(FeatureOptions()));
  const config::ConfigValue* id = config.Get("env", "id");
  if (id == nullptr) return;
  for (const env::EnvEntry& e : env::EnvRegistry()) {
    if (id->text != e.id || e.option_docs == nullptr) continue;
    std::vector<std::pair<std::string, std::vector<std::string>>> keys;
    for (const OptionDoc& row : e.option_docs()) {
      if (row.type == OptionTypeName<FilePath>::kName) keys.emplace_back(row.key, row.allowed);
    }
    config.ResolvePaths("env", keys);
  }
}

Result<config::Config> LoadConfig(const std::string& path,
                                  const std::vector<std::string>& overrides) {
  RLT_ASSIGN_OR_RETURN(config::Config config, config::Config::LoadFile(path));
  for (const std::string& o : overrides) RLT_RETURN_IF_ERROR(config.ApplyOverride(o));
  ResolveConfigPaths(config);
  return config;
}

Result<EnvSetup> BuildEnvSetup(const config::Config& config, const EnvSetupOverrides& overrides) {
  EnvSetup setup;
  const config::Section* env_section = config.Find("env");
  const config::ConfigValue* id = config.Get("env", "id");
  if (env_section == nullptr || id == nullptr) {
    return Status::InvalidArgument("the config needs [env] id = \"...\" (e.g. \"cartpole\")");
  }
  setup.id = id->text;
  // Every [env] key is checked here, where its file:line is known (the environments
  // see only key = value): unknown keys with the nearest valid one, bad values.
  std::vector<std::string> errors;
  for (const auto& [key, value] : env_section->entries) {
    const std::string place = config::MessagePlace(value.source) + ": [env] ";
    if (key == "id") continue;
    if (key == "num_envs") {
      Status parsed = rlt::ParseValue(value.text, &setup.num_envs);
      if (!parsed.ok()) {
        errors.push_back(place + "num_envs: " + parsed.message());
      } else if (setup.num_envs < 1) {
        errors.push_back(place + "num_envs = " + value.text + ": must be >= 1");
      }
      continue;
    }
    Status checked = env::CheckEnvSetting(setup.id, key, value.text, {"id", "num_envs"});
    if (!checked.ok()) errors.push_back(place + checked.message());
    setup.context.settings[key] = value.text;
  }
  RLT_RETURN_IF_ERROR(config::JoinErrors(errors));
  RLT_ASSIGN_OR_RETURN(setup.split, ReadSplit(config));
  const env::EnvEntry* entry = nullptr;
  for (const auto& e : env::EnvRegistry()) {
    if (setup.id == e.id) entry = &e;
  }
  const bool training = overrides.data_file.empty() && overrides.normalizer == nullptr;
  if (entry == nullptr || !entry->needs_market_data) {
    // A dated environment with data of its own (options: a daily underlying) trains on
    // [split] train too unless [env] range says otherwise.
    if (entry != nullptr && entry->keys != nullptr && setup.split.count("train") &&
        !setup.context.settings.count("range")) {
      const std::vector<std::string> keys = entry->keys();
      if (std::find(keys.begin(), keys.end(), "range") != keys.end()) {
        setup.context.settings["range"] = setup.split["train"].ToString();
      }
    }
    if (training) RLT_RETURN_IF_ERROR(ProbeEnv(*env_section, setup));
    return setup;
  }
  RLT_RETURN_IF_ERROR(config.Bind("data", setup.data));
  RLT_RETURN_IF_ERROR(config.Bind("features", setup.features));
  RLT_RETURN_IF_ERROR(ResolveFeatureSelection(config, &setup.features));
  if (setup.data.source == "synthetic" && overrides.data_file.empty()) {
    // Keys set to other than their defaults (a saved config.toml lists every key).
    const DataOptions defaults;
    const std::pair<const char*, bool> keys[] = {
        {"timezone", setup.data.timezone != defaults.timezone},
        {"symbol", setup.data.symbol != defaults.symbol},
        {"file", setup.data.file != defaults.file},
        {"session", setup.data.session != defaults.session},
        {"calendar", setup.data.calendar != defaults.calendar},
        {"day_boundary", setup.data.day_boundary != defaults.day_boundary}};
    for (const auto& [key, set] : keys) {
      const config::ConfigValue* v = config.Get("data", key);
      if (v == nullptr || !set) continue;
      NoteOnce(fmt::format(
          "warning: {}: [data] {} does not apply to source = \"synthetic\" and is ignored",
          config::MessagePlace(v->source), key));
    }
  }
  if (!setup.split.count("train")) {
    return Status::InvalidArgument(
        "market environments need [split] train = \"YYYY-MM-DD:YYYY-MM-DD\" (the normaliser is "
        "fitted on it and training episodes are drawn from it)");
  }
  DataOptions data = setup.data;
  if (!overrides.data_file.empty()) {
    data.source = "file";
    data.file = overrides.data_file;
  }
  RLT_ASSIGN_OR_RETURN(const ReadRules session, ReadRulesOf(config, data));
  // config.toml records what was read: the calendar's zone when none was given, and the
  // calendar file's absolute path.
  if (data.source == "file") {
    setup.data.timezone = session.timezone;
    setup.data.calendar = session.calendar_spec;
  }
  if (!data.symbols.empty() || !data.files.empty()) {
    if (training) return BuildSymbolsSetup(config, *env_section, session, std::move(setup));
    // One symbol of a run of several (its config.toml lists them).
    setup.symbols = data.symbols;
    std::string names;
    for (const std::string& n : setup.symbols) names += (names.empty() ? "" : ", ") + n;
    if (overrides.symbol.empty()) {
      return Status::InvalidArgument("the run trades " + names +
                                     " (several symbols, one policy) one symbol at a time: "
                                     "choose one with --symbol SYMBOL");
    }
    const auto it = std::find(setup.symbols.begin(), setup.symbols.end(), overrides.symbol);
    if (it == setup.symbols.end()) {
      return Status::InvalidArgument("--symbol " + overrides.symbol + ": the run was trained on " +
                                     names + "; choose one of them");
    }
    setup.symbol = overrides.symbol;
    data.symbol = overrides.symbol;
    if (!data.files.empty() && overrides.data_file.empty()) {  // one file per symbol
      data.file = FilePath(data.files[static_cast<size_t>(it - setup.symbols.begin())]);
    }
    data.symbols.clear();
    data.files.clear();
  }
  RLT_RETURN_IF_ERROR(CheckRunDataExists(data, overrides));
  market::DataReport report;
  RLT_ASSIGN_OR_RETURN(market::Bars bars,
                       LoadBars(data, session, config.Get("data", "timezone") != nullptr, &report));
  setup.symbol_column = report.symbol_column;
  if (overrides.record != nullptr && data.source == "file") {
    std::vector<std::string> notes;
    RLT_RETURN_IF_ERROR(CheckAgainstRecord(*overrides.record, bars, data.file, report.symbol_column,
                                           overrides.record_check, &notes));
    for (const std::string& n : notes) NoteOnce(n);
  }
  RLT_RETURN_IF_ERROR(CheckIntradayBars(setup.id, data, bars));
  if (overrides.normalizer != nullptr) {
    RLT_ASSIGN_OR_RETURN(setup.context.market,
                         env::PrepareMarketDataset(std::move(bars), FeatureKey(setup.features),
                                                   *overrides.normalizer, setup.split["train"]));
    if (!setup.symbols.empty() && setup.features.symbol_id) {
      const auto index =
          static_cast<size_t>(std::find(setup.symbols.begin(), setup.symbols.end(), setup.symbol) -
                              setup.symbols.begin());
      setup.context.market = env::WithSymbolId(setup.context.market, setup.symbols, index);
    }
    if (!setup.context.settings.count("range")) {
      setup.context.settings["range"] = setup.split["train"].ToString();
    }
    return setup;
  }
  RLT_ASSIGN_OR_RETURN(const env::DatasetOptions dopt, DatasetOptionsOf(setup.features));
  RLT_ASSIGN_OR_RETURN(setup.context.market,
                       env::PrepareMarketDataset(std::move(bars), dopt, setup.split["train"]));
  if (!setup.context.settings.count("range")) {
    setup.context.settings["range"] = setup.split["train"].ToString();
  }
  RLT_RETURN_IF_ERROR(ProbeEnv(*env_section, setup));  // training: overrides are empty here
  return setup;
}

Result<market::Bars> LoadDataBars(const config::Config& config, const std::string& data_file,
                                  market::DataReport* report, const std::string& symbol) {
  DataOptions data;
  RLT_RETURN_IF_ERROR(config.Bind("data", data));
  if (!data_file.empty()) {
    data.source = "file";
    data.file = data_file;
  }
  if (!data.symbols.empty() || !data.files.empty()) {  // several symbols: the one asked for
    if (symbol.empty()) {
      return Status::InvalidArgument(
          "the config trains on several symbols ([data] symbols); choose one with --symbol");
    }
    const auto it = std::find(data.symbols.begin(), data.symbols.end(), symbol);
    if (!data.files.empty() && data_file.empty() && it != data.symbols.end()) {
      data.file = FilePath(data.files[static_cast<size_t>(it - data.symbols.begin())]);
    }
    data.symbol = symbol;
    data.symbols.clear();
    data.files.clear();
  }
  RLT_ASSIGN_OR_RETURN(const ReadRules session, ReadRulesOf(config, data));
  return LoadBars(data, session, config.Get("data", "timezone") != nullptr, report);
}

Result<std::map<std::string, market::DateRange>> ReadSplitOf(const config::Config& config) {
  return ReadSplit(config);
}

Result<std::vector<market::Bars>> LoadConfigBars(const config::Config& config) {
  DataOptions data;
  RLT_RETURN_IF_ERROR(config.Bind("data", data));
  if (data.symbols.empty() && data.files.empty()) {
    RLT_ASSIGN_OR_RETURN(market::Bars bars, LoadDataBars(config));
    std::vector<market::Bars> out;
    out.push_back(std::move(bars));
    return out;
  }
  RLT_ASSIGN_OR_RETURN(const ReadRules session, ReadRulesOf(config, data));
  RLT_ASSIGN_OR_RETURN(SymbolBars symbols,
                       LoadSymbolBars(data, session, config.Get("data", "timezone") != nullptr,
                                      nullptr, config::KeyPlace(config, "data", "symbols")));
  return std::move(symbols.bars);
}

Result<std::vector<int32_t>> SessionDates(const config::Config& config) {
  const config::ConfigValue* id = config.Get("env", "id");
  if (id == nullptr) {
    return Status::InvalidArgument("the config needs [env] id = \"...\" (e.g. \"intraday\")");
  }
  const env::EnvEntry* entry = nullptr;
  for (const auto& e : env::EnvRegistry()) {
    if (id->text == e.id) entry = &e;
  }
  if (entry == nullptr || !entry->needs_market_data) {
    return Status::InvalidArgument("[env] id = \"" + id->text +
                                   "\" has no market data (sessions); use a market environment "
                                   "such as \"intraday\"");
  }
  DataOptions data;
  RLT_RETURN_IF_ERROR(config.Bind("data", data));
  RLT_ASSIGN_OR_RETURN(const ReadRules session, ReadRulesOf(config, data));
  RLT_ASSIGN_OR_RETURN(const SymbolBars symbols,
                       LoadSymbolBars(data, session, config.Get("data", "timezone") != nullptr,
                                      nullptr, config::KeyPlace(config, "data", "symbols")));
  std::set<int32_t> all;  // several symbols: the dates any of them trades
  for (const market::Bars& bars : symbols.bars) {
    for (const market::Session& s : bars.sessions) all.insert(s.date);
  }
  std::vector<int32_t> dates(all.begin(), all.end());
  if (dates.empty()) return Status::InvalidArgument("the config's market data has no sessions");
  return dates;
}

Result<EvalEnvSetup> BuildEvalEnvSetup(const EnvSetup& setup, const RunOptions& run) {
  RLT_CHECK(run.eval_every > 0);
  if (run.eval_episodes < 1) {
    return Status::InvalidArgument("[run] eval_episodes must be >= 1 when eval_every > 0 (got " +
                                   std::to_string(run.eval_episodes) + ")");
  }
  EvalEnvSetup eval;
  eval.context = setup.context;
  eval.seed = run.seed + kEvalSeedOffset;
  if (!setup.context.market) {
    eval.num_envs = std::min(run.eval_episodes, setup.num_envs);
    eval.episodes = run.eval_episodes;
    return eval;
  }
  const auto validation = setup.split.find("validation");
  if (validation == setup.split.end()) {
    return Status::InvalidArgument(
        "[run] eval_every > 0 with a market environment evaluates on a validation range: add "
        "validation = \"YYYY-MM-DD:YYYY-MM-DD\" to [split] (dates outside train and test; test "
        "is never used during training), or set eval_every = 0");
  }
  eval.market = true;
  eval.context.settings["range"] = validation->second.ToString();
  eval.context.settings["sequential"] = "true";
  return eval;
}

Status CheckCapitalBuysOneLot(const EnvSetup& setup) {
  if (setup.id != "intraday" || !setup.context.market) return Status::Ok();
  env::IntradayOptions o;
  RLT_RETURN_IF_ERROR(SetOptions(o, setup.context.settings, "[env]"));
  market::DateRange range;
  const auto it = setup.context.settings.find("range");
  if (it != setup.context.settings.end() && !it->second.empty()) {
    RLT_ASSIGN_OR_RETURN(range, market::DateRange::Parse(it->second));
  }
  const market::Bars& bars = setup.context.market->bars;
  double highest = 0.0;
  int32_t highest_date = 0, highest_session = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(bars.sessions.size()); ++i) {
    const market::Session& s = bars.sessions[i];
    if (!range.Contains(s.date)) continue;
    for (int32_t t = s.begin; t < s.end; ++t) {
      if (bars.close[t] > highest) {
        highest = bars.close[t];
        highest_date = s.date;
        highest_session = i;
      }
    }
  }
  const double lot_cost = highest * o.lot_size * (1.0 + o.cost_rate) + o.fixed_cost;
  if (highest <= 0.0 || o.initial_capital >= lot_cost) return Status::Ok();
  const double lot_fitting = o.initial_capital / (highest * (1.0 + o.cost_rate) * 1.01);
  return Status::Refused(fmt::format(
      "[env] initial_capital = {:.10g} cannot buy one lot of env.lot_size = {:.10g} share(s) of "
      "'{}' at the training range's highest close {:.10g} ({}; one lot with costs: {:.10g}): the "
      "agent could never trade and training would be meaningless. Raise env.initial_capital "
      "(e.g. --set env.initial_capital={:.0f}) or trade fractions with a smaller env.lot_size "
      "(e.g. --set env.lot_size={:.3g}, as for crypto)",
      o.initial_capital, o.lot_size, setup.context.market->SymbolOfSession(highest_session),
      highest, FormatDate(highest_date), lot_cost, std::ceil(lot_cost * 10.0),
      std::pow(10.0, std::floor(std::log10(lot_fitting)))));
}

void ResolveEnvSection(config::Config& config, const EnvSetup& setup) {
  config.Set("env", "num_envs", std::to_string(setup.num_envs), "resolved");
  // Every option of the env's struct, defaults included (fill, initial_capital, nlags, ...):
  // config.toml records every effective value. The settings built the envs already, so
  // they resolve.
  Result<std::vector<std::pair<std::string, std::string>>> rows =
      env::EnvOptionValues(setup.id, setup.context.settings);
  RLT_CHECK_MSG(rows.ok(), rows.status().ToString());
  config.SetSectionValues("env", *rows);
  if (setup.context.market) {
    config.SetSection("data", setup.data);
    config.SetSection("features", setup.features);
    config.Set("env", "range", setup.context.settings.at("range"), "resolved");
  }
}

}  // namespace rlt::train
