// rltrade train: building environments from a config (see train_options.h).
#include "train/train_options.h"

#include <algorithm>

#include "features/normalizer.h"
#include "market/date_range.h"
#include "market/market.h"

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

Result<market::Bars> LoadBars(const DataOptions& d) {
  if (d.source == "synthetic") {
    market::SynthOptions so;
    so.num_days = d.days;
    so.bar_minutes = d.bar_minutes;
    so.seed = d.seed;
    so.signal_to_noise = d.signal_to_noise;
    RLT_ASSIGN_OR_RETURN(market::MarketData md, market::GenerateSynthetic(so));
    return std::move(md.symbols.front());
  }
  if (d.file.empty()) {
    return Status::InvalidArgument("[data] source = \"file\" needs file = \"path/to/bars.csv\"");
  }
  market::CsvReadOptions ro;
  ro.timezone = d.timezone;
  ro.symbol = d.symbol;
  ro.on_bad_rows =
      d.on_bad_rows == "drop" ? market::BadRowPolicy::kDrop : market::BadRowPolicy::kFail;
  RLT_ASSIGN_OR_RETURN(market::MarketData md, market::ReadBarsCsv(d.file, ro));
  if (md.symbols.size() != 1) {
    return Status::InvalidArgument("[data] " + d.file + " holds " +
                                   std::to_string(md.symbols.size()) +
                                   " symbols; choose one with symbol = \"...\"");
  }
  return std::move(md.symbols.front());
}

}  // namespace

Result<EnvSetup> BuildEnvSetup(const config::Config& config, const EnvSetupOverrides& overrides) {
  EnvSetup setup;
  const config::Section* env_section = config.Find("env");
  const config::ConfigValue* id = config.Get("env", "id");
  if (env_section == nullptr || id == nullptr) {
    return Status::InvalidArgument("the config needs [env] id = \"...\" (e.g. \"cartpole\")");
  }
  setup.id = id->text;
  if (const config::ConfigValue* n = config.Get("env", "num_envs")) {
    RLT_RETURN_IF_ERROR(internal::ParseValue(n->text, &setup.num_envs));
    if (setup.num_envs < 1)
      return Status::InvalidArgument(n->source + ": [env] num_envs must be >= 1");
  }
  for (const auto& [key, value] : env_section->entries) {
    if (key != "id" && key != "num_envs") setup.context.settings[key] = value.text;
  }
  RLT_ASSIGN_OR_RETURN(setup.split, ReadSplit(config));
  const env::EnvEntry* entry = nullptr;
  for (const auto& e : env::EnvRegistry()) {
    if (setup.id == e.id) entry = &e;
  }
  if (entry == nullptr || !entry->needs_market_data) return setup;  // MakeEnvs names bad ids
  RLT_RETURN_IF_ERROR(config.Bind("data", setup.data));
  RLT_RETURN_IF_ERROR(config.Bind("features", setup.features));
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
  RLT_ASSIGN_OR_RETURN(market::Bars bars, LoadBars(data));
  if (overrides.normalizer != nullptr) {
    RLT_ASSIGN_OR_RETURN(setup.context.market,
                         env::PrepareMarketDataset(std::move(bars), setup.features.preset,
                                                   *overrides.normalizer, setup.split["train"]));
    if (!setup.context.settings.count("range")) {
      setup.context.settings["range"] = setup.split["train"].ToString();
    }
    return setup;
  }
  env::DatasetOptions dopt;
  dopt.preset = setup.features.preset;
  RLT_ASSIGN_OR_RETURN(dopt.normalizer.kind,
                       features::ParseNormalizerKind(setup.features.normalizer));
  dopt.normalizer.clip = setup.features.clip;
  RLT_ASSIGN_OR_RETURN(setup.context.market,
                       env::PrepareMarketDataset(std::move(bars), dopt, setup.split["train"]));
  if (!setup.context.settings.count("range")) {
    setup.context.settings["range"] = setup.split["train"].ToString();
  }
  return setup;
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
  RLT_ASSIGN_OR_RETURN(market::Bars bars, LoadBars(data));
  std::vector<int32_t> dates;
  dates.reserve(bars.sessions.size());
  for (const market::Session& s : bars.sessions) dates.push_back(s.date);
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

void ResolveEnvSection(config::Config& config, const EnvSetup& setup) {
  config.Set("env", "num_envs", std::to_string(setup.num_envs), "resolved");
  if (setup.context.market) {
    config.SetSection("data", setup.data);
    config.SetSection("features", setup.features);
    config.Set("env", "range", setup.context.settings.at("range"), "resolved");
  }
}

}  // namespace rlt::train
