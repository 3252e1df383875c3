// rltrade evalrun: ComputeSignal() — the decision of a trained intraday policy for the
// latest of some recent bars (see signal.h).
#include "evalrun/signal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/json_text.h"
#include "core/options.h"
#include "env/envs/intraday.h"
#include "evalrun/ensemble.h"
#include "features/presets.h"
#include "learn/inference.h"
#include "market/synth.h"
#include "runlog/manifest.h"
#include "runlog/run_dir.h"
#include "train/train_options.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;

// The run's stored normaliser (RUN_DIR/normalizer.json); a market run without one is an
// error (signals never refit).
Result<features::Normalizer> LoadNormalizer(const fs::path& run_dir, const std::string& symbol) {
  const fs::path path = run_dir / "normalizer.json";
  if (!fs::exists(path)) {
    return Status::NotFound(path.string() +
                            " is missing: signals apply the normaliser fitted in training and "
                            "never refit one");
  }
  return features::Normalizer::LoadFile(path.string(), symbol);
}

// The preset's warm-up (first_valid on data starting at bar 0), measured by the same
// features::ComputeFeatures on a few synthetic sessions. Used only to say how many bars
// are needed when the given file is too short to show it.
Result<int64_t> PresetWarmup(const std::string& preset) {
  // Five days cover the presets' warm-up; the library's long ranks (1,875 bars) need more.
  int64_t first_valid = 0;
  for (int days : {5, 60}) {
    market::SynthOptions so;
    so.num_days = days;
    RLT_ASSIGN_OR_RETURN(market::MarketData md, market::GenerateSynthetic(so));
    RLT_ASSIGN_OR_RETURN(features::FeatureMatrix fm,
                         features::ComputeFeatures(md.symbols.front(), preset));
    first_valid = fm.first_valid;
    if (fm.first_valid < fm.rows) break;
  }
  return first_valid;
}

// Bars in the latest session: the most common length of the earlier sessions (the
// latest one's own length when it is longer or the only one) — see signal.h.
int32_t SessionBars(const market::Bars& bars) {
  const auto& sessions = bars.sessions;
  const int32_t own = sessions.back().size();
  std::map<int32_t, int> counts;
  for (size_t i = 0; i + 1 < sessions.size(); ++i) ++counts[sessions[i].size()];
  int32_t mode = 0;
  int best = 0;
  for (const auto& [size, count] : counts) {
    if (count >= best) {  // ties: the longer length
      best = count;
      mode = size;
    }
  }
  return std::max(own, mode);
}

std::string Num(double v) { return fmt::format("{:.6g}", v); }

// The median spacing (seconds) of consecutive bars within a session; 0 when no session
// has two bars.
int64_t BarSeconds(const market::Bars& bars) {
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < bars.size(); ++i) {
    if (bars.session[i] == bars.session[i - 1]) gaps.push_back(bars.time[i] - bars.time[i - 1]);
  }
  if (gaps.empty()) return 0;
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  return gaps[gaps.size() / 2];
}

std::string BarSize(int64_t seconds) {
  if (seconds == 0) return "one bar per session (daily bars?)";
  if (seconds % 60 == 0) return fmt::format("{}-minute bars", seconds / 60);
  return fmt::format("{}-second bars", seconds);
}

std::string Offsets(const std::vector<int32_t>& offsets) {
  std::string out;
  for (int32_t o : offsets) {
    const int32_t a = std::abs(o);
    out += fmt::format("{}{}{:02}:{:02}", out.empty() ? "" : ", ", o < 0 ? '-' : '+', a / 3600,
                       a / 60 % 60);
  }
  return out;
}

// The symbol of bars read from `path`, or "" when it is only the file's name (no symbol
// column).
std::string RealSymbol(const market::Bars& bars, const std::string& path) {
  return bars.symbol == fs::path(path).stem().string() ? std::string() : bars.symbol;
}

// The differences between the bars of `request.bars_file` and the run's training data
// (bar size, symbol, time zone), as described in signal.h; empty when they agree.
Result<std::vector<std::string>> MarketDifferences(const config::Config& config,
                                                   const SignalRequest& request) {
  train::DataOptions d;
  RLT_RETURN_IF_ERROR(config.Bind("data", d));
  // The file's facts from all of its bars (the run's session applied below).
  config::Config all_hours = config;
  if (d.session != "24h") all_hours.Set("data", "session", "", "signal");
  market::DataReport file_report;
  RLT_ASSIGN_OR_RETURN(const market::Bars file, train::LoadDataBars(all_hours, request.bars_file,
                                                                    &file_report, request.symbol));
  const std::string& path = request.bars_file;
  std::vector<std::string> diffs;
  market::SessionHours hours;  // "24h" keeps every bar
  if (d.session != "24h") {
    RLT_ASSIGN_OR_RETURN(hours, market::ParseSessionHours(d.session, "[data] session"));
  }
  if (!hours.all_hours()) {
    int64_t inside = 0;
    for (size_t i = 0; i < file.size(); ++i) {
      const int64_t second = ((file.time[i] + file.utc_offset[i]) % 86400 + 86400) % 86400;
      inside += second >= hours.open_minute * 60 && second < hours.close_minute * 60;
    }
    if (inside == 0) {
      diffs.push_back(fmt::format(
          "session: none of {}'s bars starts inside the run's session {} ({} local time)", path,
          d.session, d.timezone));
    }
  }
  const bool run_known = d.source == "synthetic" || fs::exists(d.file.str());
  if (!run_known) {
    const std::string symbol = RealSymbol(file, path);
    if (!d.symbol.empty() && !symbol.empty() && symbol != d.symbol) {
      diffs.push_back(
          fmt::format("symbol: {} holds '{}', the run trained on '{}'", path, symbol, d.symbol));
    }
    return diffs;
  }
  market::DataReport run_report;
  RLT_ASSIGN_OR_RETURN(const market::Bars run,
                       train::LoadDataBars(config, "", &run_report, request.symbol));
  const std::string run_what =
      d.source == "synthetic" ? std::string("the synthetic market") : d.file;
  const int64_t file_bar = BarSeconds(file), run_bar = BarSeconds(run);
  if (file_bar != run_bar) {
    diffs.push_back(fmt::format("bar size: {} has {}, the run trained on {} ({})", path,
                                BarSize(file_bar), BarSize(run_bar), run_what));
  }
  const std::string file_symbol = RealSymbol(file, path);
  const std::string run_symbol = !request.symbol.empty()   ? request.symbol
                                 : !d.symbol.empty()       ? d.symbol
                                 : d.source == "synthetic" ? run.symbol
                                                           : RealSymbol(run, d.file);
  if (!file_symbol.empty() && !run_symbol.empty() && file_symbol != run_symbol) {
    diffs.push_back(fmt::format("symbol: {} holds '{}', the run trained on '{}'", path, file_symbol,
                                run_symbol));
  }
  // Offsets the run's data carried: a file's written ones, or the synthetic market's.
  std::vector<int32_t> run_offsets = run_report.utc_offsets;
  bool run_in_zone = true;  // every offset of the run's data is its [data] zone's
  if (d.source == "synthetic") {
    run_offsets.clear();
    for (int32_t o : run.utc_offset) {
      if (std::find(run_offsets.begin(), run_offsets.end(), o) == run_offsets.end()) {
        run_offsets.push_back(o);
      }
    }
    run_in_zone = run.timezone == d.timezone;
  } else {
    for (int32_t o : run_offsets) {
      run_in_zone = run_in_zone && std::find(run.utc_offset.begin(), run.utc_offset.end(), o) !=
                                       run.utc_offset.end();
    }
  }
  const std::vector<int32_t>& allowed = run_in_zone ? file.utc_offset : run_offsets;
  std::vector<int32_t> foreign;
  for (int32_t o : file_report.utc_offsets) {
    if (std::find(allowed.begin(), allowed.end(), o) == allowed.end()) foreign.push_back(o);
  }
  if (!foreign.empty()) {
    std::vector<int32_t> expected;
    for (int32_t o : allowed) {
      if (std::find(expected.begin(), expected.end(), o) == expected.end()) expected.push_back(o);
    }
    diffs.push_back(
        run_in_zone
            ? fmt::format("time zone: {}'s timestamps carry UTC offset {}, but the run's data is "
                          "in {} (UTC offset {} at these bars)",
                          path, Offsets(foreign), d.timezone, Offsets(expected))
            : fmt::format("time zone: {}'s timestamps carry UTC offset {}, the run's training data "
                          "{}",
                          path, Offsets(foreign), Offsets(expected)));
  }
  return diffs;
}

Status CheckRequest(const SignalRequest& request) {
  const fs::path run_dir(request.run_dir);
  if (!fs::exists(run_dir / "config.toml")) {
    return Status::NotFound(request.run_dir +
                            " is not a run directory (no config.toml); pass a directory "
                            "written by `rltrade train`");
  }
  if (request.bars_file.empty()) return Status::InvalidArgument("--bars FILE is required");
  if (!fs::exists(request.bars_file)) return Status::NotFound("cannot read " + request.bars_file);
  if (!std::isfinite(request.position) || std::fabs(request.position) > 1.0) {
    return Status::InvalidArgument("--position must be a fraction of net worth in [-1, 1] (got " +
                                   Num(request.position) + ")");
  }
  // The run's files as training wrote them (runlog/manifest.h).
  return runlog::VerifyManifestFiles(run_dir.string(), {"config.toml", "normalizer.json"});
}

// The run's environment rebuilt over the given bars: the same path as `rltrade eval
// --data FILE` (the run's [data] reading settings, its feature preset and the stored
// normaliser).
struct SignalSetup {
  train::EnvSetup setup;
  env::IntradayOptions options;
  std::vector<std::string> mismatches;  // accepted with allow_mismatch
};

Result<SignalSetup> LoadSignalSetup(const SignalRequest& request) {
  const fs::path run_dir(request.run_dir);
  RLT_ASSIGN_OR_RETURN(config::Config config,
                       train::LoadConfig((run_dir / "config.toml").string()));
  const config::ConfigValue* id = config.Get("env", "id");
  if (id == nullptr || id->text != "intraday") {
    return Status::InvalidArgument("rltrade signal needs a run of the intraday environment; " +
                                   request.run_dir + " trained " +
                                   (id == nullptr ? std::string("no [env] id") : id->text));
  }
  const std::vector<std::string> symbols = train::RunSymbols(config);
  if (!symbols.empty() && request.symbol.empty()) {
    std::string names;
    for (const std::string& n : symbols) names += (names.empty() ? "" : ", ") + n;
    return Status::InvalidArgument(request.run_dir + " trades " + names +
                                   " (several symbols, one policy): say which symbol the bars "
                                   "are with --symbol SYMBOL");
  }
  RLT_ASSIGN_OR_RETURN(const features::Normalizer normalizer,
                       LoadNormalizer(run_dir, request.symbol));
  SignalSetup out;
  RLT_ASSIGN_OR_RETURN(out.mismatches, MarketDifferences(config, request));
  if (!out.mismatches.empty() && !request.allow_mismatch) {
    std::string text;
    for (const std::string& m : out.mismatches) text += "\n  " + m;
    return Status::Refused(fmt::format(
        "{} does not hold bars like those {} was trained on:{}\nA policy decides on the "
        "market it learned; give bars of the same symbol, bar size and time zone, or pass "
        "--allow-mismatch to use these deliberately",
        request.bars_file, request.run_dir, text));
  }
  train::EnvSetupOverrides overrides;
  overrides.normalizer = &normalizer;
  overrides.data_file = request.bars_file;
  RLT_ASSIGN_OR_RETURN(const std::optional<train::DataRecord> record,
                       train::LoadRunDataRecord(request.run_dir));
  if (record) overrides.record = &*record;
  overrides.record_check.allow_mismatch = request.allow_mismatch;
  overrides.record_check.allow_data_change = request.allow_data_change;
  overrides.symbol = request.symbol;
  RLT_ASSIGN_OR_RETURN(out.setup, train::BuildEnvSetup(config, overrides));
  RLT_RETURN_IF_ERROR(SetOptions(out.options, out.setup.context.settings, "[env]"));
  return out;
}

// Turns s->raw_action into the decision (as IntradayStockEnv::OrderQuantity decodes it)
// and writes s->action, amount/target, json and text.
void DescribeDecision(const SignalRequest& request, const env::IntradayOptions& options,
                      Signal* s) {
  const float a0 =
      std::clamp(std::isfinite(s->raw_action[0]) ? s->raw_action[0] : 0.0f, -1.0f, 1.0f);
  nlohmann::ordered_json j;
  j["time"] = s->time;
  j["symbol"] = s->symbol;
  if (s->session_closing) {  // the env's flatten at the close, whatever the policy says
    s->action = request.position > 0 ? "SELL" : (request.position < 0 ? "BUY" : "HOLD");
    s->target_exposure = 0.0;
    s->amount = s->action == "HOLD" ? 0.0 : 1.0;  // all of the position
    j["action"] = s->action;
    j["target_exposure"] = s->target_exposure;
    j["flatten"] = true;
  } else if (options.action_mode == "target_position") {
    s->target_exposure = a0;
    s->action = s->target_exposure > request.position
                    ? "BUY"
                    : (s->target_exposure < request.position ? "SELL" : "HOLD");
    j["action"] = s->action;
    j["target_exposure"] = s->target_exposure;
  } else {
    const float a1 = std::isfinite(s->raw_action[1]) ? s->raw_action[1] : 0.0f;
    const double amount = std::clamp<double>(a1, options.min_amount, 1.0);
    if (a0 >= options.buy_threshold) {
      s->action = "BUY";
      s->amount = amount;
    } else if (a0 <= options.sell_threshold) {
      s->action = "SELL";
      s->amount = amount;
    } else {
      s->action = "HOLD";
    }
    j["action"] = s->action;
    j["amount"] = s->amount;
  }
  j["value"] = s->value;
  j["bars_used"] = s->bars_used;
  j["position_assumed"] = request.position;
  j["session_closing"] = s->session_closing;
  if (!s->mismatches.empty()) j["mismatches"] = s->mismatches;
  j["checkpoint"] = s->checkpoint;
  s->json = JsonText(j, 2) + "\n";
  const std::string what =
      s->session_closing
          ? (s->action == "HOLD" ? std::string("HOLD (flat at the close)")
                                 : fmt::format("{} to flatten (target exposure 0)", s->action))
      : options.action_mode == "target_position"
          ? fmt::format("{} to target exposure {}", s->action, Num(s->target_exposure))
          : (s->action == "HOLD" ? std::string("HOLD")
                                 : fmt::format("{} amount {}", s->action, Num(s->amount)));
  s->text = fmt::format(
      "{} {}: {}\nvalue estimate {}; {} bars used; portfolio assumed {}\n", s->time, s->symbol,
      what, Num(s->value), s->bars_used,
      request.position == 0.0
          ? std::string("flat")
          : fmt::format("at exposure {} with no unrealised PnL", Num(request.position)));
  s->text += "checkpoint " + s->checkpoint + "\n";
  if (s->session_closing) {
    s->text +=
        "note: this bar closes its session; the environment flattens at this close and takes "
        "no decision here, so the signal is that flatten\n";
  }
  for (const std::string& m : s->mismatches) {
    s->text += "warning: accepted with --allow-mismatch: " + m + "\n";
  }
}

// ComputeSignal without the decoding: the signal's observation, raw action and value, and
// the run's [env] options.
Result<Signal> ComputeRawSignal(const SignalRequest& request, env::IntradayOptions* options_out) {
  RLT_RETURN_IF_ERROR(CheckRequest(request));
  RLT_ASSIGN_OR_RETURN(const SignalSetup ss, LoadSignalSetup(request));
  const env::MarketDataset& data = *ss.setup.context.market;
  const env::IntradayOptions& options = ss.options;
  const market::Bars& bars = data.bars;
  const int64_t given = bars.size();
  int64_t warmup = data.features.first_valid;
  if (warmup >= given) {  // no valid row: the file cannot show the warm-up
    RLT_ASSIGN_OR_RETURN(warmup, PresetWarmup(train::FeatureKey(ss.setup.features)));
  }
  const int64_t needed = warmup + options.nlags + 1;
  if (given < needed) {
    return Status::InvalidArgument(fmt::format(
        "{}: rltrade signal needs {} bars (feature warm-up {} of preset '{}' + nlags {} + the "
        "latest bar) but {} were given; supply more history",
        request.bars_file, needed, warmup, train::FeatureKey(ss.setup.features), options.nlags,
        given));
  }
  Signal s;
  s.bar = static_cast<int32_t>(given - 1);
  s.bars_used = given;
  s.symbol = bars.symbol;
  s.time = FormatIso8601(bars.time[s.bar], bars.utc_offset[s.bar], /*utc_z=*/false);
  s.action_mode = options.action_mode;
  s.session_bars = SessionBars(bars);
  s.session_closing = bars.bar_in_session[s.bar] == s.session_bars - 1;
  s.mismatches = ss.mismatches;
  const env::EnvSpec spec = env::IntradayStockEnv::MakeSpec(data.features.cols, options);
  s.observation.assign(spec.obs_dim, 0.0f);
  env::IntradayStockEnv::PortfolioView view;
  view.position_fraction = request.position;
  RLT_RETURN_IF_ERROR(env::IntradayStockEnv::WriteObservationAt(
      data, options, s.bar, view, s.session_bars, s.observation.data()));
  RLT_ASSIGN_OR_RETURN(s.checkpoint, runlog::ChooseCheckpoint(request.run_dir, request.checkpoint));
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<learn::PolicyRunner> runner,
                       learn::PolicyRunner::Load(s.checkpoint, spec.obs_dim, spec.action));
  s.raw_action.assign(spec.action.dim, 0.0f);
  float value = 0.0f;
  if (runner->recurrent()) {
    // The LSTM state of this session: the policy steps through the session's earlier bars
    // (those with a complete observation; portfolio state as given by --position), then
    // decides on the latest bar with that state.
    std::vector<float> obs(spec.obs_dim), action(spec.action.dim);
    for (int64_t b = s.bar - bars.bar_in_session[s.bar]; b < s.bar; ++b) {
      if (!env::IntradayStockEnv::WriteObservationAt(data, options, b, view, s.session_bars,
                                                     obs.data())
               .ok()) {
        continue;  // feature warm-up or lags not yet available at this bar
      }
      runner->Act(obs.data(), 1, action.data(), nullptr);
    }
  }
  runner->Act(s.observation.data(), 1, s.raw_action.data(), &value);
  s.value = value;
  *options_out = options;
  return s;
}

// One seed's decision in the ensemble's JSON.
nlohmann::ordered_json SeedJson(uint64_t seed, const Signal& s) {
  const nlohmann::ordered_json one = nlohmann::ordered_json::parse(s.json);
  nlohmann::ordered_json j;
  j["seed"] = seed;
  for (const char* key : {"action", "target_exposure", "amount", "value"}) {
    if (one.contains(key)) j[key] = one[key];
  }
  j["raw_action"] = s.raw_action;
  j["checkpoint"] = s.checkpoint;
  return j;
}

// The ensemble's signal from the seeds' (same bar and observation): combined raw action,
// mean value, decoded as one policy's.
Result<Signal> CombineSignals(const SignalRequest& request, const env::IntradayOptions& options,
                              const std::vector<uint64_t>& seeds, std::vector<Signal> per_seed,
                              const std::string& method) {
  const env::EnvSpec spec = env::IntradayStockEnv::MakeSpec(1, options);
  const EnsembleActions actions = EnsembleActionsOf(spec.action, options.action_mode,
                                                    options.buy_threshold, options.sell_threshold);
  RLT_ASSIGN_OR_RETURN(const EnsembleMethod m, ResolveEnsembleMethod(method, actions));
  const int dim = spec.action.dim;
  std::vector<float> raw;
  double value = 0;
  for (const Signal& s : per_seed) {
    raw.insert(raw.end(), s.raw_action.begin(), s.raw_action.end());
    value += s.value;
  }
  Signal e = per_seed.front();
  e.raw_action.assign(dim, 0.0f);
  ActionCombiner(m, actions)
      .Combine(raw.data(), static_cast<int>(per_seed.size()), e.raw_action.data());
  e.value = value / static_cast<double>(per_seed.size());
  e.checkpoint = "ensemble";
  DescribeDecision(request, options, &e);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(e.json);
  nlohmann::ordered_json checkpoints = nlohmann::ordered_json::array(),
                         rows = nlohmann::ordered_json::array();
  std::string lines;
  for (size_t i = 0; i < per_seed.size(); ++i) {
    DescribeDecision(request, options, &per_seed[i]);
    checkpoints.push_back(per_seed[i].checkpoint);
    rows.push_back(SeedJson(seeds[i], per_seed[i]));
    // The seed's decision: its text's first line after "<time> <symbol>: ".
    const std::string& t = per_seed[i].text;
    const size_t from = t.find(": ") + 2;
    lines += fmt::format("  seed {}: {} (value {}, checkpoint {})\n", seeds[i],
                         t.substr(from, t.find('\n') - from), Num(per_seed[i].value),
                         per_seed[i].checkpoint);
  }
  j["ensemble"] = {
      {"method", EnsembleMethodName(m)}, {"seeds", seeds}, {"checkpoints", checkpoints}};
  j["seeds"] = rows;
  e.json = JsonText(j, 2) + "\n";
  e.text = fmt::format("ensemble ({}) of {} seeds: ", EnsembleMethodName(m), seeds.size()) +
           e.text + "the seeds' own decisions:\n" + lines;
  e.ensemble_method = EnsembleMethodName(m);
  e.seed_ids = seeds;
  e.seed_signals = std::move(per_seed);
  return e;
}

}  // namespace

Result<Signal> ComputeSignal(const SignalRequest& request) {
  env::IntradayOptions options;
  RLT_ASSIGN_OR_RETURN(Signal s, ComputeRawSignal(request, &options));
  DescribeDecision(request, options, &s);
  return s;
}

Result<Signal> ComputeEnsembleSignal(const SignalRequest& request,
                                     const std::vector<uint64_t>& seeds,
                                     const std::vector<std::string>& seed_runs,
                                     const std::string& method) {
  RLT_CHECK(seeds.size() == seed_runs.size() && !seeds.empty());
  const std::string& c = request.checkpoint;
  if (!c.empty() && c != "best" && c != "final") {
    return Status::InvalidArgument(
        "--checkpoint " + c +
        ": the ensemble of a multi-seed run takes the same checkpoint of every seed (best or "
        "final); give --seed S to decide with one seed's checkpoint directory");
  }
  RLT_RETURN_IF_ERROR(CheckSameObservations(seed_runs));
  std::vector<Signal> per_seed;
  env::IntradayOptions options;
  for (size_t i = 0; i < seeds.size(); ++i) {
    SignalRequest one = request;
    one.run_dir = seed_runs[i];
    Result<Signal> s = ComputeRawSignal(one, &options);
    if (!s.ok()) {
      const std::string what = "seed " + std::to_string(seeds[i]) + ": " + s.status().message();
      return s.status().code() == Status::Code::kRefused ? Status::Refused(what)
                                                         : Status(s.status());
    }
    per_seed.push_back(std::move(*s));
  }
  return CombineSignals(request, options, seeds, std::move(per_seed), method);
}

}  // namespace rlt::evalrun
