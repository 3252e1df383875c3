// rltrade eval: metrics as JSON — the one place that names the contracted JSON keys of
// ReturnMetrics (`rltrade metrics --json`, summary.json of eval and walk-forward).
// Templates over the nlohmann JSON type, so callers keep their key order
// (nlohmann::ordered_json for files that must be byte-identical run to run).
#ifndef RLT_EVAL_METRICS_JSON_H_
#define RLT_EVAL_METRICS_JSON_H_

#include <cmath>
#include <nlohmann/json.hpp>

#include "eval/metrics.h"

namespace rlt::eval {

// {sharpe_ratio, sortino_ratio, downside_risk, annual_return, annual_volatility,
//  max_drawdown, max_drawdown_duration, calmar_ratio, cum_returns_final, win_rate,
//  observations, psr, psr_observations}; NaN and infinities stay numbers until
//  NullNonFinite().
template <typename Json = nlohmann::json>
Json ReturnMetricsJson(const ReturnMetrics& m) {
  Json j;
  j["sharpe_ratio"] = m.sharpe_ratio;
  j["sortino_ratio"] = m.sortino_ratio;
  j["downside_risk"] = m.downside_risk;
  j["annual_return"] = m.annual_return;
  j["annual_volatility"] = m.annual_volatility;
  j["max_drawdown"] = m.max_drawdown;
  j["max_drawdown_duration"] = m.max_drawdown_duration;
  j["calmar_ratio"] = m.calmar_ratio;
  j["cum_returns_final"] = m.cum_returns_final;
  j["win_rate"] = m.win_rate;
  j["observations"] = m.observations;
  j["psr"] = m.psr;
  j["psr_observations"] = m.psr_observations;
  return j;
}

// Replaces NaN and infinities by null, recursively (JSON has neither).
template <typename Json>
void NullNonFinite(Json& j) {
  for (auto& [key, value] : j.items()) {
    if (value.is_number_float() && !std::isfinite(value.template get<double>())) value = nullptr;
    if (value.is_object() || value.is_array()) NullNonFinite(value);
  }
}

}  // namespace rlt::eval

#endif  // RLT_EVAL_METRICS_JSON_H_
