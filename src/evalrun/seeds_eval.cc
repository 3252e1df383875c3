// rltrade evalrun: evaluation across the seeds of a multi-seed run (see seeds_eval.h).
#include "evalrun/seeds_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "config/config.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "eval/console_table.h"
#include "eval/eval_files.h"
#include "eval/metrics.h"
#include "eval/metrics_json.h"
#include "eval/metrics_table.h"
#include "eval/outputs.h"
#include "eval/report.h"
#include "eval/significance.h"
#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"
#include "train/seeds.h"
#include "train/train_options.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double AsNumber(const nlohmann::json& v) { return v.is_number() ? v.get<double>() : kNaN; }

// mean, sample std (n − 1), min, max over the finite values.
Json Spread(const std::vector<double>& values) {
  std::vector<double> v;
  for (double x : values) {
    if (std::isfinite(x)) v.push_back(x);
  }
  Json j;
  if (v.empty()) {
    j["mean"] = j["std"] = j["min"] = j["max"] = nullptr;
    return j;
  }
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  j["mean"] = mean;
  j["std"] = v.size() > 1 ? Json(std::sqrt(ss / static_cast<double>(v.size() - 1))) : Json(nullptr);
  j["min"] = *std::min_element(v.begin(), v.end());
  j["max"] = *std::max_element(v.begin(), v.end());
  return j;
}

std::string Num(double v) { return std::isfinite(v) ? fmt::format("{:.10g}", v) : "nan"; }

Status WriteText(const fs::path& path, const std::string& text) {
  return WriteFileAtomic(path.string(), text);
}

std::string Cell(const Json& v, const char* fmt_spec = "{:.4g}") {
  return v.is_number() ? fmt::format(fmt::runtime(fmt_spec), v.get<double>()) : "-";
}

// The seed-averaged daily returns beside the benchmarks, with the significance of the
// differences (eval/console_table.h).
std::string BenchmarkSection(const Json& summary) {
  if (!summary.contains("metrics") || !summary.contains("benchmarks")) return "";
  eval::BenchmarkTableInput t;
  t.first_header = "seed-averaged returns";
  t.policy = &summary["metrics"];
  t.flat = summary["benchmarks"].contains("flat") ? &summary["benchmarks"]["flat"] : nullptr;
  t.buy_and_hold = summary["benchmarks"].contains("buy_and_hold")
                       ? &summary["benchmarks"]["buy_and_hold"]
                       : nullptr;
  t.significance = summary.contains("significance") ? &summary["significance"] : nullptr;
  return eval::BenchmarkTable(t);
}

std::string Table(const Json& summary, bool periods_given) {
  const Json& range = summary["range"];
  const std::string dates = range.contains("first")
                                ? fmt::format(" ({} .. {})", range.value("first", std::string()),
                                              range.value("last", std::string()))
                                : std::string();
  std::string t =
      fmt::format("{} seeds of {}, {}{}{}\n", summary["seeds"].get<int>(),
                  summary["run_dir"].get<std::string>(), range.value("name", std::string()), dates,
                  summary["in_sample"].get<bool>() ? "  IN-SAMPLE" : "");
  t += fmt::format("{:<22} {:>11} {:>11} {:>11} {:>11}\n", "metric (across seeds)", "mean", "std",
                   "min", "max");
  for (const auto& [key, s] : summary["across_seeds"].items()) {
    t += fmt::format("{:<22} {:>11} {:>11} {:>11} {:>11}\n", key, Cell(s["mean"]), Cell(s["std"]),
                     Cell(s["min"]), Cell(s["max"]));
  }
  t += BenchmarkSection(summary);
  if (summary.contains("deflated_sharpe")) {
    // A detail without a best seed (no seed has a finite Sharpe ratio) lacks its figures.
    const Json& d = summary["deflated_sharpe_detail"];
    const auto get = [](const Json& o, const char* key) { return o.value(key, Json()); };
    t += fmt::format(
        "seed-averaged returns: Sharpe {}, PSR {}\n"
        "best seed {}: Sharpe {}; deflated Sharpe ratio {} (given {} trials: the best of {} "
        "no-skill trials would show Sharpe {})\n",
        Cell(get(summary["metrics"], "sharpe_ratio")), Cell(get(summary, "psr")),
        Cell(get(d, "best_seed"), "{}"), Cell(get(d, "sharpe_ratio")),
        Cell(get(summary, "deflated_sharpe")), Cell(get(d, "trials"), "{}"),
        Cell(get(d, "trials"), "{}"), Cell(get(d, "sr0_annualised")));
  }
  if (summary.contains("periods_per_year")) {
    t += eval::AnnualisationNote(summary["periods_per_year"].get<int>(), periods_given);
  }
  return t;
}

// Every seed's evaluation, read back: its outcome, its summary.json and (market
// environments) its daily returns, in the request's seed order.
struct SeedEvaluations {
  std::vector<EvalOutcome> outcomes;
  std::vector<nlohmann::json> summaries;
  std::vector<std::vector<eval::DailyReturnRow>> daily;
};

// Evaluates every seed's run (RUN/seed_S) as the request says and reads back what each
// wrote; a seed that fails is named in the error.
Result<SeedEvaluations> EvaluateSeeds(const SeedsEvalRequest& request) {
  const std::string& run_dir = request.eval.run_dir;
  SeedEvaluations ev;
  for (uint64_t seed : request.seeds) {
    EvalRequest one = request.eval;
    one.cost_levels_bps.clear();  // --costs without --seed sweeps the ensemble only
    one.run_dir = (fs::path(run_dir) / train::SeedDirName(seed)).string();
    Result<EvalOutcome> out = RunEvaluation(one);
    if (!out.ok()) {
      return Status(
          out.status().code() == Status::Code::kRefused
              ? Status::Refused("seed " + std::to_string(seed) + ": " + out.status().message())
              : Status::InvalidArgument("seed " + std::to_string(seed) + ": " +
                                        out.status().message()));
    }
    RLT_ASSIGN_OR_RETURN(nlohmann::json summary, eval::ReadSummaryJson(out->out_dir));
    if (!out->episodic) {
      RLT_ASSIGN_OR_RETURN(
          std::vector<eval::DailyReturnRow> rows,
          eval::ReadDailyReturnsCsv((fs::path(out->out_dir) / eval::kDailyReturnsFile).string()));
      ev.daily.push_back(std::move(rows));
    }
    ev.summaries.push_back(std::move(summary));
    ev.outcomes.push_back(std::move(*out));
  }
  return ev;
}

// The summary's head: the run, the range (named `name` when the seeds' summaries name
// none), whether it is in-sample, the policy, and each seed's run with its metrics.
Json SummaryHead(const SeedsEvalRequest& request, const SeedEvaluations& ev,
                 const std::string& name, bool in_sample) {
  const std::string& run_dir = request.eval.run_dir;
  const int n = static_cast<int>(request.seeds.size());
  const std::vector<nlohmann::json>& summaries = ev.summaries;
  Json summary;
  summary["run_dir"] = run_dir;
  if (summaries[0].contains("range"))
    summary["range"] = summaries[0]["range"];
  else
    summary["range"] = {{"name", name}};
  summary["in_sample"] = in_sample;
  summary["policy"] = summaries[0].value("policy", std::string("trained"));
  summary["seeds"] = n;
  Json runs = Json::array();
  for (int i = 0; i < n; ++i) {
    Json r;
    r["seed"] = request.seeds[i];
    r["eval_dir"] = fs::relative(ev.outcomes[i].out_dir, run_dir).string();
    r["metrics"] = summaries[i].contains("metrics") ? Json::parse(JsonText(summaries[i]["metrics"]))
                                                    : Json::object();
    runs.push_back(std::move(r));
  }
  summary["runs"] = runs;
  return summary;
}

// Every metric of the seeds' summaries (market envs: "metrics"; episodic: the numbers)
// with its spread across the seeds: the metrics table's order first (as every report
// shows them), then any others.
Json AcrossSeeds(const SeedEvaluations& ev) {
  const int n = static_cast<int>(ev.summaries.size());
  const bool episodic = ev.outcomes.front().episodic;
  std::vector<std::string> keys;
  const auto metrics_of = [&](int i) -> const nlohmann::json& {
    return episodic ? ev.summaries[i] : ev.summaries[i]["metrics"];
  };
  for (const eval::MetricInfo& info : eval::MetricTable()) {
    if (metrics_of(0).contains(info.key)) keys.push_back(info.key);
  }
  for (const auto& [key, value] : metrics_of(0).items()) {
    if ((value.is_number() || value.is_null()) && key != "seed" &&  // episodic: env seed
        std::find(keys.begin(), keys.end(), key) == keys.end()) {
      keys.push_back(key);
    }
  }
  Json across = Json::object();
  for (const std::string& key : keys) {
    std::vector<double> values;
    for (int i = 0; i < n; ++i) {
      values.push_back(metrics_of(i).contains(key) ? AsNumber(metrics_of(i)[key]) : kNaN);
    }
    across[key] = Spread(values);
  }
  return across;
}

// Refuses seeds whose daily returns cover different sessions (trained on different data).
Status CheckSameSessions(const std::vector<uint64_t>& seeds,
                         const std::vector<std::vector<eval::DailyReturnRow>>& daily) {
  const int n = static_cast<int>(seeds.size());
  for (int i = 1; i < n; ++i) {
    if (daily[i].size() != daily[0].size()) {
      return Status::DataError(
          fmt::format("seeds {} and {} evaluated different sessions ({} and "
                      "{}); were they trained on different data?",
                      seeds[0], seeds[i], daily[0].size(), daily[i].size()));
    }
    for (size_t d = 0; d < daily[0].size(); ++d) {
      if (daily[i][d].date != daily[0][d].date) {
        return Status::DataError("seeds " + std::to_string(seeds[0]) + " and " +
                                 std::to_string(seeds[i]) + " evaluated different sessions (" +
                                 daily[0][d].date + " vs " + daily[i][d].date + ")");
      }
    }
  }
  return Status::Ok();
}

// The seed-averaged daily returns as the eval's daily returns file (with the first seed's
// benchmarks) and every seed's returns side by side; the average's return metrics and PSR
// into the summary.
void AverageDailyReturns(const std::vector<uint64_t>& seeds,
                         const std::vector<std::vector<eval::DailyReturnRow>>& daily,
                         int periods_per_year, Json& summary, std::string& daily_csv,
                         std::string& seeds_csv) {
  const int n = static_cast<int>(seeds.size());
  std::vector<double> average, flat, bh;
  daily_csv = std::string(eval::kDailyReturnsHeader) + "\n";
  seeds_csv = "date";
  for (uint64_t s : seeds) seeds_csv += ",seed_" + std::to_string(s);
  seeds_csv += "\n";
  for (size_t d = 0; d < daily[0].size(); ++d) {
    double sum = 0;
    int count = 0;
    seeds_csv += daily[0][d].date;
    for (int i = 0; i < n; ++i) {
      const double r = daily[i][d].strategy;
      seeds_csv += "," + daily[i][d].cells[0];
      if (!std::isnan(r)) sum += r, ++count;
    }
    seeds_csv += "\n";
    average.push_back(count > 0 ? sum / count : kNaN);
    bh.push_back(daily[0][d].buy_and_hold);
    flat.push_back(daily[0][d].flat);
    daily_csv += fmt::format("{},{},{},{}\n", daily[0][d].date, Num(average.back()),
                             daily[0][d].cells[1], daily[0][d].cells[2]);
  }
  const eval::ReturnMetrics avg =
      eval::ComputeReturnMetrics(average, eval::MetricsOptions{periods_per_year});
  summary["metrics"] = eval::ReturnMetricsJson<Json>(avg);
  summary["psr"] = avg.psr;
  summary["significance"] = eval::SignificanceJson<Json>(average, flat, bh, periods_per_year);
}

// The best seed's Sharpe ratio, deflated for having picked it from `trials` trials, into
// the summary (deflated_sharpe and its detail).
void AddDeflatedSharpe(const std::vector<uint64_t>& seeds,
                       const std::vector<std::vector<eval::DailyReturnRow>>& daily, int trials,
                       int periods_per_year, double selection_variance, Json& summary) {
  const int n = static_cast<int>(seeds.size());
  std::vector<double> per_period(n);
  std::vector<std::vector<double>> series(n);
  for (int i = 0; i < n; ++i) {
    for (const eval::DailyReturnRow& r : daily[i]) series[i].push_back(r.strategy);
    per_period[i] = eval::ProbabilisticSharpeRatio(series[i]).sharpe_per_period;
  }
  int best = -1;
  double mean_sr = 0;
  int finite = 0;
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(per_period[i])) continue;
    if (best < 0 || per_period[i] > per_period[best]) best = i;
    mean_sr += per_period[i], ++finite;
  }
  double variance = 0;
  if (finite > 1) {
    mean_sr /= finite;
    for (double v : per_period) {
      if (std::isfinite(v)) variance += (v - mean_sr) * (v - mean_sr);
    }
    variance /= finite - 1;
  }
  if (std::isfinite(selection_variance)) variance = selection_variance;
  const double annualise = std::sqrt(static_cast<double>(periods_per_year));
  Json detail;
  detail["trials"] = trials;
  if (best >= 0) {
    const eval::DeflatedSharpeResult dsr =
        eval::DeflatedSharpeRatio(series[best], static_cast<double>(trials), variance);
    summary["deflated_sharpe"] = dsr.dsr;
    detail["best_seed"] = seeds[best];
    detail["sharpe_ratio"] = dsr.sharpe_per_period * annualise;
    detail["sr0_annualised"] = dsr.sr0 * annualise;
    detail["sharpe_variance_per_period"] = variance;
    detail["observations"] = dsr.observations;
    detail["skewness"] = dsr.skewness;
    detail["kurtosis"] = dsr.kurtosis;
  } else {
    summary["deflated_sharpe"] = kNaN;
    detail["best_seed"] = nullptr;
  }
  summary["deflated_sharpe_detail"] = detail;
}

// Seeds whose evaluations all used best/ (summary "selection"): each seed's checkpoint was
// picked among its validation evaluations, so the trials are every seed's evaluations
// (evaluations x seeds) and their variance that of all those per-session validation Sharpe
// ratios. {0, NaN} when some seed has no selection.
std::pair<int, double> SelectionTrials(const std::vector<nlohmann::json>& summaries) {
  int trials = 0;
  std::vector<double> sharpes;
  const double annualise = std::sqrt(static_cast<double>(eval::MetricsOptions{}.periods_per_year));
  for (const nlohmann::json& s : summaries) {
    if (!s.contains("selection") || !s["selection"].contains("evaluations")) return {0, kNaN};
    trials += s["selection"]["evaluations"].get<int>();
    for (const nlohmann::json& p : s["selection"]["curve"]) {
      if (p.contains("sharpe_ratio") && p["sharpe_ratio"].is_number()) {
        sharpes.push_back(p["sharpe_ratio"].get<double>() / annualise);
      }
    }
  }
  if (sharpes.size() < 2) return {trials, kNaN};
  double mean = 0, variance = 0;
  for (double v : sharpes) mean += v;
  mean /= static_cast<double>(sharpes.size());
  for (double v : sharpes) variance += (v - mean) * (v - mean);
  return {trials, variance / static_cast<double>(sharpes.size() - 1)};
}

// Writes the evaluation across seeds to RUN/eval/NAME (staged, under the run's lock):
// summary.json and, for market environments, the averaged and per-seed daily returns and
// the report. Returns the directory.
Result<std::string> WriteSeedsEvaluation(const std::string& run_dir, const std::string& name,
                                         EvalOutcome& outcome, const std::string& daily_csv,
                                         const std::string& seeds_csv,
                                         const std::string& ensemble_csv) {
  const fs::path eval_root = fs::path(run_dir) / "eval";
  std::error_code ec;
  fs::create_directories(eval_root, ec);
  if (ec) return Status::IoError("cannot create " + eval_root.string() + ": " + ec.message());
  RLT_ASSIGN_OR_RETURN(runlog::RunLock lock, runlog::RunLock::Acquire(run_dir, "rltrade eval"));
  const fs::path out_dir = eval_root / name;
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging, runlog::StagingDir::Create(out_dir.string()));
  const fs::path stage(staging.path());
  RLT_RETURN_IF_ERROR(WriteText(stage / eval::kSummaryFile, outcome.summary_json));
  if (!outcome.episodic) {
    RLT_RETURN_IF_ERROR(WriteText(stage / eval::kDailyReturnsFile, daily_csv));
    RLT_RETURN_IF_ERROR(WriteText(stage / "seeds_daily_returns.csv", seeds_csv));
    if (!ensemble_csv.empty()) {
      RLT_RETURN_IF_ERROR(WriteText(stage / "ensemble_daily_returns.csv", ensemble_csv));
    }
    RLT_RETURN_IF_ERROR(eval::WriteSeedsReport(stage.string()));
    outcome.report_written = true;
  }
  RLT_RETURN_IF_ERROR(staging.Commit(/*replace=*/true));
  return out_dir.string();
}

// Whether the seeds' evaluation has an ensemble beside it: the trained policies of any
// environment but the options one (read from the first seed's config).
Result<bool> HasEnsemble(const SeedsEvalRequest& request) {
  if (request.eval.policy != "trained") return false;
  const fs::path config =
      fs::path(request.eval.run_dir) / train::SeedDirName(request.seeds.front()) / "config.toml";
  if (!fs::exists(config)) return false;  // the seed's evaluation names what is missing
  RLT_ASSIGN_OR_RETURN(const config::Config c, train::LoadConfig(config.string()));
  const config::ConfigValue* id = c.Get("env", "id");
  return id == nullptr || id->text != "options";
}

// The ensemble's evaluation into the across-seed summary ("ensemble") and its daily
// returns file's text.
Status AddEnsemble(const SeedsEvalRequest& request, const EvalOutcome& ensemble, Json& summary,
                   std::string& ensemble_csv) {
  const nlohmann::json e = nlohmann::json::parse(ensemble.summary_json);
  Json j;
  j["method"] = ensemble.ensemble_method;
  j["seeds"] = request.seeds;
  j["eval_dir"] = fs::relative(ensemble.out_dir, request.eval.run_dir).string();
  for (const char* key :
       {"metrics", "fills", "pnl", "significance", "mean_return", "std_return", "episodes"}) {
    if (e.contains(key)) j[key] = Json::parse(e[key].dump());
  }
  if (e.contains("metrics") && e["metrics"].contains("psr")) {
    j["psr"] = Json::parse(e["metrics"]["psr"].dump());
  }
  summary["ensemble"] = j;
  if (ensemble.episodic) return Status::Ok();  // no daily returns
  RLT_ASSIGN_OR_RETURN(ensemble_csv,
                       ReadFile((fs::path(ensemble.out_dir) / eval::kDailyReturnsFile).string()));
  return Status::Ok();
}

// One row per policy: every seed, the seed average and the ensemble.
std::string PolicyRows(const Json& summary) {
  if (!summary.contains("ensemble")) return "";
  if (!summary["ensemble"].contains("metrics")) {  // episodic: the episodes' returns
    const Json& e = summary["ensemble"];
    return fmt::format("ensemble ({}): mean return {}, std {} over {} episodes\n",
                       e["method"].get<std::string>(), Cell(e["mean_return"]),
                       Cell(e["std_return"]), Cell(e["episodes"], "{}"));
  }
  static const char* kKeys[] = {"cum_returns_final", "sharpe_ratio", "max_drawdown", "turnover",
                                "num_trades"};
  std::string t = fmt::format("{:<22}", "policy");
  for (const char* k : kKeys) t += fmt::format(" {:>17}", k);
  t += "\n";
  auto row = [&t](const std::string& name, const Json& m) {
    t += fmt::format("{:<22}", name);
    for (const char* k : kKeys) t += fmt::format(" {:>17}", Cell(m.contains(k) ? m[k] : Json()));
    t += "\n";
  };
  for (const Json& r : summary["runs"]) row("seed " + r["seed"].dump(), r["metrics"]);
  row("seed average", summary["metrics"]);
  row("ensemble (" + summary["ensemble"]["method"].get<std::string>() + ")",
      summary["ensemble"]["metrics"]);
  return t;
}

}  // namespace

Result<EvalOutcome> RunEnsembleEvaluation(const SeedsEvalRequest& request) {
  const std::string& run_dir = request.eval.run_dir;
  if (request.seeds.empty()) return Status::InvalidArgument(run_dir + ": no seeds to combine");
  EvalRequest e = request.eval;
  e.ensemble = request.ensemble;
  e.ensemble_seeds = request.seeds;
  e.ensemble_runs.clear();
  for (uint64_t seed : request.seeds) {
    e.ensemble_runs.push_back((fs::path(run_dir) / train::SeedDirName(seed)).string());
  }
  e.run_dir = e.ensemble_runs.front();
  e.output_root = run_dir;
  RLT_ASSIGN_OR_RETURN(runlog::RunLock lock, runlog::RunLock::Acquire(run_dir, "rltrade eval"));
  std::error_code ec;
  if (fs::is_directory(fs::path(run_dir) / "eval", ec)) {
    runlog::RemoveStaleTemps((fs::path(run_dir) / "eval").string());
  }
  Result<EvalOutcome> out = RunEvaluation(e);
  if (!out.ok()) {
    const std::string what = "the ensemble of the seeds: " + out.status().message();
    return out.status().code() == Status::Code::kRefused ? Status::Refused(what)
                                                         : Status::InvalidArgument(what);
  }
  return out;
}

Result<EvalOutcome> RunSeedsEvaluation(const SeedsEvalRequest& request) {
  const std::string& run_dir = request.eval.run_dir;
  if (request.seeds.empty()) return Status::InvalidArgument(run_dir + ": no seeds to evaluate");
  const int n = static_cast<int>(request.seeds.size());
  const int trials = request.trials > 0 ? request.trials : n;
  if (trials < n) {
    return Status::InvalidArgument(fmt::format(
        "--trials {}: at least the {} seeds evaluated were tried (trials counts every seed and "
        "configuration tried)",
        trials, n));
  }
  // The ensemble first: a method that does not fit the run's actions is refused before any
  // seed's evaluation is written.
  std::optional<EvalOutcome> ensemble;
  RLT_ASSIGN_OR_RETURN(const bool has_ensemble, HasEnsemble(request));
  if (!has_ensemble && !request.eval.cost_levels_bps.empty()) {
    // The seeds' own evaluations never sweep costs (the ensemble does): say so, not nothing.
    return Status::InvalidArgument(
        "--costs on a multi-seed run sweeps the seeds' ensemble, and this run has none (the "
        "options environment's seeds are evaluated one by one); give --seed S");
  }
  if (has_ensemble) {
    RLT_ASSIGN_OR_RETURN(ensemble, RunEnsembleEvaluation(request));
  } else if (!request.ensemble.empty()) {
    return Status::InvalidArgument(
        "--ensemble " + request.ensemble + ": " +
        (request.eval.policy != "trained"
             ? "the ensemble combines the seeds' trained policies, not --policy " +
                   request.eval.policy
             : std::string("the options environment's seeds are evaluated one by one")) +
        "; drop --ensemble");
  }
  RLT_ASSIGN_OR_RETURN(const SeedEvaluations ev, EvaluateSeeds(request));
  const EvalOutcome& first = ev.outcomes.front();
  const std::string name = fs::path(first.out_dir).filename().string();
  bool in_sample = false;
  for (const EvalOutcome& o : ev.outcomes) in_sample = in_sample || o.in_sample;
  Json summary = SummaryHead(request, ev, name, in_sample);
  summary["across_seeds"] = AcrossSeeds(ev);
  std::string daily_csv, seeds_csv;
  if (!first.episodic) {
    RLT_RETURN_IF_ERROR(CheckSameSessions(request.seeds, ev.daily));
    // The seeds evaluated the same data: their annualisation is the first one's.
    const int periods = ev.summaries[0].value("periods_per_year", eval::kExchangeSessionsPerYear);
    summary["periods_per_year"] = periods;
    AverageDailyReturns(request.seeds, ev.daily, periods, summary, daily_csv, seeds_csv);
    const auto [selection_trials, selection_variance] = SelectionTrials(ev.summaries);
    const bool selected = request.trials == 0 && selection_trials > trials;
    AddDeflatedSharpe(request.seeds, ev.daily, selected ? selection_trials : trials, periods,
                      selected ? selection_variance : kNaN, summary);
    if (ev.summaries[0].contains("benchmarks")) {
      summary["benchmarks"] = Json::parse(JsonText(ev.summaries[0]["benchmarks"]));
    }
  }
  std::string ensemble_csv;
  if (ensemble) RLT_RETURN_IF_ERROR(AddEnsemble(request, *ensemble, summary, ensemble_csv));
  eval::NullNonFinite(summary);
  EvalOutcome outcome;
  outcome.episodic = first.episodic;
  outcome.in_sample = in_sample;
  outcome.range_name = first.range_name;
  outcome.name = name;
  outcome.summary_json = JsonText(summary, 2) + "\n";
  outcome.table = Table(summary, request.eval.periods_per_year > 0) + PolicyRows(summary);
  if (ensemble) {
    outcome.ensemble_method = ensemble->ensemble_method;
    outcome.table +=
        "\nThe ensemble, evaluated as one policy (" + ensemble->out_dir + "):\n" + ensemble->table;
  }
  RLT_ASSIGN_OR_RETURN(outcome.out_dir, WriteSeedsEvaluation(run_dir, name, outcome, daily_csv,
                                                             seeds_csv, ensemble_csv));
  return outcome;
}

}  // namespace rlt::evalrun
