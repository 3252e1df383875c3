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

#include "eval/metrics.h"
#include "eval/metrics_table.h"

namespace rlt::eval {

// The metrics of MetricTable() as a JSON object, in the table's order; integer kinds as
// integers. NaN and infinities stay numbers until NullNonFinite(). `returns_only`: just
// the rows that depend on the return series (what `rltrade metrics` and walk-forward
// summaries report).
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
  return j;
}

// The return-series rows only (keys listed in metrics_table.cc with from_returns).
template <typename Json = nlohmann::json>
Json ReturnMetricsJson(const ReturnMetrics& m) {
  StrategyMetrics s;
  s.returns = m;
  return StrategyMetricsJson<Json>(s, /*returns_only=*/true);
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
