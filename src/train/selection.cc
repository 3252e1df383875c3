// rltrade train: selection on validation (see selection.h).
#include "train/selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "eval/metrics.h"
#include "eval/metrics_json.h"
#include "runlog/run_dir.h"

namespace rlt::train {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kPeriodsPerYear = 252;  // sessions, as eval/metrics.h's default
constexpr int64_t kMaxSelectionBytes = int64_t{64} << 20;

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

double NumberOr(const Json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

}  // namespace

const std::vector<std::string>& MarketSelectMetrics() {
  static const std::vector<std::string> kNames = {"sharpe_ratio",  "sortino_ratio", "total_return",
                                                  "annual_return", "calmar_ratio",  "max_drawdown"};
  return kNames;
}

Result<std::string> ResolveSelectMetric(const config::Config& config, const RunOptions& run,
                                        bool market) {
  std::vector<std::string> errors;
  if (run.patience < 0) {
    errors.push_back(config::KeyPlace(config, "run", "patience") + " = " +
                     std::to_string(run.patience) +
                     ": must be >= 0 (evaluations without improvement before training stops; 0 "
                     "= never stop early)");
  } else if (run.patience > 0 && run.eval_every == 0) {
    errors.push_back(config::KeyPlace(config, "run", "patience") + " = " +
                     std::to_string(run.patience) +
                     ": patience counts evaluations, and [run] eval_every = 0 turns them off; set "
                     "run.eval_every > 0 or run.patience = 0");
  }
  std::string metric = run.select_metric;
  const bool market_only = std::find(MarketSelectMetrics().begin(), MarketSelectMetrics().end(),
                                     metric) != MarketSelectMetrics().end();
  if (!market && market_only) {
    if (config.Get("run", "select_metric") == nullptr) {
      metric = kEpisodeReturnMetric;  // the default means "the natural score" here
    } else {
      errors.push_back(config::KeyPlace(config, "run", "select_metric") + " = \"" + metric +
                       "\": " + metric +
                       " is computed from the sessions of a market env's validation walk; this "
                       "env is episodic, so the allowed value is \"episode_return\" (the mean "
                       "evaluation episode return); market envs allow " +
                       Joined(MarketSelectMetrics()) + " and episode_return");
    }
  }
  RLT_RETURN_IF_ERROR(config::JoinErrors(errors));
  return metric;
}

double SelectionScore(const std::string& metric, const learn::EvalStats& stats) {
  if (metric == kEpisodeReturnMetric) return stats.mean_reward;
  if (stats.session_returns.empty()) return NAN;
  const eval::ReturnMetrics m = eval::ComputeReturnMetrics(stats.session_returns);
  if (metric == "sharpe_ratio") return m.sharpe_ratio;
  if (metric == "sortino_ratio") return m.sortino_ratio;
  if (metric == "total_return") return m.cum_returns_final;
  if (metric == "annual_return") return m.annual_return;
  if (metric == "calmar_ratio") return m.calmar_ratio;
  if (metric == "max_drawdown") return m.max_drawdown;
  RLT_CHECK(false && "select_metric is validated when the config is bound");
  return NAN;
}

double ValidationSharpe(const learn::EvalStats& stats) {
  return stats.session_returns.empty() ? NAN : eval::SharpeRatio(stats.session_returns);
}

bool Selection::Observe(int64_t step, double score, double sharpe_ratio) {
  curve.push_back({step, score, sharpe_ratio});
  if (std::isfinite(score) && (!has_best() || score > best_score)) {
    best_step = step;
    best_score = score;
    since_best = 0;
    return true;
  }
  if (has_best()) ++since_best;  // patience starts with the first finite score
  return false;
}

std::string Selection::StopReason(int patience) const {
  return fmt::format(
      "stopped early: validation {} did not improve in {} evaluation{} ([run] patience = {}); "
      "best/ holds the selected checkpoint, {:.6g} at step {}",
      metric, since_best, since_best == 1 ? "" : "s", patience, best_score, best_step);
}

double Selection::SharpeVariancePerPeriod() const {
  std::vector<double> values;
  for (const SelectionPoint& p : curve) {
    if (std::isfinite(p.sharpe_ratio))
      values.push_back(p.sharpe_ratio / std::sqrt(kPeriodsPerYear));
  }
  if (values.size() < 2) return NAN;
  double mean = 0, var = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  for (double v : values) var += (v - mean) * (v - mean);
  return var / static_cast<double>(values.size() - 1);
}

std::string Selection::ToJson() const {
  Json j;
  j["metric"] = metric;
  j["direction"] = "higher is better";
  j["best_step"] = best_step;
  j["best_score"] = best_score;
  j["evaluations"] = evaluations();
  j["evaluations_since_best"] = since_best;
  j["curve"] = Json::array();
  for (const SelectionPoint& p : curve) {
    j["curve"].push_back({{"step", p.step}, {"score", p.score}, {"sharpe_ratio", p.sharpe_ratio}});
  }
  eval::NullNonFinite(j);
  return JsonText(j, 1) + "\n";
}

Result<Selection> Selection::FromJson(const std::string& text, const std::string& origin) {
  RLT_ASSIGN_OR_RETURN(const Json j, ParseJson<Json>(text, origin));
  auto bad = [&origin](const std::string& what) {
    return Status::DataError(origin + ": " + what +
                             " (a selection record written by rltrade train; do not edit it)");
  };
  if (!j.is_object() || !j.contains("metric") || !j["metric"].is_string()) {
    return bad("expected a JSON object with a \"metric\" string");
  }
  Selection s;
  s.metric = j["metric"].get<std::string>();
  s.best_step = static_cast<int64_t>(NumberOr(j, "best_step", -1));
  s.best_score = NumberOr(j, "best_score", NAN);
  s.since_best = static_cast<int64_t>(NumberOr(j, "evaluations_since_best", 0));
  if (s.has_best() != std::isfinite(s.best_score) || s.since_best < 0) {
    return bad("best_step, best_score and evaluations_since_best disagree");
  }
  if (!j.contains("curve") || !j["curve"].is_array()) return bad("expected a \"curve\" array");
  for (const Json& p : j["curve"]) {
    if (!p.is_object() || !p.contains("step") || !p["step"].is_number()) {
      return bad("every curve point needs a numeric \"step\"");
    }
    s.curve.push_back({static_cast<int64_t>(p["step"].get<double>()), NumberOr(p, "score", NAN),
                       NumberOr(p, "sharpe_ratio", NAN)});
  }
  return s;
}

Result<Selection> Selection::Read(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / runlog::kSelectionFile).string();
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path, kMaxSelectionBytes));
  return FromJson(text, path);
}

}  // namespace rlt::train
