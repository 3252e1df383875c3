// rltrade evalrun: walk-forward folds (see walkforward.h).
#include "evalrun/walkforward.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/json_text.h"
#include "core/printable.h"
#include "dist/dist.h"
#include "env/market_dataset.h"
#include "eval/console_table.h"
#include "eval/eval_files.h"
#include "eval/metrics.h"
#include "eval/metrics_json.h"
#include "eval/outputs.h"
#include "eval/report.h"
#include "eval/significance.h"
#include "evalrun/ensemble.h"
#include "evalrun/evalrun.h"
#include "evalrun/seeds_eval.h"
#include "market/date_range.h"
#include "runlog/atomic_dir.h"
#include "train/seeds.h"
#include "train/train.h"
#include "train/train_options.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string DefaultOutDir(const std::string& config_path) {
  const std::string stem = fs::path(config_path).stem().string();
  return "runs/" + stem + "-walkforward-" +
         FormatPathStamp(static_cast<int64_t>(std::time(nullptr)));
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path.string());
  return Status::Ok();
}

// One row of a fold's daily_returns.csv (read by eval/eval_files.h) and its fold.
struct DailyRow {
  std::string date;
  std::array<std::string, 3> cells;  // return, buy_and_hold, flat, verbatim
  double values[3];
  int fold;
};

Status ReadDailyReturns(const fs::path& path, int fold, std::vector<DailyRow>& rows) {
  RLT_ASSIGN_OR_RETURN(std::vector<eval::DailyReturnRow> read,
                       eval::ReadDailyReturnsCsv(path.string()));
  for (const eval::DailyReturnRow& r : read) {
    rows.push_back({r.date, r.cells, {r.strategy, r.buy_and_hold, r.flat}, fold});
  }
  return Status::Ok();
}

std::string Cell(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return "nan";
  return fmt::format("{:.6g}", j.at(key).get<double>());
}

// The base config minus [split] validation (written for folds whose windows it overlaps).
config::Config WithoutValidation(const config::Config& base) {
  config::Config out;
  for (const std::string& name : base.SectionNames()) {
    const config::Section* s = base.Find(name);
    for (const auto& [key, value] : s->entries) {
      if (name == "split" && key == "validation") continue;
      out.Set(name, key, value.text, value.source);
    }
  }
  return out;
}

// A fold's metric cell, '*' on a ratio from fewer than 30 daily returns.
std::string RatioCell(const Json& metrics, const char* key) {
  const bool few = metrics.contains(eval::kFewObservationsKey) &&
                   metrics[eval::kFewObservationsKey].is_boolean() &&
                   metrics[eval::kFewObservationsKey].get<bool>();
  return Cell(metrics, key) + (few ? "*" : "");
}

// The p-value of the fold's Sharpe difference against buy-and-hold ("nan" if none).
std::string PValueCell(const Json& fold) {
  if (!fold.contains("significance") || !fold["significance"].is_object()) return "nan";
  const Json& s = fold["significance"];
  if (!s.contains("buy_and_hold")) return "nan";
  const Json& bh = s["buy_and_hold"];
  return bh.contains("p_value") && bh["p_value"].is_number()
             ? fmt::format("{:.3g}", bh["p_value"].get<double>())
             : "nan";
}

// Several seeds per fold: the spread of the seeds' Sharpe ratios and the fold's deflated
// Sharpe ratio (evalrun/seeds_eval.h).
std::string SeedCells(const Json& fold) {
  if (!fold.contains("across_seeds")) return "";
  const Json& sr = fold["across_seeds"].contains("sharpe_ratio")
                       ? fold["across_seeds"]["sharpe_ratio"]
                       : Json::object();
  const std::string spread = fmt::format("{} ± {} [{}, {}]", Cell(sr, "mean"), Cell(sr, "std"),
                                         Cell(sr, "min"), Cell(sr, "max"));
  return fmt::format("  {:<34}{:>8}", spread, Cell(fold, "deflated_sharpe"));
}

std::string FoldRows(const Json& summary) {
  const bool seeds = summary.value("seeds", 1) > 1;
  std::string out =
      fmt::format("{:<5}{:<22}{:>5} {:<22}{:>5}{:>11}{:>12}{:>12}{:>9}", "fold", "train", "n",
                  "test", "n", "sharpe", "cum_return", "bh_cum", "p_vs_bh");
  out += seeds ? fmt::format("  {:<34}{:>8}\n", "sharpe across seeds: mean ± std [min, max]", "dsr")
               : "\n";
  for (const Json& f : summary["folds"]) {
    out += fmt::format(
        "{:<5}{:<22}{:>5} {:<22}{:>5}{:>11}{:>12}{:>12}{:>9}{}\n", f["fold"].get<int>(),
        f["train"]["first"].get<std::string>() + ":" + f["train"]["last"].get<std::string>(),
        f["train"]["sessions"].get<int>(),
        f["test"]["first"].get<std::string>() + ":" + f["test"]["last"].get<std::string>(),
        f["test"]["sessions"].get<int>(), RatioCell(f["metrics"], "sharpe_ratio"),
        Cell(f["metrics"], "cum_returns_final"),
        Cell(f["benchmarks"]["buy_and_hold"], "cum_returns_final"), PValueCell(f),
        seeds ? SeedCells(f) : "");
  }
  return out;
}

std::string Table(const Json& summary) {
  std::string out = fmt::format(
      "walk-forward: {} folds, {} ({} sessions; first train {} sessions, test {} sessions "
      "each)\n",
      summary["num_folds"].get<int>(), summary["mode"].get<std::string>(),
      summary["sessions"].get<int>(), summary["train_days"].get<int>(),
      summary["test_days"].get<int>());
  out += FoldRows(summary);
  out += fmt::format("out-of-sample {}:{} (concatenated)\n",
                     summary["range"]["first"].get<std::string>(),
                     summary["range"]["last"].get<std::string>());
  eval::BenchmarkTableInput t;
  t.policy = &summary["metrics"];
  t.flat = &summary["benchmarks"]["flat"];
  t.buy_and_hold = &summary["benchmarks"]["buy_and_hold"];
  t.significance = &summary["significance"];
  out += eval::BenchmarkTable(t);
  if (summary.contains("ensemble")) {
    out += fmt::format("the seeds' ensemble ({}), concatenated: Sharpe {}, cumulative return {}; ",
                       summary["ensemble"]["method"].get<std::string>(),
                       RatioCell(summary["ensemble"]["metrics"], "sharpe_ratio"),
                       Cell(summary["ensemble"]["metrics"], "cum_returns_final"));
    out += "per fold:";
    for (const Json& f : summary["folds"]) {
      if (f.contains("ensemble")) {
        out += fmt::format(" fold {} Sharpe {}", f["fold"].get<int>(),
                           RatioCell(f["ensemble"]["metrics"], "sharpe_ratio"));
      }
    }
    out += "\n";
  }
  return out + eval::AnnualisationNote(summary["periods_per_year"].get<int>(), false);
}

}  // namespace

Result<std::vector<FoldWindow>> PlanFolds(const std::vector<int32_t>& sessions, int folds,
                                          int train_days, int test_days, bool rolling) {
  const int s = static_cast<int>(sessions.size());
  if (folds < 1) {
    return Status::InvalidArgument("--folds must be >= 1 (got " + std::to_string(folds) + ")");
  }
  if (train_days < 0 || test_days < 0) {
    return Status::InvalidArgument("--train-days and --test-days must be >= 1");
  }
  if (rolling && train_days == 0) {
    return Status::InvalidArgument("--rolling needs --train-days N (the rolling window length)");
  }
  const std::string have =
      s == 0 ? std::string("the data has 0 sessions")
             : fmt::format("the data has {} sessions ({} to {})", s, FormatDate(sessions.front()),
                           FormatDate(sessions.back()));
  const int n = train_days > 0 ? train_days : s / 2;
  if (n < 1) return Status::InvalidArgument(have + "; too few for a training window");
  const int m = test_days > 0 ? test_days : (s - n) / folds;
  if (m < 1) {
    return Status::InvalidArgument(fmt::format(
        "{}; after the first training window of {} sessions, {} remain for {} test windows "
        "(fewer than one session each): use fewer --folds or a shorter --train-days",
        have, n, std::max(s - n, 0), folds));
  }
  if (static_cast<int64_t>(n) + static_cast<int64_t>(folds) * m > s) {
    return Status::InvalidArgument(fmt::format(
        "{}; {} folds with a first training window of {} sessions and test windows of {} "
        "sessions need {} sessions",
        have, folds, n, m, static_cast<int64_t>(n) + static_cast<int64_t>(folds) * m));
  }
  std::vector<FoldWindow> windows;
  for (int k = 0; k < folds; ++k) {
    FoldWindow w;
    w.test_begin = n + k * m;
    w.test_end = w.test_begin + m;
    w.train_end = w.test_begin;
    w.train_begin = rolling ? w.train_end - n : 0;
    w.train_first = sessions[w.train_begin];
    w.train_last = sessions[w.train_end - 1];
    w.test_first = sessions[w.test_begin];
    w.test_last = sessions[w.test_end - 1];
    windows.push_back(w);
  }
  return windows;
}

namespace {

// What RunWalkforward settles before training anything.
struct WalkforwardPlan {
  config::Config base;  // the config with the caller's overrides applied
  std::vector<int32_t> sessions;
  std::optional<market::DateRange> validation;  // [split] validation, if any
  bool disable_eval = false;                    // folds train with run.eval_every = 0
  int seeds = 1;                                // seeds per fold (train::RequestedSeeds)
  fs::path out_dir;
};

// Reads the config, plans the folds (into outcome->windows, ->notes) and creates OUT.
// Everything that can be checked is checked before OUT is written.
// create_out false: another rank created OUT (under mpirun, rank 0 plans first).
Result<WalkforwardPlan> PlanWalkforward(const WalkforwardRequest& request,
                                        WalkforwardOutcome* outcome, bool create_out = true) {
  WalkforwardPlan plan;
  RLT_ASSIGN_OR_RETURN(plan.base, train::LoadConfig(request.config_path, request.overrides));
  RLT_ASSIGN_OR_RETURN(plan.sessions, train::SessionDates(plan.base));
  RLT_ASSIGN_OR_RETURN(outcome->windows, PlanFolds(plan.sessions, request.folds, request.train_days,
                                                   request.test_days, request.rolling));
  if (const config::ConfigValue* v = plan.base.Get("split", "validation")) {
    Result<market::DateRange> r = market::DateRange::Parse(v->text);
    if (!r.ok())
      return Status::InvalidArgument(v->source + ": [split] validation: " + r.status().message());
    plan.validation = *r;
  }
  int64_t eval_every = 0;
  if (const config::ConfigValue* v = plan.base.Get("run", "eval_every")) {
    char* end = nullptr;
    eval_every = std::strtoll(v->text.c_str(), &end, 10);
  }
  plan.disable_eval = eval_every > 0 && plan.validation.has_value();
  if (plan.disable_eval) {
    outcome->notes.push_back(
        "run.eval_every = " + std::to_string(eval_every) +
        " with a [split] validation range: folds train with run.eval_every = 0 (the "
        "walk-forward windows cover the data; each fold is judged on its own test window)");
  }
  {
    train::TrainRequest probe;
    probe.config_path = request.config_path;
    probe.overrides = request.overrides;
    probe.seeds = request.seeds;
    RLT_ASSIGN_OR_RETURN(plan.seeds, train::RequestedSeeds(probe));
  }
  if (!request.ensemble.empty()) {
    RLT_RETURN_IF_ERROR(ParseEnsembleMethod(request.ensemble).status());
    if (plan.seeds <= 1) {
      return Status::InvalidArgument("--ensemble " + request.ensemble +
                                     ": the folds train one seed each, so there is no ensemble "
                                     "to combine; give --seeds N (N > 1) or drop --ensemble");
    }
  }
  if (plan.seeds > 1 && request.executable.empty()) {
    return Status::InvalidArgument(
        "walk-forward with several seeds needs the rltrade executable "
        "to train them (run it through `rltrade walkforward`)");
  }
  plan.out_dir = request.out_dir.empty() ? fs::path(DefaultOutDir(request.config_path))
                                         : fs::path(request.out_dir);
  outcome->out_dir = plan.out_dir.string();
  if (!create_out) return plan;
  std::error_code ec;
  if (fs::exists(plan.out_dir, ec) && !fs::is_empty(plan.out_dir, ec)) {
    return Status::InvalidArgument(plan.out_dir.string() +
                                   " already exists and is not empty; choose another --out");
  }
  fs::create_directories(plan.out_dir, ec);
  if (ec) return Status::IoError("cannot create " + plan.out_dir.string() + ": " + ec.message());
  outcome->out_dir = plan.out_dir.string();
  return plan;
}

// Trains fold k on its window and evaluates it on its test window; appends its daily
// returns to `rows`. Returns the fold's summary entry, or nullopt when training was
// interrupted (outcome->exit_code is then set).
// A multi-seed fold's ensemble (evalrun/seeds_eval.h) into its entry, and its daily
// returns (RUN/eval/test/ensemble_daily_returns.csv) into `rows`.
Status AddFoldEnsemble(const EvalOutcome& evaluated, const Json& fold_summary, int number, Json& f,
                       std::vector<DailyRow>* rows) {
  if (!fold_summary.contains("ensemble")) return Status::Ok();
  const Json& e = fold_summary["ensemble"];
  f["ensemble"] = {
      {"method", e.at("method")}, {"eval_dir", e.at("eval_dir")}, {"metrics", e.at("metrics")}};
  if (e.contains("significance")) f["ensemble"]["significance"] = e["significance"];
  return ReadDailyReturns(fs::path(evaluated.out_dir) / "ensemble_daily_returns.csv", number,
                          *rows);
}

Result<std::optional<Json>> RunFold(const WalkforwardRequest& request, const WalkforwardPlan& plan,
                                    int k, WalkforwardOutcome* outcome, std::vector<DailyRow>* rows,
                                    std::vector<DailyRow>* ensemble_rows) {
  const FoldWindow& w = outcome->windows[k];
  const int number = k + 1;  // folds are numbered 1..K everywhere (directories, files, text)
  const market::DateRange train_range{w.train_first, w.train_last};
  const market::DateRange test_range{w.test_first, w.test_last};
  const fs::path fold_dir = plan.out_dir / ("fold_" + std::to_string(number));
  if (!request.quiet) {
    fmt::print(stderr, "fold {}/{}: train {} ({} sessions), test {} ({} sessions) -> {}\n", number,
               outcome->windows.size(), train_range.ToString(), w.train_end - w.train_begin,
               test_range.ToString(), w.test_end - w.test_begin, fold_dir.string());
  }
  train::TrainRequest treq;
  treq.config_path = request.config_path;
  treq.overrides = request.overrides;
  if (plan.validation &&
      (plan.validation->Overlaps(train_range) || plan.validation->Overlaps(test_range))) {
    const fs::path fold_config = plan.out_dir / ("fold_" + std::to_string(number) + ".config.toml");
    RLT_RETURN_IF_ERROR(WriteText(fold_config, WithoutValidation(plan.base).ToToml()));
    treq.config_path = fold_config.string();
    treq.overrides.clear();  // already applied to `base`
    const std::string note =
        fmt::format("fold {}: [split] validation {} overlaps its windows and is removed ({})",
                    number, plan.validation->ToString(), fold_config.string());
    outcome->notes.push_back(note);
    fmt::print(stderr, "note: {}\n", PrintableText(note));
  }
  treq.overrides.push_back("split.train=" + train_range.ToString());
  treq.overrides.push_back("split.test=" + test_range.ToString());
  if (plan.disable_eval) treq.overrides.push_back("run.eval_every=0");
  treq.run_dir = fold_dir.string();
  treq.quiet = request.quiet;
  treq.seeds = plan.seeds;
  const int seeds = plan.seeds;
  RLT_ASSIGN_OR_RETURN(train::TrainOutcome trained,
                       train::RunTrainCommand(treq, request.executable));  // one seed: RunTraining
  if (trained.exit_code != 0) {  // SIGINT / SIGTERM: stop here, the fold has a checkpoint
    fmt::print(stderr, "fold {}: training interrupted; stopping the walk-forward ({})\n", number,
               fold_dir.string());
    outcome->exit_code = trained.exit_code;
    return std::optional<Json>();
  }
  EvalRequest ereq;
  ereq.run_dir = fold_dir.string();
  ereq.range = "test";
  EvalOutcome evaluated;
  if (seeds > 1) {
    RLT_ASSIGN_OR_RETURN(const std::optional<train::SeedsIndex> index,
                         train::ReadSeedsIndex(fold_dir.string()));
    if (!index) return Status::DataError(fold_dir.string() + " has no seeds.json after training");
    SeedsEvalRequest sreq;
    sreq.eval = ereq;
    sreq.seeds = index->seeds;
    sreq.ensemble = request.ensemble;
    RLT_ASSIGN_OR_RETURN(evaluated, RunSeedsEvaluation(sreq));
  } else {
    RLT_ASSIGN_OR_RETURN(evaluated, RunEvaluation(ereq));
  }
  RLT_RETURN_IF_ERROR(
      ReadDailyReturns(fs::path(evaluated.out_dir) / eval::kDailyReturnsFile, number, *rows));
  const Json fold_summary = Json::parse(evaluated.summary_json);
  Json f;
  f["fold"] = number;
  f["run_dir"] = fold_dir.string();
  f["train"] = {{"first", FormatDate(w.train_first)},
                {"last", FormatDate(w.train_last)},
                {"sessions", w.train_end - w.train_begin}};
  f["test"] = {{"first", FormatDate(w.test_first)},
               {"last", FormatDate(w.test_last)},
               {"sessions", w.test_end - w.test_begin}};
  f["metrics"] = fold_summary.at("metrics");
  f["benchmarks"] = fold_summary.at("benchmarks");
  if (fold_summary.contains("significance")) f["significance"] = fold_summary["significance"];
  if (seeds > 1) {
    f["seeds"] = seeds;
    f["across_seeds"] = fold_summary.at("across_seeds");
    f["deflated_sharpe"] = fold_summary.at("deflated_sharpe");
    RLT_RETURN_IF_ERROR(AddFoldEnsemble(evaluated, fold_summary, number, f, ensemble_rows));
  }
  outcome->fold_dirs.push_back(fold_dir.string());
  return std::optional<Json>(std::move(f));
}

// The concatenated out-of-sample result: summary JSON (into outcome) and the files of
// OUT/walkforward/, staged and renamed.
// The folds' ensembles concatenated as the seed averages are: summary "ensemble"
// {"method", "metrics", "significance"} and the rows of ensemble_daily_returns.csv ("" when
// the folds have no ensemble).
std::string ConcatenatedEnsemble(const std::vector<DailyRow>& rows, const Json& folds_json,
                                 int periods, Json& summary) {
  if (rows.empty() || !folds_json.front().contains("ensemble")) return "";
  std::vector<double> series[3];
  std::string daily = std::string(kWalkforwardDailyHeader) + "\n";
  for (const DailyRow& r : rows) {
    for (int i = 0; i < 3; ++i) series[i].push_back(r.values[i]);
    daily += fmt::format("{},{},{},{},{}\n", r.date, r.cells[0], r.cells[1], r.cells[2], r.fold);
  }
  Json e;
  e["method"] = folds_json.front()["ensemble"]["method"];
  e["metrics"] = eval::ReturnMetricsJson<Json>(
      eval::ComputeReturnMetrics(series[0], eval::MetricsOptions{periods}));
  e["significance"] = eval::SignificanceJson<Json>(series[0], series[2], series[1], periods);
  summary["ensemble"] = e;
  return daily;
}

Status WriteConcatenated(const WalkforwardRequest& request, const WalkforwardPlan& plan,
                         const std::vector<DailyRow>& rows,
                         const std::vector<DailyRow>& ensemble_rows, Json folds_json,
                         WalkforwardOutcome* outcome) {
  std::vector<double> series[3];
  for (const DailyRow& r : rows) {
    for (int i = 0; i < 3; ++i) series[i].push_back(r.values[i]);
  }
  std::string daily = std::string(kWalkforwardDailyHeader) + "\n";
  std::string equity = std::string(kWalkforwardEquityHeader) + "\n";
  double worth = 1.0, bh_worth = 1.0;
  for (const DailyRow& r : rows) {
    daily += fmt::format("{},{},{},{},{}\n", r.date, r.cells[0], r.cells[1], r.cells[2], r.fold);
    if (!std::isnan(r.values[0])) worth *= 1.0 + r.values[0];
    if (!std::isnan(r.values[1])) bh_worth *= 1.0 + r.values[1];
    equity += fmt::format("{},{:.10g},{:.10g},{}\n", r.date, worth, bh_worth, r.fold);
  }
  const FoldWindow& first = outcome->windows.front();
  Json summary;
  summary["config"] = request.config_path;
  summary["mode"] = request.rolling ? "rolling" : "expanding";
  summary["sessions"] = static_cast<int>(plan.sessions.size());
  summary["train_days"] = first.train_end - first.train_begin;
  summary["test_days"] = first.test_end - first.test_begin;
  summary["num_folds"] = static_cast<int>(outcome->windows.size());
  summary["seeds"] = plan.seeds;
  summary["notes"] = outcome->notes;
  summary["range"] = {{"first", rows.front().date}, {"last", rows.back().date}};
  // Annualised as the folds' evaluations annualise the same data (eval::PeriodsPerYearOf).
  const int periods = eval::PeriodsPerYearOf(plan.sessions);
  const eval::MetricsOptions options{periods};
  summary["periods_per_year"] = periods;
  summary["metrics"] =
      eval::ReturnMetricsJson<Json>(eval::ComputeReturnMetrics(series[0], options));
  summary["benchmarks"]["flat"] =
      eval::ReturnMetricsJson<Json>(eval::ComputeReturnMetrics(series[2], options));
  summary["benchmarks"]["buy_and_hold"] =
      eval::ReturnMetricsJson<Json>(eval::ComputeReturnMetrics(series[1], options));
  summary["significance"] = eval::SignificanceJson<Json>(series[0], series[2], series[1], periods);
  const std::string ensemble_daily =
      ConcatenatedEnsemble(ensemble_rows, folds_json, periods, summary);
  summary["folds"] = std::move(folds_json);
  eval::NullNonFinite(summary);
  outcome->summary_json = JsonText(summary, 2) + "\n";
  outcome->table = Table(summary);

  const fs::path summary_dir = plan.out_dir / "walkforward";
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging,
                       runlog::StagingDir::Create(summary_dir.string()));
  RLT_RETURN_IF_ERROR(
      WriteText(fs::path(staging.path()) / eval::kSummaryFile, outcome->summary_json));
  RLT_RETURN_IF_ERROR(WriteText(fs::path(staging.path()) / eval::kDailyReturnsFile, daily));
  RLT_RETURN_IF_ERROR(WriteText(fs::path(staging.path()) / eval::kEquityFile, equity));
  if (!ensemble_daily.empty()) {
    RLT_RETURN_IF_ERROR(
        WriteText(fs::path(staging.path()) / "ensemble_daily_returns.csv", ensemble_daily));
  }
  RLT_RETURN_IF_ERROR(eval::WriteWalkforwardReport(staging.path()));
  RLT_RETURN_IF_ERROR(staging.Commit(/*replace=*/true));
  outcome->summary_dir = summary_dir.string();
  return Status::Ok();
}

// One rank's folds, as a JSON text for rank 0: per fold its summary entry (or the error,
// or the exit code of an interrupted training), the notes it added, its directory and
// its daily rows (cells verbatim; values as %.17g text, NaN included).
Json PackRows(const std::vector<DailyRow>& rows) {
  Json r = Json::array();
  for (const DailyRow& d : rows) {
    r.push_back({d.date, d.cells[0], d.cells[1], d.cells[2], fmt::format("{:.17g}", d.values[0]),
                 fmt::format("{:.17g}", d.values[1]), fmt::format("{:.17g}", d.values[2]), d.fold});
  }
  return r;
}

// PackRows' rows back, appended to `rows`.
void UnpackRows(const Json& packed, std::vector<DailyRow>& rows) {
  for (const auto& r : packed) {
    DailyRow d;
    d.date = r[0].get<std::string>();
    for (int c = 0; c < 3; ++c) {
      d.cells[c] = r[1 + c].get<std::string>();
      d.values[c] = std::strtod(r[4 + c].get<std::string>().c_str(), nullptr);
    }
    d.fold = r[7].get<int>();
    rows.push_back(std::move(d));
  }
}

Json PackFold(int k, const Result<std::optional<Json>>& result, const WalkforwardOutcome& fo,
              const std::vector<DailyRow>& rows, const std::vector<DailyRow>& ensemble_rows) {
  Json f = {{"k", k}, {"exit_code", fo.exit_code}, {"notes", fo.notes}, {"dirs", fo.fold_dirs}};
  if (!result.ok()) {
    f["error"] = result.status().message();
    f["code"] = static_cast<int>(result.status().code());
  } else if (result->has_value()) {
    f["entry"] = **result;
  }
  f["rows"] = PackRows(rows);
  f["ensemble_rows"] = PackRows(ensemble_rows);
  return f;
}

}  // namespace

// Under mpirun (dist/dist.h) fold k runs on rank k mod K: rank 0 plans and creates OUT
// first, every rank trains and evaluates its folds, and rank 0 gathers the folds' entries
// and daily rows and writes the concatenated result — the files one process writes. All
// ranks return rank 0's verdict (an error or an interruption of the first fold, in fold
// order, that had one).
Result<WalkforwardOutcome> RunWalkforward(const WalkforwardRequest& request) {
  const int rank = dist::Rank(), ranks = dist::Size();
  WalkforwardOutcome outcome;
  std::optional<WalkforwardPlan> plan;
  Status planned = Status::Ok();
  if (rank == 0) {
    Result<WalkforwardPlan> p = PlanWalkforward(request, &outcome);
    if (p.ok()) {
      plan = std::move(*p);
    } else {
      planned = p.status();
    }
  }
  if (ranks > 1) {
    const std::string verdict = dist::Broadcast(planned.ok() ? "" : planned.message());
    if (!verdict.empty()) return rank == 0 ? planned : Status::Refused(verdict);
    if (rank != 0) {
      Result<WalkforwardPlan> p = PlanWalkforward(request, &outcome, /*create_out=*/false);
      if (!p.ok()) {  // the same inputs as rank 0's: a rank that sees other files
        std::fprintf(stderr, "error: rank %d: %s\n", rank, p.status().message().c_str());
        dist::Abort(1);
      }
      plan = std::move(*p);
    }
  }
  if (!planned.ok()) return planned;
  if (rank == 0) {
    for (const std::string& note : outcome.notes) {
      fmt::print(stderr, "note: {}\n", PrintableText(note));
    }
  }
  // This rank's folds, stopping at the first that fails or is interrupted.
  Json mine = Json::array();
  for (int k = rank; k < static_cast<int>(outcome.windows.size()); k += ranks) {
    WalkforwardOutcome fo;
    fo.windows = outcome.windows;
    std::vector<DailyRow> rows, ensemble_rows;
    Result<std::optional<Json>> fold = RunFold(request, *plan, k, &fo, &rows, &ensemble_rows);
    mine.push_back(PackFold(k, fold, fo, rows, ensemble_rows));
    if (!fold.ok() || !fold->has_value()) break;
  }
  const std::vector<std::string> packs = dist::Gather(mine.dump());
  // Rank 0: the folds in order; the first failure decides.
  Status verdict = Status::Ok();
  if (rank == 0) {
    std::map<int, Json> by_fold;
    for (const std::string& text : packs) {
      for (Json& f : Json::parse(text)) {
        const int k = f["k"].get<int>();
        by_fold[k] = std::move(f);
      }
    }
    std::vector<DailyRow> rows, ensemble_rows;
    Json folds_json = Json::array();
    for (int k = 0; k < static_cast<int>(outcome.windows.size()) && verdict.ok(); ++k) {
      const auto it = by_fold.find(k);
      if (it == by_fold.end()) break;  // after an interrupted fold of the same rank
      const Json& f = it->second;
      for (const auto& n : f["notes"]) outcome.notes.push_back(n.get<std::string>());
      for (const auto& d : f["dirs"]) outcome.fold_dirs.push_back(d.get<std::string>());
      if (f.contains("error")) {
        verdict = Status::FromCode(f["code"].get<int>(), f["error"].get<std::string>());
        break;
      }
      if (!f.contains("entry")) {
        outcome.exit_code = f["exit_code"].get<int>();
        break;
      }
      UnpackRows(f["rows"], rows);
      UnpackRows(f["ensemble_rows"], ensemble_rows);
      folds_json.push_back(f["entry"]);
    }
    if (verdict.ok() && outcome.exit_code == 0 && folds_json.size() == outcome.windows.size()) {
      if (rows.empty()) {
        verdict = Status::DataError("the folds' evaluations produced no daily returns");
      }
      for (size_t i = 1; verdict.ok() && i < rows.size(); ++i) {
        if (!(rows[i - 1].date < rows[i].date)) {
          verdict =
              Status::DataError("fold daily returns are not in time order at " + rows[i].date);
        }
      }
      if (verdict.ok()) {
        verdict =
            WriteConcatenated(request, *plan, rows, ensemble_rows, std::move(folds_json), &outcome);
      }
    }
  }
  if (ranks > 1) {  // every rank ends with rank 0's verdict
    Json v = {{"code", static_cast<int>(verdict.code())},
              {"message", verdict.message()},
              {"exit_code", outcome.exit_code}};
    v = Json::parse(dist::Broadcast(v.dump()));
    if (rank != 0) {
      outcome.exit_code = v["exit_code"].get<int>();
      verdict = Status::FromCode(v["code"].get<int>(), v["message"].get<std::string>());
    }
  }
  if (!verdict.ok()) return verdict;
  return outcome;
}

}  // namespace rlt::evalrun
