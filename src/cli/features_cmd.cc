// rltrade cli: the feature commands.
//
//   rltrade indicator NAME --input FILE [--param KEY=VALUE ...] [--format csv|json]
//                          [--timezone TZ] [--symbol S]
//       One TA-Lib-style indicator (features/registry.h) over one symbol's bars. CSV: a `bar`
//       column (0-based index) then one column per output, one row per input bar, empty
//       cells where undefined. JSON: {"indicator", "params", "outputs": {name: [null|num]}}.
//   rltrade features --input FILE --preset fast22|scaled|full184 [--signals A,B,...]
//                    [--out FILE] [--timezone TZ] [--session HH:MM-HH:MM]
//       Raw (unnormalised) preset features (features/presets.h): `timestamp` (ISO 8601 with
//       its UTC offset), `symbol` for multi-symbol input, then one column per feature; one
//       row per input bar, empty cells during warm-up. --signals selects signals of the
//       library (preset full184) by name. With --out the file is written to a
//       temporary name and renamed; otherwise to stdout.
// Numbers are printed with the shortest representation that round-trips (fmt "{}").
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/input_bars.h"
#include "core/civil_time.h"
#include "core/json_text.h"
#include "core/printable.h"
#include "features/presets.h"
#include "features/registry.h"
#include "market/csv.h"
#include "runlog/atomic_dir.h"

namespace rlt::cli {
namespace {

struct IndicatorArgs {
  std::string name, input, format = "csv", timezone = "UTC", symbol, on_bad_rows = "fail";
  std::vector<std::string> params;
  bool timezone_given = false;  // --timezone was passed
};

struct FeaturesArgs {
  std::string input, preset, out, timezone = "UTC", on_bad_rows = "fail";
  std::string session;               // --session HH:MM-HH:MM ("" = all hours)
  std::vector<std::string> signals;  // --signals (preset full184)
  bool timezone_given = false;       // --timezone was passed
};

void AppendNumber(fmt::memory_buffer& out, double v) {
  if (std::isfinite(v)) fmt::format_to(std::back_inserter(out), "{}", v);
}
void AppendNumber(fmt::memory_buffer& out, float v) {
  if (std::isfinite(v)) fmt::format_to(std::back_inserter(out), "{}", v);
}

std::string IndicatorCsv(const features::IndicatorResult& r) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "bar");
  for (const std::string& name : r.output_names)
    fmt::format_to(std::back_inserter(out), ",{}", name);
  out.push_back('\n');
  const size_t rows = r.outputs.empty() ? 0 : r.outputs[0].size();
  for (size_t t = 0; t < rows; ++t) {
    fmt::format_to(std::back_inserter(out), "{}", t);
    for (const auto& series : r.outputs) {
      out.push_back(',');
      AppendNumber(out, series[t]);
    }
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

std::string IndicatorJson(const features::IndicatorResult& r) {
  nlohmann::json j;
  j["indicator"] = r.indicator;
  j["params"] = nlohmann::json::object();
  for (const auto& [key, value] : r.params) {
    if (value == std::floor(value) && std::fabs(value) < 1e15) {
      j["params"][key] = static_cast<int64_t>(value);
    } else {
      j["params"][key] = value;
    }
  }
  j["outputs"] = nlohmann::json::object();
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    nlohmann::json values = nlohmann::json::array();
    for (double v : r.outputs[k]) values.push_back(std::isfinite(v) ? nlohmann::json(v) : nullptr);
    j["outputs"][r.output_names[k]] = std::move(values);
  }
  return JsonText(j) + "\n";
}

int RunIndicator(const IndicatorArgs& args) {
  Result<std::map<std::string, std::string>> params = features::ParseParams(args.params);
  if (!params.ok()) return ReportError(params.status());
  Result<const features::IndicatorSpec*> spec = features::FindIndicator(args.name);
  if (!spec.ok()) return ReportError(spec.status());
  Result<market::MarketData> data =
      ReadInputBars(args.input, args.timezone, args.timezone_given, args.symbol, args.on_bad_rows);
  if (!data.ok()) return ReportError(data.status());
  if (data->symbols.size() > 1) {
    std::string names;
    for (const market::Bars& b : data->symbols) names += (names.empty() ? "" : ", ") + b.symbol;
    return ReportError(Status::InvalidArgument(args.input + " holds " +
                                               std::to_string(data->symbols.size()) + " symbols (" +
                                               names + "): pick one with --symbol"));
  }
  Result<features::IndicatorResult> result =
      features::ComputeIndicator(data->symbols[0], args.name, *params);
  if (!result.ok()) return ReportError(result.status());
  std::cout << (args.format == "json" ? IndicatorJson(*result) : IndicatorCsv(*result));
  std::cout.flush();
  return std::cout.good() ? 0 : ReportError(Status::IoError("cannot write to stdout"));
}

// Appends one symbol's feature rows.
void AppendFeatureRows(fmt::memory_buffer& out, const market::Bars& bars,
                       const features::FeatureMatrix& m, bool with_symbol) {
  for (int64_t t = 0; t < m.rows; ++t) {
    fmt::format_to(std::back_inserter(out), "{}",
                   FormatIso8601(bars.time[t], bars.utc_offset.empty() ? 0 : bars.utc_offset[t],
                                 /*utc_z=*/false));
    if (with_symbol) fmt::format_to(std::back_inserter(out), ",{}", bars.symbol);
    for (int64_t j = 0; j < m.cols; ++j) {
      out.push_back(',');
      AppendNumber(out, m.at(t, j));
    }
    out.push_back('\n');
  }
}

// Writes `text` to `path` through a temporary file in the same directory, then renames.
Status WriteFileAtomically(const std::string& path, const std::string& text) {
  RLT_RETURN_IF_ERROR(CheckReplaceableFile(path));  // never replace a device/link/FIFO
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) return Status::IoError("cannot create " + tmp + ": check the directory exists");
    file.write(text.data(), static_cast<std::streamsize>(text.size()));
    file.flush();
    if (!file) {
      std::remove(tmp.c_str());
      return Status::IoError("cannot write " + tmp + " (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return Status::IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
  return Status::Ok();
}

int RunFeatures(FeaturesArgs args) {
  if (!args.signals.empty()) {
    if (args.preset != "full184") {
      return ReportError(Status::InvalidArgument(
          "--signals selects signals of the library: pass --preset full184 (not " + args.preset +
          ")"));
    }
    args.preset += ":";
    for (size_t i = 0; i < args.signals.size(); ++i) {
      args.preset += (i ? "," : "") + args.signals[i];
    }
  }
  Result<std::vector<std::string>> columns = features::PresetColumns(args.preset);
  if (!columns.ok()) return ReportError(columns.status());
  Result<market::MarketData> data = ReadInputBars(args.input, args.timezone, args.timezone_given,
                                                  "", args.on_bad_rows, args.session);
  if (!data.ok()) return ReportError(data.status());
  const bool with_symbol = data->symbols.size() > 1;
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "timestamp{}", with_symbol ? ",symbol" : "");
  for (const std::string& c : *columns) fmt::format_to(std::back_inserter(out), ",{}", c);
  out.push_back('\n');
  for (const market::Bars& bars : data->symbols) {
    Result<features::FeatureMatrix> m = features::ComputeFeatures(bars, args.preset);
    if (!m.ok()) return ReportError(Status::DataError(bars.symbol + ": " + m.status().message()));
    AppendFeatureRows(out, bars, *m, with_symbol);
  }
  if (!args.out.empty()) {
    const Status written = WriteFileAtomically(args.out, fmt::to_string(out));
    return written.ok() ? 0 : ReportError(written);
  }
  std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  std::cout.flush();
  return std::cout.good() ? 0 : ReportError(Status::IoError("cannot write to stdout"));
}

}  // namespace

void RegisterFeatureCommands(CLI::App& app, Action* action) {
  auto ind_args = std::make_shared<IndicatorArgs>();
  CLI::App* ind = app.add_subcommand("indicator", "Compute one TA-Lib-style indicator over bars");
  ind->add_option("name", ind_args->name, "Indicator (sma, ema, macd, rsi, bbands, ...)")
      ->required();
  ind->add_option("--input", ind_args->input, "Bars CSV file")->required();
  ind->add_option("--param", ind_args->params, "KEY=VALUE parameter (repeatable), e.g. period=20")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  ind->add_option("--format", ind_args->format, "Output format")
      ->check(CLI::IsMember({"csv", "json"}));
  CLI::Option* ind_tz =
      ind->add_option("--timezone", ind_args->timezone, "IANA time zone of naive timestamps");
  ind->add_option("--symbol", ind_args->symbol, "Symbol to use from a multi-symbol file");
  ind->add_option("--on-bad-rows", ind_args->on_bad_rows, "fail (default) or drop bad input rows")
      ->check(CLI::IsMember({"fail", "drop"}));
  ind->callback([ind_args, ind_tz, action] {
    ind_args->timezone_given = ind_tz->count() > 0;
    *action = [ind_args] { return RunIndicator(*ind_args); };
  });

  auto feat_args = std::make_shared<FeaturesArgs>();
  CLI::App* feat = app.add_subcommand("features", "Compute a feature preset (raw values) as CSV");
  feat->add_option("--input", feat_args->input, "Bars CSV file")->required();
  feat->add_option("--preset", feat_args->preset, "Feature preset")
      ->required()
      ->check(CLI::IsMember(features::PresetNames()));
  feat->add_option("--signals", feat_args->signals,
                   "with --preset full184: these library signals only, comma-separated (e.g. "
                   "dv,qco,rsi14)")
      ->delimiter(',');
  feat->add_option("--out", feat_args->out, "Output CSV (default: stdout)");
  CLI::Option* feat_tz =
      feat->add_option("--timezone", feat_args->timezone, "IANA time zone of naive timestamps");
  feat->add_option("--session", feat_args->session,
                   "keep bars starting in these local hours HH:MM-HH:MM, open inclusive, close "
                   "exclusive (e.g. 09:30-16:00 for the NYSE regular session)");
  feat->add_option("--on-bad-rows", feat_args->on_bad_rows, "fail (default) or drop bad input rows")
      ->check(CLI::IsMember({"fail", "drop"}));
  feat->callback([feat_args, feat_tz, action] {
    feat_args->timezone_given = feat_tz->count() > 0;
    *action = [feat_args] { return RunFeatures(*feat_args); };
  });
}

}  // namespace rlt::cli
