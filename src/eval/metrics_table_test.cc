// Tests of metrics_table.h: the table is the single source of metric keys, and the JSON
// writers follow it.
#include "eval/metrics_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "eval/metrics_json.h"

namespace rlt::eval {
namespace {

TEST(MetricTable, KeysAreUniqueAndEveryRowHasALabel) {
  std::set<std::string> keys;
  for (const MetricInfo& m : MetricTable()) {
    EXPECT_TRUE(keys.insert(m.key).second) << "duplicate key " << m.key;
    EXPECT_FALSE(std::string(m.label).empty()) << m.key;
    EXPECT_NE(m.value, nullptr) << m.key;
  }
}

TEST(MetricTable, JsonWritersListExactlyTheTablesKeysInItsOrder) {
  const std::vector<double> returns = {0.01, -0.02, 0.015, 0.0, 0.03, -0.01};
  const std::vector<double> pnls = {5.0, -2.0, 7.0};
  const std::vector<double> exposure = {0.0, 0.5, 0.5, -1.0, 0.0};
  const StrategyMetrics m = ComputeStrategyMetrics(returns, pnls, exposure, 12.5);
  const nlohmann::ordered_json all = StrategyMetricsJson<nlohmann::ordered_json>(m);
  const nlohmann::ordered_json ret =
      ReturnMetricsJson<nlohmann::ordered_json>(ComputeReturnMetrics(returns));
  std::vector<std::string> all_keys, ret_keys;
  for (const auto& [k, v] : all.items()) all_keys.push_back(k);
  for (const auto& [k, v] : ret.items()) ret_keys.push_back(k);
  std::vector<std::string> want_all, want_ret;
  for (const MetricInfo& info : MetricTable()) {
    want_all.push_back(info.key);
    if (info.from_returns) want_ret.push_back(info.key);
  }
  // Then the short-sample flag, the one key that is not a metric of the table.
  want_all.push_back(kFewObservationsKey);
  want_ret.push_back(kFewObservationsKey);
  EXPECT_EQ(all_keys, want_all);
  EXPECT_EQ(ret_keys, want_ret);
  // Values are the computed ones, integers as integers.
  EXPECT_TRUE(all["num_trades"].is_number_integer());
  EXPECT_EQ(all["num_trades"].get<int>(), 3);
  EXPECT_DOUBLE_EQ(all["costs_paid"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(all["profit_factor"].get<double>(), 12.0 / 2.0);
  EXPECT_DOUBLE_EQ(all["sharpe_ratio"].get<double>(), SharpeRatio(returns));
  EXPECT_DOUBLE_EQ(all["exposure"].get<double>(), 3.0 / 5.0);
}

// "few_observations": the ratios rest on fewer than 30 non-missing periods; a NaN row is
// not an observation.
TEST(MetricTable, FewObservationsFlagsFewerThanThirtyNonMissingPeriods) {
  std::vector<double> returns(29, 0.01);
  returns[3] = -0.02;
  EXPECT_TRUE(ReturnMetricsJson(ComputeReturnMetrics(returns))[kFewObservationsKey].get<bool>());
  returns.push_back(std::nan(""));
  EXPECT_TRUE(ReturnMetricsJson(ComputeReturnMetrics(returns))[kFewObservationsKey].get<bool>());
  returns.push_back(0.005);
  EXPECT_FALSE(ReturnMetricsJson(ComputeReturnMetrics(returns))[kFewObservationsKey].get<bool>());
}

}  // namespace
}  // namespace rlt::eval
