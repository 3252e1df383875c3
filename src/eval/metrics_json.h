// rltrade eval: metrics as JSON, written from the metrics table (metrics_table.h), which
// names the contracted keys (`rltrade metrics --json`, summary.json of eval and
// walk-forward).
// Templates over the nlohmann JSON type, so callers keep their key order
// (nlohmann::ordered_json for files that must be byte-identical run to run).
#ifndef RLT_EVAL_METRICS_JSON_H_
#define RLT_EVAL_METRICS_JSON_H_

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>

#include "eval/metrics.h"
#include "eval/metrics_table.h"
#include "eval/significance.h"

namespace rlt::eval {

// The key, in every metrics object, of the flag ReturnMetrics::few_observations.
inline constexpr const char* kFewObservationsKey = "few_observations";

// The metrics of MetricTable() as a JSON object, in the table's order; integer kinds as
// integers. NaN and infinities stay numbers until NullNonFinite(). `returns_only`: just
// the rows that depend on the return series (what `rltrade metrics` and walk-forward
// summaries report). Last, "few_observations": true when the ratios rest on fewer than 30
// periods (a boolean, the one key that is not a number).
template <typename Json = nlohmann::json>
Json StrategyMetricsJson(const StrategyMetrics& m, bool returns_only = false) {
  Json j = Json::object();
  for (const MetricInfo& info : MetricTable()) {
    if (returns_only && !info.from_returns) continue;
    const double v = info.value(m);
    if (info.kind == MetricKind::kInteger) {
      j[info.key] = static_cast<int64_t>(v);
    } else {
      j[info.key] = v;
    }
  }
  // The ratios above rest on fewer than 30 periods (eval/significance.h).
  j[kFewObservationsKey] = m.returns.few_observations;
  return j;
}

// The return-series rows only (keys listed in metrics_table.cc with from_returns).
template <typename Json = nlohmann::json>
Json ReturnMetricsJson(const ReturnMetrics& m) {
  StrategyMetrics s;
  s.returns = m;
  return StrategyMetricsJson<Json>(s, /*returns_only=*/true);
}

// One benchmark's entry of "significance" (eval/significance.h): the annualised Sharpe
// difference, its p-value and interval, the block length, n and the short-sample flag.
template <typename Json = nlohmann::json>
Json SharpeDifferenceJson(const SharpeDifferenceTest& t) {
  Json j = Json::object();
  j["sharpe_difference"] = t.sharpe_difference;
  j["p_value"] = t.p_value;
  j["ci_low"] = t.ci_low;
  j["ci_high"] = t.ci_high;
  j["mean_block_length"] = t.mean_block_length;
  j["observations"] = t.observations;
  j[kFewObservationsKey] = t.few_observations;
  return j;
}

// summary.json's "significance": the test named once, then per benchmark ("flat",
// "buy_and_hold") the policy's daily returns tested against that benchmark's (paired by
// session; REQUIRES: the three series have the same length).
template <typename Json = nlohmann::json>
Json SignificanceJson(std::span<const double> policy, std::span<const double> flat,
                      std::span<const double> buy_and_hold, int periods_per_year) {
  BootstrapOptions o;
  o.periods_per_year = periods_per_year;
  Json j = Json::object();
  j["test"] = "stationary bootstrap (Politis-Romano) of Sharpe(policy) - Sharpe(benchmark)";
  j["null_hypothesis"] = "equal Sharpe ratios (flat: Sharpe 0), two-sided";
  j["resamples"] = o.resamples;
  j["seed"] = o.seed;
  j["confidence"] = o.confidence;
  j["block_length_rule"] = "Politis-White (2004) on the daily differences";
  j["flat"] = SharpeDifferenceJson<Json>(BootstrapSharpeDifference(policy, flat, o));
  j["buy_and_hold"] =
      SharpeDifferenceJson<Json>(BootstrapSharpeDifference(policy, buy_and_hold, o));
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
